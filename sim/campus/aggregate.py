"""Streaming aggregation of campus games: everything the summary, the report and the balance metrics
need, as integer sums and histograms updated chunk by chunk, so 10,000,000 games need no more memory
than a few chunks (the pattern of :mod:`sim.escape.aggregate`).

Every field is an integer count, so folding chunks in any grouping gives exactly the same aggregate,
and the summary computed from it is the same whether the games were kept in memory or streamed."""

from __future__ import annotations

from dataclasses import dataclass, field

import numba as nb
import numpy as np

from sim.campus.columns import RUN, RUN_STATS, per_game_shape
from sim.campus.params import CLEARED, STATUS_NAMES, Params

N_STATUS = len(STATUS_NAMES)
#: the sums over games kept as they are (sim.campus.columns: the statistics whose ``total`` names an attribute)
TOTALS = tuple(s for s in RUN_STATS if s.total)


@nb.njit(cache=True, nogil=True)
def _column_counts(values, lo, width):  # one pass over the chunk, no int64 copy of it (issue 27)
    n, P = values.shape
    out = np.zeros((P, width), np.int64)
    for r in range(n):
        for p in range(P):
            out[p, values[r, p] - lo] += 1
    return out


@nb.njit(cache=True, nogil=True)
def _column_sums(values):  # one pass over the chunk; numpy's sum over the games of a narrow array is slower
    n, m = values.shape
    out = np.zeros(m, np.int64)
    for r in range(n):
        for c in range(m):
            out[c] += values[r, c]
    return out


def _sums(values: np.ndarray) -> np.ndarray:
    """The sum over games (axis 0) of a per-game array, in int64, shaped as one game's value."""
    n = values.shape[0]
    flat = np.ascontiguousarray(values).reshape(n, -1)
    return _column_sums(flat).reshape(values.shape[1:])


def _counts(values: np.ndarray, lo: int, width: int) -> np.ndarray:
    """Per row of ``values`` (n, P), the histogram of column p over ``lo .. lo + width - 1``: (P, width)."""
    return _column_counts(np.ascontiguousarray(values), int(lo), int(width))


