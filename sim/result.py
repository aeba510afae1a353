"""The result object every kind's ``simulate`` returns, and provenance (STYLE.md practice 12)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd


def package_version() -> str:
    from sim import __version__

    return __version__


def provenance(scenario, seed: int | None, runs: int | None, random_layout: str | None = None) -> dict[str, Any]:
    """How a result was made: scenario hash, seed, runs, package and numpy versions, and the version of
    the random layout (how the engine turns a seed into dice) when the kind records one."""
    out = {
        "scenario_hash": scenario.scenario_hash,
        "seed": seed,
        "runs": runs,
        "sim_version": package_version(),
        "numpy_version": np.__version__,
    }
    if random_layout is not None:
        out["random_layout"] = random_layout
    return out


@dataclass
class SimulationResult:
    """``runs``: one row per run; ``summary``: the SCENARIOS.md keys plus provenance; ``extra``: what the kind
    keeps for its own report (``aggregate``, escape's ``params``, ...). Shared modules read the typed
    properties below, never ``extra`` by key (sim/pipeline.py's :class:`~sim.pipeline.PipelineResult` carries
    them on)."""

    scenario: Any
    runs: pd.DataFrame
    summary: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def params(self) -> Any:
        """The kind's engine parameters the runs were played with, where the kind keeps them (escape), else None."""
        return self.extra.get("params")

    @property
    def aggregate(self) -> Any:
        """The kind's aggregate the summary is computed from, where the kind keeps one, else None."""
        return self.extra.get("aggregate")

    @property
    def columns(self) -> Any:
        """The per-run columns as the engines produced them (a dict of arrays), where the kind keeps them with the
        runs (escape, runs kept), else None."""
        return self.extra.get("columns")
