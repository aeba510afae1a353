"""The compiled exact engine of escape (issue 35): the forward dynamic program of :mod:`sim.escape.exact`, with
every round computed by compiled code over arrays of encoded states.

- **A state** is one row of small integers (int16): per character its tiers, acc and streak by slot, the fields of
  the kernel's character state that later rounds read (``CHAR_FIELDS`` up to ``insp_die``: composure, craving,
  dazed rounds, breath, uses left, the blessing and inspiration die held, ...) and its held release items; then the
  items left and the attention. Statistics (R-ESC-15) are not part of it.
- **A round** of a state is the batch kernel's own round (:func:`sim.escape.kernel.play_round`, R-ESC-5 steps 1-7
  and the built-in policies R-ESC-20/21) played on a :class:`~sim.escape.branching.Branching` random source: every
  combination of the round's random outcomes (checks, dice sums, saves, searches, item draws) is one replay, with
  its exact probability. No rule is written here.
- **Factored** (issue 35 item 2, parties of two or more): where a state's round has enough combinations, the
  characters are split into groups the rules couple within a round, each group's events are enumerated alone
  and the next states are combined from the groups' outcomes (see "the factored round" below).
- **Merging**: the next states of every state alive are gathered in one hash table keyed by the encoded row; equal
  states reached by different paths add their probabilities. Escaped, caught and timed-out runs leave the table.
- **Dimensions later rounds cannot read are dropped** from the row: the attention when there is no attention limit
  (only the limit reads it, R-ESC-9a, R-ESC-37); an absolute-focus immunity is kept as rounds left (R-ESC-14), so
  a row means the same state in every round.

The budgets (``max_states``: states whose round is computed, summed over the rounds; ``max_branches``: replays of
the round) are projected before each round from the states alive and the replays per state measured so far, and
watched inside the round; :class:`~sim.escape.exact.ExactBudgetExceeded` names the limit that binds.

Where a round has more random events than the source holds, or a dice sum wider than its scratch, the engine
raises :class:`Uncovered` and :func:`sim.escape.exact.exact` hands the scenario to the reference-driven engine.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from sim.escape import kernel as K
from sim.escape.branching import FIXED, OVERFLOW, advance, first_path, new_branching, start
from sim.escape.params import N_SLOTS, EscapeParams

#: the character fields of the kernel's state that are part of a state (the rest are statistics)
N_DYN = K.CHAR_FIELDS.index("insp_die") + 1
#: default budgets of the compiled engine: states whose round is computed (summed over rounds) and replays of
#: the round (about 0.4 microseconds of CPU each for four characters: 10 million take about 4 s)
FAST_MAX_STATES = 1_000_000
FAST_MAX_BRANCHES = 10_000_000
#: its budgets when exact analysis is tried beside a simulation (report overlay, sweeps, tune): about a second
FAST_AUTO_MAX_STATES = 200_000
FAST_AUTO_MAX_BRANCHES = 2_500_000
#: a projection refuses beyond this multiple of a budget (as the reference-driven engine's)
PROJECTION_MARGIN = 1.25
OK, OVER_STATES, OVER_BRANCHES, OVER_EVENTS = range(4)
#: the round factored by groups of coupled characters (issue 35 item 2); False plays every combination of the
#: round's outcomes (the engine before, kept as a check in tests)
FACTORED = True
#: a state's round is factored when the product of its characters' outcome counts (measured on the path with every
#: event pinned) reaches this; below it, the combinations are few and the plain odometer is cheaper
FACTOR_FROM = 64


class Uncovered(Exception):
    """The compiled engine does not cover this scenario: the reference-driven engine answers it."""


def key_width(C: int, I: int) -> int:
    return C * (3 * N_SLOTS + N_DYN + I) + I + 1


@njit(cache=True)
def encode(st, j, key, C, I, limit_on):
    """Row ``j`` of the batch ``st`` (after its round) as a state row ``key``."""
    rnd = st.runs[j, K.ROUNDS]
    x = 0
    for i in range(C):
        for s in range(N_SLOTS):
            key[x] = st.tiers[j, i, s]
            key[x + 1] = st.acc[j, i, s]
            key[x + 2] = st.streak[j, i, s]
            x += 3
        for f in range(N_DYN):
            key[x + f] = st.chars[j, i, f]
        # R-ESC-14 absolute focus: the immunity as rounds left (the same state in any round), none once over
        key[x + K.IMMUNE_UNTIL] = max(0, st.chars[j, i, K.IMMUNE_UNTIL] - rnd)
        x += N_DYN
        for k in range(I):
            key[x + k] = st.held[j, i, k]
        x += I
    for k in range(I):
        key[x + k] = st.item_left[j, k]
    key[x + I] = st.runs[j, K.ATTENTION] if limit_on else 0  # R-ESC-9a: only a limit reads the attention


@njit(cache=True)
def decode(key, st, j, C, I, rounds):
    """The state row ``key`` into row ``j`` of the batch ``st``, ``rounds`` rounds played, still running."""
    x = 0
    for i in range(C):
        for s in range(N_SLOTS):
            st.tiers[j, i, s] = key[x]
            st.acc[j, i, s] = key[x + 1]
            st.streak[j, i, s] = key[x + 2]
            x += 3
        for f in range(N_DYN):
            st.chars[j, i, f] = key[x + f]
        if key[x + K.IMMUNE_UNTIL] > 0:  # rounds of immunity left -> the round it lasts to
            st.chars[j, i, K.IMMUNE_UNTIL] = key[x + K.IMMUNE_UNTIL] + rounds
        x += N_DYN
        for k in range(I):
            st.held[j, i, k] = key[x + k]
        x += I
    for k in range(I):
        st.item_left[j, k] = key[x + k]
    st.runs[j, K.ATTENTION] = key[x + I]
    st.runs[j, K.ROUNDS] = rounds
    st.runs[j, K.OUTCOME] = K.RUNNING


@njit(cache=True)
def row_hash(key):
    h = np.uint64(0x9E3779B97F4A7C15)
    for x in range(key.shape[0]):
        h = (h ^ np.uint64(key[x] & 0xFFFF)) * np.uint64(0x100000001B3)
        h ^= h >> np.uint64(29)
    return h


@njit(cache=True)
def _same(a, b):
    for x in range(a.shape[0]):
        if a[x] != b[x]:
            return False
    return True


@njit(cache=True)
def _rehash(table, keys, lo, m):
    mask = table.shape[0] - 1
    table[:] = -1
    for idx in range(lo, m):
        h = np.int64(row_hash(keys[idx]) & np.uint64(mask))
        while table[h] >= 0:
            h = (h + 1) & mask
        table[h] = idx


@njit(cache=True)
def _probe(table, rows, row):
    """(slot, number) of the state ``row`` in the open-addressing ``table`` over ``rows``: number -1 and the free
    slot where it is not there."""
    mask = table.shape[0] - 1
    h = np.int64(row_hash(row) & np.uint64(mask))
    while True:
        idx = table[h]
        if idx < 0:
            return h, -1
        if _same(rows[idx], row):
            return h, idx
        h = (h + 1) & mask


@njit(cache=True)
def _grown(out, out_p, m):
    """``out`` (rows) and ``out_p`` (their probabilities) in arrays twice as long, the first ``m`` copied."""
    grown = np.empty((2 * m, out.shape[1]), dtype=np.int16)
    grown[:m] = out
    grown_p = np.zeros(2 * m)
    grown_p[:m] = out_p
    return grown, grown_p


@njit(cache=True)
def _merge(table, out, out_p, lo, m, row, q):
    """Adds probability ``q`` to the state ``row`` among the states ``lo`` .. ``m`` - 1 of ``out`` (a new one if it
    is not there), growing the arrays and the table as needed; returns them and the new count."""
    h, idx = _probe(table, out, row)
    if idx >= 0:
        out_p[idx] += q
        return table, out, out_p, m
    if m == out.shape[0]:
        out, out_p = _grown(out, out_p, m)
    out[m] = row
    out_p[m] = q
    table[h] = m
    m += 1
    if 2 * m > table.shape[0]:
        table = np.full(2 * table.shape[0], -1, dtype=np.int64)
        _rehash(table, out, lo, m)
    return table, out, out_p, m


@njit(cache=True)
def play_frontier(R, keys, probs, policy, rounds, limit_on, st, sc, b, C, I, max_new, max_branches):
    """One round of every state alive (``keys``, ``probs``; ``rounds`` rounds played): the merged next states and
    their probabilities, the probability escaped, caught and timed out in this round, the replays played, a status
    (OK, or the budget that stopped the round: OVER_STATES, OVER_BRANCHES; OVER_EVENTS: a round the source cannot
    hold) and the states whose round was computed."""
    n, width = keys.shape
    cap = 16
    while cap < 4 * n:
        cap *= 2
    table = np.full(cap, -1, dtype=np.int64)  # open addressing: the number of the state in ``out``, or -1
    out = np.empty((max(16, 2 * n), width), dtype=np.int16)
    out_p = np.zeros(out.shape[0])
    m = 0
    esc = caught = timeout = 0.0
    branches = 0
    row = np.empty(width, dtype=np.int16)
    for j in range(n):
        first_path(b)
        while True:
            decode(keys[j], st, 0, C, I, rounds)
            start(b)
            K.play_round(R, st, 0, sc, b, policy, False)
            if b.cur[OVERFLOW] != 0:
                return out[:m], out_p[:m], esc, caught, timeout, branches, OVER_EVENTS, j
            branches += 1
            q = probs[j] * b.prob[0]
            o = st.runs[0, K.OUTCOME]
            if o == K.ESCAPED:
                esc += q
            elif o == K.CAUGHT:
                caught += q
            elif o == K.TIMEOUT:
                timeout += q
            else:
                encode(st, 0, row, C, I, limit_on)
                table, out, out_p, m = _merge(table, out, out_p, 0, m, row, q)
            if not advance(b):
                break
        if m > max_new:
            return out[:m], out_p[:m], esc, caught, timeout, branches, OVER_STATES, j + 1
        if branches > max_branches:
            return out[:m], out_p[:m], esc, caught, timeout, branches, OVER_BRANCHES, j + 1
    return out[:m], out_p[:m], esc, caught, timeout, branches, OK, n


@njit(cache=True)
def play_choices(R, key, plans, rounds, limit_on, st, sc, b, C, I):
    """One round of the state ``key`` under each fixed declaration ``plans[k]`` (kernel policy FIXED, optimal
    play): the merged next states of every choice in turn (choice k's are ``out[first[k]:first[k + 1]]``), the
    probability escaped and caught of each, the replays played and whether the source overflowed."""
    n = plans.shape[0]
    width = key.shape[0]
    out = np.empty((64, width), dtype=np.int16)
    out_p = np.zeros(64)
    first = np.zeros(n + 1, dtype=np.int64)
    esc = np.zeros(n)
    cau = np.zeros(n)
    m = 0
    branches = 0
    row = np.empty(width, dtype=np.int16)
    for k in range(n):
        table = np.full(64, -1, dtype=np.int64)
        lo = m
        first_path(b)
        while True:
            decode(key, st, 0, C, I, rounds)
            sc.plan[:, :] = plans[k]
            start(b)
            K.play_round(R, st, 0, sc, b, K.FIXED, False)
            if b.cur[OVERFLOW] != 0:
                return out[:m], out_p[:m], first, esc, cau, branches, True
            branches += 1
            q = b.prob[0]
            o = st.runs[0, K.OUTCOME]
            if o == K.ESCAPED:
                esc[k] += q
            elif o == K.CAUGHT:
                cau[k] += q
            else:  # still running, or timed out in the last round (its state, as the reference-driven solver keeps)
                encode(st, 0, row, C, I, limit_on)
                table, out, out_p, m = _merge(table, out, out_p, lo, m, row, q)
            if not advance(b):
                break
        first[k + 1] = m
    return out[:m], out_p[:m], first, esc, cau, branches, False


# =============================================================================================
# the factored round (issue 35 item 2)
#
# Once the declarations are made (R-ESC-5 step 1, from the state at the start of the round), the characters'
# random events couple only where a rule lets one character's result reach another's state in the same round:
# - R-ESC-14 strength of will: a paladin who assists or guides a teammate recovers composure when that teammate's
#   check succeeds (the paladin's composure then meets its own damage and saves);
# - R-ESC-10 an item used on a teammate is spent only if the teammate's restraint is still covered after the
#   teammate's own struggle (the user's held items);
# - R-ESC-10 searches draw from one pool of items, in party order.
# Everything else a character's events change is its own (R-ESC-32: struggles, rests, searches and composure
# resolve character by character on their own state), unties (R-ESC-10b) are deterministic given the target's
# result, and the attention a round draws is fixed by the declarations and the legs at the start of the round
# (R-ESC-9a, R-ESC-10c), so caught is too; escaped is every character freed (a product). So the characters are
# split into groups joined by the three couplings above; each group's events are enumerated alone (the others'
# pinned, Branching.who) and its outcomes merged; the next states are the combinations of the groups' outcomes,
# with the product of their probabilities. Every replay is checked: a character outside the group whose state
# moved (or a caught run that the declarations did not fix) means a coupling the list above missed, and the state
# is played unfactored instead (``fallbacks``).


@njit(cache=True)
def _mix(x, v):
    """A 64-bit mix of a position and its value (SplitMix64's finaliser)."""
    z = (np.uint64(x) << np.uint64(16)) ^ np.uint64(v & 0xFFFF)
    z += np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def sum_hash(row):
    """A hash additive over positions: a row that differs from a base row on disjoint spans hashes to the base's
    hash plus each span's difference, so a combination of group outcomes is hashed without reading its row."""
    h = np.uint64(0)
    for x in range(row.shape[0]):
        h += _mix(x, row[x])
    return h


@njit(cache=True)
def _hash_from(row, base, hb):
    """:func:`sum_hash` of ``row``, given ``hb`` that of ``base``: read on the positions where they differ."""
    h = hb
    for x in range(row.shape[0]):
        if row[x] != base[x]:
            h += _mix(x, row[x]) - _mix(x, base[x])
    return h


@njit(cache=True)
def _slot(h, mask):
    z = h * np.uint64(0x9E3779B97F4A7C15)
    return np.int64((z ^ (z >> np.uint64(29))) & np.uint64(mask))


@njit(cache=True)
def _put(table, out, out_p, hs, lo, m, row, q, h):
    """As :func:`_merge`, with the rows' hashes (``h``: :func:`sum_hash` of ``row``) kept in ``hs``."""
    mask = table.shape[0] - 1
    s = _slot(h, mask)
    while True:
        idx = table[s]
        if idx < 0:
            break
        if hs[idx] == h and _same(out[idx], row):
            out_p[idx] += q
            return table, out, out_p, hs, m
        s = (s + 1) & mask
    if m == out.shape[0]:
        out, out_p = _grown(out, out_p, m)
        grown_h = np.zeros(2 * m, dtype=np.uint64)
        grown_h[:m] = hs
        hs = grown_h
    out[m] = row
    out_p[m] = q
    hs[m] = h
    table[s] = m
    m += 1
    if 2 * (m - lo) > table.shape[0]:
        table = np.full(2 * table.shape[0], -1, dtype=np.int64)
        mask = table.shape[0] - 1
        for idx in range(lo, m):
            s = _slot(hs[idx], mask)
            while table[s] >= 0:
                s = (s + 1) & mask
            table[s] = idx
    return table, out, out_p, hs, m


@njit(cache=True)
def _find(parent, i):
    while parent[i] != i:
        i = parent[i]
    return i


@njit(cache=True)
def _join(parent, a, b):
    ra, rb = _find(parent, a), _find(parent, b)
    if ra != rb:
        parent[max(ra, rb)] = min(ra, rb)


@njit(cache=True)
def couplings(R, sc, C, gid):
    """The groups of the round declared in ``sc.plan`` (the couplings listed above): ``gid[i]`` the group of
    character i; returns the number of groups and the group of the searchers (-1: nobody searches)."""
    parent = np.arange(C)
    searcher = -1
    for i in range(C):
        kind, t = sc.plan[i, K.P_KIND], sc.plan[i, K.P_TARGET]
        if (kind == K.ASSIST or kind == K.GUIDE) and t >= 0 and t != i and R.char[i, K.IS_PALADIN] != 0:
            _join(parent, i, t)  # R-ESC-14 strength of will
        elif kind == K.USE_ITEM and t >= 0 and t != i:
            _join(parent, i, t)  # R-ESC-10: spent only if the target's tier is still covered
        elif kind == K.SEARCH:
            if searcher >= 0:
                _join(parent, searcher, i)  # R-ESC-10: one pool of items
            searcher = i
    label = np.full(C, -1, dtype=np.int64)
    G = 0
    for i in range(C):
        r = _find(parent, i)
        if label[r] < 0:
            label[r] = G
            G += 1
        gid[i] = label[r]
    return G, (gid[searcher] if searcher >= 0 else -1)


@njit(cache=True)
def _delta(row, base, gid, g, seg, C, I, owns_items):
    """Whether ``row`` equals ``base`` outside group ``g``'s characters (and the items left, if it searches), and
    the difference of their :func:`sum_hash` (read on the positions that differ)."""
    d = np.uint64(0)
    for i in range(C):
        inside = gid[i] == g
        for x in range(i * seg, (i + 1) * seg):
            if row[x] != base[x]:
                if not inside:
                    return False, d
                d += _mix(x, row[x]) - _mix(x, base[x])
    for x in range(C * seg, row.shape[0]):
        if row[x] != base[x]:
            if not owns_items or x >= C * seg + I:
                return False, d
            d += _mix(x, row[x]) - _mix(x, base[x])
    return True, d


@njit(cache=True)
def _freed(R, row, gid, g, seg, C):
    """Every character of group ``g`` has its goal slots at 0 in ``row`` (R-ESC-5 step 7)."""
    for i in range(C):
        if gid[i] == g:
            for s in range(N_SLOTS):
                if R.game[K.GOAL + s] != 0 and row[i * seg + 3 * s] != 0:
                    return False
    return True


@njit(cache=True)
def _copy_group(row, src, gid, g, seg, C, I, owns_items):
    for i in range(C):
        if gid[i] == g:
            for x in range(i * seg, (i + 1) * seg):
                row[x] = src[x]
    if owns_items:
        for x in range(C * seg, C * seg + I):
            row[x] = src[x]


@njit(cache=True, forceinline=True)  # inlined: a call would pass the batch's arrays field by field (kernel.py)
def _replay(R, key, policy, rounds, st, sc, b, C, I):
    decode(key, st, 0, C, I, rounds)
    start(b)
    K.play_round(R, st, 0, sc, b, policy, False)
    return b.cur[OVERFLOW] == 0


@njit(cache=True)
def _group_outcomes(R, key, policy, rounds, limit_on, st, sc, b, C, I, gid, G, owner, base, loc):
    """Each group's outcomes alone (the others pinned), merged: group g's rows are ``rows[first[g]:first[g +
    1]]`` (equal to ``base`` outside it), their probabilities, hashes less the base's, and whether they free the
    group. ``status``: OK, OVER_EVENTS, or -1 where a replay showed a coupling (play the state unfactored)."""
    rows, lp, lh = loc
    width = base.shape[0]
    seg = 3 * N_SLOTS + N_DYN + I
    row = np.empty(width, dtype=np.int16)
    first = np.zeros(G + 1, dtype=np.int64)
    lm = 0
    replays = 0
    for g in range(G):
        for i in range(C):
            b.who[i] = 1 if gid[i] == g else 0
        table = np.full(16, -1, dtype=np.int64)
        first_path(b)
        while True:
            if not _replay(R, key, policy, rounds, st, sc, b, C, I):
                return rows, lp, lh, first, replays, OVER_EVENTS
            replays += 1
            encode(st, 0, row, C, I, limit_on)
            untouched, delta = _delta(row, base, gid, g, seg, C, I, g == owner)
            if st.runs[0, K.OUTCOME] == K.CAUGHT or not untouched:
                return rows, lp, lh, first, replays, -1
            table, rows, lp, lh, lm = _put(table, rows, lp, lh, first[g], lm, row, b.prob[0], delta)
            if not advance(b):
                break
        first[g + 1] = lm
    return rows, lp, lh, first, replays, OK


@njit(cache=True)
def _new_table(n, width):
    """An empty table of a round's next states (open addressing), its rows, probabilities and hashes."""
    cap = 16
    while cap < 4 * n:
        cap *= 2
    out = np.empty((max(16, 2 * n), width), dtype=np.int16)
    return np.full(cap, -1, dtype=np.int64), out, np.zeros(out.shape[0]), np.zeros(out.shape[0], dtype=np.uint64)


@njit(cache=True)
def _pin_all(b, C):
    """The next replay with every character's events pinned (their outcome counts kept in ``b.span``)."""
    for i in range(C):
        b.who[i] = 0
        b.span[i] = 1.0
    first_path(b)


@njit(cache=True)
def factor_modes(R, keys, policy, rounds, st, sc, b, C, I, factor_from):
    """For each state, whether its round is worth factoring: more than one group, and the product of the
    characters' outcome counts (on the path with every event pinned) at least ``factor_from``."""
    n = keys.shape[0]
    modes = np.zeros(n, dtype=np.bool_)
    gid = np.zeros(C, dtype=np.int64)
    for j in range(n):
        _pin_all(b, C)
        if not _replay(R, keys[j], policy, rounds, st, sc, b, C, I):
            modes[j] = True  # the factored pass reports the overflow
            continue
        if st.runs[0, K.OUTCOME] == K.CAUGHT:
            continue
        span = np.prod(b.span[:C])
        G, _ = couplings(R, sc, C, gid)
        modes[j] = G > 1 and span >= factor_from
    for i in range(C):
        b.who[i] = 1
    return modes


@njit(cache=True)
def merge_states(a, a_p, c, c_p):
    """The states of ``a`` and ``c`` (two tables of one round) in one, equal rows adding their probabilities."""
    n = a.shape[0] + c.shape[0]
    cap = 16
    while cap < 4 * n:
        cap *= 2
    table = np.full(cap, -1, dtype=np.int64)
    out = np.empty((max(16, n), a.shape[1]), dtype=np.int16)
    out_p = np.zeros(out.shape[0])
    m = 0
    for k in range(a.shape[0]):
        table, out, out_p, m = _merge(table, out, out_p, 0, m, a[k], a_p[k])
    for k in range(c.shape[0]):
        table, out, out_p, m = _merge(table, out, out_p, 0, m, c[k], c_p[k])
    return out[:m], out_p[:m]


@njit(cache=True)
def play_frontier_factored(R, keys, probs, policy, rounds, limit_on, st, sc, b, C, I, max_new, max_branches,
                           factor_from):
    """:func:`play_frontier` with the round factored by groups (the text above): the same results, plus the
    replays played and the states played unfactored. ``branches`` counts replays and combinations (the work)."""
    n, width = keys.shape
    seg = 3 * N_SLOTS + N_DYN + I
    last = rounds + 1 >= R.game[K.MAX_ROUNDS]
    table, out, out_p, hs = _new_table(n, width)
    loc = (np.empty((64, width), dtype=np.int16), np.zeros(64), np.zeros(64, dtype=np.uint64))
    m = 0
    esc = caught = timeout = 0.0
    branches = replays = fallbacks = 0
    base = np.empty(width, dtype=np.int16)
    gid = np.zeros(C, dtype=np.int64)
    for j in range(n):
        p0 = probs[j]
        _pin_all(b, C)  # every event pinned: the declarations, the attention and whether the round is caught
        if not _replay(R, keys[j], policy, rounds, st, sc, b, C, I):
            return out[:m], out_p[:m], esc, caught, timeout, branches, OVER_EVENTS, j, replays, fallbacks
        replays += 1
        branches += 1
        if st.runs[0, K.OUTCOME] == K.CAUGHT:  # R-ESC-9a: the attention is fixed by the declarations
            caught += p0
            continue
        encode(st, 0, base, C, I, limit_on)
        hb = sum_hash(base)
        G, owner = couplings(R, sc, C, gid)
        status = OK
        span = np.prod(b.span[:C])
        if G > 1 and span >= factor_from:
            rows, lp, lh, first, played, status = _group_outcomes(R, keys[j], policy, rounds, limit_on, st, sc, b,
                                                                  C, I, gid, G, owner, base, loc)
            loc = (rows, lp, lh)
            replays += played
            branches += played
        if status == OVER_EVENTS:
            return out[:m], out_p[:m], esc, caught, timeout, branches, OVER_EVENTS, j, replays, fallbacks
        if status != OK or G == 1 or span < factor_from:  # a coupling not listed above, or too few outcomes
            fallbacks += 1 if status != OK else 0
            table, out, out_p, hs, m, ends, played, ok = _plain_state(R, keys[j], p0, policy, rounds, limit_on, st,
                                                                     sc, b, C, I, base, hb, table, out, out_p, hs, m)
            esc, caught, timeout = esc + ends[0], caught + ends[1], timeout + ends[2]
            replays += played
            branches += played
            if not ok:
                return out[:m], out_p[:m], esc, caught, timeout, branches, OVER_EVENTS, j, replays, fallbacks
        else:
            table, out, out_p, hs, m, e, t, combos = _combine(
                R, rows, lp, lh, first, G, owner, gid, base, hb, p0, last, C, I, seg, table, out, out_p, hs, m,
                max_branches - branches)
            esc += e
            timeout += t
            branches += combos
        status = OVER_STATES if m > max_new else OVER_BRANCHES if branches > max_branches else OK
        if status != OK:
            return out[:m], out_p[:m], esc, caught, timeout, branches, status, j + 1, replays, fallbacks
    for i in range(C):
        b.who[i] = 1
    return out[:m], out_p[:m], esc, caught, timeout, branches, OK, n, replays, fallbacks


@njit(cache=True)
def _plain_state(R, key, p0, policy, rounds, limit_on, st, sc, b, C, I, base, hb, table, out, out_p, hs, m):
    """One state's round on every combination of its outcomes (the plain odometer) into the factored round's
    table: the table, the probabilities escaped, caught and timed out, the replays, and False on an overflow."""
    ends = np.zeros(3)
    row = np.empty(base.shape[0], dtype=np.int16)
    played = 0
    for i in range(C):
        b.who[i] = 1
    first_path(b)
    while True:
        if not _replay(R, key, policy, rounds, st, sc, b, C, I):
            return table, out, out_p, hs, m, ends, played, False
        played += 1
        q = p0 * b.prob[0]
        o = st.runs[0, K.OUTCOME]
        if o == K.ESCAPED:
            ends[0] += q
        elif o == K.CAUGHT:
            ends[1] += q
        elif o == K.TIMEOUT:
            ends[2] += q
        else:
            encode(st, 0, row, C, I, limit_on)
            table, out, out_p, hs, m = _put(table, out, out_p, hs, 0, m, row, q, _hash_from(row, base, hb))
        if not advance(b):
            break
    return table, out, out_p, hs, m, ends, played, True


@njit(cache=True)
def _combine(R, rows, lp, lh, first, G, owner, gid, base, hb, p0, last, C, I, seg, table, out, out_p, hs, m,
             room):
    """The next states of one state: every combination of its groups' outcomes (an odometer over the groups),
    probability the product, merged into the round's table; a combination that frees every group escapes; in the
    last round the rest times out (R-ESC-5 step 7). Returns the table, the probability escaped and timed out,
    and the combinations counted (more than ``room``: counted, not played; the caller refuses)."""
    done = np.empty(first[G], dtype=np.bool_)
    for g in range(G):
        for e in range(first[g], first[g + 1]):
            done[e] = _freed(R, rows[e], gid, g, seg, C)
    if last:  # no state goes on: escaped where every group is freed, timed out otherwise
        freed = total = 1.0
        for g in range(G):
            pf = pt = 0.0
            for e in range(first[g], first[g + 1]):
                pt += lp[e]
                if done[e]:
                    pf += lp[e]
            freed *= pf
            total *= pt
        return table, out, out_p, hs, m, p0 * freed, p0 * (total - freed), 1
    combos = 1
    for g in range(G):
        combos *= first[g + 1] - first[g]
    if combos > room:
        return table, out, out_p, hs, m, 0.0, 0.0, combos
    row = base.copy()
    idx = np.empty(G, dtype=np.int64)
    pref = np.ones(G + 1)
    hsum = np.zeros(G + 1, dtype=np.uint64)
    freed = np.ones(G + 1, dtype=np.bool_)
    esc = 0.0
    g = 0
    idx[0] = first[0]
    while True:
        while g < G:  # the groups from g on: their entries chosen in idx, copied into the row
            e = idx[g]
            _copy_group(row, rows[e], gid, g, seg, C, I, g == owner)
            pref[g + 1] = pref[g] * lp[e]
            hsum[g + 1] = hsum[g] + lh[e]
            freed[g + 1] = freed[g] and done[e]
            g += 1
            if g < G:
                idx[g] = first[g]
        q = p0 * pref[G]
        if freed[G]:
            esc += q
        else:
            table, out, out_p, hs, m = _put(table, out, out_p, hs, 0, m, row, q, hb + hsum[G])
        g = G - 1
        while g >= 0 and idx[g] + 1 >= first[g + 1]:
            g -= 1
        if g < 0:
            break
        idx[g] += 1
    return table, out, out_p, hs, m, esc, 0.0, combos


def initial_keys(p: EscapeParams) -> np.ndarray:
    st = K.initial_batch(p, 1)
    row = np.zeros(key_width(p.n_chars, p.n_items), dtype=np.int16)
    encode(st, 0, row, p.n_chars, p.n_items, bool(p.attention_limit))
    return row.reshape(1, -1)


class CompiledSearch:
    """The forward dynamic program of the compiled engine, round by round (see the module's text)."""

    def __init__(self, p: EscapeParams, policy: str, max_states: int, max_branches: int,
                 factored: bool | None = None):
        self.started = time.perf_counter()
        self.p, self.policy = p, K.POLICY_CODES[policy]
        self.max_states, self.max_branches = max_states, max_branches
        if int(np.max(np.abs(p.comp_max), initial=0)) > 30000:
            raise Uncovered("composure beyond the compiled engine's int16 state")
        self.R = K.rules_of(p)
        self.st, self.sc, self.b = K.initial_batch(p, 1), K.new_scratch(p), new_branching()
        self.keys, self.probs = initial_keys(p), np.ones(1)
        self.escaped_at = [0.0] * (p.max_rounds + 1)
        self.caught = self.timeout = 0.0
        self.states = self.branches = self.replays = self.fallbacks = 0
        #: issue 35 item 2: the round factored by groups of coupled characters (a party of one is one group)
        self.factored = (FACTORED if factored is None else factored) and p.n_chars > 1
        self.peak = 1
        self.per_state: float | None = None

    def run(self, refuse) -> None:
        """Every round; ``refuse(rnd, binds, states, branches, projected, eta)`` builds the refusal to raise."""
        p = self.p
        for rnd in range(1, p.max_rounds + 1):
            n = len(self.keys)
            if not n:
                break
            self._project(rnd, n, refuse)
            args = (self.R, self.keys, self.probs, self.policy, rnd - 1, bool(p.attention_limit), self.st, self.sc,
                    self.b, p.n_chars, p.n_items, max(0, self.max_states - self.states - n),
                    max(0, self.max_branches - self.branches))
            if self.factored:
                out, out_p, esc, cau, tmo, played, status, done, replays, fallbacks = self._factored(args)
            else:
                out, out_p, esc, cau, tmo, played, status, done = play_frontier(*args)
                replays, fallbacks = played, 0
            self.branches += played
            self.replays += replays
            self.fallbacks += fallbacks
            if status == OVER_EVENTS:
                raise Uncovered("a round with more random events than the compiled source holds")
            if status == OVER_STATES:  # the next round's states known so far already exceed the budget
                raise refuse(rnd, "states", self.states + n + len(out), self.branches, True, None)
            if status != OK:
                raise refuse(rnd, "branches", self.states + done, self.branches, False, None)
            self.states += n
            self.per_state = played / n
            self.escaped_at[rnd] = esc
            self.caught += cau
            self.timeout += tmo
            self.keys, self.probs = out, out_p
            self.peak = max(self.peak, len(out))

    def _factored(self, args: tuple) -> tuple:
        """One round, its states split by :func:`factor_modes`: those worth it factored, the rest by the plain
        odometer (:func:`play_frontier`), the two tables merged."""
        R, keys, probs, policy, rounds, limit_on, st, sc, b, C, I, max_new, max_branches = args
        modes = factor_modes(R, keys, policy, rounds, st, sc, b, C, I, FACTOR_FROM)
        plain = ~modes
        out, out_p, esc, cau, tmo, played, status, done = play_frontier(
            R, keys[plain], probs[plain], policy, rounds, limit_on, st, sc, b, C, I, max_new, max_branches)
        played += len(keys)  # the pinned replays of factor_modes
        if status != OK or not modes.any():
            return out, out_p, esc, cau, tmo, played, status, done, played, 0
        f_out, f_p, f_esc, f_cau, f_tmo, f_played, status, f_done, replays, fallbacks = play_frontier_factored(
            R, keys[modes], probs[modes], policy, rounds, limit_on, st, sc, b, C, I, max_new,
            max(0, max_branches - played), 0)
        if len(out):
            out, out_p = merge_states(f_out, f_p, out, out_p)
        else:
            out, out_p = f_out, f_p
        if status == OK and len(out) > max_new:
            status = OVER_STATES
        return (out, out_p, esc + f_esc, cau + f_cau, tmo + f_tmo, played + f_played, status,
                int(plain.sum()) + f_done, played + replays, fallbacks)

    def _project(self, rnd: int, n: int, refuse) -> None:
        """Refuse before the round when its states, or its replays projected from those per state so far, would
        exceed the budgets by more than the margin."""
        if self.states + n > self.max_states:
            raise refuse(rnd, "states", self.states + n, self.branches, True, None)
        if self.per_state is None:
            return
        projected = self.branches + n * self.per_state
        if projected > PROJECTION_MARGIN * self.max_branches:
            spent = time.perf_counter() - self.started
            eta = spent / max(1, self.branches) * n * self.per_state
            raise refuse(rnd, "branches", self.states + n, int(projected), True, eta)

    def engine_block(self) -> dict:
        return {"engine": "compiled", "states": self.states, "peak_states": self.peak,
                "max_states": self.max_states, "max_branches": self.max_branches, "branches": self.branches,
                "replays": self.replays, "seconds": round(time.perf_counter() - self.started, 4)}


__all__ = ["CompiledSearch", "FIXED", "Uncovered"]


# ---------------------------------------------------------------------------------------------
# optimal play (sim/escape/optimal_fast.py): every joint choice of many states in one call, the next states numbered
# in one table for the whole solve. Here, not there, because it inlines the kernel's round (the cache guard of
# sim/escape/branching.py covers this module).


@njit(cache=True)
def _room(a, need):
    """``a`` with room for ``need`` entries (doubled as needed; the entries kept)."""
    if need <= a.shape[0]:
        return a
    cap = max(16, a.shape[0])
    while cap < need:
        cap *= 2
    grown = np.empty(cap, dtype=a.dtype)
    grown[:a.shape[0]] = a
    return grown


@njit(cache=True)
def number_row(table, rows, n, row):
    """The number of the state ``row`` among ``rows[:n]`` (open addressing in ``table``), a new one if it is not there:
    (table, rows, n, its number), the arrays grown as needed."""
    h, idx = _probe(table, rows, row)
    if idx >= 0:
        return table, rows, n, idx
    if n == rows.shape[0]:
        grown = np.empty((2 * n, rows.shape[1]), dtype=np.int16)
        grown[:n] = rows[:n]
        rows = grown
    rows[n] = row
    table[h] = n
    n += 1
    if 2 * n > table.shape[0]:
        table = np.full(2 * table.shape[0], -1, dtype=np.int64)
        _rehash(table, rows, 0, n)
    return table, rows, n, n - 1


@njit(cache=True)
def expand_states(R, todo, proj, plans, plan_first, rounds, limit_on, st, sc, b, C, I, table, rows, n_rows,  # noqa: PLR0913
                  cfirst, ccount, c_first, c_esc, c_cau, n_ch, s_id, s_p, n_s, max_branches):
    """Every joint choice of each state ``todo[j]`` (its choices: the plans ``plan_first[proj[j]]`` ..
    ``plan_first[proj[j] + 1] - 1``) played by :func:`play_choices`, stored as compressed rows: state ``sid``'s
    choices are ``cfirst[sid]`` .. ``cfirst[sid] + ccount[sid] - 1``; choice ``c`` escapes with ``c_esc[c]``, is
    caught with ``c_cau[c]`` and goes to the states ``s_id[c_first[c]:c_first[c + 1]]`` with probabilities
    ``s_p[...]`` (new states numbered in ``table``). Returns the arrays (grown), their counts, the replays played, a
    status (OK, OVER_BRANCHES, OVER_EVENTS) and the states done."""
    branches = 0
    for j in range(todo.shape[0]):
        sid = todo[j]
        lo, hi = plan_first[proj[j]], plan_first[proj[j] + 1]
        out, out_p, first, esc, cau, played, overflow = play_choices(R, rows[sid], plans[lo:hi], rounds, limit_on,
                                                                     st, sc, b, C, I)
        if overflow:
            return (table, rows, n_rows, c_first, c_esc, c_cau, n_ch, s_id, s_p, n_s, branches, OVER_EVENTS, j)
        branches += played
        nk = hi - lo
        c_first = _room(c_first, n_ch + nk + 1)
        c_esc = _room(c_esc, n_ch + nk)
        c_cau = _room(c_cau, n_ch + nk)
        s_id = _room(s_id, n_s + out.shape[0])
        s_p = _room(s_p, n_s + out.shape[0])
        cfirst[sid] = n_ch
        ccount[sid] = nk
        for k in range(nk):
            c = n_ch + k
            c_esc[c] = esc[k]
            c_cau[c] = cau[k]
            c_first[c] = n_s
            for x in range(first[k], first[k + 1]):
                table, rows, n_rows, idx = number_row(table, rows, n_rows, out[x])
                s_id[n_s] = idx
                s_p[n_s] = out_p[x]
                n_s += 1
        n_ch += nk
        c_first[n_ch] = n_s
        if branches > max_branches:
            return (table, rows, n_rows, c_first, c_esc, c_cau, n_ch, s_id, s_p, n_s, branches, OVER_BRANCHES, j + 1)
    return (table, rows, n_rows, c_first, c_esc, c_cau, n_ch, s_id, s_p, n_s, branches, OK, todo.shape[0])