@dataclass
class CampusAggregate:
    T: int
    pc_names: tuple[str, ...]
    template_names: tuple[str, ...]
    runs: int = 0
    final_counts: np.ndarray = field(default=None)  # (P, 4) games by each PC's final status code
    party_cleared: int = 0  # games in which every PC cleared
    status_by_turn: np.ndarray = field(default=None)  # (T, P, 4) games by each PC's status after turn t
    end_turn_counts: np.ndarray = field(default=None)  # (P, T + 1) games by the PC's end turn (0: captured at end)
    vitality_lo: int = 0  # vitality_counts[p, j] = games ending with PC p at vitality vitality_lo + j
    vitality_counts: np.ndarray = field(default=None)  # (P, width), widened as needed
    # the sums over games of sim.campus.columns (TOTALS), without the game axis: vitality_sum and gp_sum (P,) at
    # the end; captures_t, checks_t (R-CAM-59 pools them), escapes_t, free_t (T,); duels_tmpl, wins_tmpl
    # (n_templates,); duels_stance, wins_stance (3,); rescues_tried, rescues_won (int)
    vitality_sum: np.ndarray = field(default=None)
    gp_sum: np.ndarray = field(default=None)
    captures_t: np.ndarray = field(default=None)
    checks_t: np.ndarray = field(default=None)
    escapes_t: np.ndarray = field(default=None)
    free_t: np.ndarray = field(default=None)
    duels_tmpl: np.ndarray = field(default=None)
    wins_tmpl: np.ndarray = field(default=None)
    duels_stance: np.ndarray = field(default=None)
    wins_stance: np.ndarray = field(default=None)
    rescues_tried: int = 0
    rescues_won: int = 0
    buy_names: tuple[str, ...] = ()
    bought_count: np.ndarray = field(default=None)  # (B,) PCs over games that bought buy-list item b (R-CAM-9a)
    bought_turn_sum: np.ndarray = field(default=None)  # (B,) the turns they bought it in, summed

    def __post_init__(self):
        P, T, z = len(self.pc_names), self.T, np.zeros
        self.final_counts = z((P, N_STATUS), dtype=np.int64)
        self.status_by_turn = z((T, P, N_STATUS), dtype=np.int64)
        self.end_turn_counts = z((P, T + 1), dtype=np.int64)
        self.vitality_counts = z((P, 0), dtype=np.int64)
        for s in TOTALS:
            setattr(self, s.total, 0 if s.shape == RUN else z(per_game_shape(s, self), dtype=np.int64))
        for name in ("bought_count", "bought_turn_sum"):
            setattr(self, name, z(len(self.buy_names), dtype=np.int64))

    @classmethod
    def empty(cls, p: Params) -> CampusAggregate:
        return cls(p.T, tuple(p.pc_names), tuple(p.template_names), buy_names=tuple(p.buy_names))

    @property
    def P(self) -> int:
        return len(self.pc_names)

    # ---------------------------------------------------------------------------------------- folding

    def _add_vitality(self, lo: int, counts: np.ndarray) -> None:
        """Fold a vitality histogram starting at ``lo`` in, widening the stored range as needed."""
        if counts.shape[1] == 0:
            return
        if self.vitality_counts.shape[1] == 0:
            self.vitality_lo, self.vitality_counts = int(lo), counts.astype(np.int64).copy()
            return
        new_lo = min(self.vitality_lo, int(lo))
        new_hi = max(self.vitality_lo + self.vitality_counts.shape[1], int(lo) + counts.shape[1])
        if (new_lo, new_hi) != (self.vitality_lo, self.vitality_lo + self.vitality_counts.shape[1]):
            wide = np.zeros((self.P, new_hi - new_lo), dtype=np.int64)
            off = self.vitality_lo - new_lo
            wide[:, off : off + self.vitality_counts.shape[1]] = self.vitality_counts
            self.vitality_lo, self.vitality_counts = new_lo, wide
        off = int(lo) - self.vitality_lo
        self.vitality_counts[:, off : off + counts.shape[1]] += counts

    def _add_total(self, s, value) -> None:
        """Add a sum over games to the total ``s`` keeps (an int for a RUN statistic, an array otherwise)."""
        if s.shape == RUN:
            setattr(self, s.total, getattr(self, s.total) + int(value))
        else:
            getattr(self, s.total)[:] += value

    def add(self, a: dict[str, np.ndarray]) -> CampusAggregate:
        """Fold one chunk's per-game arrays (:func:`sim.campus.kernel.run_kernel`'s record) in."""
        final = a["final_status"]
        n = final.shape[0]
        if n == 0:
            return self
        self.runs += n
        self.final_counts += _counts(final, 0, N_STATUS)
        self.party_cleared += int((final == CLEARED).all(1).sum())
        sbt = a["status_by_turn"]  # (n, T, P)
        T, P = self.T, self.P
        self.status_by_turn += _counts(sbt.reshape(n, T * P), 0, N_STATUS).reshape(T, P, N_STATUS)
        self.end_turn_counts += _counts(a["end_turn"], 0, T + 1)
        vit = a["vitality"]
        lo = int(vit.min())
        self._add_vitality(lo, _counts(vit, lo, int(vit.max()) - lo + 1))
        for s in TOTALS:
            self._add_total(s, _sums(a[s.name]))
        if self.buy_names:
            bought = a["bought"].astype(np.int64)  # (n, P, B)
            self.bought_count += (bought > 0).sum((0, 1))
            self.bought_turn_sum += bought.sum((0, 1))
        return self

    def merge(self, other: CampusAggregate) -> CampusAggregate:
        """Fold another aggregate (another chunk's) in."""
        self.runs += other.runs
        self.party_cleared += other.party_cleared
        for name in ("final_counts", "status_by_turn", "end_turn_counts", "bought_count", "bought_turn_sum"):
            getattr(self, name)[:] += getattr(other, name)
        for s in TOTALS:
            self._add_total(s, getattr(other, s.total))
        self._add_vitality(other.vitality_lo, other.vitality_counts)
        return self

    # ---------------------------------------------------------------------------------------- reading

    def status_share(self, code: int) -> np.ndarray:
        """(P,) share of games each PC ended with status ``code``."""
        return self.final_counts[:, code] / self.runs

    def vitality_values(self) -> np.ndarray:
        return np.arange(self.vitality_lo, self.vitality_lo + self.vitality_counts.shape[1])
