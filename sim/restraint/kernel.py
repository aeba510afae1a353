"""The fast engine: one compiled (numba ``@njit(cache=True)``) loop per duel over the batch axis.

It re-implements :mod:`sim.restraint.rules` on integer arrays; tests require it to match the scalar
reference run for run on the same draws (:func:`sim.restraint.state.draw_uniforms`). One function
per step of the round (R-RST-13), each named after its rule:

- :func:`binder_turn` (R-RST-9 … R-RST-11, R-RST-27, R-RST-28),
- :func:`target_turn` with :func:`escape_check` and :func:`best_check` (R-RST-2 … R-RST-8,
  R-RST-12, R-RST-29 … R-RST-31),
- :func:`composure_round` (R-RST-21, R-RST-22, R-RST-24).

The scenario is compiled once to an integer vector ``K`` (entries ``K_*``) and a few arrays
(:func:`compile_arrays`); one duel's state is a small integer vector ``T`` (entries ``T_*``) with
the seven slot levels first.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import njit

from sim.dice import CHECK_DENOMINATOR, CHECK_MAX_SUM, MAX_NET_DICE, check_table_array
from sim.dice_kernel import net_dice
from sim.restraint import rules as R
from sim.restraint.columns import POOL, RUN_STATS, allocate, derive
from sim.restraint.rules import Params

ARMS, LEGS, FINGERS, BODY = R.ARMS, R.LEGS, R.FINGERS, R.BODY
N_SLOTS = R.N_SLOTS
NONE, LIGHT, MODERATE, HEAVY, COMPLETE, DESPAIR = R.NONE, R.LIGHT, R.MODERATE, R.HEAVY, R.COMPLETE, R.DESPAIR
STR, DEX, INT = R.STR, R.DEX, R.INT
COL_BINDER = R.COL_BINDER
COL_TARGET_0, COL_TARGET_1 = R.COL_TARGET
COL_BONUS_0 = R.COL_BONUS[0]
COL_ACTION_0 = R.COL_ACTION[0]
COL_STIMULUS = R.COL_STIMULUS
NEED_SPAN = CHECK_MAX_SUM + 2
DENOMINATOR = CHECK_DENOMINATOR

# compiled scenario (entries of K)
(K_ROUNDS, K_HORIZON, K_COMPOSURE_ROUNDS, K_POOL_STACKING, K_HAS_BINDER, K_BINDER_MOD, K_METHOD_ACTION,
 K_FLANK_PENALTY, K_FLANK_EXTRA, K_BINDABLE, K_BINDER_FIRST, K_STR, K_DEX, K_INT, K_CLASS_BONUS, K_RANGER_BONUS,
 K_RANGER_USES, K_RAGES, K_CRAVING, K_N_POOLS, K_N_DICE, K_REC_COLS, K_DUEL_OVERLOAD, K_DAZED_ROUNDS) = range(24)
# one composure pool's state (columns of a pool row): R-RST-21/22/32/33
(PS_COMPOSURE, PS_CRAVING, PS_USES, PS_IMMUNE, PS_DAZED, PS_OVERLOADS, PS_RECOVERIES) = range(7)
N_PS = 7
REC_D20, REC_DIE = R.REC_D20, R.REC_DIE
FOCUS_SIDES, RECOVERY_SIDES = R.FOCUS_SIDES, R.RECOVERY_SIDES
# one duel's state (entries of T after the seven levels)
T_RAGES, T_RANGER, T_CHECKS, T_SUCCESSES, T_BINDINGS = range(N_SLOTS, N_SLOTS + 5)
N_T = N_SLOTS + 5

ARMS_STR = np.asarray(R.ARMS_STR_PENALTY, dtype=np.int64)
ARMS_DEX = np.asarray(R.ARMS_DEX_PENALTY, dtype=np.int64)
LEGS_STR = np.asarray(R.LEGS_STR_PENALTY, dtype=np.int64)
LEGS_DEX = np.asarray(R.LEGS_DEX_PENALTY, dtype=np.int64)


@lru_cache(maxsize=1)
def check_table() -> np.ndarray:
    """Check numerators ``[net + MAX_NET_DICE, clip(need, 0, CHECK_MAX_SUM + 1)]`` (no blessing or
    breath in RST)."""
    return np.ascontiguousarray(check_table_array()[:, 0, 0, :], dtype=np.int64)


def compile_arrays(p: Params):
    """(K, bind_slots, initial levels, pool maxima, pool constants, die sides, die signs, and per pool:
    absolute focus, its casting mod, channel divinity / ki uses)."""
    K = np.array([p.rounds, p.horizon, p.composure_rounds, p.stacking == "pool", p.has_binder, p.binder_mod,
                  p.method_action, p.flank_penalty, p.flank_extra, p.bindable_condition, p.binder_first,
                  p.str_score, p.dex_score, p.int_score, p.class_bonus, p.ranger_bonus, p.ranger_uses, p.rages,
                  p.craving, p.n_pools, p.n_dice, p.rec_cols, p.duel_overload, p.dazed_rounds], dtype=np.int64)

    def arr(values):
        return np.asarray(list(values), dtype=np.int64).reshape(-1)

    return (K, arr(p.bind_slots), arr(p.initial_levels), arr(p.pool_max), arr(p.pool_constant),
            arr(p.die_sides), arr(p.die_signs), arr(p.pool_focus), arr(p.pool_focus_mod), arr(p.pool_uses))


@njit(cache=True)
def face(u, sides):
    """``sim.dice.faces_from_uniform`` for one uniform."""
    return int(math.floor(u * sides)) + 1


@njit(cache=True)
def modifier(score):
    """R-GEN-2: floor((score − 10) / 2)."""
    return (score - 10) // 2


@njit(cache=True)
def escape_dc(T, slot):
    """R-RST-2 / R-RST-29: 10 + 4 × level (body as heavy) + fingers (+4) and body (+8) modifiers."""
    dc = 10 + 4 * (HEAVY if slot == BODY else T[slot])
    if slot != FINGERS and (T[FINGERS] == LIGHT or T[FINGERS] == MODERATE):
        dc += 4
    if slot != BODY and T[BODY] >= LIGHT:
        dc += 8
    return dc


@njit(cache=True)
def escapable(T, slot):
    """R-RST-3 / R-RST-30: above 0, not despair, not blocked by fingers at complete or despair."""
    if T[slot] < LIGHT or T[slot] > COMPLETE:
        return False
    return slot == FINGERS or T[FINGERS] < COMPLETE


@njit(cache=True)
def ability_checks(K, T, net, static, auto_fail, rage):
    """R-RST-3/5/8/12/30/31: per escape ability (str, dex, int) the net dice, the static modifier,
    the automatic failure and the rage, for the current levels (the DC depends on the slot)."""
    for ability in (STR, DEX, INT):
        rage[ability] = ability == STR and T[T_RAGES] > 0  # R-RST-12: bonus die on a str escape
        penalty = (1 if (ability == STR and T[ARMS] == HEAVY) else 0) + (1 if T[FINGERS] == HEAVY else 0)
        net[ability] = net_dice(1 if rage[ability] else 0, penalty, K[K_POOL_STACKING])
        if ability == STR:
            score = K[K_STR] - ARMS_STR[T[ARMS]] - LEGS_STR[T[LEGS]]
        elif ability == DEX:
            score = K[K_DEX] - ARMS_DEX[T[ARMS]]  # R-RST-6: legs never touch a dex escape
        else:
            score = K[K_INT]
        static[ability] = modifier(score) + K[K_CLASS_BONUS]
        auto_fail[ability] = ability == STR and T[ARMS] >= COMPLETE  # R-RST-5 / R-RST-8


@njit(cache=True)
def best_check(table, dc, net, static, auto_fail):
    """R-RST-30: (ability, numerator) of the highest success probability against ``dc``, ties str,
    dex, int."""
    best_ability, best_num = STR, -1
    for ability in (STR, DEX, INT):
        num = 0 if auto_fail[ability] else table[net[ability] + MAX_NET_DICE,
                                                 min(max(dc - static[ability], 0), NEED_SPAN - 1)]
        if num > best_num:
            best_ability, best_num = ability, num
    return best_ability, best_num


@njit(cache=True)
def escape_check(K, table, T, slot, row, first_col, net, static, auto_fail, rage):
    """R-RST-3, R-RST-8, R-RST-12, R-RST-29 … R-RST-31: one escape check on ``slot`` with the d20s
    of columns ``first_col`` … ``first_col + 2``."""
    ability_checks(K, T, net, static, auto_fail, rage)
    dc = escape_dc(T, slot)
    a, num = best_check(table, dc, net, static, auto_fail)
    extra = 0
    if T[T_RANGER] > 0 and 2 * num < DENOMINATOR:  # R-RST-31 ranger
        T[T_RANGER] -= 1
        extra = K[K_RANGER_BONUS]
    T[T_CHECKS] += 1
    if auto_fail[a]:
        return
    kept = face(row[first_col], 20)  # R-GEN-4: the first |net| + 1 d20s, highest or lowest
    for i in range(1, abs(net[a]) + 1):
        f = face(row[first_col + i], 20)
        kept = max(kept, f) if net[a] >= 0 else min(kept, f)
    if kept + static[a] + extra >= dc:
        T[T_SUCCESSES] += 1
        level = T[slot]
        new = MODERATE if level == COMPLETE else level - 1  # complete drops to moderate in combat
        if rage[a]:
            new = max(NONE, new - 1)  # rage: one level more; the rage is kept on a failure
            T[T_RAGES] -= 1
        T[slot] = new


@njit(cache=True)
def target_turn(K, table, T, row, net, static, auto_fail, rage):
    """R-RST-4 / R-RST-30: the bonus-action escape on the light restraint of lowest DC, then the
    action escape on the restraint with the highest success probability (ties in slot order).
    Returns the checks made. ``net`` … ``rage``: work arrays of 3 (one per escape ability)."""
    before = T[T_CHECKS]
    slot, dc = -1, 0
    for s in range(N_SLOTS):
        if T[s] == LIGHT and escapable(T, s):
            d = escape_dc(T, s)
            if slot < 0 or d < dc:
                slot, dc = s, d
    if slot >= 0:
        escape_check(K, table, T, slot, row, COL_BONUS_0, net, static, auto_fail, rage)
    ability_checks(K, T, net, static, auto_fail, rage)
    slot, best = -1, -1
    for s in range(N_SLOTS):
        if escapable(T, s):
            num = best_check(table, escape_dc(T, s), net, static, auto_fail)[1]
            if num > best:
                slot, best = s, num
    if slot >= 0:
        escape_check(K, table, T, slot, row, COL_ACTION_0, net, static, auto_fail, rage)
    return T[T_CHECKS] - before


@njit(cache=True)
def binder_turn(K, bind_slots, T, row):
    """R-RST-9 … R-RST-11, R-RST-27, R-RST-28: one binding attempt on the first slot of
    ``binder.slots`` below despair; the binder wins only if strictly higher."""
    if not K[K_HAS_BINDER] or not (K[K_BINDABLE] or T[BODY] >= LIGHT):
        return
    slot = -1
    for s in bind_slots:
        if T[s] < DESPAIR:
            slot = s
            break
    if slot < 0:
        return
    target_die = face(row[COL_TARGET_0], 20)
    if K[K_FLANK_PENALTY]:  # R-RST-11: the flank penalty die
        target_die = min(target_die, face(row[COL_TARGET_1], 20))
    s_score = K[K_STR] - ARMS_STR[T[ARMS]] - LEGS_STR[T[LEGS]]
    d_score = K[K_DEX] - ARMS_DEX[T[ARMS]] - LEGS_DEX[T[LEGS]]
    target_roll = target_die + max(modifier(s_score), modifier(d_score))  # R-RST-27
    if face(row[COL_BINDER], 20) + K[K_BINDER_MOD] > target_roll:
        level = T[slot]
        new = MODERATE if (K[K_METHOD_ACTION] and level == NONE) else level + 1
        if K[K_FLANK_EXTRA]:
            new += 1
        T[slot] = min(new, DESPAIR)
        T[T_BINDINGS] += 1


@njit(cache=True)
def composure_step(K, pool_max, focus, focus_mod, pool, st, damage, d20, die, round_no):
    """R-RST-21/22/32/33 (R-ESC-34/35): ``damage`` hits the pool state row ``st`` at the end of round
    ``round_no`` (``sim.restraint.rules.composure_step``); returns True on an overload."""
    if K[K_CRAVING]:
        st[PS_CRAVING] += damage
    top = pool_max[pool] - st[PS_CRAVING]
    if st[PS_DAZED] > 0:  # dazed: stays at 0, ignores damage; resets after its last dazed round
        st[PS_DAZED] -= 1
        if st[PS_DAZED] == 0:
            st[PS_COMPOSURE] = max(0, top)
        return False
    st[PS_COMPOSURE] = max(0, min(st[PS_COMPOSURE] - damage, top))
    if damage > 0 and st[PS_COMPOSURE] == 0:
        if round_no <= st[PS_IMMUNE]:
            return False  # absolute focus immunity
        if focus[pool] and d20 + focus_mod[pool] >= 10 + damage // 2:  # R-RST-32 absolute focus
            st[PS_COMPOSURE] = min(max(0, die + focus_mod[pool]), max(0, top))
            st[PS_IMMUNE] = round_no + 1
            st[PS_RECOVERIES] += 1
            return False
        st[PS_OVERLOADS] += 1  # R-RST-21 overload
        if K[K_DAZED_ROUNDS] > 0:
            st[PS_DAZED] = K[K_DAZED_ROUNDS]
        else:
            st[PS_COMPOSURE] = max(0, top)
        return True
    if st[PS_USES] > 0 and st[PS_COMPOSURE] <= max(0, top) // 2:  # R-RST-32 channel divinity / ki
        st[PS_USES] -= 1
        st[PS_RECOVERIES] += 1
        st[PS_COMPOSURE] = min(st[PS_COMPOSURE] + die, max(0, top))
    return False


@njit(cache=True)
def composure_round(K, pool_max, pool_constant, die_sides, die_signs, focus, focus_mod, pools, overload, row,
                    round_no):
    """R-RST-21/22/24/32: the stimulus wears each race pool down until its first overload, with its class's
    recoveries; R-RST-33: the duel pool (row ``n_pools`` of ``pools``) on the target's dice, through the duel."""
    n_dice = K[K_N_DICE]
    n_pools = K[K_N_POOLS]
    for pool in range(n_pools):
        duel_turn = pool == 0 and K[K_DUEL_OVERLOAD] and round_no <= K[K_ROUNDS]
        race_turn = round_no <= K[K_COMPOSURE_ROUNDS] and overload[pool] == 0
        if not (duel_turn or race_turn):
            continue
        damage = pool_constant[pool]
        for d in range(n_dice):
            damage += die_signs[d] * face(row[COL_STIMULUS + pool * n_dice + d], die_sides[d])
        damage = max(0, damage)
        d20 = 0
        die = 0
        if K[K_REC_COLS]:
            first = COL_STIMULUS + n_pools * n_dice + 2 * pool
            d20 = face(row[first + REC_D20], 20)
            die = face(row[first + REC_DIE], FOCUS_SIDES if focus[pool] else RECOVERY_SIDES)
        if race_turn and composure_step(K, pool_max, focus, focus_mod, pool, pools[pool], damage, d20, die,
                                        round_no):
            overload[pool] = round_no
        if duel_turn:
            composure_step(K, pool_max, focus, focus_mod, pool, pools[n_pools], damage, d20, die, round_no)


