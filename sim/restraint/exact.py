"""Exact analysis: forward dynamic programming over the distribution of the duel's state
(R-RST-13, a small Markov chain), and the distribution of rounds until overload (R-RST-24).

The duel's state is (levels per slot, rages left, ranger uses left); each round moves probability
mass through the binder's attempt and the target's two escape checks with the same rule functions
the scalar reference uses. Composure pools are independent of the duel and get their own chain
over the composure left.
"""

from __future__ import annotations

from collections import defaultdict
from functools import cache, lru_cache

import numpy as np

from sim.dice import CHECK_DENOMINATOR
from sim.errors import ExactUnsupported
from sim.limits import MAX_EXACT_DICE_FACES
from sim.restraint import rules as R
from sim.restraint.rules import Params

MAX_EXACT_STATES = 200_000
#: the work of one exact analysis, in steps: one duel or pool state meeting one stimulus outcome in one round (about
#: a microsecond each; the vectorised chain without recoveries counts one step per 256 composure values). Counted as
#: the chains advance and projected over the rounds still to come: refused as soon as the projection exceeds it.
MAX_EXACT_WORK = 2_000_000
VECTOR_VALUES_PER_STEP = 256


class ExactWorkExceeded(ExactUnsupported):
    """The projected work of a restraint exact analysis exceeds :data:`MAX_EXACT_WORK` (a huge composure, a wide
    stimulus): refused before it is done; ``run`` reports the scenario by simulation alone."""


class Work:
    """Steps spent on one exact analysis and the budget they are counted against."""

    def __init__(self, limit: int = MAX_EXACT_WORK):
        self.limit, self.done = limit, 0

    def project(self, what: str, now: float, later: float = 0.0) -> None:
        """Spend ``now`` steps; refuse when the steps done plus ``later`` more would exceed the budget."""
        self.done += now
        if self.done + later > self.limit:
            raise ExactWorkExceeded(
                f"the exact {what} would take more than {self.limit:,} steps (about {self.done + later:,.0f}: a "
                "large composure or a wide stimulus); exact analysis is limited to "
                f"{self.limit:,} steps (sim.restraint.exact.MAX_EXACT_WORK); use Monte Carlo (python -m sim run)")

State = tuple  # (levels, rages left, ranger uses left[, composure pool state of the duel, R-RST-33])
Pool = tuple[int, int, int, int, int]  # (composure, craving, uses left, immune this next round, dazed rounds left)


@lru_cache(maxsize=4096)
def _contest_win(binder_mod: int, target_mod: int, penalty: bool) -> float:
    return R.contest_win_probability(binder_mod, target_mod, penalty)


def _binder_step(p: Params, dist: dict[State, float]) -> dict[State, float]:
    """R-RST-9 … R-RST-11, R-RST-27, R-RST-28 over a distribution."""
    out: dict[State, float] = defaultdict(float)
    for state, prob in dist.items():
        levels = state[0]
        slot = R.binding_slot(p, levels)
        if slot is None:
            out[state] += prob
            continue
        target_mod = R.contest_modifier(p.str_score, p.dex_score, levels)
        win = _contest_win(p.binder_mod, target_mod, p.flank_penalty)
        raised = list(levels)
        raised[slot] = R.bound_level(levels[slot], p.method_action, p.flank_extra)
        out[(tuple(raised), *state[1:])] += prob * win
        out[state] += prob * (1 - win)
    return out


def _check_branches(p: Params, state: State, slot: int) -> list[tuple[State, float]]:
    """R-RST-3, R-RST-12, R-RST-29 … R-RST-31: the states after one escape check, with probabilities."""
    levels, rages, ranger, *rest = state
    spec, num = R.best_check(p, levels, slot, rages)
    extra = 0
    if R.ranger_spends(p, num, ranger):
        ranger -= 1
        extra = p.ranger_bonus
    success = spec.numerator(extra) / CHECK_DENOMINATOR
    fail_state = (levels, rages, ranger, *rest)
    if success <= 0.0:
        return [(fail_state, 1.0)]
    dropped = list(levels)
    dropped[slot] = R.dropped_level(levels[slot], spec.rage)
    win_state = (tuple(dropped), rages - (1 if spec.rage else 0), ranger, *rest)
    if success >= 1.0:
        return [(win_state, 1.0)]
    return [(win_state, success), (fail_state, 1.0 - success)]


