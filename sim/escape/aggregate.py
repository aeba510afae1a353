"""Streaming aggregation of escape runs: everything the summary and the report need, as sums
updated chunk by chunk, so 10,000,000 runs need no more memory than one chunk."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim.escape import kernel as K
from sim.escape.columns import RUN_STATS, per_run_shape
from sim.escape.params import EscapeParams

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
        """Fold one chunk's per-run columns in."""
        outcome, rounds = cols["outcome"], cols["rounds"]
        self.runs += len(outcome)
        self.outcomes += np.bincount(outcome, minlength=4)[:4]
        esc = outcome == K.ESCAPED
        r = rounds[esc].astype(np.int64)
        self.escaped_at += np.bincount(r, minlength=self.max_rounds + 1)[: self.max_rounds + 1]
        self.rounds_sum += float(r.sum())
        self.rounds_sumsq += float((r * r).sum())
        self.rounds_all += np.bincount(rounds.astype(np.int64), minlength=self.max_rounds + 1)[: self.max_rounds + 1]
        failed = ~esc
        if failed.any():  # the tier holding the party longest in each run that did not escape
            per_tier = cols["rounds_at_tier"][failed].sum(axis=1)  # (runs, 9)
            self.failure_tiers += np.bincount(per_tier[:, 1:].argmax(axis=1) + 1, minlength=9)[:9]
        if "first_round" in cols:
            codes = cols["first_round"].astype(np.int64)
            self.first_round += np.bincount(codes * 2 + esc, minlength=6)[:6].reshape(3, 2)
        for s in TOTALS:
            getattr(self, s.total)[:] += cols[s.name].sum(axis=0, dtype=np.int64)
        fr = cols["freed_round"]
        self.freed += (fr > 0).sum(axis=0)
        self.freed_round_sum += fr.sum(axis=0)
        if "attention" in cols:
            att = cols["attention"].astype(np.int64)
            self.attention_sum += float(att.sum())
            caught = outcome == K.CAUGHT
            if caught.any():
                rc = rounds[caught].astype(np.int64)
                size = self.max_rounds + 1
                self.caught_at += np.bincount(rc, minlength=size)[:size]
                self.caught_attention += np.bincount(rc, weights=att[caught], minlength=size)[:size].astype(np.int64)
                if "action_counts" in cols:
                    party = cols["action_counts"][caught].sum(axis=1).astype(np.int64)  # (caught runs, kinds)
                    by_round = np.zeros((size, party.shape[1]), dtype=np.int64)
                    np.add.at(by_round, rc, party)
                    self.caught_actions = by_round if self.caught_actions is None else self.caught_actions + by_round
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