@njit(cache=True)
def init_pools(K, pool_max, uses, pools):
    """Every race pool (and the duel pool, row ``n_pools``, the target's) full, with its uses."""
    for pool in range(pools.shape[0]):
        src = 0 if pool == K[K_N_POOLS] else pool
        pools[pool, :] = 0
        pools[pool, PS_COMPOSURE] = pool_max[src]
        pools[pool, PS_USES] = uses[src]


@njit(cache=True, nogil=True)  # the one entry point: threads may run several chunks at once
def _run_all(K, bind_slots, initial, pool_max, pool_constant, die_sides, die_signs, focus, focus_mod, uses, table,
             u, levels_out, checks_out, dazed_out, final, pools_out, overload):
    """Every duel of the block ``u`` (horizon, n, n_cols), one after another (R-RST-13)."""
    n = u.shape[1]
    T = np.zeros(N_T, dtype=np.int64)
    net = np.zeros(3, dtype=np.int64)
    static = np.zeros(3, dtype=np.int64)
    auto_fail = np.zeros(3, dtype=np.bool_)
    rage = np.zeros(3, dtype=np.bool_)
    for i in range(n):
        T[:N_SLOTS] = initial
        T[T_RAGES] = K[K_RAGES]
        T[T_RANGER] = K[K_RANGER_USES]
        T[T_CHECKS] = 0
        T[T_SUCCESSES] = 0
        T[T_BINDINGS] = 0
        pools = pools_out[i]
        init_pools(K, pool_max, uses, pools)
        duel = K[K_N_POOLS]
        for r in range(K[K_HORIZON]):
            row = u[r, i]
            if r < K[K_ROUNDS]:
                # R-RST-33: a dazed target makes no escape attempt this round
                dazed = K[K_DUEL_OVERLOAD] and pools[duel, PS_DAZED] > 0
                dazed_out[i, r] = dazed
                if K[K_BINDER_FIRST]:  # R-RST-13 initiative
                    binder_turn(K, bind_slots, T, row)
                    if not dazed:
                        checks_out[i, r] = target_turn(K, table, T, row, net, static, auto_fail, rage)
                else:
                    if not dazed:
                        checks_out[i, r] = target_turn(K, table, T, row, net, static, auto_fail, rage)
                    binder_turn(K, bind_slots, T, row)
                levels_out[i, r, :] = T[:N_SLOTS]
            composure_round(K, pool_max, pool_constant, die_sides, die_signs, focus, focus_mod, pools, overload[i],
                            row, r + 1)
        final[i, :] = T


