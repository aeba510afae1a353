"""Monte Carlo and exact balance simulator for tabletop-RPG house rules.

Public API (SCENARIOS.md, "The output contract")::

    scenario = sim.load_scenario(path)
    result = sim.simulate(scenario, runs=..., seed=..., n_jobs=...)
    sim.exact(scenario)
"""

from __future__ import annotations

from sim.numba_cache import ensure_numba_cache

ensure_numba_cache()  # a read-only install: numba's cache goes to a private folder (before numba is imported)

from sim import kinds  # noqa: E402
from sim.errors import ExactUnsupported, PolicyError, ScenarioError, SimError  # noqa: E402
from sim.result import SimulationResult  # noqa: E402
from sim.scenario import kind_module, load_scenario  # noqa: E402
from sim.version import __version__  # noqa: E402


def simulate(scenario, runs: int | None = None, seed: int | None = None, n_jobs: int = 1, **options):
    """Simulate ``runs`` plays of ``scenario`` (defaults from its ``[run]`` table).

    Returns a :class:`SimulationResult` whose ``runs`` has one row per run and whose ``summary``
    has the keys of SCENARIOS.md. Results depend only on scenario, seed and runs (R-GEN-7)."""
    from sim.scenario import run_settings

    runs, seed = run_settings(scenario, runs, seed)
    try:
        return kinds.get(scenario.kind).simulate(scenario, runs=runs, seed=seed, n_jobs=n_jobs, **options)
    except ScenarioError as exc:
        if exc.file is None:  # name the scenario's file (e.g. a policy module that fails to import)
            raise ScenarioError(exc.detail, file=scenario.source, key=exc.key) from None
        raise


def exact(scenario, **options) -> dict:
    """Exact summary of ``scenario`` where its kind supports exact analysis (escape also takes
    ``max_states``, its state budget)."""
    try:
        return kinds.get(scenario.kind).exact(scenario, **options)
    except ScenarioError as exc:
        if exc.file is None:
            raise ScenarioError(exc.detail, file=scenario.source, key=exc.key) from None
        raise


def audit(scenario, **options):
    """Balance audit of ``scenario`` (sim/designer/audit.py): each option of play forbidden in turn, its delta and
    flag (dead, dominated, must_pick), the class spread and what decided the outcome; ``.as_json()`` is the
    ``audit --json`` shape."""
    from sim.designer.audit import audit as run_audit

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
