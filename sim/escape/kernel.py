"""Vectorized kernel of the escape challenge: every array has the batch axis first.

The kernel mirrors :mod:`sim.escape.reference` rule for rule and reads the same columns of the
same per-round uniform block, so both give identical per-run results (tests prove it). Finished
runs stay in the batch: each round works on the active rows only and writes them back, while
the random block is drawn for the whole batch every round (STYLE.md practice 3).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from sim.dice import CHECK_DENOMINATOR, MAX_NET_DICE, DiceExpr, check_table_array, faces_from_uniform
from sim.escape.params import (
    ARMS,
    BLINDFOLD,
    BODY,
    COMPLETE,
    DEX,
    EARPLUGS,
    FINGERS,
    GAG,
    HARNESS,
    INT,
    LEGS,
    MARK_HASH,
    MARK_PLUS,
    MARK_STAR,
    MARK_X,
    MASK,
    MODERATE,
    N_SLOTS,
    SEVERE,
    STR,
    UTTER,
    EscapeParams,
)

NONE, STRUGGLE, ASSIST, GUIDE, SEARCH, REST, UNTIE, USE_ITEM, BLESS = range(9)
OUTCOME_NAMES = ("", "escaped", "caught", "timeout")
ACTIVE, ESCAPED, CAUGHT, TIMEOUT = range(4)
_TABLE = check_table_array()
_NEED_MAX = _TABLE.shape[-1] - 1


@dataclass
class BatchState:
    """State of a batch of runs (batch axis first; C characters, S slots, I items)."""

    tiers: np.ndarray  # (n, C, S) int16
    acc: np.ndarray  # (n, C, S) int32
    streak: np.ndarray  # (n, C, S) int16
    last_slot: np.ndarray  # (n, C) int16, -1 none
    composure: np.ndarray  # (n, C) int32
    craving: np.ndarray
    dazed_left: np.ndarray
    breath: np.ndarray
    save_bonus: np.ndarray
    immune_until: np.ndarray
    item_bonus: np.ndarray
    held: np.ndarray  # (n, C, I) int16 counts of held release items
    blessed: np.ndarray  # (n, C) bool
    attention: np.ndarray  # (n,) int64
    item_left: np.ndarray  # (n, I) int64, -1 unlimited
    outcome: np.ndarray  # (n,) int8
    rounds: np.ndarray  # (n,) int32
    freed_round: np.ndarray  # (n, C) int32, 0 none
    checks: np.ndarray
    successes: np.ndarray
    overloads: np.ndarray
    items_found: np.ndarray
    rounds_at_tier: np.ndarray  # (n, C, 9)
    checks_at_tier: np.ndarray
    successes_at_tier: np.ndarray

    def take(self, rows: np.ndarray) -> BatchState:
        return BatchState(**{f.name: getattr(self, f.name)[rows] for f in fields(self)})

    def put(self, rows: np.ndarray, sub: BatchState) -> None:
        for f in fields(self):
            getattr(self, f.name)[rows] = getattr(sub, f.name)


def initial_batch(p: EscapeParams, n: int) -> BatchState:
    C, S, I = p.n_chars, N_SLOTS, p.n_items

    def z(*shape, dtype=np.int64):
        return np.zeros((n, *shape), dtype=dtype)

    return BatchState(
        tiers=np.broadcast_to(p.init_tiers.astype(np.int64), (n, C, S)).copy(),
        acc=z(C, S), streak=z(C, S), last_slot=np.full((n, C), -1, dtype=np.int64),
        composure=np.broadcast_to(p.comp_max.astype(np.int64), (n, C)).copy(), craving=z(C), dazed_left=z(C),
        breath=np.broadcast_to(p.breath_points.astype(np.int64), (n, C)).copy(), save_bonus=z(C),
        immune_until=z(C), item_bonus=z(C), held=z(C, I), blessed=z(C, dtype=bool),
        attention=z(dtype=np.int64), item_left=np.broadcast_to(p.item_count, (n, I)).copy(),
        outcome=z(dtype=np.int8), rounds=z(), freed_round=z(C), checks=z(C), successes=z(C), overloads=z(C),
        items_found=z(C), rounds_at_tier=z(C, 9), checks_at_tier=z(C, 9), successes_at_tier=z(C, 9),
    )


# ---------------------------------------------------------------------------------------------
# helpers


def _net(bonus: np.ndarray, penalty: np.ndarray, mode: str) -> np.ndarray:
    """R-GEN-4 stacking, vectorized (see sim.dice.net_dice)."""
    if mode == "cancel":
        return (bonus > 0).astype(np.int64) - (penalty > 0)
    return bonus - penalty


_FLAT = _TABLE.ravel()
_S_NET, _S_BLESS, _S_BREATH = _TABLE.strides[0] // 8, _TABLE.strides[1] // 8, _TABLE.strides[2] // 8


def _numerator(net, need, blessed, breath) -> np.ndarray:
    """Exact check numerators from the flattened lookup table (sim.dice.check_table_array)."""
    idx = (net + MAX_NET_DICE) * _S_NET + blessed * _S_BLESS + breath * _S_BREATH + np.clip(need, 0, _NEED_MAX)
    return _FLAT[idx]


def _roll(u: np.ndarray, col: int, expr: DiceExpr, mods: dict) -> np.ndarray:
    """Vectorized dice expression from uniform columns ``u[:, col:]`` (rows = runs)."""
    total = np.full(u.shape[0], expr.constant + expr.ability_part(mods), dtype=np.int64)
    for term in expr.dice:
        faces = faces_from_uniform(u[:, col : col + term.count], term.sides)
        total += term.sign * faces.sum(axis=1)
        col += term.count
    return total


def _highest_flat(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(any > 0, first index of the maximum) over the last axis; ties go to the lowest index."""
    return t.max(axis=1) > 0, t.argmax(axis=1)


