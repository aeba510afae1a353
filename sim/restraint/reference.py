"""The scalar reference: one duel at a time, reading like RULES.md section 2.

It draws nothing itself: it reads the same uniform block as the kernel
(:func:`sim.restraint.state.draw_uniforms`), so both must give identical traces (STYLE.md practice 6).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim.dice import faces_from_uniform, keep_d20
from sim.restraint import rules as R
from sim.restraint.columns import columns_from_targets
from sim.restraint.rules import Params


@dataclass
class Target:
    """One target's mutable state during a scalar duel."""

    levels: list[int]
    rages: int
    ranger: int
    checks: int = 0
    successes: int = 0
    bindings: int = 0
    composure: list[int] = field(default_factory=list)
    craving: list[int] = field(default_factory=list)
    overload_round: list[int] = field(default_factory=list)
    pools: list[R.Pool] = field(default_factory=list)  # the race's pools (R-RST-24, R-RST-32)
    duel: R.Pool | None = None  # R-RST-33: the target's composure alongside the duel
    levels_by_round: np.ndarray | None = None  # (rounds, 7) int8: levels after both sides acted (R-RST-26)
    checks_by_round: np.ndarray | None = None  # (rounds,) int8: escape checks made in each round
    dazed: np.ndarray | None = None  # (rounds,) bool: the target was dazed in the round (R-RST-33)

    # the per-run statistics (sim.restraint.columns) the pools keep
    @property
    def recoveries(self) -> list[int]:
        """R-RST-32: recoveries made in the race, by pool."""
        return [st.recoveries for st in self.pools]

    @property
    def overloads(self) -> int:
        """R-RST-33: the target's overloads in the duel."""
        return self.duel.overloads if self.duel else 0


def binder_turn(p: Params, t: Target, d20: np.ndarray) -> None:
    """R-RST-9 … R-RST-11, R-RST-27, R-RST-28: one binding attempt."""
    slot = R.binding_slot(p, t.levels)
    if slot is None:
        return
    binder_roll = int(d20[R.COL_BINDER]) + p.binder_mod
    target_die = int(d20[R.COL_TARGET[0]])
    if p.flank_penalty:  # R-RST-11: the flank penalty die is the only die of the contest (R-RST-27)
        target_die = min(target_die, int(d20[R.COL_TARGET[1]]))
    target_roll = target_die + R.contest_modifier(p.str_score, p.dex_score, t.levels)
    if binder_roll > target_roll:  # R-RST-10: the binder wins only if strictly higher
        t.levels[slot] = R.bound_level(t.levels[slot], p.method_action, p.flank_extra)
        t.bindings += 1


def escape_check(p: Params, t: Target, slot: int, dice: np.ndarray) -> None:
    """R-RST-3, R-RST-8, R-RST-12, R-RST-29 … R-RST-31: one escape check on ``slot``."""
    spec, num = R.best_check(p, t.levels, slot, t.rages)
    extra = 0
    if R.ranger_spends(p, num, t.ranger):
        t.ranger -= 1
        extra = p.ranger_bonus
    t.checks += 1
    if spec.auto_fail:
        return
    kept = keep_d20(dice, spec.net)
    if kept + spec.static + extra >= spec.dc:
        t.successes += 1
        t.levels[slot] = R.dropped_level(t.levels[slot], spec.rage)
        if spec.rage:
            t.rages -= 1  # the rage is kept if the check fails (R-RST-12)


def target_turn(p: Params, t: Target, d20: np.ndarray) -> int:
    """R-RST-4 / R-RST-30: the bonus-action escape, then the action escape. Returns checks made."""
    before = t.checks
    slot = R.bonus_action_slot(t.levels)
    if slot is not None:
        escape_check(p, t, slot, d20[list(R.COL_BONUS)])
    slot = R.action_slot(p, t.levels, t.rages)
    if slot is not None:
        escape_check(p, t, slot, d20[list(R.COL_ACTION)])
    return t.checks - before


