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
    """State of a batch of runs: batch axis first (C characters, S slots, I items), int64, stored in
    Fortran order so that one character's column ``a[:, i]`` or ``a[:, i, s]`` is contiguous: the kernel
    works column by column, and small-axis reductions and strided reads were its main cost."""

    tiers: np.ndarray  # (n, C, S)
    acc: np.ndarray  # (n, C, S)
    streak: np.ndarray  # (n, C, S)
    last_slot: np.ndarray  # (n, C), -1 none
    composure: np.ndarray  # (n, C)
    craving: np.ndarray
    dazed_left: np.ndarray
    breath: np.ndarray
    save_bonus: np.ndarray
    immune_until: np.ndarray
    item_bonus: np.ndarray
    held: np.ndarray  # (n, C, I) counts of held release items
    blessed: np.ndarray  # (n, C) bool
    attention: np.ndarray  # (n,) int64
    item_left: np.ndarray  # (n, I) int64, -1 unlimited
    outcome: np.ndarray  # (n,) int8
    rounds: np.ndarray  # (n,)
    freed_round: np.ndarray  # (n, C), 0 none
    checks: np.ndarray
    successes: np.ndarray
    overloads: np.ndarray
    items_found: np.ndarray
    rounds_at_tier: np.ndarray  # (n, C, 9)
    checks_at_tier: np.ndarray
    successes_at_tier: np.ndarray
    action_counts: np.ndarray  # (n, C, 8) declared actions in state.ACTION_KINDS order (kind code - 1)
    first_round: np.ndarray  # (n,) round 1: 0 no check, 1 checks and no success, 2 a success

    def take(self, rows: np.ndarray) -> BatchState:
        return BatchState(**{f.name: np.array(getattr(self, f.name)[rows], order="F") for f in fields(self)})

    def put(self, rows: np.ndarray, sub: BatchState) -> None:
        for f in fields(self):
            getattr(self, f.name)[rows] = getattr(sub, f.name)


def initial_batch(p: EscapeParams, n: int) -> BatchState:
    C, S, I = p.n_chars, N_SLOTS, p.n_items

    def z(*shape, dtype=np.int64):
        return np.zeros((n, *shape), dtype=dtype, order="F")

    def full(value):
        return np.array(np.broadcast_to(np.asarray(value, dtype=np.int64), (n, *np.shape(value))), order="F")

    return BatchState(
        tiers=full(p.init_tiers), acc=z(C, S), streak=z(C, S), last_slot=full(np.full(C, -1)),
        composure=full(p.comp_max), craving=z(C), dazed_left=z(C),
        breath=full(p.breath_points), save_bonus=z(C),
        immune_until=z(C), item_bonus=z(C), held=z(C, I), blessed=z(C, dtype=bool),
        attention=z(dtype=np.int64), item_left=full(p.item_count),
        outcome=z(dtype=np.int8), rounds=z(), freed_round=z(C), checks=z(C), successes=z(C), overloads=z(C),
        items_found=z(C), rounds_at_tier=z(C, 9), checks_at_tier=z(C, 9), successes_at_tier=z(C, 9),
        action_counts=z(C, 8), first_round=z(),
    )


# ---------------------------------------------------------------------------------------------
# helpers


def _flat(a: np.ndarray) -> np.ndarray:
    """The Fortran-order flat view of a state array (index r + m * (i + C * s)); writes go through."""
    if not a.flags.f_contiguous:
        raise ValueError("kernel state arrays must be Fortran-contiguous")
    return a.reshape(-1, order="F")


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
    def full(value, dtype=np.int64):
        return np.full((m, C), value, dtype=dtype, order="F")

    return Plan(kind=full(0, np.int8), slot=full(-1), ability=full(-1), target=full(-1), item=full(-1),
                breath=full(False, bool), num=full(0))


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


def _any_top(p: EscapeParams, st: BatchState, i: int) -> np.ndarray:
    """Key tier * 16 + (15 - slot) of character i's highest-tier restraint on any slot (ties: slot order)."""
    key = np.zeros(st.tiers.shape[0], dtype=np.int64)
    for s in np.flatnonzero(p.init_tiers[i] > 0):
        key = np.maximum(key, st.tiers[:, i, s] * 16 + (15 - s))
    return key


