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
def _merge(table, out, out_p, lo, m, row, q):
    """Adds probability ``q`` to the state ``row`` among the states ``lo`` .. ``m`` - 1 of ``out`` (a new one if it
    is not there), growing the arrays and the table as needed; returns them and the new count."""
    mask = table.shape[0] - 1
    h = np.int64(row_hash(row) & np.uint64(mask))
    while True:
        idx = table[h]
        if idx < 0:
            break
        if _same(out[idx], row):
            out_p[idx] += q
            return table, out, out_p, m
        h = (h + 1) & mask
    if m == out.shape[0]:
        grown = np.empty((2 * m, out.shape[1]), dtype=np.int16)
        grown[:m] = out
        out = grown
        grown_p = np.zeros(2 * m)
        grown_p[:m] = out_p
        out_p = grown_p
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


def initial_keys(p: EscapeParams) -> np.ndarray:
    st = K.initial_batch(p, 1)
    row = np.zeros(key_width(p.n_chars, p.n_items), dtype=np.int16)
    encode(st, 0, row, p.n_chars, p.n_items, bool(p.attention_limit))
    return row.reshape(1, -1)


class CompiledSearch:
    """The forward dynamic program of the compiled engine, round by round (see the module's text)."""

    def __init__(self, p: EscapeParams, policy: str, max_states: int, max_branches: int):
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
        self.states = self.branches = 0
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
            out, out_p, esc, cau, tmo, played, status, done = play_frontier(
                self.R, self.keys, self.probs, self.policy, rnd - 1, bool(p.attention_limit), self.st, self.sc,
                self.b, p.n_chars, p.n_items, max(0, self.max_states - self.states - n),
                max(0, self.max_branches - self.branches))
            self.branches += played
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
                "replays": self.branches, "seconds": round(time.perf_counter() - self.started, 4)}


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
    mask = table.shape[0] - 1
    h = np.int64(row_hash(row) & np.uint64(mask))
    while True:
        idx = table[h]
        if idx < 0:
            break
        if _same(rows[idx], row):
            return table, rows, n, idx
        h = (h + 1) & mask
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
