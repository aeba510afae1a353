"""Streaming aggregation of restraint duels: everything the summary, the report and the balance metrics
need, as integer sums updated chunk by chunk, so 10,000,000 runs need no more memory than a few chunks.

Every field is an integer count or sum, so folding the chunks one by one (streamed) or all at once
(in memory) gives the same aggregate, and hence exactly the same summary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from sim.restraint import rules as R
from sim.restraint.columns import RUN, TOTALS, per_run_shape
from sim.restraint.rules import Params

#: the per-run numbers whose sums the aggregate keeps as exact ints (``sums``), and the per-run arrays whose sums
#: it keeps as int64 arrays (``totals``): sim.restraint.columns, the statistics with ``total``
SUMMED = tuple(s.name for s in TOTALS if s.shape == RUN)
ARRAY_SUMMED = tuple(s.name for s in TOTALS if s.shape != RUN)


def _histogram(values: np.ndarray, size: int) -> np.ndarray:
    return np.bincount(values.astype(np.int64).ravel(), minlength=size)[:size].astype(np.int64)


def _histograms(values: np.ndarray, size: int) -> np.ndarray:
    """(k, size): the histogram of each column of ``values`` (n, k), in one counting pass."""
    k = values.shape[1]
    cells = values.astype(np.int64) + np.arange(k, dtype=np.int64) * size
    return np.bincount(cells.ravel(), minlength=k * size).reshape(k, size)


ARMS, BODY, LIGHT, COMPLETE = R.ARMS, R.BODY, R.LIGHT, R.COMPLETE  # plain constants for the compiled fold


@njit(cache=True, nogil=True)
def _fold_levels(levels, always_incapacitated, level_counts, incapacitated, arms_complete, either):
    """Levels by round (n, rounds, 7) into runs per (round, slot, level) and runs incapacitated (R-RST-26), with
    arms complete (R-RST-13), and either, by round: one pass over the runs."""
    n, rounds, slots = levels.shape
    for j in range(n):
        for r in range(rounds):
            for s in range(slots):
                level_counts[r, s, levels[j, r, s]] += 1
            incap = always_incapacitated or levels[j, r, BODY] >= LIGHT
            arms = levels[j, r, ARMS] >= COMPLETE
            if incap:
                incapacitated[r] += 1
            if arms:
                arms_complete[r] += 1
            if incap or arms:
                either[r] += 1


@dataclass
class RestraintAggregate:
    """Running sums over duels. Histograms by round are indexed by the round (index 0 = never)."""

    rounds: int
    n_pools: int
    composure_rounds: int
    runs: int = 0
    level_counts: np.ndarray = None  # (rounds, 7, 6) runs per slot and level at the end of each round
    incapacitated: np.ndarray = None  # (rounds,) runs incapacitated at the end of the round (R-RST-26)
    arms_complete: np.ndarray = None  # (rounds,) runs with arms >= complete at the end of the round
    either: np.ndarray = None  # (rounds,) runs incapacitated or arms >= complete (R-RST-13)
    # the sums over runs of sim.restraint.columns (TOTALS) by name: exact ints for the per-run numbers (escape
    # checks, successes, bindings won, rages and ranger uses left, overloads in the duel; SUMMED), int64 arrays
    # of the per-run shape for the others (craving and recoveries by pool, escape checks and dazed by round)
    sums: dict[str, int] = None
    totals: dict[str, np.ndarray] = None
    checks_sumsq: int = 0  # sum of escape_checks squared (its standard error)
    final_levels: np.ndarray = None  # (7, 6) runs per slot and level at the end of the duel
    first_incapacitated: np.ndarray = None  # (rounds + 1,) runs by first_incapacitated_round
    first_arms_complete: np.ndarray = None  # (rounds + 1,) runs by first_arms_complete_round
    taken_out: np.ndarray = None  # (rounds + 1,) runs by the first round incapacitated or arms complete
    overload_at: np.ndarray = None  # (pools, composure_rounds + 1) runs by the round of first overload

    def __post_init__(self):
        z, r = np.zeros, self.rounds
        self.level_counts = z((r, R.N_SLOTS, R.N_LEVELS), dtype=np.int64)
        for name in ("incapacitated", "arms_complete", "either"):
            setattr(self, name, z(r, dtype=np.int64))
        self.sums = dict.fromkeys(SUMMED, 0)
        self.totals = {s.name: z(per_run_shape(s, self.n_pools, r), dtype=np.int64) for s in TOTALS
                       if s.name in ARRAY_SUMMED}
        self.final_levels = z((R.N_SLOTS, R.N_LEVELS), dtype=np.int64)
        for name in ("first_incapacitated", "first_arms_complete", "taken_out"):
            setattr(self, name, z(r + 1, dtype=np.int64))
        self.overload_at = z((self.n_pools, self.composure_rounds + 1), dtype=np.int64)

    @classmethod
    def empty(cls, p: Params) -> RestraintAggregate:
        return cls(p.rounds, p.n_pools, p.composure_rounds)

    def add(self, p: Params, cols: dict[str, np.ndarray]) -> RestraintAggregate:
        """Fold one chunk's per-run columns (sim.restraint.columns, by-round statistics included) in."""
        n = len(cols["escape_checks"])
        self.runs += n
        for name in SUMMED:
            self.sums[name] += int(cols[name].sum(dtype=np.int64))
        for name in ARRAY_SUMMED:
            self.totals[name] += cols[name].sum(axis=0, dtype=np.int64)
        _fold_levels(np.ascontiguousarray(cols["levels_by_round"]), bool(p.incapacitated_condition),
                     self.level_counts, self.incapacitated, self.arms_complete, self.either)
        checks = cols["escape_checks"].astype(np.int64)
        self.checks_sumsq += int((checks * checks).sum())
        self.final_levels += _histograms(cols["levels"], R.N_LEVELS)
        size = self.rounds + 1
        first_incap, first_arms = cols["first_incapacitated_round"], cols["first_arms_complete_round"]
        self.first_incapacitated += _histogram(first_incap, size)
        self.first_arms_complete += _histogram(first_arms, size)
        never = size
        first = np.minimum(np.where(first_incap > 0, first_incap, never), np.where(first_arms > 0, first_arms, never))
        self.taken_out += _histogram(np.where(first < never, first, 0), size)
        self.overload_at += _histograms(cols["overload_round"], self.composure_rounds + 1)
        return self

    def merge(self, other: RestraintAggregate) -> RestraintAggregate:
        """Fold another aggregate (another chunk's) in."""
        self.runs += other.runs
        for name in ("level_counts", "incapacitated", "arms_complete", "either", "final_levels",
                     "first_incapacitated", "first_arms_complete", "taken_out", "overload_at"):
            getattr(self, name)[...] += getattr(other, name)
        for name in SUMMED:
            self.sums[name] += other.sums[name]
        for name in ARRAY_SUMMED:
            self.totals[name] += other.totals[name]
        self.checks_sumsq += other.checks_sumsq
        return self

    # ---- what the summary reads

    def mean(self, name: str) -> float:
        """Mean over runs of a SUMMED per-run number."""
        return self.sums[name] / self.runs

    @property
    def checks_by_round(self) -> np.ndarray:
        """(rounds,) escape checks made in the round, summed over runs."""
        return self.totals["checks_by_round"]

    @property
    def dazed(self) -> np.ndarray:
        """(rounds,) runs whose target was dazed in the round (R-RST-33)."""
        return self.totals["dazed"]

    @property
    def craving_sum(self) -> np.ndarray:
        """(pools,) maximum lost to craving, summed over runs (R-RST-22)."""
        return self.totals["craving"]

    @property
    def recoveries_sum(self) -> np.ndarray:
        """(pools,) recoveries made in the race, summed over runs (R-RST-32)."""
        return self.totals["recoveries"]

    @property
    def overloads_sum(self) -> int:
        """The target's overloads in the duel, summed over runs (R-RST-33)."""
        return self.sums["overloads"]

    def mean_escape_checks_se(self) -> float | None:
        """Standard error of the mean escape checks (sample sd with ddof=1), from exact integer sums."""
        n = self.runs
        if n < 2:
            return None
        s = self.sums["escape_checks"]
        var = max(0, n * self.checks_sumsq - s * s) / (n * (n - 1))  # Python ints: no cancellation
        return float(np.sqrt(var / n))

    def overloaded(self) -> np.ndarray:
        """(pools, composure_rounds): runs overloaded by the end of each composure round."""
        return np.cumsum(self.overload_at[:, 1:], axis=1)

    def mean_craving(self, pool: int = 0) -> float:
        return float(self.craving_sum[pool] / self.runs)