def _goal_top(p: EscapeParams, st: BatchState, i: int) -> tuple[np.ndarray, np.ndarray]:
    """(highest goal tier, its slot; ties in slot order) of character i over all rows."""
    key = np.zeros(st.tiers.shape[0], dtype=np.int64)
    for s in np.flatnonzero(p.goal & (p.init_tiers[i] > 0)):
        key = np.maximum(key, st.tiers[:, i, s] * 16 + (15 - s))
    tier = key >> 4
    return tier, 15 - (key & 15)


def _own_steps(p: EscapeParams, st: BatchState, plan: Plan, i: int, todo: np.ndarray,
               goal_top: tuple[np.ndarray, np.ndarray], any_top: list[np.ndarray]) -> None:
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
        best = np.zeros(len(sub), dtype=np.int64)
        for j in range(C):
            if j != i:
                kj = any_top[j][sub]  # tier * 16 + (15 - slot)
                best = np.maximum(best, (kj >> 4) * (16 * C) + (C - 1 - j) * 16 + (kj & 15))
        hit = best >= 16 * C  # some teammate restraint at tier >= 1
        rr = sub[hit]
        b = best[hit] % (16 * C)
        plan.kind[rr, i], plan.target[rr, i], plan.slot[rr, i] = UNTIE, C - 1 - b // 16, 15 - b % 16
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
    any_top = [_any_top(p, st, j) for j in range(dazed.shape[1])]
    plan = _empty_plan(*dazed.shape)
    for i in range(dazed.shape[1]):
        _own_steps(p, st, plan, i, ~dazed[:, i], goal_top[i], any_top)
    _finish_plan(p, st, dazed, plan, goal_top)
    return plan


def arms_first_plan(p: EscapeParams, st: BatchState, dazed: np.ndarray, goal_top=None) -> Plan:
    """`arms_first`: without free hands, struggle the arms while bound, then the fingers; otherwise greedy."""
    goal_top = goal_top or [_goal_top(p, st, i) for i in range(dazed.shape[1])]
    any_top = [_any_top(p, st, j) for j in range(dazed.shape[1])]
    plan = _empty_plan(*dazed.shape)
    for i in range(dazed.shape[1]):
        todo = ~dazed[:, i] & ~can_untie_self(st.tiers[:, i])
        rest = ~dazed[:, i]
        for slot in (ARMS, FINGERS):
            sel = _choose_struggle(p, st, plan, i, todo & (st.tiers[:, i, slot] > 0), np.arange(N_SLOTS) == slot)
            todo &= ~sel
            rest &= ~sel
        _own_steps(p, st, plan, i, rest, goal_top[i], any_top)
    _finish_plan(p, st, dazed, plan, goal_top)
    return plan


def _help_arrays(p: EscapeParams, st: BatchState, plan: Plan):
    """The help attached to each character's check as the plan stands (R-ESC-8, R-ESC-9, R-ESC-33):
    (assisted, largest guide, largest mage-hand bonus, helped at all), each (m, C)."""
    m, C = plan.kind.shape
    assisted = np.zeros((m, C), dtype=bool, order="F")
    guide = np.zeros((m, C), dtype=np.int64, order="F")
    mage = np.zeros((m, C), dtype=np.int64, order="F")
    for k in range(C):
        _add_help(p, st, plan, k, np.arange(m), assisted, guide, mage)
    return assisted, guide, mage


def _mage_bonus_of(p: EscapeParams, st: BatchState, k: int, rows) -> np.ndarray:
    """R-ESC-33: int mod + proficiency for an assist by a wizard or sorcerer with arms, fingers, gag at 0."""
    if not p.is_mage_hand[k]:
        return np.zeros(len(rows), dtype=np.int64)
    t = st.tiers[rows, k]
    return ((t[:, ARMS] == 0) & (t[:, FINGERS] == 0) & (t[:, GAG] == 0)) * p.mage_bonus[k]