def _col_min(a: np.ndarray) -> np.ndarray:
    """Row minimum over a small last axis, column by column (faster than a small-axis reduction)."""
    out = a[:, 0].copy()
    for j in range(1, a.shape[1]):
        np.minimum(out, a[:, j], out=out)
    return out


def can_help_physically(t: np.ndarray) -> np.ndarray:
    """R-ESC-7 on tiers (m, S)."""
    return (t[:, FINGERS] == 0) & (t[:, ARMS] < COMPLETE) & (t[:, LEGS] < COMPLETE) & (t[:, BODY] == 0)


def can_untie_self(t: np.ndarray) -> np.ndarray:
    return (t[:, ARMS] == 0) & (t[:, FINGERS] == 0) & (t[:, BODY] == 0)


_KEY_SCALE = 1000  # key = numerator * 1000 + tie-break (< 1000)
_KEYFLAT = np.append(_FLAT * _KEY_SCALE, -(10**12))  # last entry: "may not be struggled"
_INVALID = len(_FLAT)


@dataclass(frozen=True)
class StruggleTable:
    """Best ranking key of each (character, slot) for every context, precomputed from the exact check
    numerators: key[i, s, need0 - lo, ctx] = max over the allowed abilities of numerator * 1000 +
    slot-order and ability-order tie-breaks (R-ESC-20 step 2, R-ESC-31). ``need0`` = DC - acc -
    item bonus (clipped to [lo, hi], outside which every ability is certain or hopeless) and ``ctx``
    = blessed * 8 + mask penalty * 4 + finger penalty * 2 + str only (R-ESC-11)."""

    keys: np.ndarray  # (C, S, hi - lo + 1, 16)
    lo: int
    hi: int


def struggle_table(p: EscapeParams) -> StruggleTable:
    const = p.escape_mod + p.artist_bonus  # (C, 3): ability modifier + escape artist
    lo, hi = int(const.min()), int(const.max()) + _NEED_MAX
    need0 = np.arange(lo, hi + 1)
    keys = np.full((p.n_chars, N_SLOTS, len(need0), 16), -(10**12), dtype=np.int64)
    for ctx in range(16):
        blessed, mask_pen, finger_pen, str_only = ctx >> 3 & 1, ctx >> 2 & 1, ctx >> 1 & 1, ctx & 1
        for a, pen in ((STR, mask_pen), (DEX, finger_pen), (INT, 0)):
            if a != STR and str_only:
                continue
            for i in range(p.n_chars):
                need = np.clip(need0 - const[i, a], 0, _NEED_MAX)
                num = _FLAT[(MAX_NET_DICE - pen) * _S_NET + blessed * _S_BLESS + need]
                for s in range(N_SLOTS):
                    if a == DEX and s == FINGERS and pen:
                        continue  # the fingers' own dex check has no fingers penalty (filled by ctx - 2)
                    key = num * _KEY_SCALE + (N_SLOTS - 1 - s) * 3 + (2 - a)
                    keys[i, s, :, ctx] = np.maximum(keys[i, s, :, ctx], key)
    # the fingers slot never takes the fingers penalty: copy the penalty-free context
    for ctx in range(16):
        if ctx >> 1 & 1:
            keys[:, FINGERS, :, ctx] = keys[:, FINGERS, :, ctx - 2]
    return StruggleTable(keys, lo, hi)


