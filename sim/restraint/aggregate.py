"""Streaming aggregation of restraint duels: everything the summary, the report and the balance metrics
need, as integer sums updated chunk by chunk, so 10,000,000 runs need no more memory than a few chunks.

Every field is an integer count or sum, so folding the chunks one by one (streamed) or all at once
(in memory) gives the same aggregate, and hence exactly the same summary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.restraint import rules as R
from sim.restraint.model import SLOTS
from sim.restraint.rules import Params


@dataclass(frozen=True)
class ChunkResult:
    """What one seed chunk returns: per-run columns and per-round counts."""

    columns: dict[str, np.ndarray]
    level_counts: np.ndarray  # (rounds, 7, 6) runs per slot and level at the end of each round
    incapacitated: np.ndarray  # (rounds,) runs incapacitated at the end of the round (R-RST-26)
    arms_complete: np.ndarray  # (rounds,)
    either: np.ndarray  # (rounds,) incapacitated or arms >= complete (R-RST-13)
    checks: np.ndarray  # (rounds,) escape checks made in the round, summed over runs
    overloaded: np.ndarray  # (pools, composure_rounds) runs overloaded by the end of round k
    dazed: np.ndarray  # (rounds,) runs whose target was dazed in the round (R-RST-33)


#: per-run integer columns whose sums the aggregate keeps (the summary's means)
SUMMED = ("escape_checks", "escape_successes", "bindings_won", "rages_left", "ranger_uses_left")


def _histogram(values: np.ndarray, size: int) -> np.ndarray:
    return np.bincount(values.astype(np.int64).ravel(), minlength=size)[:size].astype(np.int64)


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
    checks_by_round: np.ndarray = None  # (rounds,) escape checks made in the round, summed over runs
    sums: dict[str, int] = None  # SUMMED column -> sum over runs
    checks_sumsq: int = 0  # sum of escape_checks squared (its standard error)
    final_levels: np.ndarray = None  # (7, 6) runs per slot and level at the end of the duel
    first_incapacitated: np.ndarray = None  # (rounds + 1,) runs by first_incapacitated_round
    first_arms_complete: np.ndarray = None  # (rounds + 1,) runs by first_arms_complete_round
    taken_out: np.ndarray = None  # (rounds + 1,) runs by the first round incapacitated or arms complete
    overload_at: np.ndarray = None  # (pools, composure_rounds + 1) runs by the round of first overload
    craving_sum: np.ndarray = None  # (pools,) maximum lost to craving, summed over runs
    recoveries_sum: np.ndarray = None  # (pools,) recoveries made in the race, summed over runs (R-RST-32)
    dazed: np.ndarray = None  # (rounds,) runs whose target was dazed in the round (R-RST-33)
    overloads_sum: int = 0  # the target's overloads in the duel, summed over runs (R-RST-33)

    def __post_init__(self):
        z, r = np.zeros, self.rounds
        self.level_counts = z((r, R.N_SLOTS, R.N_LEVELS), dtype=np.int64)
        for name in ("incapacitated", "arms_complete", "either", "checks_by_round"):
            setattr(self, name, z(r, dtype=np.int64))
        self.sums = dict.fromkeys(SUMMED, 0)
        self.final_levels = z((R.N_SLOTS, R.N_LEVELS), dtype=np.int64)
        for name in ("first_incapacitated", "first_arms_complete", "taken_out"):
            setattr(self, name, z(r + 1, dtype=np.int64))
        self.overload_at = z((self.n_pools, self.composure_rounds + 1), dtype=np.int64)
        self.craving_sum = z(self.n_pools, dtype=np.int64)
        self.recoveries_sum = z(self.n_pools, dtype=np.int64)
        self.dazed = z(r, dtype=np.int64)

    @classmethod
    def empty(cls, p: Params) -> RestraintAggregate:
        return cls(p.rounds, p.n_pools, p.composure_rounds)

    def add(self, p: Params, chunk: ChunkResult) -> RestraintAggregate:
        """Fold one chunk (its per-run columns and per-round counts) in."""
        cols = chunk.columns
        n = len(cols["escape_checks"])
        self.runs += n
        self.level_counts += chunk.level_counts
        self.incapacitated += chunk.incapacitated
        self.arms_complete += chunk.arms_complete
        self.either += chunk.either
        self.checks_by_round += chunk.checks
        self.dazed += chunk.dazed
        if "overloads" in cols:
            self.overloads_sum += int(cols["overloads"].sum(dtype=np.int64))
        for name in SUMMED:
            self.sums[name] += int(cols[name].sum(dtype=np.int64))
        checks = cols["escape_checks"].astype(np.int64)
        self.checks_sumsq += int((checks * checks).sum())
        for s, slot in enumerate(SLOTS):
            self.final_levels[s] += _histogram(cols[f"{slot}_final"], R.N_LEVELS)
        size = self.rounds + 1
        incap, arms = cols["first_incapacitated_round"], cols["first_arms_complete_round"]
        self.first_incapacitated += _histogram(incap, size)
        self.first_arms_complete += _histogram(arms, size)
        never = size
        first = np.minimum(np.where(incap > 0, incap, never), np.where(arms > 0, arms, never))
        self.taken_out += _histogram(np.where(first < never, first, 0), size)
        for pool, name in enumerate(p.pool_names):
            suffix = "" if pool == 0 else f"_{name}"
            self.overload_at[pool] += _histogram(cols[f"overload_round{suffix}"], self.composure_rounds + 1)
            if p.craving:
                self.craving_sum[pool] += int(cols[f"craving{suffix}"].sum(dtype=np.int64))
            if f"recoveries{suffix}" in cols:
                self.recoveries_sum[pool] += int(cols[f"recoveries{suffix}"].sum(dtype=np.int64))
        return self

    def merge(self, other: RestraintAggregate) -> RestraintAggregate:
        """Fold another aggregate (another chunk's) in."""
        self.runs += other.runs
        for name in ("level_counts", "incapacitated", "arms_complete", "either", "checks_by_round", "final_levels",
                     "first_incapacitated", "first_arms_complete", "taken_out", "overload_at", "craving_sum",
                     "recoveries_sum", "dazed"):
            getattr(self, name)[...] += getattr(other, name)
        for name in SUMMED:
            self.sums[name] += other.sums[name]
        self.checks_sumsq += other.checks_sumsq
        self.overloads_sum += other.overloads_sum
        return self

    # ---- what the summary reads

    def mean(self, name: str) -> float:
        """Mean over runs of a SUMMED column."""
        return self.sums[name] / self.runs

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