def _add_help(p, st, plan, k, rows, assisted, guide, mage) -> None:
    """Attach helper k's planned assist or guide (on ``rows``) to its target's help arrays."""
    kind, tgt = plan.kind[rows, k], plan.target[rows, k]
    a = kind == ASSIST
    if a.any():
        r, tg = rows[a], tgt[a]
        assisted[r, tg] = True
        mage[r, tg] = np.maximum(mage[r, tg], _mage_bonus_of(p, st, k, r))
    g = kind == GUIDE
    if g.any():
        r, tg = rows[g], tgt[g]
        guide[r, tg] = np.maximum(guide[r, tg], p.guide_bonus[k])


def _plan_attention(p: EscapeParams, plan: Plan) -> np.ndarray:
    """Attention the plan as it stands draws this round, `per_round` excluded (R-ESC-9a)."""
    C = plan.kind.shape[1]
    total = np.zeros(plan.kind.shape[0], dtype=np.int64)
    for i in range(C):
        k, tgt = plan.kind[:, i], plan.target[:, i]
        total += (k == ASSIST) * p.att_assist + (k == GUIDE) * p.att_guide + (k == SEARCH) * p.att_search
        total += (((k == UNTIE) | (k == USE_ITEM)) & (tgt != i)) * p.att_assist
    return total


def team_plan(p: EscapeParams, st: BatchState, dazed: np.ndarray, goal_top=None) -> Plan:
    """R-ESC-21 / R-ESC-37, vectorized: the whole greedy plan, then one pass in party order in which a
    struggler without planned help switches to the help with the largest exact gain (ties: party
    order of the target, then assist before guide) when that gain strictly exceeds its own declared
    success numerator and the attention guard allows it."""
    plan = greedy_plan(p, st, dazed, goal_top)
    m, C = dazed.shape
    assisted, guide, mage = _help_arrays(p, st, plan)
    helped = np.zeros((m, C), dtype=bool)
    for k in range(C):
        h = (plan.kind[:, k] == ASSIST) | (plan.kind[:, k] == GUIDE)
        helped[np.flatnonzero(h), plan.target[h, k]] = True
    drawn = _plan_attention(p, plan) if p.attention_limit else None
    for i in range(C):
        rows = np.flatnonzero((plan.kind[:, i] == STRUGGLE) & ~helped[:, i])
        if not len(rows):
            continue
        p_i = plan.num[rows, i]  # the declared check as greedy planned it (breath, blessing; no help)
        t = st.tiers[rows, i]
        may_assist = can_help_physically(t) | (p.is_mage_hand[i] & (t[:, ARMS] == 0) & (t[:, FINGERS] == 0))
        may_guide = (t[:, GAG] == 0) & (t[:, BLINDFOLD] == 0)
        my_mage = _mage_bonus_of(p, st, i, rows)
        best_gain = np.full(len(rows), -1, dtype=np.int64)
        best_j = np.full(len(rows), -1, dtype=np.int64)
        best_kind = np.zeros(len(rows), dtype=np.int8)
        for j in range(C):
            if j == i:
                continue
            on = np.flatnonzero(plan.kind[rows, j] == STRUGGLE)
            if not len(on):
                continue
            r = rows[on]
            a_j, g_j, m_j = assisted[r, j], guide[r, j], mage[r, j]
            before = _check_parts(p, st, plan, j, r, (a_j, g_j, m_j))[0]
            for kind_code, allowed, help_ in (
                (ASSIST, may_assist[on], (np.ones(len(r), dtype=bool), g_j, np.maximum(m_j, my_mage[on]))),
                (GUIDE, may_guide[on] & (st.tiers[r, j, EARPLUGS] == 0),
                 (a_j, np.maximum(g_j, p.guide_bonus[i]), m_j)),
            ):
                gain = _check_parts(p, st, plan, j, r, help_)[0] - before
                better = allowed & (gain > best_gain[on])  # strict: earlier target, then assist, win ties
                w = on[better]
                best_gain[w], best_j[w], best_kind[w] = gain[better], j, kind_code
        switch = (best_kind != NONE) & (best_gain > p_i)  # the gain must strictly exceed p_i
        if p.attention_limit:  # R-ESC-37 attention guard, projected to the last round
            cost = np.where(best_kind == ASSIST, p.att_assist, p.att_guide)
            rnd = st.rounds[rows]
            projected = (st.attention[rows] + drawn[rows] + p.att_per_round + cost
                         + p.att_per_round * np.maximum(0, p.max_rounds - rnd))
            switch &= projected < p.attention_limit
        r = rows[switch]
        if not len(r):
            continue
        plan.kind[r, i] = best_kind[switch]
        plan.target[r, i] = best_j[switch]
        plan.slot[r, i] = -1
        plan.ability[r, i] = -1
        plan.breath[r, i] = False  # a monk that switches spends no breath
        _add_help(p, st, plan, i, r, assisted, guide, mage)
        helped[r, best_j[switch]] = True
        if drawn is not None:
            drawn[r] += np.where(best_kind[switch] == ASSIST, p.att_assist, p.att_guide)
    return plan