def struggle_keys(p: EscapeParams, st: BatchState, i: int,
                  slots: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Ranking keys (k, m) of the best ability on each candidate slot of character i, batch axis last
    so the best pair is a fast max over axis 0 (R-ESC-20 step 2). key = numerator * 1000 + 100 (the
    slot struggled last round, added by the caller) + slot-order and ability-order tie-breaks (< 100,
    so the key names its pair); negative where the slot may not be struggled. Candidate slots: the
    ``slots`` mask (default the goal slots) among those bound at the start (tiers never rise)."""
    cand = np.flatnonzero((p.goal if slots is None else slots) & (p.init_tiers[i] > 0))
    m = st.tiers.shape[0]
    keys = np.empty((len(cand), m), dtype=np.int64)
    if not len(cand):
        return keys, cand
    table = p_tables(p)
    fingers = st.tiers[:, i, FINGERS]
    body = st.tiers[:, i, BODY] >= 1  # R-ESC-11 body: only the body slot, only str
    str_only = body | (fingers >= MODERATE)  # R-ESC-11 fingers at moderate or above: str only
    finger_bit = (fingers >= 1) * 2  # R-ESC-11 fingers: penalty die on dex of other slots
    ctx = st.blessed[:, i] * 8 + (st.tiers[:, i, MASK] >= 1) * 4 + finger_bit + str_only  # R-ESC-11 mask
    item = st.item_bonus[:, i]
    width = table.hi - table.lo + 1
    for j, s in enumerate(cand):
        t = st.tiers[:, i, s]
        need0 = p.dc[t] - st.acc[:, i, s] - item
        idx = (np.clip(need0, table.lo, table.hi) - table.lo) * 16 + ctx
        key = table.keys[i, s].reshape(width * 16)[idx]
        star = (p.mark[t] == MARK_STAR) & (st.streak[:, i, s] == 1)  # `*` second round: certain, str first
        key[star] = CHECK_DENOMINATOR * _KEY_SCALE + (N_SLOTS - 1 - s) * 3 + 2
        ok = (t >= 1) & (t < UTTER)
        if s != BODY:
            ok &= ~body
        keys[j] = np.where(ok, key, -(10**12))
    return keys, cand


_TABLES: dict[int, tuple[EscapeParams, StruggleTable]] = {}


def p_tables(p: EscapeParams) -> StruggleTable:
    """The struggle table of ``p`` (computed once per parameter object)."""
    hit = _TABLES.get(id(p))
    if hit is None or hit[0] is not p:
        if len(_TABLES) > 64:
            _TABLES.clear()
        hit = (p, struggle_table(p))
        _TABLES[id(p)] = hit
    return hit[1]


@dataclass
class Plan:
    kind: np.ndarray  # (m, C) int8
    slot: np.ndarray
    ability: np.ndarray
    target: np.ndarray
    item: np.ndarray  # item type index
    breath: np.ndarray  # bool
    num: np.ndarray  # declared numerator (struggles), without help


def _covered(p: EscapeParams, held: np.ndarray, tiers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For tiers (m, K): whether a held item covers it, and which (smallest max_tier, then index)."""
    I = p.n_items
    if I == 0:
        return np.zeros(tiers.shape, dtype=bool), np.zeros(tiers.shape, dtype=np.int64)
    ok = (held[:, None, :] > 0) & (p.item_max_tier[None, None, :] >= tiers[:, :, None]) & (tiers[:, :, None] > 0)
    key = np.where(ok, p.item_max_tier[None, None, :] * (I + 1) + np.arange(I)[None, None, :], np.iinfo(np.int64).max)
    return ok.any(axis=2), key.argmin(axis=2)


def _empty_plan(m: int, C: int) -> Plan:
    return Plan(
        kind=np.zeros((m, C), dtype=np.int8), slot=np.full((m, C), -1, dtype=np.int64),
        ability=np.full((m, C), -1, dtype=np.int64), target=np.full((m, C), -1, dtype=np.int64),
        item=np.full((m, C), -1, dtype=np.int64), breath=np.zeros((m, C), dtype=bool),
        num=np.zeros((m, C), dtype=np.int64),
    )


def _choose_struggle(p: EscapeParams, st: BatchState, plan: Plan, i: int, todo: np.ndarray,
                     slots: np.ndarray | None = None) -> np.ndarray:
    """Declare the best (slot, ability) for rows ``todo`` that have one; ties: the slot struggled
    last round, slot order, then str, dex, int (R-ESC-31). Returns the mask of rows chosen."""
    keys, cand = struggle_keys(p, st, i, slots)
    if not len(cand):
        return np.zeros_like(todo)
    last = st.last_slot[:, i]
    for j, s in enumerate(cand):
        keys[j] += (last == s) * 100
    best = keys.max(axis=0)
    sel = todo & (best >= 0)
    rr = np.flatnonzero(sel)
    b = best[rr]
    low = b % 100
    plan.kind[rr, i] = STRUGGLE
    plan.slot[rr, i] = N_SLOTS - 1 - low // 3
    plan.ability[rr, i] = 2 - low % 3
    num = b // _KEY_SCALE
    plan.num[rr, i] = num
    if p.is_monk[i]:  # R-ESC-31: a monk spends breath when the probability is below 1/2
        sr = rr[(st.breath[rr, i] > 0) & (2 * num < CHECK_DENOMINATOR)]
        if len(sr):
            plan.breath[sr, i] = True
            plan.num[sr, i] = _check_parts(p, st, plan, i, sr)[0]  # the declared check includes the breath
    return sel


def _goal_top(p: EscapeParams, st: BatchState, i: int) -> tuple[np.ndarray, np.ndarray]:
    """(highest goal tier, its slot; ties in slot order) of character i over all rows."""
    key = np.zeros(st.tiers.shape[0], dtype=np.int64)
    for s in np.flatnonzero(p.goal & (p.init_tiers[i] > 0)):
        key = np.maximum(key, st.tiers[:, i, s] * 16 + (15 - s))
    tier = key >> 4
    return tier, 15 - (key & 15)


def _own_steps(p: EscapeParams, st: BatchState, plan: Plan, i: int, todo: np.ndarray,
               goal_top: tuple[np.ndarray, np.ndarray]) -> None:
    """Greedy steps 1-3 with the item steps (R-ESC-20, R-ESC-31) for character i on rows ``todo``."""
    C = plan.kind.shape[1]
    t = st.tiers[:, i]
    free_hands = (t[:, ARMS] == 0) & (t[:, FINGERS] == 0) & (t[:, BODY] == 0)
    # step 1: untie its own highest-tier goal restraint
    top_tier, top_slot = goal_top
    sel = todo & free_hands & (top_tier > 0)
    rr = np.flatnonzero(sel)
    plan.kind[rr, i], plan.slot[rr, i], plan.target[rr, i] = UNTIE, top_slot[rr], i
    todo = todo & ~sel
    # after step 1: a held release item on its own highest-tier covered goal restraint
    if p.has_release:
        rows = np.flatnonzero(todo & (st.held[:, i, :].sum(axis=1) > 0))
        if len(rows):
            goal_t = st.tiers[rows, i] * p.goal
            cov, which = _covered(p, st.held[rows, i, :], goal_t)
            covered_t = np.where(cov, goal_t, 0)
            s_pick = covered_t.argmax(axis=1)
            hit = covered_t.max(axis=1) > 0
            rr = rows[hit]
            plan.kind[rr, i], plan.slot[rr, i], plan.target[rr, i] = USE_ITEM, s_pick[hit], i
            plan.item[rr, i] = which[hit, s_pick[hit]]
            todo[rr] = False
    # step 2: struggle the best (slot, ability)
    todo = todo & ~_choose_struggle(p, st, plan, i, todo)
    phys = can_help_physically(t)
    # step 3: untie a teammate's highest-tier restraint (any slot), party then slot order
    sub = np.flatnonzero(todo & phys & free_hands)
    if len(sub):
        mates = st.tiers[sub] * (np.arange(C) != i)[None, :, None]
        flat = mates.reshape(len(sub), -1)
        pick = flat.argmax(axis=1)
        hit = flat[np.arange(len(sub)), pick] > 0
        rr = sub[hit]
        plan.kind[rr, i], plan.target[rr, i], plan.slot[rr, i] = UNTIE, pick[hit] // N_SLOTS, pick[hit] % N_SLOTS
        todo[rr] = False
    # after step 3: a held release item on the highest-tier teammate restraint it covers
    if p.has_release:
        sub = np.flatnonzero(todo & phys & (st.held[:, i, :].sum(axis=1) > 0))
        if len(sub):
            mates = (st.tiers[sub] * (np.arange(C) != i)[None, :, None]).reshape(len(sub), -1)
            cov, which = _covered(p, st.held[sub, i, :], mates)
            covered_t = np.where(cov, mates, 0)
            pick = covered_t.argmax(axis=1)
            hit = covered_t.max(axis=1) > 0
            rr = sub[hit]
            plan.kind[rr, i], plan.target[rr, i] = USE_ITEM, pick[hit] // N_SLOTS
            plan.slot[rr, i] = pick[hit] % N_SLOTS
            plan.item[rr, i] = which[hit, pick[hit]]


def greedy_plan(p: EscapeParams, st: BatchState, dazed: np.ndarray, goal_top=None) -> Plan:
    """R-ESC-20 / R-ESC-31, vectorized over runs (loops over characters). ``goal_top``: each
    character's (highest goal tier, its slot) at the start of the round, if already known."""
    goal_top = goal_top or [_goal_top(p, st, i) for i in range(dazed.shape[1])]
    plan = _empty_plan(*dazed.shape)
    for i in range(dazed.shape[1]):
        _own_steps(p, st, plan, i, ~dazed[:, i], goal_top[i])
    _finish_plan(p, st, dazed, plan, goal_top)
    return plan


def arms_first_plan(p: EscapeParams, st: BatchState, dazed: np.ndarray, goal_top=None) -> Plan:
    """`arms_first`: without free hands, struggle the arms while bound, then the fingers; otherwise greedy."""
    goal_top = goal_top or [_goal_top(p, st, i) for i in range(dazed.shape[1])]
    plan = _empty_plan(*dazed.shape)
    for i in range(dazed.shape[1]):
        todo = ~dazed[:, i] & ~can_untie_self(st.tiers[:, i])
        rest = ~dazed[:, i]
        for slot in (ARMS, FINGERS):
            sel = _choose_struggle(p, st, plan, i, todo & (st.tiers[:, i, slot] > 0), np.arange(N_SLOTS) == slot)
            todo &= ~sel
            rest &= ~sel
        _own_steps(p, st, plan, i, rest, goal_top[i])
    _finish_plan(p, st, dazed, plan, goal_top)
    return plan


def _check_parts(p: EscapeParams, st: BatchState, plan: Plan, i: int, rows: np.ndarray, help_=None):
    """(numerator, net, need) of character i's declared struggle on ``rows``, with ``help_`` =
    (assisted, guide, mage) arrays for those rows, or None (R-ESC-4, R-ESC-8, R-ESC-9, R-ESC-11).
    Gathers use flat indices (``np.take``), much faster than three-array fancy indexing."""
    C = plan.kind.shape[1]
    rc = rows * C + i
    s = np.take(plan.slot, rc)
    a = np.take(plan.ability, rc)
    br = np.take(plan.breath, rc)
    rcs = rc * N_SLOTS
    t = np.take(st.tiers, rcs + s)
    static = p.escape_mod[i][a] + np.take(st.acc, rcs + s) + np.take(st.item_bonus, rc) + p.artist_bonus[i][a]
    static = static + br * p.wis_mod[i]
    assisted = 0
    if help_ is not None:
        assisted, guide, mage = help_
        static = static + guide + mage
    pen = (a == DEX) & (np.take(st.tiers, rcs + FINGERS) >= 1) & (s != FINGERS)
    pen = pen.astype(np.int64) + ((a == STR) & (np.take(st.tiers, rcs + MASK) >= 1))
    net = _net(np.asarray(assisted, dtype=np.int64), pen, p.stacking)
    need = p.dc[t] - static
    num = _numerator(net, need, np.take(st.blessed, rc).astype(np.int64), br.astype(np.int64))
    auto = (p.mark[t] == MARK_STAR) & (np.take(st.streak, rcs + s) == 1)
    return np.where(auto, CHECK_DENOMINATOR, num), net, need


def _finish_plan(p: EscapeParams, st: BatchState, dazed: np.ndarray, plan: Plan, goal_top) -> None:
    """Greedy steps 4-6 for every character without a plan, once the struggles are known."""
    m, C = dazed.shape
    struggling = plan.kind == STRUGGLE
    decl = np.where(struggling, plan.num, -1)
    others_goal = np.stack([goal_top[j][0] > 0 for j in range(C)], axis=1)  # (m, C)
    big = np.iinfo(np.int64).max
    for i in range(C):
        t = st.tiers[:, i, :]
        todo = (~dazed[:, i]) & (plan.kind[:, i] == NONE)
        cand = struggling & (np.arange(C) != i)[None, :]
        key = np.where(cand, decl * (C + 1) + np.arange(C)[None, :], big)  # lowest numerator, then party order
        phys = can_help_physically(t)
        mage_hand = p.is_mage_hand[i] & (t[:, ARMS] == 0) & (t[:, FINGERS] == 0)
        low = _col_min(key)
        sel = todo & (low < big) & (phys | mage_hand)  # step 4: assist the weakest struggler
        plan.kind[sel, i], plan.target[sel, i] = ASSIST, (low % (C + 1))[sel]
        todo &= ~sel
        guidable = cand & (st.tiers[:, :, EARPLUGS] == 0)  # else guide
        low = _col_min(np.where(guidable, key, big))
        sel = todo & (t[:, GAG] == 0) & (t[:, BLINDFOLD] == 0) & (low < big)
        plan.kind[sel, i], plan.target[sel, i] = GUIDE, (low % (C + 1))[sel]
        todo &= ~sel
        if p.is_cleric[i]:  # else bless, while another member has a goal slot above 0
            sel = todo & (t[:, GAG] == 0) & np.where((np.arange(C) != i)[None, :], others_goal, False).any(axis=1)
            plan.kind[sel, i] = BLESS
            todo &= ~sel
        if p.search_on:  # step 5
            sel = todo & (t[:, BLINDFOLD] == 0) & (t[:, LEGS] < COMPLETE) & (t[:, BODY] == 0)
            plan.kind[sel, i] = SEARCH
            todo &= ~sel
        plan.kind[todo, i] = REST  # step 6


# ---------------------------------------------------------------------------------------------
# the round


def step(p: EscapeParams, st: BatchState, block: np.ndarray, plan_fn=greedy_plan) -> None:
    """One round (R-ESC-5) for every run of ``st`` (all active), in place. ``block`` is the
    round's uniform block (m, C, width) for these runs."""
    m, C = st.composure.shape
    rows = np.arange(m)
    lay = p.layout
    st.rounds += 1
    rnd = st.rounds
    dazed = st.dazed_left > 0
    st.blessed &= ~dazed  # R-ESC-33: a dazed character loses its blessing
    not_freed = st.freed_round == 0
    goal_top = [_goal_top(p, st, i) for i in range(C)]
    top = np.stack([g[0] for g in goal_top], axis=1)  # highest goal tier per character
    rec = not_freed & (top > 0)
    rr, cc = np.nonzero(rec)
    st.rounds_at_tier[rr, cc, top[rec]] += 1  # (run, char) pairs are unique

    # (1) declarations
    plan = plan_fn(p, st, dazed, goal_top)
    kind = plan.kind

    # (2) help attaches to this round's checks (R-ESC-8, R-ESC-9, R-ESC-14); attention (R-ESC-9a)
    assisted = np.zeros((m, C), dtype=bool)
    guide = np.zeros((m, C), dtype=np.int64)
    mage = np.zeros((m, C), dtype=np.int64)
    helped_by = np.zeros((m, C, C), dtype=bool)  # [run, target, helper]
    attention = np.full(m, p.att_per_round, dtype=np.int64)
    bless_next = np.zeros((m, C), dtype=bool)
    for i in range(C):
        k = kind[:, i]
        tgt = np.where(plan.target[:, i] >= 0, plan.target[:, i], 0)
        a_sel = k == ASSIST
        t = st.tiers[:, i, :]
        mb = np.where(p.is_mage_hand[i] & (t[:, ARMS] == 0) & (t[:, FINGERS] == 0) & (t[:, GAG] == 0),
                      p.mage_bonus[i], 0)
        r = rows[a_sel]
        assisted[r, tgt[a_sel]] = True
        mage[r, tgt[a_sel]] = np.maximum(mage[r, tgt[a_sel]], mb[a_sel])
        g_sel = k == GUIDE
        r = rows[g_sel]
        guide[r, tgt[g_sel]] = np.maximum(guide[r, tgt[g_sel]], p.guide_bonus[i])
        h = a_sel | g_sel
        helped_by[rows[h], tgt[h], i] = True
        attention += np.where(a_sel, p.att_assist, 0) + np.where(g_sel, p.att_guide, 0)
        attention += np.where(((k == UNTIE) | (k == USE_ITEM)) & (tgt != i), p.att_assist, 0)
        attention += np.where(k == SEARCH, p.att_search, 0)
        if p.is_cleric[i]:
            b = k == BLESS
            others = np.arange(C) != i
            bless_next |= b[:, None] & others[None, :]

    # (3) struggles in party order
    struggled = np.where(kind == STRUGGLE, plan.slot, -1)
    harness_on = st.tiers[:, :, HARNESS] >= 1
    for i in range(C):
        sel = kind[:, i] == STRUGGLE
        if not sel.any():
            continue
        r = rows[sel]
        rc = r * C + i
        fl = rc * N_SLOTS + np.take(plan.slot, rc)
        tier = np.take(st.tiers, fl)
        hit = np.take(assisted, rc)
        _, net, need = _check_parts(p, st, plan, i, r, (hit, np.take(guide, rc), np.take(mage, rc)))
        br = np.take(plan.breath, rc)
        st.breath[r, i] -= br
        u = block[r, i]
        faces = faces_from_uniform(u[:, lay.check : lay.check + 3], 20)
        f0, f1, f2 = faces[:, 0], faces[:, 1], faces[:, 2]
        hi2, lo2 = np.maximum(f0, f1), np.minimum(f0, f1)
        kept = np.select([net == 0, net == 1, net == -1, net >= 2], [f0, hi2, lo2, np.maximum(hi2, f2)],
                         np.minimum(lo2, f2))  # R-GEN-4: keep the best (worst) of |net| + 1 dice
        total = kept + np.take(st.blessed, rc) * faces_from_uniform(u[:, lay.bless], 4)
        total = total + br * faces_from_uniform(u[:, lay.breath], 20)
        success = total >= need
        st.checks[r, i] += 1
        tier_fl = rc * 9 + tier
        np.put(st.checks_at_tier, tier_fl, np.take(st.checks_at_tier, tier_fl) + 1)
        st.successes[r, i] += success
        tier_fl = tier_fl[success]
        np.put(st.successes_at_tier, tier_fl, np.take(st.successes_at_tier, tier_fl) + 1)
        mark = p.mark[tier]
        streak = np.take(st.streak, fl)
        fail = ~success
        release = fail & (mark == MARK_STAR) & (streak == 1)  # R-ESC-3 `*` second round
        new_tier = np.where(success, p.becomes[tier], np.where(release, 0, tier))
        hit = hit.astype(np.int64)
        gain = np.where(mark == MARK_PLUS, 2 + 2 * hit, np.where(mark == MARK_HASH, 1 + hit, 0))
        gain = np.where(mark == MARK_X, hit, gain)  # R-ESC-3: + 2/4, # 1/2, x 0/1 (assisted)
        keep = fail & ~release
        np.put(st.tiers, fl, new_tier)
        np.put(st.acc, fl, (np.take(st.acc, fl) + gain) * keep)
        np.put(st.streak, fl, (streak + 1) * keep)
        # R-ESC-14 strength of will: the paladin itself and paladins who helped this check
        for k_ in range(C):
            if not p.is_paladin[k_]:
                continue
            gets = success & ((k_ == i) | helped_by[r, i, k_])
            rr = r[gets]
            cap = p.comp_max[k_] - st.craving[rr, k_]
            st.composure[rr, k_] = np.minimum(st.composure[rr, k_] + max(0, int(p.cha_mod[k_])), cap)
    kept = np.arange(N_SLOTS)[None, None, :] == struggled[:, :, None]  # R-ESC-3 streaks break
    st.acc *= kept
    st.streak *= kept
    st.last_slot[:] = struggled
    for i in range(C):  # unties and items in party order, each on the tier left so far
        k = kind[:, i]
        sel = k == UNTIE
        if sel.any():
            r, tg, s = rows[sel], plan.target[sel, i], plan.slot[sel, i]
            cur = st.tiers[r, tg, s]
            st.tiers[r, tg, s] = np.where(cur <= SEVERE, 0, SEVERE)  # R-ESC-10b
            st.acc[r, tg, s] = 0
            st.streak[r, tg, s] = 0
        sel = k == USE_ITEM
        if sel.any():
            r, tg, s, it = rows[sel], plan.target[sel, i], plan.slot[sel, i], plan.item[sel, i]
            cur = st.tiers[r, tg, s]
            ok = (cur >= 1) & (cur <= p.item_max_tier[it])  # an item aimed at a freed slot is kept
            r, tg, s, it = r[ok], tg[ok], s[ok], it[ok]
            st.tiers[r, tg, s] = 0
            st.acc[r, tg, s] = 0
            st.streak[r, tg, s] = 0
            st.held[r, i, it] -= 1
    for i in range(C):  # R-ESC-10a rest
        sel = kind[:, i] == REST
        if sel.any():
            r = rows[sel]
            gain = np.maximum(0, _roll(block[r, i], lay.rest, p.rest_expr, p.modifiers[i]))
            st.composure[r, i] = np.minimum(st.composure[r, i] + gain, p.comp_max[i] - st.craving[r, i])

    # (4) searches in party order (R-ESC-10)
    for i in range(C):
        sel = kind[:, i] == SEARCH
        if not sel.any():
            continue
        r = rows[sel]
        found = faces_from_uniform(block[r, i, lay.search], 20) >= p.search_dc - p.search_mod[i]
        if p.n_items == 0:
            continue
        weights = np.where(st.item_left[r] != 0, p.item_weight[None, :], 0.0)
        found &= (weights > 0).any(axis=1)
        r, weights = r[found], weights[found]
        if len(r) == 0:
            continue
        cum = np.cumsum(weights, axis=1)
        x = block[r, i, lay.item] * cum[:, -1]
        idx = (cum <= x[:, None]).sum(axis=1)
        last = p.n_items - 1 - (weights[:, ::-1] > 0).argmax(axis=1)
        k_item = np.minimum(idx, last)
        dec = st.item_left[r, k_item] > 0
        st.item_left[r[dec], k_item[dec]] -= 1
        st.items_found[r, i] += 1
        bonus = p.item_kind[k_item] == 0
        st.item_bonus[r[bonus], i] += p.item_value[k_item[bonus]]
        st.held[r[~bonus], i, k_item[~bonus]] += 1

    # (5) attention
    st.attention += attention

    # (6) composure (R-ESC-12, R-ESC-13, R-ESC-34, R-ESC-35)
    for i in range(C):
        u = block[:, i]
        damage = np.zeros(m, dtype=np.int64)
        harn = (struggled[:, i] >= 0) & harness_on[:, i]
        if harn.any():
            damage += np.where(harn, np.maximum(0, _roll(u, lay.harness, p.harness_expr, p.modifiers[i])), 0)
        if p.stimulus_expr is not None:
            stim = np.maximum(0, _roll(u, lay.stimulus, p.stimulus_expr, p.modifiers[i]))
            damage += stim
            if p.craving:
                st.craving[:, i] += stim
        top_c = p.comp_max[i] - st.craving[:, i]
        in_daze = st.dazed_left[:, i] > 0
        st.dazed_left[in_daze, i] -= 1
        wake = in_daze & (st.dazed_left[:, i] == 0)
        st.composure[wake, i] = np.maximum(0, top_c[wake])
        hit = ~in_daze & (damage > 0)
        comp = np.where(hit, np.maximum(0, st.composure[:, i] - damage), st.composure[:, i])
        st.composure[:, i] = comp
        over = hit & (comp == 0) & (rnd > st.immune_until[:, i])
        if p.is_monk[i]:  # R-ESC-14 inner breath save
            tries = over & (st.breath[:, i] > 0)
            need = 10 + damage + st.save_bonus[:, i] - p.wis_mod[i]
            saved = tries & (faces_from_uniform(u[:, lay.save], 20) >= need)
            st.breath[tries, i] -= 1
            st.save_bonus[tries, i] += 2
            st.composure[saved, i] = np.maximum(0, top_c[saved] // 2)
            over &= ~saved
        elif p.is_focus[i]:  # R-ESC-14 absolute focus
            saved = over & (faces_from_uniform(u[:, lay.save], 20) >= 10 + damage // 2 - p.focus_mod[i])
            gain = np.maximum(0, faces_from_uniform(u[:, lay.focus], 8) + p.focus_mod[i])
            st.composure[saved, i] = np.minimum(gain[saved], np.maximum(0, top_c[saved]))
            st.immune_until[saved, i] = rnd[saved] + 1
            over &= ~saved
        st.overloads[over, i] += 1
        st.save_bonus[over, i] = 0
        if p.dazed_rounds > 0:
            st.dazed_left[over, i] = p.dazed_rounds
        else:
            st.composure[over, i] = np.maximum(0, top_c[over])

    st.blessed[:] = bless_next
    done = np.stack([_goal_top(p, st, i)[0] == 0 for i in range(C)], axis=1)
    newly = done & (st.freed_round == 0)
    st.freed_round[newly] = np.broadcast_to(rnd[:, None], newly.shape)[newly]

    # (7) end tests: caught before escaped
    caught = (st.attention >= p.attention_limit) if p.attention_limit else np.zeros(m, dtype=bool)
    escaped = ~caught & done.all(axis=1)
    timeout = ~caught & ~escaped & (rnd >= p.max_rounds)
    st.outcome[:] = np.where(caught, CAUGHT, np.where(escaped, ESCAPED, np.where(timeout, TIMEOUT, ACTIVE)))


def run_batch(p: EscapeParams, n: int, rng: np.random.Generator, plan_fn=greedy_plan) -> BatchState:
    """Simulate ``n`` runs with the chunk's generator; one uniform block per round."""
    st = initial_batch(p, n)
    for _ in range(p.max_rounds):
        active = np.flatnonzero(st.outcome == ACTIVE)
        if len(active) == 0:
            break
        block = rng.random((n, p.n_chars, p.layout.width))
        if len(active) == n:
            step(p, st, block, plan_fn)
        else:
            sub = st.take(active)
            step(p, sub, block[active], plan_fn)
            st.put(active, sub)
    return st
