"""Streaming aggregation of formation runs: everything the summary and the report need, as counts
and integer sums updated chunk by chunk, so 10,000,000 runs need no more memory than one chunk.

Every quantity is an integer (counts, histograms, sums of integer columns), so the aggregate of the
whole run does not depend on how the runs were cut into chunks or in which order chunks are merged:
a streamed summary equals the in-memory one exactly."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from sim.formation.columns import SUMMED
from sim.formation.model import Params

WINNER_CODES = (-1, 0, 1, 2)  # none (no skirmish), A, B, draw: row = code + 1


def _grow(counts: np.ndarray, more: np.ndarray) -> np.ndarray:
    """``counts + more`` for histograms of possibly different lengths."""
    if len(more) > len(counts):
        counts, more = more, counts
    out = counts.astype(np.int64, copy=True)
    out[: len(more)] += more
    return out


@dataclass
class FormationAggregate:
    max_rounds: int
    reward_dp: int
    runs: int = 0
    # the sums over runs of sim.formation.columns (SUMMED) by name, exact ints: ambushes won (by 2 or more), units
    # left on the field and withdrawn (R-MDK-5) per side, side A's enslavement DP
    sums: dict[str, int] = field(default=None)
    dp_counts: np.ndarray = field(default=None)  # dp_counts[v]: runs that earned v DP in the session
    winner_rounds: np.ndarray = field(default=None)  # (4, max_rounds + 1): winner code + 1 x skirmish_rounds

    def __post_init__(self):
        if self.sums is None:
            self.sums = dict.fromkeys(SUMMED, 0)
        if self.dp_counts is None:
            self.dp_counts = np.zeros(self.reward_dp + 1, dtype=np.int64)
        if self.winner_rounds is None:
            self.winner_rounds = np.zeros((len(WINNER_CODES), self.max_rounds + 1), dtype=np.int64)

    @classmethod
    def empty(cls, p: Params) -> FormationAggregate:
        return cls(p.max_rounds, p.reward_dp)

    def add(self, cols: dict[str, np.ndarray]) -> FormationAggregate:
        """Fold one chunk's per-run columns (the engines' output) in."""
        self.runs += len(cols["ambush_win"])
        for name in SUMMED:
            self.sums[name] += int(np.asarray(cols[name]).sum(dtype=np.int64))
        self.dp_counts = _grow(self.dp_counts, np.bincount(np.asarray(cols["dp_session"], dtype=np.int64)))
        winner = np.asarray(cols["skirmish_winner"], dtype=np.int64) + 1
        rounds = np.asarray(cols["skirmish_rounds"], dtype=np.int64)
        width = self.winner_rounds.shape[1]
        if len(rounds) and (rounds.min() < 0 or rounds.max() >= width):  # pragma: no cover - engine contract
            raise ValueError(f"skirmish_rounds outside 0..{width - 1}")
        flat = np.bincount(winner * width + rounds, minlength=len(WINNER_CODES) * width)
        self.winner_rounds += flat.reshape(len(WINNER_CODES), width)
        return self

    def merge(self, other: FormationAggregate) -> FormationAggregate:
        """Fold another aggregate (another chunk's) in."""
        self.runs += other.runs
        for name in SUMMED:
            self.sums[name] += other.sums[name]
        self.dp_counts = _grow(self.dp_counts, other.dp_counts)
        self.winner_rounds = self.winner_rounds + other.winner_rounds
        return self

    # ---- derived values

    def winner_count(self, code: int) -> int:
        """Runs whose skirmish ended with ``code`` (-1 none, 0 A, 1 B, 2 draw)."""
        return int(self.winner_rounds[code + 1].sum())

    @property
    def rounds_counts(self) -> np.ndarray:
        """Histogram of ``skirmish_rounds`` over all runs: ``rounds_counts[r]`` runs lasted r rounds."""
        return self.winner_rounds.sum(axis=0)

    def dp_mean_sd(self) -> tuple[float, float]:
        """Mean and sample sd (ddof 1) of the session DP, from exact integer moments."""
        n = self.runs
        values = range(len(self.dp_counts))
        counts = [int(c) for c in self.dp_counts]
        s1 = sum(v * c for v, c in zip(values, counts, strict=True))
        s2 = sum(v * v * c for v, c in zip(values, counts, strict=True))
        mean = s1 / n
        sd = math.sqrt((n * s2 - s1 * s1) / (n * (n - 1))) if n > 1 else 0.0
        return mean, sd

    def mean_rounds(self) -> float:
        r = self.rounds_counts
        return int((np.arange(len(r), dtype=np.int64) * r).sum()) / self.runs


__all__ = ["WINNER_CODES", "FormationAggregate"]