def _check_parts(p: EscapeParams, st: BatchState, plan: Plan, i: int, rows: np.ndarray, help_=None):
    """(numerator, net, need) of character i's declared struggle on ``rows``, with ``help_`` =
    (assisted, guide, mage) arrays for those rows, or None (R-ESC-4, R-ESC-8, R-ESC-9, R-ESC-11).
    Gathers use flat Fortran-order indices, much faster than three-array fancy indexing."""
    m, C = plan.kind.shape
    rc = rows + m * i
    s = _flat(plan.slot)[rc]
    a = _flat(plan.ability)[rc]
    br = _flat(plan.breath)[rc]
    fl = rc + (m * C) * s
    t = _flat(st.tiers)[fl]
    static = p.escape_mod[i][a] + _flat(st.acc)[fl] + _flat(st.item_bonus)[rc] + p.artist_bonus[i][a]
    static = static + br * p.wis_mod[i]
    assisted = 0
    if help_ is not None:
        assisted, guide, mage = help_
        static = static + guide + mage
    tiers = _flat(st.tiers)
    pen = (a == DEX) & (tiers[rc + (m * C) * FINGERS] >= 1) & (s != FINGERS)
    pen = pen.astype(np.int64) + ((a == STR) & (tiers[rc + (m * C) * MASK] >= 1))
    net = _net(np.asarray(assisted, dtype=np.int64), pen, p.stacking)
    need = p.dc[t] - static
    num = _numerator(net, need, _flat(st.blessed)[rc].astype(np.int64), br.astype(np.int64))
    auto = (p.mark[t] == MARK_STAR) & (_flat(st.streak)[fl] == 1)
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


