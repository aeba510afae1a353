"""One scenario variant evaluated by simulation with common random numbers and, where the kind
supports it, exactly.

The pipeline (:func:`sim.pipeline.run`) does the work; the exact helpers live there and are re-exported here.

Common random numbers: every variant is simulated with the same ``seed`` and ``runs``. Runs are cut
into fixed chunks seeded ``SeedSequence(seed, spawn_key=(i,))`` (R-GEN-7), so run *j* of every variant
reads the same uniform stream and differences between variants come from the rules, not from noise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sim import pipeline
from sim.pipeline import exact_options, exact_summary, refusal_note, supports_exact

__all__ = ["Evaluation", "evaluate", "exact_options", "exact_summary", "refusal_note", "resolve_runs_seed",
           "supports_exact"]


@dataclass
class Evaluation:
    """A variant and what is known about it: ``summary`` (simulated) and ``exact`` (or None)."""

    scenario: Any
    values: dict[str, Any]
    summary: dict | None = None
    exact: dict | None = None
    result: Any = field(default=None, repr=False)


def evaluate(scenario, values: dict[str, Any] | None = None, *, runs: int | None, seed: int | None,
             n_jobs: int = 1, simulate: bool = True, exact: bool = True, keep_result: bool = False,
             **options) -> Evaluation:
    """Simulate (``runs`` plays from ``seed``) and/or solve ``scenario`` exactly (:func:`sim.pipeline.run`,
    writing nothing)."""
    res = pipeline.run(scenario, runs=runs, seed=seed, n_jobs=n_jobs, simulate=simulate, exact=exact, **options)
    return Evaluation(scenario, dict(values or {}), res.summary, res.exact, res.simulation if keep_result else None)


def resolve_runs_seed(scenario, runs: int | None, seed: int | None) -> tuple[int, int]:
    """The run count and seed every variant shares: the flags, else the base scenario's ``[run]``."""
    return (int(scenario.run.runs if runs is None else runs), int(scenario.run.seed if seed is None else seed))
