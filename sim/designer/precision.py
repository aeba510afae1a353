"""Run until the main metric is precise enough: ``run --target-error E``.

Runs are added a whole seed chunk at a time (R-GEN-7: the first ``n`` runs of a longer simulation are
exactly the runs of a simulation of ``n``), so the result with ``n`` runs is what ``run --runs n`` gives.
After each step the next run count is predicted from the current half-width, which shrinks as
1/sqrt(runs): ``n · (half-width / E)²`` plus 10%, rounded up to whole chunks and at least one more chunk.
The half-width is the larger distance from the estimate to an end of its 95% interval (and, for a
proportion, at least the normal-approximation 1.96 sqrt(p(1-p)/n)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sim import simulation
from sim.batch import CHUNK_RUNS
from sim.designer.metrics import half_width, main_metric, metric_value
from sim.errors import ScenarioError
from sim.result import with_summary

DEFAULT_MAX_RUNS = 2_000_000


@dataclass
class PrecisionInfo:
    metric: str
    target: float
    half_width: float
    runs: int
    met: bool
    max_runs: int
    steps: list[int] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"metric": self.metric, "target": self.target, "half_width": self.half_width, "runs": self.runs,
                "met": self.met, "max_runs": self.max_runs, "steps": self.steps}


def _chunks_up(n: float) -> int:
    return int(math.ceil(n / CHUNK_RUNS)) * CHUNK_RUNS


def simulate_to_error(scenario, target_error: float, seed: int | None = None, n_jobs: int = 1,
                      metric: str | None = None, start_runs: int | None = None,
                      max_runs: int = DEFAULT_MAX_RUNS, progress=None, **options):
    """Simulate with more and more runs until ``metric``'s 95% half-width is <= ``target_error`` or
    ``max_runs`` is reached. Returns ``(result, PrecisionInfo)``; the info is also in the result's summary
    as ``target_error`` (a new summary dict: the kind's is not written)."""
    if not (isinstance(target_error, int | float) and math.isfinite(target_error) and target_error > 0):
        raise ScenarioError(f"expected --target-error > 0; given {target_error!r}", key="--target-error")
    if max_runs < 1:
        raise ScenarioError(f"expected --max-runs >= 1; given {max_runs}", key="--max-runs")
    metric = metric or main_metric(scenario.kind)
    n = min(int(start_runs) if start_runs else CHUNK_RUNS, max_runs)
    steps = []
    while True:
        result = simulation.simulate(scenario, runs=n, seed=seed, n_jobs=n_jobs, **options)
        metric_value(result.summary, metric)  # a clean error for an unknown metric
        width = half_width(result.summary, metric)
        steps.append(n)
        if progress:
            progress(n, width)
        if width <= target_error or n >= max_runs:
            break
        predicted = n * (width / target_error) ** 2 * 1.1
        n = min(max_runs, max(_chunks_up(predicted), _chunks_up(n + 1)))
    info = PrecisionInfo(metric, float(target_error), width, n, width <= target_error, int(max_runs), steps)
    return with_summary(result, {**result.summary, "target_error": info.as_dict()}), info
