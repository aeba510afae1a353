"""The shared random draws of the duel.

Both the scalar reference and the vectorized kernel read their dice from :func:`draw_uniforms`, so on the same
Generator they see the same faces and must produce identical per-run statistics (declared in
:mod:`sim.restraint.columns`, which holds the duel's per-run state as data: batch axis first, explicit small
dtypes, STYLE.md practice 1).
"""

from __future__ import annotations

import numpy as np

from sim.restraint.rules import Params


def draw_uniforms(p: Params, n: int, rng: np.random.Generator) -> np.ndarray:
    """One uniform block per round, ``(horizon, n, n_cols)``; the column layout is in
    :mod:`sim.restraint.rules`. Every run draws every column every round (STYLE.md practice 3)."""
    return rng.random((p.horizon, n, p.n_cols))
