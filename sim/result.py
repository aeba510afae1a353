"""The result object every kind's ``simulate`` returns, and provenance (STYLE.md practice 12)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sim.version import __version__


def package_version() -> str:
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


class DeferredFrame:
    """A runs frame made when :attr:`SimulationResult.runs` is first read (``make()``), then kept: a caller that
    reads only the summary, the aggregate or the columns never pays for it."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], pd.DataFrame]):
        self.make = make


@dataclass
class SimulationResult:
    """``runs``: one row per run; ``summary``: the SCENARIOS.md keys plus provenance; ``extra``: what the kind
    keeps for its own report (``aggregate``, escape's ``params``, ...). Shared modules read the typed
    properties below, never ``extra`` by key (sim/pipeline.py's :class:`~sim.pipeline.PipelineResult` carries
    them on). A kind may set ``runs`` to a :class:`DeferredFrame`: the frame is then made when ``runs`` is first
    read, and kept."""

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
        runs (escape, runs kept: read-only, the runs frame is made from them when first read), else None."""
        return self.extra.get("columns")


def _get_runs(self: SimulationResult) -> pd.DataFrame:
    runs = self.__dict__["_runs"]
    if isinstance(runs, DeferredFrame):
        runs = self.__dict__["_runs"] = runs.make()
    return runs


def _set_runs(self: SimulationResult, value: pd.DataFrame | DeferredFrame) -> None:
    self.__dict__["_runs"] = value


# ``runs`` stays a dataclass field (the constructor, fields(), repr and == see it); reading it makes a deferred frame
SimulationResult.runs = property(_get_runs, _set_runs, doc="One row per run (made when first read if deferred).")


def with_summary(result: SimulationResult, summary: dict[str, Any]) -> SimulationResult:
    """A copy of ``result`` holding ``summary`` (a dict built by the caller), its runs (deferred or not) and ``extra``
    shared: the pipeline adds to a summary this way instead of writing into the kind's dict."""
    out = copy.copy(result)
    out.summary = summary
    return out
