"""The vectorized kernel: pure steps over a batch of duels (STYLE.md practices 1-3).

``step(state, p, u_round, round_no) -> (state, checks)`` never mutates its inputs. The kernel
re-implements :mod:`sim.restraint.rules` with numpy; tests require it to match the scalar reference
run for run on the same draws.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import numpy as np

from sim.dice import CHECK_DENOMINATOR, CHECK_MAX_SUM, MAX_NET_DICE, check_table_array, faces_from_uniform
from sim.restraint import rules as R
from sim.restraint.rules import Params
from sim.restraint.state import DuelState, Trace, draw_uniforms, empty_trace_arrays, initial_state

_SLOT_IDS = np.arange(R.N_SLOTS)
_ARMS_STR = np.asarray(R.ARMS_STR_PENALTY, dtype=np.int16)
_ARMS_DEX = np.asarray(R.ARMS_DEX_PENALTY, dtype=np.int16)
_LEGS_STR = np.asarray(R.LEGS_STR_PENALTY, dtype=np.int16)
_LEGS_DEX = np.asarray(R.LEGS_DEX_PENALTY, dtype=np.int16)


_NEED_SPAN = CHECK_MAX_SUM + 2


@lru_cache(maxsize=1)
def _check_table() -> np.ndarray:
    """Check numerators, flat: index ``(net + 2) * _NEED_SPAN + clip(need)`` (no blessing or breath in RST)."""
    return np.ascontiguousarray(check_table_array()[:, 0, 0, :], dtype=np.int32).ravel()  # numerators < 2**31


def _modifier(score: np.ndarray) -> np.ndarray:
    return (score.astype(np.int16) - 10) // 2  # R-GEN-2, floor division also below 0


def _net_dice(bonus: np.ndarray, penalty: np.ndarray, stacking: str) -> np.ndarray:
    """R-GEN-4 over arrays (see :func:`sim.dice.net_dice`)."""
    if stacking == "pool":
        return bonus.astype(np.int8) - penalty.astype(np.int8)
    return np.where((bonus > 0) & (penalty > 0), 0, np.where(bonus > 0, 1, np.where(penalty > 0, -1, 0))).astype(
        np.int8
    )


def _kept(faces: np.ndarray, net: np.ndarray) -> np.ndarray:
    """R-GEN-4: the kept d20 of the first |net|+1 faces, highest for net >= 0, lowest otherwise."""
    f0, f1, f2 = faces[:, 0], faces[:, 1], faces[:, 2]
    hi2, lo2 = np.maximum(f0, f1), np.minimum(f0, f1)
    return np.select(
        [net == 0, net == 1, net == 2, net == -1],
        [f0, hi2, np.maximum(hi2, f2), lo2],
        default=np.minimum(lo2, f2),
    )


def _contest_modifier(p: Params, levels: np.ndarray) -> np.ndarray:
    """R-RST-27: max(mod str, mod dex) after the arms and legs score penalties."""
    arms, legs = levels[:, R.ARMS], levels[:, R.LEGS]
    s = p.str_score - _ARMS_STR[arms] - _LEGS_STR[legs]
    d = p.dex_score - _ARMS_DEX[arms] - _LEGS_DEX[legs]
    return np.maximum(_modifier(s), _modifier(d))


def binder_turn(state: DuelState, p: Params, d20: np.ndarray) -> DuelState:
    """R-RST-9 … R-RST-11, R-RST-27, R-RST-28 for the whole batch."""
    levels = state.levels
    n = levels.shape[0]
    if not p.has_binder or not p.bind_slots:
        return state
    # R-RST-28: the first slot of binder.slots below despair.
    slot = np.full(n, -1, dtype=np.int64)
    for s in reversed(p.bind_slots):
        slot = np.where(levels[:, s] < R.DESPAIR, s, slot)
    # R-RST-9 / R-RST-28: bindable by condition or while body >= 1.
    attempt = (slot >= 0) & (p.bindable_condition | (levels[:, R.BODY] >= R.LIGHT))
    target_die = d20[:, R.COL_TARGET[0]]
    if p.flank_penalty:  # R-RST-11
        target_die = np.minimum(target_die, d20[:, R.COL_TARGET[1]])
    win = attempt & (d20[:, R.COL_BINDER] + p.binder_mod > target_die + _contest_modifier(p, levels))  # R-RST-10
    rows = np.arange(n)
    safe_slot = np.where(slot >= 0, slot, 0)
    current = levels[rows, safe_slot].astype(np.int16)
    raised = np.where(p.method_action & (current == R.NONE), R.MODERATE, current + 1) + int(p.flank_extra)
    new_levels = levels.copy()
    new_levels[rows, safe_slot] = np.where(win, np.minimum(raised, R.DESPAIR), current).astype(np.int8)
    return replace(state, levels=new_levels, bindings=state.bindings + win.astype(np.int16))


def _check_options(state: DuelState, p: Params):
    """Every (slot, ability) escape check at once: numerators (n, 7, 3), and the pieces to resolve them.

    R-RST-2, R-RST-3, R-RST-5, R-RST-8, R-RST-12, R-RST-29, R-RST-30, R-RST-31."""
    levels = state.levels.astype(np.int16)
    arms, legs, fingers, body = (levels[:, i] for i in (R.ARMS, R.LEGS, R.FINGERS, R.BODY))
    # R-RST-2 / R-RST-29 escape DCs
    dc = 10 + 4 * levels
    dc[:, R.BODY] = 10 + 4 * R.HEAVY
    fingers_dc = ((fingers == R.LIGHT) | (fingers == R.MODERATE)).astype(np.int16) * 4
    dc += fingers_dc[:, None] * (_SLOT_IDS != R.FINGERS)
    dc += ((body >= R.LIGHT).astype(np.int16) * 8)[:, None] * (_SLOT_IDS != R.BODY)
    # R-RST-3 / R-RST-30 escapable restraints
    escapable = (levels >= R.LIGHT) & (levels <= R.COMPLETE)
    escapable &= (_SLOT_IDS == R.FINGERS) | (fingers < R.COMPLETE)[:, None]
    # R-RST-30 escape scores: legs never touch dex, int unpenalised
    static = np.stack(
        [
            _modifier(p.str_score - _ARMS_STR[arms] - _LEGS_STR[legs]),
            _modifier(p.dex_score - _ARMS_DEX[arms]),
            np.full(arms.shape, (p.int_score - 10) // 2, dtype=np.int16),
        ],
        axis=1,
    ) + p.class_bonus
    is_str = np.array([True, False, False])
    rage = is_str & (state.rages > 0)[:, None]  # R-RST-12 / R-RST-31
    penalty = (is_str & (arms == R.HEAVY)[:, None]).astype(np.int8) + (fingers == R.HEAVY)[:, None]
    net = _net_dice(rage.astype(np.int8), penalty, p.stacking)
    auto_fail = is_str & (arms >= R.COMPLETE)[:, None]  # R-RST-5 / R-RST-8
    need = dc[:, :, None] - static[:, None, :]
    index = np.clip(need, 0, _NEED_SPAN - 1).astype(np.intp)
    index += ((net.astype(np.intp) + MAX_NET_DICE) * _NEED_SPAN)[:, None, :]
    num = _check_table().take(index)
    num[np.broadcast_to(auto_fail[:, None, :], num.shape)] = 0
    return num, need, net, auto_fail, rage, dc, escapable


def _resolve(state: DuelState, p: Params, do: np.ndarray, slot: np.ndarray, opts, faces: np.ndarray) -> DuelState:
    """R-RST-3, R-RST-29, R-RST-31: resolve the chosen checks (runs with ``do`` false are untouched)."""
    num, need, net, auto_fail, rage, _, _ = opts
    n = slot.shape[0]
    rows = np.arange(n)
    slot_num = num[rows, slot]  # (n, 3)
    ability = np.argmax(slot_num, axis=1)  # R-RST-30: ties str, dex, int
    chosen_num = slot_num[rows, ability]
    chosen_need = need[rows, slot, ability]
    chosen_net = net[rows, ability]
    chosen_rage = rage[rows, ability]
    spend = do & (state.ranger > 0) & (2 * chosen_num < CHECK_DENOMINATOR)  # R-RST-31 ranger
    kept = _kept(faces, chosen_net)
    success = do & ~auto_fail[rows, ability] & (kept >= chosen_need - np.where(spend, p.ranger_bonus, 0))
    current = state.levels[rows, slot].astype(np.int16)
    dropped = np.where(current == R.COMPLETE, R.MODERATE, current - 1)  # complete -> moderate in combat
    dropped = np.where(chosen_rage, np.maximum(dropped - 1, 0), dropped)  # rage: one level more
    levels = state.levels.copy()
    levels[rows, slot] = np.where(success, dropped, current).astype(np.int8)
    return replace(
        state,
        levels=levels,
        rages=(state.rages - (success & chosen_rage)).astype(np.int8),  # kept on a failure
        ranger=(state.ranger - spend).astype(np.int8),
        checks=state.checks + do.astype(np.int16),
        successes=state.successes + success.astype(np.int16),
    )


def target_turn(state: DuelState, p: Params, d20: np.ndarray) -> tuple[DuelState, np.ndarray]:
    """R-RST-4 / R-RST-30: bonus-action escape on the light restraint of lowest DC, then the action
    escape on the restraint with the highest success probability (ties in slot order)."""
    before = state.checks
    opts = _check_options(state, p)
    num, _, _, _, _, dc, escapable = opts
    light = escapable & (state.levels == R.LIGHT)
    do = light.any(axis=1)
    slot = np.argmin(np.where(light, dc, np.iinfo(np.int16).max), axis=1)
    state = _resolve(state, p, do, slot, opts, d20[:, list(R.COL_BONUS)])
    opts = _check_options(state, p)
    num, escapable = opts[0], opts[6]
    slot_num = np.where(escapable, num.max(axis=2), -1)
    slot = np.argmax(slot_num, axis=1)
    do = escapable.any(axis=1)
    state = _resolve(state, p, do, slot, opts, d20[:, list(R.COL_ACTION)])
    return state, (state.checks - before).astype(np.int8)


def composure_step(state: DuelState, p: Params, u_round: np.ndarray, round_no: int) -> DuelState:
    """R-RST-21, R-RST-22, R-RST-24: the stimulus for every pool not yet overloaded (masked)."""
    if p.n_pools == 0 or round_no > p.composure_rounds:
        return state
    n = u_round.shape[0]
    damage = np.tile(np.asarray(p.pool_constant, dtype=np.int64), (n, 1))
    for pool in range(p.n_pools):
        for sides, sign, col in zip(p.die_sides, p.die_signs, p.stimulus_cols(pool), strict=True):
            damage[:, pool] += sign * faces_from_uniform(u_round[:, col], sides)
    damage = np.maximum(damage, 0)
    active = state.overload_round == 0
    composure = np.where(active, np.maximum(state.composure - damage, 0), state.composure).astype(np.int32)
    craving = state.craving + np.where(active & p.craving, damage, 0).astype(np.int32)
    overloaded = active & (damage > 0) & (composure == 0)
    return replace(
        state,
        composure=composure,
        craving=craving,
        overload_round=np.where(overloaded, round_no, state.overload_round).astype(np.int16),
    )


def step(state: DuelState, p: Params, u_round: np.ndarray, round_no: int) -> tuple[DuelState, np.ndarray]:
    """One round (R-RST-13): both sides act in initiative order while the duel lasts, then the stimulus."""
    checks = np.zeros(state.levels.shape[0], dtype=np.int8)
    if round_no <= p.rounds:
        d20 = faces_from_uniform(u_round[:, : R.COL_STIMULUS], 20)
        if p.binder_first:
            state = binder_turn(state, p, d20)
            state, checks = target_turn(state, p, d20)
        else:
            state, checks = target_turn(state, p, d20)
            state = binder_turn(state, p, d20)
    return composure_step(state, p, u_round, round_no), checks


def run_kernel(p: Params, u: np.ndarray) -> Trace:
    """All runs of the block ``u`` (horizon, n, n_cols) at once."""
    n = u.shape[1]
    state = initial_state(p, n)
    levels, checks = empty_trace_arrays(p, n)
    for r in range(p.horizon):
        state, c = step(state, p, u[r], r + 1)
        if r < p.rounds:
            levels[:, r] = state.levels
            checks[:, r] = c
    return Trace(levels=levels, checks_by_round=checks, final=state)


def simulate_chunk(p: Params, n: int, rng: np.random.Generator) -> Trace:
    return run_kernel(p, draw_uniforms(p, n, rng))
