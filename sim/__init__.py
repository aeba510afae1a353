"""Monte Carlo and exact balance simulator for tabletop-RPG house rules.

Public API (SCENARIOS.md, "The output contract")::

    scenario = sim.load_scenario(path)
    result = sim.simulate(scenario, runs=..., seed=..., n_jobs=...)
    sim.exact(scenario)

``sim`` is the public Python API, beside the command line at the top of the layers (docs/architecture.md): no
module of the package imports it.
"""

from __future__ import annotations

from sim.numba_cache import ensure_numba_cache

ensure_numba_cache()  # a read-only install: numba's cache goes to a private folder (before numba is imported)

from sim import kinds, pipeline, simulation  # noqa: E402
from sim.errors import ExactUnsupported, PolicyError, ScenarioError, SimError  # noqa: E402
from sim.result import SimulationResult  # noqa: E402
from sim.scenario import kind_module, load_scenario  # noqa: E402
from sim.version import __version__  # noqa: E402


def simulate(scenario, runs: int | None = None, seed: int | None = None, n_jobs: int = 1,
             **options) -> SimulationResult:
    """Simulate ``runs`` plays of ``scenario`` (defaults from its ``[run]`` table).

    Returns a :class:`SimulationResult` whose ``runs`` has one row per run and whose ``summary``
    has the keys of SCENARIOS.md. Results depend only on scenario, seed and runs (R-GEN-7).
    A thin wrapper over :func:`sim.pipeline.run` (in memory, no exact analysis)."""
    return pipeline.run(scenario, runs=runs, seed=seed, n_jobs=n_jobs, exact=False, **options).simulation


def exact(scenario, **options) -> dict:
    """Exact summary of ``scenario`` where its kind supports exact analysis (escape also takes
    ``max_states``, its state budget)."""
    return simulation.exact(scenario, **options)


def audit(scenario, **options):
    """Balance audit of ``scenario`` (sim/designer/audit.py): each option of play forbidden in turn, its delta and
    flag (dead, dominated, must_pick), the class spread and what decided the outcome; ``.as_json()`` is the
    ``audit --json`` shape."""
    from sim.designer.audit import audit as run_audit  # lazy: entry-point start-up (`import sim` loads no pages)

    return run_audit(scenario, **options)


__all__ = [
    "ExactUnsupported",
    "PolicyError",
    "ScenarioError",
    "SimError",
    "SimulationResult",
    "__version__",
    "audit",
    "exact",
    "kind_module",
    "kinds",
    "load_scenario",
    "simulate",
]