T_LEVELS = slice(0, N_SLOTS)  # the seven levels lead the duel's state (sim.restraint.columns: engine "T_LEVELS")


def run_kernel(p: Params, u: np.ndarray) -> dict[str, np.ndarray]:
    """All runs of the block ``u`` (horizon, n, n_cols): the per-run columns of :mod:`sim.restraint.columns`."""
    n = u.shape[1]
    K, bind_slots, initial, pool_max, pool_constant, die_sides, die_signs, focus, focus_mod, uses = compile_arrays(p)
    cols = allocate(p, n)
    final = np.zeros((n, N_T), dtype=np.int64)
    pools = np.zeros((n, p.n_pools + 1, N_PS), dtype=np.int64)  # the race's pools, then the duel's
    if not p.n_pools:  # no stimulus: nothing to index
        focus = focus_mod = uses = pool_max = np.zeros(1, dtype=np.int64)
    _run_all(K, bind_slots, initial, pool_max, pool_constant, die_sides, die_signs, focus, focus_mod, uses,
             check_table(), np.ascontiguousarray(u, dtype=np.float64), cols["levels_by_round"],
             cols["checks_by_round"], cols["dazed"], final, pools, cols["overload_round"])
    for s in RUN_STATS:  # the statistics the engine keeps in its final states
        if s.engine.startswith("T_"):
            cols[s.name][...] = final[:, globals()[s.engine]]
        elif s.engine.startswith("PS_"):
            cols[s.name][...] = pools[:, : p.n_pools, globals()[s.engine]] if s.shape == POOL else \
                pools[:, p.n_pools, globals()[s.engine]]
    return derive(p, cols)


def work_arrays():
    """The per-ability work arrays :func:`target_turn` fills (net, static, auto fail, rage)."""
    return (np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.bool_),
            np.zeros(3, dtype=np.bool_))


__all__ = ["binder_turn", "composure_round", "init_pools", "run_kernel", "target_turn", "work_arrays"]
