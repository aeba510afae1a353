"""One scenario variant evaluated by simulation with common random numbers and, where the kind
supports it, exactly.

Common random numbers: every variant is simulated with the same ``seed`` and ``runs``. Runs are cut
into fixed chunks seeded ``SeedSequence(seed, spawn_key=(i,))`` (R-GEN-7), so run *j* of every variant
reads the same uniform stream and differences between variants come from the rules, not from noise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sim
from sim import kinds
from sim.errors import ExactUnsupported


@dataclass
class Evaluation:
    """A variant and what is known about it: ``summary`` (simulated) and ``exact`` (or None)."""

    scenario: Any
    values: dict[str, Any]
    summary: dict | None = None
    exact: dict | None = None
    result: Any = field(default=None, repr=False)


def supports_exact(scenario) -> bool:
    try:
        return bool(kinds.get(scenario.kind).supports_exact(scenario))
    except ExactUnsupported:
        return False


def exact_options(scenario) -> dict[str, Any]:
    """Options of ``sim.exact`` when exact analysis is tried alongside a simulation: the kind's
    smaller state budget where it has one (escape parties), so that a party too large for exact
    analysis costs a few seconds before it is reported by simulation alone."""
    budget = kinds.get(scenario.kind).auto_max_states
    return {} if budget is None else {"max_states": budget}


def exact_summary(scenario, notes: list[str] | None = None) -> dict | None:
    """The exact summary, or None where the kind (or this scenario, or its budget) has none. When the
    exact engine refused on its budget, a one-line note for the page ("exact analysis refused ...; Monte
    Carlo instead") is appended to ``notes``."""
    if not supports_exact(scenario):
        return None
    try:
        return sim.exact(scenario, **exact_options(scenario))
    except ExactUnsupported as exc:
        if notes is not None and getattr(exc, "binds", None):
            notes.append(refusal_note(exc))
        return None


def refusal_note(exc) -> str:
    """What a page says when exact analysis was asked for and refused on its budget."""
    return (f"Exact analysis was tried and refused (its {exc.binds} budget binds, raised with {exc.flag}); "
            "the figures are Monte Carlo.")


def evaluate(scenario, values: dict[str, Any] | None = None, *, runs: int | None, seed: int | None,
             n_jobs: int = 1, simulate: bool = True, exact: bool = True, keep_result: bool = False,
             **options) -> Evaluation:
    """Simulate (``runs`` plays from ``seed``) and/or solve ``scenario`` exactly."""
    ev = Evaluation(scenario, dict(values or {}))
    if simulate:
        result = sim.simulate(scenario, runs=runs, seed=seed, n_jobs=n_jobs, **options)
        ev.summary = result.summary
        if keep_result:
            ev.result = result
    if exact:
        ev.exact = exact_summary(scenario)
    return ev


def resolve_runs_seed(scenario, runs: int | None, seed: int | None) -> tuple[int, int]:
    """The run count and seed every variant shares: the flags, else the base scenario's ``[run]``."""
    return (int(scenario.run.runs if runs is None else runs), int(scenario.run.seed if seed is None else seed))
