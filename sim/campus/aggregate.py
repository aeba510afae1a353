"""Streaming aggregation of campus games: everything the summary, the report and the balance metrics
need, as integer sums and histograms updated chunk by chunk, so 10,000,000 games need no more memory
than a few chunks (the pattern of :mod:`sim.escape.aggregate`).

Every field is an integer count, so folding chunks in any grouping gives exactly the same aggregate,
and the summary computed from it is the same whether the games were kept in memory or streamed."""

from __future__ import annotations

from dataclasses import dataclass, field

import numba as nb
import numpy as np

from sim.campus.params import CLEARED, STATUS_NAMES, Params

N_STATUS = len(STATUS_NAMES)


@nb.njit(cache=True, nogil=True)
def _column_counts(values, lo, width):  # one pass over the chunk, no int64 copy of it (issue 27)
    n, P = values.shape
    out = np.zeros((P, width), np.int64)
    for r in range(n):
        for p in range(P):
            out[p, values[r, p] - lo] += 1
    return out


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
    vitality_sum: np.ndarray = field(default=None)  # (P,) vitality at the end, summed over games
    gp_sum: np.ndarray = field(default=None)  # (P,)
    vitality_lo: int = 0  # vitality_counts[p, j] = games ending with PC p at vitality vitality_lo + j
    vitality_counts: np.ndarray = field(default=None)  # (P, width), widened as needed
    captures_t: np.ndarray = field(default=None)  # (T,) captures in turn t, summed over games
    checks_t: np.ndarray = field(default=None)  # (T,) escape checks in turn t (R-CAM-59 pools them)
    escapes_t: np.ndarray = field(default=None)  # (T,) successful escape checks in turn t
    free_t: np.ndarray = field(default=None)  # (T,) PCs free at the start of turn t
    duels_tmpl: np.ndarray = field(default=None)  # (n_templates,) confrontations per adversary template
    wins_tmpl: np.ndarray = field(default=None)
    duels_stance: np.ndarray = field(default=None)  # (3,) confrontations per PC stance
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
        self.vitality_sum = z(P, dtype=np.int64)
        self.gp_sum = z(P, dtype=np.int64)
        self.vitality_counts = z((P, 0), dtype=np.int64)
        for name in ("captures_t", "checks_t", "escapes_t", "free_t"):
            setattr(self, name, z(T, dtype=np.int64))
        for name in ("duels_tmpl", "wins_tmpl"):
            setattr(self, name, z(len(self.template_names), dtype=np.int64))
        for name in ("duels_stance", "wins_stance"):
            setattr(self, name, z(3, dtype=np.int64))
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
        self.vitality_sum += vit.sum(0, dtype=np.int64)
        self.gp_sum += a["gp"].sum(0, dtype=np.int64)
        lo = int(vit.min())
        self._add_vitality(lo, _counts(vit, lo, int(vit.max()) - lo + 1))
        for name in ("captures_t", "checks_t", "escapes_t", "free_t", "duels_tmpl", "wins_tmpl",
                     "duels_stance", "wins_stance"):
            getattr(self, name)[:] += a[name].sum(0, dtype=np.int64)
        self.rescues_tried += int(a["rescues_tried"].sum())
        self.rescues_won += int(a["rescues_won"].sum())
        if self.buy_names:
            bought = a["bought"].astype(np.int64)  # (n, P, B)
            self.bought_count += (bought > 0).sum((0, 1))
            self.bought_turn_sum += bought.sum((0, 1))
        return self

    def merge(self, other: CampusAggregate) -> CampusAggregate:
        """Fold another aggregate (another chunk's) in."""
        self.runs += other.runs
        self.party_cleared += other.party_cleared
        self.rescues_tried += other.rescues_tried
        self.rescues_won += other.rescues_won
        for name in ("final_counts", "status_by_turn", "end_turn_counts", "vitality_sum", "gp_sum", "captures_t",
                     "checks_t", "escapes_t", "free_t", "duels_tmpl", "wins_tmpl", "duels_stance", "wins_stance",
                     "bought_count", "bought_turn_sum"):
            getattr(self, name)[:] += getattr(other, name)
        self._add_vitality(other.vitality_lo, other.vitality_counts)
        return self

    # ---------------------------------------------------------------------------------------- reading

    def status_share(self, code: int) -> np.ndarray:
        """(P,) share of games each PC ended with status ``code``."""
        return self.final_counts[:, code] / self.runs

    def vitality_values(self) -> np.ndarray:
        return np.arange(self.vitality_lo, self.vitality_lo + self.vitality_counts.shape[1])
