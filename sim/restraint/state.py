"""The duel's state as data (STYLE.md practice 1) and the shared random draws.

Every field has the batch axis first and an explicit small dtype. Both the scalar reference and the
vectorized kernel read their dice from :func:`draw_uniforms`, so on the same Generator they see the
same faces and must produce identical traces.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.restraint.rules import N_SLOTS, Params


@dataclass(frozen=True)
class DuelState:
    """The target's state between rounds, for a batch of runs."""

    levels: np.ndarray  # (n, 7) int8: R-RST-1 level per slot
    rages: np.ndarray  # (n,) int8: rages left (R-RST-12)
    ranger: np.ndarray  # (n,) int8: favoured-terrain uses left (R-RST-12)
    checks: np.ndarray  # (n,) int16: escape checks made (R-RST-26)
    successes: np.ndarray  # (n,) int16: escape checks that succeeded
    bindings: np.ndarray  # (n,) int16: binding contests won by the binder
    composure: np.ndarray  # (n, pools) int32: composure left (R-RST-21)
    craving: np.ndarray  # (n, pools) int32: maximum lost to craving (R-RST-22)
    overload_round: np.ndarray  # (n, pools) int16: round of the first overload, 0 = none yet
    recoveries: np.ndarray  # (n, pools) int16: recoveries made in the race (R-RST-32)
    overloads: np.ndarray  # (n,) int16: the target's overloads in the duel (R-RST-33)


@dataclass(frozen=True)
class Trace:
    """What a batch of duels produced: levels at the end of every duel round, and the final state."""

    levels: np.ndarray  # (n, rounds, 7) int8 (R-RST-26: after both sides acted)
    checks_by_round: np.ndarray  # (n, rounds) int8: escape checks made in each round
    final: DuelState
    dazed: np.ndarray  # (n, rounds) bool: the target was dazed in the round (R-RST-33)


def draw_uniforms(p: Params, n: int, rng: np.random.Generator) -> np.ndarray:
    """One uniform block per round, ``(horizon, n, n_cols)``; the column layout is in
    :mod:`sim.restraint.rules`. Every run draws every column every round (STYLE.md practice 3)."""
    return rng.random((p.horizon, n, p.n_cols))


def empty_trace_arrays(p: Params, n: int) -> tuple[np.ndarray, np.ndarray]:
    return (
        np.zeros((n, p.rounds, N_SLOTS), dtype=np.int8),
        np.zeros((n, p.rounds), dtype=np.int8),
    )