def _target_step(p: Params, dist: dict[State, float]) -> tuple[dict[State, float], float]:
    """R-RST-4 / R-RST-30 over a distribution; also the expected number of checks made."""
    checks = 0.0
    after_bonus: dict[State, float] = defaultdict(float)
    for state, prob in dist.items():
        if _dazed(state):  # R-RST-33: a dazed target makes no escape attempt
            after_bonus[state] += prob
            continue
        slot = R.bonus_action_slot(state[0])
        if slot is None:
            after_bonus[state] += prob
            continue
        checks += prob
        for nxt, q in _check_branches(p, state, slot):
            after_bonus[nxt] += prob * q
    out: dict[State, float] = defaultdict(float)
    for state, prob in after_bonus.items():
        slot = None if _dazed(state) else R.action_slot(p, state[0], state[1])
        if slot is None:
            out[state] += prob
            continue
        checks += prob
        for nxt, q in _check_branches(p, state, slot):
            out[nxt] += prob * q
    return out, checks


def _dazed(state: State) -> bool:
    """R-RST-33: the duel pool (4th element, when composure runs alongside the duel) has dazed rounds left."""
    return len(state) > 3 and state[3][4] > 0


def _composure_step(p: Params, dist: dict[State, float], damage: dict[int, float]) -> tuple[dict, float]:
    """R-RST-33: the stimulus at the end of a duel round on the duel pool; also the expected overloads."""
    out: dict[State, float] = defaultdict(float)
    overloads = 0.0
    for state, prob in dist.items():
        for d, q in damage.items():
            for pool, w, over, _ in composure_branches(p, 0, state[3], d):
                out[(*state[:3], pool)] += prob * q * w
                if over:
                    overloads += prob * q * w
    return out, overloads


def duel_distribution(p: Params, work: Work | None = None):
    """Yield, for each duel round, the state distribution at its end, the expected checks made, P(dazed in the
    round) and the expected overloads in it (R-RST-33; 0 without composure in the duel). Each round's states
    times the stimulus outcomes count against ``work``, projected over the rounds left."""
    work = work or Work()
    dist: dict[State, float] = {(tuple(p.initial_levels), p.rages, p.ranger_uses): 1.0}
    damage = None
    if p.duel_overload:  # R-RST-33: the target's composure runs alongside the duel
        dist = {(*state, _pool_start(p, 0)): prob for state, prob in dist.items()}
        damage = damage_distribution(p, 0)
    for r in range(p.rounds):
        cost = len(dist) * (1 + (len(damage) if damage is not None else 0))
        work.project("duel", cost, cost * (p.rounds - r - 1))
        checks = 0.0
        dazed = sum(prob for state, prob in dist.items() if _dazed(state))
        if p.binder_first:
            dist = _binder_step(p, dist)
            dist, checks = _target_step(p, dist)
        else:
            dist, checks = _target_step(p, dist)
            dist = _binder_step(p, dist)
        overloads = 0.0
        if damage is not None:
            dist, overloads = _composure_step(p, dist, damage)
        if len(dist) > MAX_EXACT_STATES:
            raise ExactUnsupported(f"more than {MAX_EXACT_STATES} duel states; use simulation")
        yield dist, checks, dazed, overloads


def duel_exact(p: Params, work: Work | None = None) -> dict:
    """R-RST-13 / R-RST-26 outputs per round, exactly."""
    incap, arms, either, checks_by_round = [], [], [], []
    level_dist = np.zeros((p.rounds, R.N_SLOTS, R.N_LEVELS))
    rages_left = ranger_left = 0.0
    dazed_by_round, overloads = [], 0.0
    for r, (dist, checks, dazed, overloaded) in enumerate(duel_distribution(p, work)):
        dazed_by_round.append(dazed)
        overloads += overloaded
        pi = pa = pe = 0.0
        for (levels, *_), prob in dist.items():
            inc = R.is_incapacitated(p, levels)
            ac = levels[R.ARMS] >= R.COMPLETE
            pi += prob * inc
            pa += prob * ac
            pe += prob * (inc or ac)
            for s in range(R.N_SLOTS):
                level_dist[r, s, levels[s]] += prob
        incap.append(pi)
        arms.append(pa)
        either.append(pe)
        checks_by_round.append(checks)
        if r == p.rounds - 1:
            rages_left = sum(prob * st[1] for st, prob in dist.items())
            ranger_left = sum(prob * st[2] for st, prob in dist.items())
    out = {} if not p.duel_overload else {"mean_overloads": overloads, "dazed_by_round": dazed_by_round}
    return out | {
        "incapacitated_by_round": incap,
        "arms_complete_by_round": arms,
        "incapacitated_or_arms_complete_by_round": either,
        "mean_escape_checks": float(sum(checks_by_round)),
        "escape_checks_by_round": checks_by_round,
        "level_distribution": level_dist,
        "mean_rages_left": rages_left,
        "mean_ranger_uses_left": ranger_left,
    }