def stimulus_damage(p: Params, pool: int, row: np.ndarray) -> int:
    """R-RST-24: one round's stimulus for one pool; a roll below 0 counts as 0."""
    total = p.pool_constant[pool]
    for sides, sign, col in zip(p.die_sides, p.die_signs, p.stimulus_cols(pool), strict=True):
        total += sign * int(faces_from_uniform(row[col], sides))
    return max(0, total)


def recovery_faces(p: Params, pool: int, row: np.ndarray) -> tuple[int, int]:
    """R-RST-32: the pool's absolute-focus d20 and its d8 (focus) or 1d6 (channel divinity, ki); 0, 0 when
    no recovery column is drawn."""
    if not p.rec_cols:
        return 0, 0
    sides = R.FOCUS_SIDES if p.pool_focus[pool] else R.RECOVERY_SIDES
    return (int(faces_from_uniform(row[p.recovery_col(pool, R.REC_D20)], 20)),
            int(faces_from_uniform(row[p.recovery_col(pool, R.REC_DIE)], sides)))


def composure_round(p: Params, t: Target, row: np.ndarray, round_no: int) -> None:
    """R-RST-21 / R-RST-22 / R-RST-24 / R-RST-32: the stimulus wears each pool of the race down until its first
    overload, with its class's recoveries; R-RST-33: the target's duel pool, on the same dice, goes on through
    the duel's rounds (dazed after an overload, then reset)."""
    for pool in range(p.n_pools):
        duel_turn = pool == 0 and t.duel is not None and round_no <= p.rounds
        race_turn = round_no <= p.composure_rounds and not t.overload_round[pool]
        if not (duel_turn or race_turn):
            continue
        damage = stimulus_damage(p, pool, row)
        d20, die = recovery_faces(p, pool, row)
        if race_turn:
            st = t.pools[pool]
            if R.composure_step(p, pool, st, damage, d20, die, round_no):
                t.overload_round[pool] = round_no
            t.composure[pool], t.craving[pool] = st.composure, st.craving
        if duel_turn:
            R.composure_step(p, pool, t.duel, damage, d20, die, round_no)


def new_target(p: Params) -> Target:
    """The target at the start of a duel: starting levels, full pools (R-RST-25)."""
    return Target(
        levels=list(p.initial_levels),
        rages=p.rages,
        ranger=p.ranger_uses,
        composure=list(p.pool_max),
        craving=[0] * p.n_pools,
        overload_round=[0] * p.n_pools,
        pools=[R.new_pool(p, pool) for pool in range(p.n_pools)],
        duel=R.new_pool(p, 0) if p.duel_overload else None,
    )


def reference_run(p: Params, u: np.ndarray) -> Target:
    """One duel from its uniform rows ``u`` (horizon, n_cols)."""
    t = new_target(p)
    levels = t.levels_by_round = np.zeros((p.rounds, R.N_SLOTS), dtype=np.int8)
    checks = t.checks_by_round = np.zeros(p.rounds, dtype=np.int8)
    dazed = t.dazed = np.zeros(p.rounds, dtype=np.bool_)
    for r in range(p.horizon):
        row = u[r]
        if r < p.rounds:
            d20 = faces_from_uniform(row[: R.COL_STIMULUS], 20)
            # R-RST-33: a dazed target makes no escape attempt this round (only a move or an attack)
            dazed[r] = t.duel is not None and t.duel.dazed_left > 0
            if p.binder_first:  # R-RST-13 initiative
                binder_turn(p, t, d20)
                checks[r] = 0 if dazed[r] else target_turn(p, t, d20)
            else:
                checks[r] = 0 if dazed[r] else target_turn(p, t, d20)
                binder_turn(p, t, d20)
            levels[r] = t.levels
        composure_round(p, t, row, r + 1)
    return t


def run_reference(p: Params, u: np.ndarray) -> dict[str, np.ndarray]:
    """All runs of the block ``u`` (horizon, n, n_cols), one at a time: the per-run columns of
    :mod:`sim.restraint.columns`."""
    return columns_from_targets(p, [reference_run(p, u[:, i, :]) for i in range(u.shape[1])])
