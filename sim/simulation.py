"""The one call into a kind's engines: Monte Carlo (:func:`simulate`) and exact analysis (:func:`exact`).

:func:`sim.pipeline.run` calls :func:`simulate` for every run it makes (``sim.simulate`` and the designer tools go
through the pipeline); the exact answer beside a run, ``sim.exact`` and the designer's exact variants call
:func:`exact`. Both fill in what the kind's contract leaves to the caller: the ``[run]`` defaults of runs and seed,
and the scenario's file named in a ScenarioError the kind raised without one (a policy module that fails to
import, a key only the engine checks).
"""

from __future__ import annotations

from sim import kinds
from sim.errors import ScenarioError
from sim.result import SimulationResult
from sim.scenario import run_settings


def simulate(scenario, runs: int | None = None, seed: int | None = None, n_jobs: int = 1,
             **options) -> SimulationResult:
    """``runs`` plays of ``scenario`` from ``seed`` (defaults from its ``[run]`` table) by its kind's ``simulate``;
    results depend only on scenario, seed and runs (R-GEN-7)."""
    runs, seed = run_settings(scenario, runs, seed)
    try:
        return kinds.get(scenario.kind).simulate(scenario, runs=runs, seed=seed, n_jobs=n_jobs, **options)
    except ScenarioError as exc:
        if exc.file is None:
            raise _with_file(exc, scenario) from None
        raise


def exact(scenario, **options) -> dict:
    """The exact summary of ``scenario`` by its kind's ``exact`` (ExactUnsupported where it has none; escape also
    takes ``max_states``, its state budget)."""
    try:
        return kinds.get(scenario.kind).exact(scenario, **options)
    except ScenarioError as exc:
        if exc.file is None:
            raise _with_file(exc, scenario) from None
        raise


def _with_file(exc: ScenarioError, scenario) -> ScenarioError:
    return ScenarioError(exc.detail, file=scenario.source, key=exc.key)
