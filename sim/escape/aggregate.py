"""Streaming aggregation of escape runs: everything the summary and the report need, as sums
updated chunk by chunk, so 10,000,000 runs need no more memory than one chunk."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit

from sim.escape import kernel as K
from sim.escape.columns import RUN_STATS, per_run_shape
from sim.escape.kernel import CAUGHT, ESCAPED
from sim.escape.model import TIER_IDS
from sim.escape.params import EscapeParams
from sim.stats import Z95, spread_from_counts, wilson_interval

#: the sums over runs kept as they are (sim.escape.columns: the statistics whose ``total`` names an attribute)
TOTALS = tuple(s for s in RUN_STATS if s.total)


@dataclass
class EscapeAggregate:
    max_rounds: int
    n_chars: int
    runs: int = 0
    outcomes: np.ndarray = field(default=None)  # (4,) by outcome code
    escaped_at: np.ndarray = field(default=None)  # (max_rounds + 1,) escaped runs by round
    rounds_sum: float = 0.0  # escaped runs
    rounds_sumsq: float = 0.0
    # the sums over runs of sim.escape.columns (TOTALS): checks, successes, overloads, items_found (C,);
    # checks_at_tier, successes_at_tier, rounds_at_tier (C, 9); actions (C, kinds)
    checks: np.ndarray = field(default=None)
    successes: np.ndarray = field(default=None)
    overloads: np.ndarray = field(default=None)
    items_found: np.ndarray = field(default=None)
    checks_at_tier: np.ndarray = field(default=None)
    successes_at_tier: np.ndarray = field(default=None)
    rounds_at_tier: np.ndarray = field(default=None)
    actions: np.ndarray = field(default=None)
    freed: np.ndarray = field(default=None)  # (C,) runs in which the character was freed
    freed_round_sum: np.ndarray = field(default=None)
    rounds_all: np.ndarray = field(default=None)  # (max_rounds + 1,) every run by its last round
    failure_tiers: np.ndarray = field(default=None)  # (9,) runs not escaped by the tier that held them longest
    first_round: np.ndarray = field(default=None)  # (3, 2): round-1 code (none/fail/success) x escaped
    # what drew the watch (report layer): attention of every run, and of caught runs by the round they were caught
    attention_sum: float = 0.0
    caught_at: np.ndarray = field(default=None)  # (max_rounds + 1,) caught runs by the round they were caught
    caught_attention: np.ndarray = field(default=None)  # (max_rounds + 1,) attention summed over runs caught then
    caught_actions: np.ndarray | None = None  # (max_rounds + 1, kinds) actions (party total) of those runs

    def __post_init__(self):
        C = self.n_chars
        z = np.zeros
        self.outcomes = z(4, dtype=np.int64)
        self.escaped_at = z(self.max_rounds + 1, dtype=np.int64)
        self.rounds_all = z(self.max_rounds + 1, dtype=np.int64)
        self.failure_tiers = z(9, dtype=np.int64)
        self.first_round = z((3, 2), dtype=np.int64)
        self.caught_at = z(self.max_rounds + 1, dtype=np.int64)
        self.caught_attention = z(self.max_rounds + 1, dtype=np.int64)
        self.freed = z(C, dtype=np.int64)
        self.freed_round_sum = z(C, dtype=np.int64)
        for s in TOTALS:
            setattr(self, s.total, z(per_run_shape(s, C), dtype=np.int64))

    @classmethod
    def empty(cls, p: EscapeParams) -> EscapeAggregate:
        return cls(p.max_rounds, p.n_chars)

    def add(self, cols: dict[str, np.ndarray]) -> EscapeAggregate:
        """Fold one chunk's per-run columns in: one compiled pass over the runs for the outcome, rounds, attention,
        first round, freed round and failure tier (:func:`_fold_runs`), and one per declared sum (:func:`_sum_runs`)
        (numpy's passes, one per column and mask, cost a tenth of a streamed run)."""
        outcome, rounds = cols["outcome"], cols["rounds"]
        n = len(outcome)
        C = self.n_chars
        self.runs += n
        acts = cols["action_counts"]
        caught_actions = np.zeros((self.max_rounds + 1, acts.shape[2]), dtype=np.int64)
        sums = np.zeros(4, dtype=np.int64)  # rounds and squared rounds of escaped runs, attention, caught runs
        _fold_runs(outcome, rounds, cols.get("attention", _NO_ATTENTION), cols.get("first_round", _NO_FIRST),
                   cols["freed_round"], cols["rounds_at_tier"], acts, "attention" in cols, "first_round" in cols,
                   self.outcomes, self.escaped_at, self.rounds_all, self.failure_tiers, self.first_round, self.freed,
                   self.freed_round_sum, self.caught_at, self.caught_attention, caught_actions, sums)
        self.rounds_sum += float(sums[0])
        self.rounds_sumsq += float(sums[1])
        if "attention" in cols:
            self.attention_sum += float(sums[2])
            if sums[3]:  # runs were caught: their actions by the round they were caught
                self.caught_actions = (caught_actions if self.caught_actions is None
                                       else self.caught_actions + caught_actions)
        for s in TOTALS:
            x = cols[s.name]
            total = np.zeros(x.shape[1:], dtype=np.int64)
            _sum_runs(x.reshape(n, C, -1), total.reshape(C, -1))
            getattr(self, s.total)[:] += total
        return self

    def merge(self, other: EscapeAggregate) -> EscapeAggregate:
        """Fold another aggregate (another chunk's) in."""
        self.runs += other.runs
        self.rounds_sum += other.rounds_sum
        self.rounds_sumsq += other.rounds_sumsq
        for name in ("outcomes", "escaped_at", "rounds_all", "freed", "freed_round_sum", "failure_tiers",
                     "first_round", *(s.total for s in TOTALS)):
            getattr(self, name)[:] += getattr(other, name)
        self.attention_sum += other.attention_sum
        self.caught_at[:] += other.caught_at
        self.caught_attention[:] += other.caught_attention
        if other.caught_actions is not None:
            self.caught_actions = (other.caught_actions.copy() if self.caught_actions is None
                                   else self.caught_actions + other.caught_actions)
        return self

    @property
    def n_escaped(self) -> int:
        return int(self.outcomes[K.ESCAPED])

    def mean_rounds(self) -> float | None:
        return self.rounds_sum / self.n_escaped if self.n_escaped else None

    def mean_rounds_se(self) -> float | None:
        n = self.n_escaped
        if n < 2:
            return None
        var = max(0.0, (self.rounds_sumsq - self.rounds_sum**2 / n) / (n - 1))
        return float(np.sqrt(var / n))

    def escape_by_round(self) -> list[float]:
        return (np.cumsum(self.escaped_at[1:]) / self.runs).tolist()


_NO_ATTENTION = np.zeros(0, dtype=np.int64)
_NO_FIRST = np.zeros(0, dtype=np.int8)


@njit(cache=True, nogil=True)
def _fold_runs(outcome, rounds, attention, first_round, freed_round, rounds_at_tier, actions, has_attention,
               has_first, outcomes, escaped_at, rounds_all, failure_tiers, first_out, freed, freed_sum,
               caught_at, caught_attention, caught_actions, sums):
    """One pass over the runs of a chunk: outcomes, escaped runs by round (and their rounds' sum and sum of
    squares), every run by its last round, the tier holding each run that did not escape longest (the lowest such
    tier on a tie), round-1 code by escaped, freed characters and their rounds, attention, and caught runs by round
    with their attention and the party's actions. Counts beyond the arrays' lengths are left out (as ``bincount``
    cut to length)."""
    size = escaped_at.shape[0]
    n, C = freed_round.shape
    for j in range(n):
        o = outcome[j]
        r = np.int64(rounds[j])
        if o < 4:
            outcomes[o] += 1
        if r < size:
            rounds_all[r] += 1
        escaped = o == ESCAPED
        if escaped:
            if r < size:
                escaped_at[r] += 1
            sums[0] += r
            sums[1] += r * r
        else:  # the tier holding the party longest (summed over the party), the first such on a tie
            best_tier, best = 1, -1
            for t in range(1, 9):
                total = 0
                for i in range(C):
                    total += rounds_at_tier[j, i, t]
                if total > best:
                    best_tier, best = t, total
            failure_tiers[best_tier] += 1
        if has_first:
            code = np.int64(first_round[j]) * 2 + (1 if escaped else 0)
            if code < 6:
                first_out[code // 2, code % 2] += 1
        for i in range(C):
            fr = freed_round[j, i]
            if fr > 0:
                freed[i] += 1
            freed_sum[i] += fr
        if has_attention:
            att = np.int64(attention[j])
            sums[2] += att
            if o == CAUGHT and r < size:
                sums[3] += 1
                caught_at[r] += 1
                caught_attention[r] += att
                for i in range(C):
                    for k in range(actions.shape[2]):
                        caught_actions[r, k] += actions[j, i, k]


@njit(cache=True, nogil=True)
def _sum_runs(x, out):
    """``out[i, k] += sum over j of x[j, i, k]`` (in out's type: int64)."""
    n, C, K = x.shape
    for j in range(n):
        for i in range(C):
            for k in range(K):
                out[i, k] += x[j, i, k]


def balance_from_aggregate(agg) -> dict[str, Any]:
    """Balance metrics of a streamed escape result from its aggregate (``sim.escape.aggregate``): run-length
    spread, timeout share, first-check advantage (escape rate after a round-1 success minus after round-1
    failures) and the tier where most failed runs were held (R-ESC-2 tiers)."""
    n = agg.runs
    out: dict[str, Any] = {"run_length": spread_from_counts(agg.rounds_all),
                           "run_length_success": spread_from_counts(agg.escaped_at)}
    timeouts = int(agg.outcomes[3])
    out["timeout_share"] = timeouts / n
    out["timeout_share_ci"] = wilson_interval(timeouts, n)
    fr = agg.first_round  # rows: no check, checks without success, a success; columns: not escaped, escaped
    n1, n0 = int(fr[2].sum()), int(fr[1].sum())
    if n1 and n0:
        p1, p0 = fr[2, 1] / n1, fr[1, 1] / n0
        se = float(np.sqrt(p1 * (1 - p1) / n1 + p0 * (1 - p0) / n0))
        d = float(p1 - p0)
        out["first_check_advantage"] = {"value": d, "ci": [d - Z95 * se, d + Z95 * se], "p_after_success": float(p1),
                                        "p_after_failure": float(p0), "n_after_success": n1, "n_after_failure": n0,
                                        "runs_with_a_round_1_check": n1 + n0}
    failed = int(agg.failure_tiers.sum())
    if failed:
        shares = {TIER_IDS[t]: float(c / failed) for t, c in enumerate(agg.failure_tiers) if c > 0}
        top = max(shares, key=shares.get)
        out["failure_tier"], out["failure_tier_share"], out["failure_tiers"] = top, shares[top], shares
    else:
        out["failure_tier"] = None
    return out