def step(p: EscapeParams, st: BatchState, block: np.ndarray, plan_fn=greedy_plan,
         active: np.ndarray | None = None) -> None:
    """One round (R-ESC-5) for every run of ``st``, in place. ``block`` is the round's uniform block
    (m, C, width) for these runs. Runs outside ``active`` are finished: they are masked, not removed
    (STYLE.md practice 3), and no field of theirs changes."""
    m, C = st.composure.shape
    mc = m * C
    if active is None:
        active = np.ones(m, dtype=bool)
    lay = p.layout
    st.rounds += active
    rnd = st.rounds
    dazed = st.dazed_left > 0
    live = dazed & active[:, None]
    st.blessed &= ~live  # R-ESC-33: a dazed character loses its blessing
    idle = dazed | ~active[:, None]
    goal_top = [_goal_top(p, st, i) for i in range(C)]
    rat = _flat(st.rounds_at_tier)
    for i in range(C):  # statistics: rounds spent at the highest goal tier until freed
        ti = goal_top[i][0]
        r = np.flatnonzero((st.freed_round[:, i] == 0) & (ti > 0) & active)
        rat[r + m * i + mc * ti[r]] += 1

    # (1) declarations
    plan = plan_fn(p, st, idle, goal_top)
    kind = plan.kind
    counts = _flat(st.action_counts)
    for i in range(C):  # statistics: declared actions (dazed and finished runs declare none)
        r = np.flatnonzero(kind[:, i] != NONE)
        counts[r + m * i + mc * (kind[r, i].astype(np.int64) - 1)] += 1

    # (2) help attaches to this round's checks (R-ESC-8, R-ESC-9, R-ESC-14); attention (R-ESC-9a)
    assisted = np.zeros((m, C), dtype=bool, order="F")
    guide = np.zeros((m, C), dtype=np.int64, order="F")
    mage = np.zeros((m, C), dtype=np.int64, order="F")
    helped_by = np.zeros((m, C, C), dtype=bool, order="F")  # [run, target, helper]
    attention = active * p.att_per_round
    bless_next = np.zeros((m, C), dtype=bool, order="F")
    f_assisted, f_guide, f_mage, f_helped = _flat(assisted), _flat(guide), _flat(mage), _flat(helped_by)
    for i in range(C):
        k = kind[:, i]
        tgt = plan.target[:, i]
        a_sel = np.flatnonzero(k == ASSIST)
        g_sel = np.flatnonzero(k == GUIDE)
        if len(a_sel):
            t = st.tiers[:, i, :]
            hand = p.is_mage_hand[i] & (t[:, ARMS] == 0) & (t[:, FINGERS] == 0) & (t[:, GAG] == 0)
            fi = a_sel + m * tgt[a_sel]
            f_assisted[fi] = True  # several assistants count once (R-ESC-8)
            f_mage[fi] = np.maximum(f_mage[fi], hand[a_sel] * p.mage_bonus[i])  # R-ESC-14 mage hand
            f_helped[fi + mc * i] = True
            attention += (k == ASSIST) * p.att_assist
        if len(g_sel):
            fi = g_sel + m * tgt[g_sel]
            f_guide[fi] = np.maximum(f_guide[fi], p.guide_bonus[i])  # only the largest guide counts
            f_helped[fi + mc * i] = True
            attention += (k == GUIDE) * p.att_guide
        attention += (((k == UNTIE) | (k == USE_ITEM)) & (tgt != i)) * p.att_assist
        if p.att_search:
            attention += (k == SEARCH) * p.att_search
        if p.is_cleric[i]:
            b = k == BLESS
            for j in range(C):
                if j != i:
                    bless_next[:, j] |= b

    # (3) struggles in party order
    struggled = np.where(kind == STRUGGLE, plan.slot, -1)
    harness_on = st.tiers[:, :, HARNESS] >= 1
    f_tiers, f_acc, f_streak = _flat(st.tiers), _flat(st.acc), _flat(st.streak)
    f_cat, f_sat = _flat(st.checks_at_tier), _flat(st.successes_at_tier)
    for i in range(C):
        r = np.flatnonzero(kind[:, i] == STRUGGLE)
        if not len(r):
            continue
        rc = r + m * i
        fl = rc + mc * _flat(plan.slot)[rc]
        tier = f_tiers[fl]
        hit = f_assisted[rc]
        _, net, need = _check_parts(p, st, plan, i, r, (hit, f_guide[rc], f_mage[rc]))
        br = _flat(plan.breath)[rc]
        _flat(st.breath)[rc] -= br
        u = block[r, i]
        faces = faces_from_uniform(u[:, lay.check : lay.check + 3], 20)
        f0, f1, f2 = faces[:, 0], faces[:, 1], faces[:, 2]
        hi2, lo2 = np.maximum(f0, f1), np.minimum(f0, f1)
        kept = np.select([net == 0, net == 1, net == -1, net >= 2], [f0, hi2, lo2, np.maximum(hi2, f2)],
                         np.minimum(lo2, f2))  # R-GEN-4: keep the best (worst) of |net| + 1 dice
        total = kept + _flat(st.blessed)[rc] * faces_from_uniform(u[:, lay.bless], 4)
        total = total + br * faces_from_uniform(u[:, lay.breath], 20)
        success = total >= need
        _flat(st.checks)[rc] += 1
        first = r[rnd[r] == 1]  # statistics for the first-check advantage
        if len(first):
            st.first_round[first] = np.maximum(st.first_round[first], np.where(success[rnd[r] == 1], 2, 1))
        f_cat[rc + mc * tier] += 1
        _flat(st.successes)[rc] += success
        f_sat[(rc + mc * tier)[success]] += 1
        mark = p.mark[tier]
        streak = f_streak[fl]
        fail = ~success
        release = fail & (mark == MARK_STAR) & (streak == 1)  # R-ESC-3 `*` second round
        new_tier = np.where(success, p.becomes[tier], np.where(release, 0, tier))
        hit = hit.astype(np.int64)
        gain = np.where(mark == MARK_PLUS, 2 + 2 * hit, np.where(mark == MARK_HASH, 1 + hit, 0))
        gain = np.where(mark == MARK_X, hit, gain)  # R-ESC-3: + 2/4, # 1/2, x 0/1 (assisted)
        keep = fail & ~release
        f_tiers[fl] = new_tier
        f_acc[fl] = (f_acc[fl] + gain) * keep
        f_streak[fl] = (streak + 1) * keep
        # R-ESC-14 strength of will: the paladin itself and paladins who helped this check
        for k_ in range(C):
            if not p.is_paladin[k_]:
                continue
            gets = success & ((k_ == i) | f_helped[rc + mc * k_])
            rr = r[gets] + m * k_
            comp = _flat(st.composure)
            cap = p.comp_max[k_] - _flat(st.craving)[rr]
            comp[rr] = np.minimum(comp[rr] + max(0, int(p.cha_mod[k_])), cap)
    for i in range(C):  # R-ESC-3: streaks break on every slot not struggled this round
        sl = struggled[:, i]
        for s_ in np.flatnonzero(p.init_tiers[i] > 0):
            drop = (sl != s_) & active
            st.acc[:, i, s_] *= ~drop
            st.streak[:, i, s_] *= ~drop
    st.last_slot[:] = np.where(active[:, None], struggled, st.last_slot)
    for i in range(C):  # unties and items in party order, each on the tier left so far
        k = kind[:, i]
        r = np.flatnonzero(k == UNTIE)
        if len(r):
            fl = r + m * plan.target[r, i] + mc * plan.slot[r, i]
            cur = f_tiers[fl]
            f_tiers[fl] = np.where(cur <= SEVERE, 0, SEVERE)  # R-ESC-10b
            f_acc[fl] = 0
            f_streak[fl] = 0
        r = np.flatnonzero(k == USE_ITEM)
        if len(r):
            tg, sl, it = plan.target[r, i], plan.slot[r, i], plan.item[r, i]
            fl = r + m * tg + mc * sl
            cur = f_tiers[fl]
            ok = (cur >= 1) & (cur <= p.item_max_tier[it])  # an item aimed at a freed slot is kept
            fl, r, it = fl[ok], r[ok], it[ok]
            f_tiers[fl] = 0
            f_acc[fl] = 0
            f_streak[fl] = 0
            _flat(st.held)[r + m * i + mc * it] -= 1
    for i in range(C):  # R-ESC-10a rest
        r = np.flatnonzero(kind[:, i] == REST)
        if len(r):
            gain = np.maximum(0, _roll(block[r, i], lay.rest, p.rest_expr, p.modifiers[i]))
            rc = r + m * i
            comp = _flat(st.composure)
            comp[rc] = np.minimum(comp[rc] + gain, p.comp_max[i] - _flat(st.craving)[rc])

    # (4) searches in party order (R-ESC-10)
    for i in range(C):
        r = np.flatnonzero(kind[:, i] == SEARCH)
        if not len(r) or p.n_items == 0:
            continue
        found = faces_from_uniform(block[r, i, lay.search], 20) >= p.search_dc - p.search_mod[i]
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
        left = _flat(st.item_left)
        fi = r + m * k_item
        left[fi] -= left[fi] > 0
        _flat(st.items_found)[r + m * i] += 1
        bonus = p.item_kind[k_item] == 0
        _flat(st.item_bonus)[r[bonus] + m * i] += p.item_value[k_item[bonus]]
        _flat(st.held)[r[~bonus] + m * i + mc * k_item[~bonus]] += 1

    # (5) attention
    st.attention += attention

    # (6) composure (R-ESC-12, R-ESC-13, R-ESC-34, R-ESC-35)
    for i in range(C):
        u = block[:, i]
        damage = np.zeros(m, dtype=np.int64)
        harn = (struggled[:, i] >= 0) & harness_on[:, i]
        if harn.any():
            damage += harn * np.maximum(0, _roll(u, lay.harness, p.harness_expr, p.modifiers[i]))
        if p.stimulus_expr is not None:
            stim = np.maximum(0, _roll(u, lay.stimulus, p.stimulus_expr, p.modifiers[i])) * active
            damage += stim
            if p.craving:
                st.craving[:, i] += stim
        top_c = p.comp_max[i] - st.craving[:, i]
        in_daze = (st.dazed_left[:, i] > 0) & active
        st.dazed_left[:, i] -= in_daze
        wake = in_daze & (st.dazed_left[:, i] == 0)
        comp = st.composure[:, i]
        comp[wake] = np.maximum(0, top_c[wake])
        hit = ~in_daze & (damage > 0)
        comp[hit] = np.maximum(0, comp[hit] - damage[hit])
        over = hit & (comp == 0) & (rnd > st.immune_until[:, i])
        if not over.any():
            continue
        if p.is_monk[i]:  # R-ESC-14 inner breath save
            tries = over & (st.breath[:, i] > 0)
            need = 10 + damage + st.save_bonus[:, i] - p.wis_mod[i]
            saved = tries & (faces_from_uniform(u[:, lay.save], 20) >= need)
            st.breath[:, i] -= tries
            st.save_bonus[:, i] += 2 * tries
            comp[saved] = np.maximum(0, top_c[saved] // 2)
            over &= ~saved
        elif p.is_focus[i]:  # R-ESC-14 absolute focus
            saved = over & (faces_from_uniform(u[:, lay.save], 20) >= 10 + damage // 2 - p.focus_mod[i])
            gain = np.maximum(0, faces_from_uniform(u[:, lay.focus], 8) + p.focus_mod[i])
            comp[saved] = np.minimum(gain[saved], np.maximum(0, top_c[saved]))
            st.immune_until[saved, i] = rnd[saved] + 1
            over &= ~saved
        st.overloads[:, i] += over
        st.save_bonus[over, i] = 0
        if p.dazed_rounds > 0:
            st.dazed_left[over, i] = p.dazed_rounds
        else:
            comp[over] = np.maximum(0, top_c[over])

    st.blessed[:] = np.where(active[:, None], bless_next, st.blessed)
    done = np.stack([_goal_top(p, st, i)[0] == 0 for i in range(C)], axis=1)
    newly = done & (st.freed_round == 0) & active[:, None]
    st.freed_round[:] = np.where(newly, rnd[:, None], st.freed_round)

    # (7) end tests: caught before escaped
    caught = (st.attention >= p.attention_limit) if p.attention_limit else np.zeros(m, dtype=bool)
    escaped = ~caught & done.all(axis=1)
    timeout = ~caught & ~escaped & (rnd >= p.max_rounds)
    new = np.where(caught, CAUGHT, np.where(escaped, ESCAPED, np.where(timeout, TIMEOUT, ACTIVE)))
    st.outcome[:] = np.where(active, new, st.outcome)


def draw_block(rng: np.random.Generator, n: int, p: EscapeParams) -> np.ndarray:
    """The round's uniform block, logical shape (runs, characters, width), stored so that one
    character's column over the runs is contiguous. The reference reads ``block[j]``."""
    return rng.random((p.layout.width, p.n_chars, n), dtype=np.float32).T


COMPACT_BELOW = 0.5  # compact the working set when fewer than half of its runs are still active


def run_batch(p: EscapeParams, n: int, rng: np.random.Generator, plan_fn=greedy_plan) -> BatchState:
    """Simulate ``n`` runs with the chunk's generator; one uniform block per round. Finished runs
    are masked; the working set is compacted now and then (a speed-up that changes no result)."""
    st = initial_batch(p, n)
    work, idx = st, None
    for _ in range(p.max_rounds):
        active = work.outcome == ACTIVE
        n_active = int(active.sum())
        if n_active == 0:
            break
        block = draw_block(rng, n, p)
        if n_active < COMPACT_BELOW * len(active):
            keep = np.flatnonzero(active)
            if idx is None:
                sub_idx = keep
            else:
                st.put(idx, work)
                sub_idx = idx[keep]
            work, idx = st.take(sub_idx), sub_idx
            active = np.ones(len(keep), dtype=bool)
        step(p, work, block if idx is None else block[idx], plan_fn, active)
    if idx is not None:
        st.put(idx, work)
    return st