# ---------------------------------------------------------------------------------------------
# R-RST-21, R-RST-22, R-RST-24: rounds until overload


def damage_distribution(p: Params, pool: int) -> dict[int, float]:
    """Exact distribution of one round's stimulus for ``pool``; rolls below 0 count as 0."""
    if sum(p.die_sides) > MAX_EXACT_DICE_FACES:  # the convolution's cost grows with the square of this
        raise ExactUnsupported(f"composure.stimulus has {sum(p.die_sides):,} faces in all (count x sides); exact "
                               f"analysis takes at most {MAX_EXACT_DICE_FACES:,}; use Monte Carlo")
    counts = {p.pool_constant[pool]: 1.0}
    for sides, sign in zip(p.die_sides, p.die_signs, strict=True):
        nxt: dict[int, float] = defaultdict(float)
        for v, c in counts.items():
            for f in range(1, sides + 1):
                nxt[v + sign * f] += c / sides
        counts = nxt
    out: dict[int, float] = defaultdict(float)
    for v, c in counts.items():
        out[max(0, v)] += c
    return dict(sorted(out.items()))


def overload_by_round(maximum: int, damage: dict[int, float], rounds: int, work: Work | None = None) -> list[float]:
    """P(first overload by the end of round k), k = 1..rounds, starting at ``maximum``."""
    if work is not None:  # the whole chain's cost is known before it starts
        work.project("rounds-until-overload chain", 0, rounds * len(damage) * (1 + maximum // VECTOR_VALUES_PER_STEP))
    alive = np.zeros(maximum + 1)
    alive[maximum] = 1.0
    overloaded = 0.0
    out = []
    for _ in range(rounds):
        nxt = np.zeros_like(alive)
        for d, q in damage.items():
            if d == 0:
                nxt += q * alive
                continue
            # composure c <= d reaches 0 through damage > 0: overloaded (R-RST-21)
            overloaded += q * float(alive[1 : d + 1].sum())
            if d < maximum:
                nxt[1 : maximum + 1 - d] += q * alive[d + 1 :]
        alive = nxt
        out.append(min(1.0, overloaded))
    return out


def expected_rounds_to_overload(maximum: int, damage: dict[int, float], work: Work | None = None) -> np.ndarray:
    """E[rounds until the first overload] from every composure 0..maximum (entry 0 is 0).

    E[c] = (1 + sum_{d>0} P(d) E[max(c-d, 0)]) / (1 - P(0)); inf when no roll can hurt."""
    if work is not None:
        work.project("mean rounds to overload", 0, maximum * len(damage))
    p0 = damage.get(0, 0.0)
    e = np.zeros(maximum + 1)
    if p0 >= 1.0:
        e[1:] = np.inf
        return e
    positive = [(d, q) for d, q in damage.items() if d > 0]
    for c in range(1, maximum + 1):
        total = 1.0
        for d, q in positive:
            if d < c:
                total += q * e[c - d]
        e[c] = total / (1.0 - p0)
    return e


def composure_exact(p: Params, work: Work | None = None) -> dict:
    """Exact overload outputs for every pool (R-RST-24), every pool's chain counted against ``work``."""
    work = work or Work()
    out = {}
    for pool, name in enumerate(p.pool_names):
        damage = damage_distribution(p, pool)
        recoveries = None
        if _has_recoveries(p, pool):  # R-RST-32: the chain over the pool state
            race = race_with_recoveries(p, pool, damage, work=work)
            by_round, mean, recoveries = race["overload_by_round"], race["mean_rounds_to_overload"], \
                race["mean_recoveries"]
            mean = np.inf if mean is None else mean
        else:
            by_round = overload_by_round(p.pool_max[pool], damage, p.composure_rounds, work)
            mean = float(expected_rounds_to_overload(p.pool_max[pool], damage, work)[-1])
            recoveries = 0.0 if p.recoveries else None
        craving = None
        if p.craving:  # R-RST-22: expected maximum lost through the horizon (rolls until the overload)
            mean_damage = sum(d * q for d, q in damage.items())
            alive_before = [1.0] + [1.0 - x for x in by_round[:-1]]
            craving = float(mean_damage * sum(alive_before))
        out[name] = {
            "overload_by_round": by_round,
            "mean_rounds_to_overload": None if not np.isfinite(mean) else float(mean),
            "mean_craving": craving,
            "mean_recoveries": recoveries,
        }
    return out


# ---------------------------------------------------------------------------------------------
# R-RST-32 / R-RST-33: one pool's composure step with recoveries, as branches (rules.composure_step)


def _pool_start(p: Params, pool: int) -> Pool:
    return (p.pool_max[pool], 0, p.pool_uses[pool] if p.pool_uses else 0, 0, 0)


@cache
def _d20_at_least(need: int) -> float:
    return min(20, max(0, 21 - need)) / 20


def composure_branches(p: Params, pool: int, state: Pool, damage: int) -> list[tuple[Pool, float, bool, bool]]:
    """The pool states after ``damage`` hits ``state`` at the end of a round, exactly as
    :func:`sim.restraint.rules.composure_step`: (state, probability, overloaded, recovered). Craving is kept
    at most the maximum (beyond it nothing changes: every use of the maximum is clamped at 0)."""
    comp, craving, uses, immune, dazed = state
    top_max = p.pool_max[pool]
    if p.craving:
        craving = min(top_max, craving + damage)
    top = max(0, top_max - craving)
    if dazed > 0:
        dazed -= 1
        return [((top if dazed == 0 else comp, craving, uses, 0, dazed), 1.0, False, False)]
    comp = max(0, min(comp - damage, top))
    if damage > 0 and comp == 0:
        if immune:
            return [((0, craving, uses, 0, 0), 1.0, False, False)]
        out = []
        fail = 1.0
        if p.pool_focus and p.pool_focus[pool]:
            mod = p.pool_focus_mod[pool]
            win = _d20_at_least(10 + damage // 2 - mod)
            fail = 1.0 - win
            if win > 0:
                for f in range(1, R.FOCUS_SIDES + 1):
                    out.append(((min(max(0, f + mod), top), craving, uses, 1, 0), win / R.FOCUS_SIDES, False, True))
        if fail > 0:
            after = (0, craving, uses, 0, p.dazed_rounds) if p.dazed_rounds > 0 else (top, craving, uses, 0, 0)
            out.append((after, fail, True, False))
        return out
    if uses > 0 and comp <= top // 2:
        return [((min(comp + f, top), craving, uses - 1, 0, 0), 1 / R.RECOVERY_SIDES, False, True)
                for f in range(1, R.RECOVERY_SIDES + 1)]
    return [((comp, craving, uses, 0, 0), 1.0, False, False)]


def _has_recoveries(p: Params, pool: int) -> bool:
    return bool(p.pool_focus and (p.pool_focus[pool] or p.pool_uses[pool] > 0))


def race_with_recoveries(p: Params, pool: int, damage: dict[int, float], max_rounds: int = 100_000,
                         work: Work | None = None) -> dict:
    """R-RST-24 / R-RST-32: the race of one pool with its class's recoveries, as a chain over its pool state
    until the first overload: overload by round, mean rounds to overload (summed to a survival below 1e-13),
    expected recoveries in the race's rounds and the survival before each round.

    Each round's states times the stimulus outcomes count against ``work``; the rounds still to come are
    projected as the mean composure left over the mean stimulus (the race cannot end sooner on average)."""
    work = work or Work()
    mean_damage = sum(d * q for d, q in damage.items())
    dist: dict[Pool, float] = {_pool_start(p, pool): 1.0}
    overloaded = 0.0
    by_round, alive_before = [], []
    recoveries = 0.0
    mean_rounds = 0.0
    r = 0
    while dist and r < max(max_rounds, p.composure_rounds):
        r += 1
        alive = sum(dist.values())
        cost = len(dist) * len(damage)
        left = sum(st[0] * q for st, q in dist.items()) / alive / mean_damage if mean_damage > 0 else 0.0
        work.project(f"composure race of pool {pool}", cost, cost * max(left, p.composure_rounds - r))
        mean_rounds += alive
        if r <= p.composure_rounds:
            alive_before.append(alive)
        nxt: dict[Pool, float] = defaultdict(float)
        for state, prob in dist.items():
            for d, q in damage.items():
                for new, w, over, rec in composure_branches(p, pool, state, d):
                    mass = prob * q * w
                    if over:
                        overloaded += mass
                    else:
                        nxt[new] += mass
                    if rec and r <= p.composure_rounds:
                        recoveries += mass
        dist = {k: v for k, v in nxt.items() if v > 0}
        if r <= p.composure_rounds:
            by_round.append(min(1.0, overloaded))
        elif sum(dist.values()) < 1e-13:
            break
    finite = sum(dist.values()) < 1e-9
    return {"overload_by_round": by_round, "mean_rounds_to_overload": mean_rounds if finite else None,
            "mean_recoveries": recoveries, "alive_before": alive_before}
