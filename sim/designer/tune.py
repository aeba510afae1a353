"""Tuning: the parameter value whose metric is closest to a target.

Bisection on the sign of ``metric(value) - target`` over ``[lo, hi]``, every evaluation with common random
numbers (same runs and seed), or exact analysis where the kind solves every evaluated variant exactly.
For an integer parameter the bracket shrinks to two neighbours, the closer one wins, and a short walk
to better neighbours guards against a metric that is not quite monotone. The answer is the best value
among all evaluated ones; ties go to the value evaluated first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from sim.designer.evaluate import evaluate, resolve_runs_seed, supports_exact
from sim.designer.metrics import is_proportion, main_metric, metric_interval, metric_value
from sim.designer.params import (
    check_param_key,
    coerce_like,
    effective_value,
    field_bounds,
    get_value,
    scenario_data,
    with_values,
)
from sim.errors import ScenarioError

MAX_EVALUATIONS = 80
MAX_WIDENINGS = 12
DEFAULT_SPAN = 10


@dataclass
class TuneResult:
    param: str
    value: Any
    metric: str
    target: float
    achieved: float
    ci: list[float]
    method: str
    runs: int | None
    seed: int | None
    lo: Any
    hi: Any
    bracketed: bool
    evaluations: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "param": self.param, "value": self.value, "metric": self.metric, "target": self.target,
            "achieved": self.achieved, "ci": self.ci, "method": self.method, "runs": self.runs, "seed": self.seed,
            "lo": self.lo, "hi": self.hi, "bracketed": self.bracketed, "evaluations": self.evaluations,
        }


def default_range(scenario, key: str, integer: bool) -> tuple[Any, Any]:
    """The search interval when --lo/--hi are not given: the field's declared range, narrowed to the value in
    effect ± 10 for integers (± half for floats). The value in effect is the scenario's own, else the rules'
    default (an escape tier's DC from the tier ladder), else the field's declared default."""
    bounds = field_bounds(scenario, key)
    current = effective_value(scenario, key)
    if isinstance(current, bool) or not isinstance(current, int | float):
        current = None
    lo, hi = bounds.lo, bounds.hi
    if current is not None:
        span = DEFAULT_SPAN if integer else max(abs(current) / 2, 1.0)
        lo = current - span if lo is None else max(lo, current - span)
        hi = current + span if hi is None else min(hi, current + span)
    if lo is None or hi is None:
        raise ScenarioError("cannot tell the search interval of this key; give --lo and --hi", file=scenario.source,
                            key=key)
    return lo, hi


def tune(scenario, key: str, target: float, metric: str | None = None, lo: Any = None, hi: Any = None,
         runs: int | None = None, seed: int | None = None, n_jobs: int = 1, exact: bool = True,
         tol: float | None = None, **options) -> TuneResult:
    """The value of ``key`` in ``[lo, hi]`` whose ``metric`` is closest to ``target`` (module docstring)."""
    metric = metric or main_metric(scenario.kind)
    if not isinstance(target, int | float) or isinstance(target, bool) or not math.isfinite(target):
        raise ScenarioError(f"expected a finite number for --target; given {target!r}", key="--target")
    if is_proportion(metric) and not 0 <= target <= 1:  # a rate is a fraction: 50 is most likely 50%
        hint = f"; did you mean {target / 100:.2f}?" if 0 < target <= 100 else ""
        raise ScenarioError(f"{metric} is a rate between 0 and 1; given {target:g}{hint}", key="--target")
    check_param_key(scenario, key)
    bounds = field_bounds(scenario, key)
    current = get_value(scenario_data(scenario), key)
    given = [v for v in (lo, hi) if v is not None]
    integer = bounds.integer or (not bounds.numeric and isinstance(current, int) and not isinstance(current, bool)
                                 and all(float(v).is_integer() for v in given))
    if not bounds.numeric and not (isinstance(current, int | float) and not isinstance(current, bool)):
        if not given:
            raise ScenarioError("expected a numeric scenario value to tune", file=scenario.source, key=key)
    dlo, dhi = (None, None)
    # the ends not given are widened by the search until the target is bracketed (within the valid range)
    grow = (lo is None, hi is None)
    if lo is None or hi is None:
        dlo, dhi = default_range(scenario, key, integer)
    lo = dlo if lo is None else lo
    hi = dhi if hi is None else hi
    if integer:
        if not (float(lo).is_integer() and float(hi).is_integer()):
            raise ScenarioError(f"{key} takes integers; given --lo {lo} --hi {hi}", file=scenario.source, key=key)
        lo, hi = int(lo), int(hi)
    else:
        lo, hi = float(lo), float(hi)
    if lo > hi:
        raise ScenarioError(f"expected --lo <= --hi; given {lo} > {hi}", file=scenario.source, key=key)
    runs, seed = resolve_runs_seed(scenario, runs, seed)

    # exact analysis when the kind solves both ends exactly and the metric is in its summary
    variants: dict[Any, Any] = {}

    def variant(v):
        if v not in variants:
            variants[v] = with_values(scenario, {key: coerce_like(v, current)})
        return variants[v]

    method = "simulation"
    if exact and supports_exact(variant(lo)) and supports_exact(variant(hi)):
        probe = evaluate(variant(lo), runs=runs, seed=seed, simulate=False, exact=True)
        if probe.exact is not None:
            try:
                metric_value(probe.exact, metric)
                method = "exact"
            except ScenarioError:
                method = "simulation"
    try:
        return _search(scenario, key, metric, float(target), lo, hi, integer, method, runs, seed, n_jobs, tol,
                       variant, options, grow, bounds)
    except _ExactFailed:
        return _search(scenario, key, metric, float(target), lo, hi, integer, "simulation", runs, seed, n_jobs,
                       tol, variant, options, grow, bounds)


class _ExactFailed(Exception):
    pass


def _widen(f, target, lo, hi, integer, grow, bounds) -> tuple[Any, Any, Any, Any]:
    """Widen the ends the user left open until ``f`` brackets ``target``: the side the metric must move towards
    (by the slope between the ends) doubles its distance each step, stopping at the field's declared bound.
    Returns the whole searched range and the last pair of ends (the bracket when there is one)."""
    fa, fb = f(lo), f(hi)
    a, b = lo, hi
    for _ in range(MAX_WIDENINGS):
        if math.isnan(fa) or math.isnan(fb) or (fa - target) * (fb - target) <= 0:
            break
        # both ends on the same side: move the end whose metric lies nearer the target further out
        up = (fb - fa) * (target - fb) > 0 if fb != fa else abs(fb - target) <= abs(fa - target)
        width = max(hi - lo, 1 if integer else 1e-9)
        if up and grow[1] and (bounds.hi is None or hi < bounds.hi):
            new = hi + width
            new = new if bounds.hi is None else min(new, bounds.hi)
            a, b, fa, fb = hi, new, fb, f(new)
            hi = new
        elif not up and grow[0] and (bounds.lo is None or lo > bounds.lo):
            new = lo - width
            new = new if bounds.lo is None else max(new, bounds.lo)
            a, b, fa, fb = new, lo, f(new), fa
            lo = new
        else:
            break
    return lo, hi, a, b


def _search(scenario, key, metric, target, lo, hi, integer, method, runs, seed, n_jobs, tol, variant, options,
            grow=(False, False), bounds=None):
    f = _Evaluations(metric, target, method, runs, seed, n_jobs, variant, options)
    bracketed = False
    try:
        if bounds is not None and any(grow):
            lo, hi, a, b = _widen(f, target, lo, hi, integer, grow, bounds)
        else:
            a, b = lo, hi
        fa, fb = f(a), f(b)
        da, db = fa - target, fb - target
        if not (math.isnan(fa) or math.isnan(fb)) and da * db <= 0:
            bracketed = True
            if integer:
                _bisect_integer(f, target, a, b, da, db)
            else:
                _bisect_float(f, target, a, b, da, db, tol if tol is not None else max((b - a) * 1e-4, 1e-12))
        if integer:  # walk to better neighbours (a metric that is not quite monotone)
            _walk_to_better_neighbours(f, lo, hi)
    except _Budget:
        pass
    best = f.best()
    achieved, ci = f.cache[best]
    evaluations = [{"value": v, "metric": f.cache[v][0], "ci": f.cache[v][1]} for v in f.order]
    return TuneResult(param=key, value=best, metric=metric, target=target, achieved=achieved, ci=ci, method=method,
                      runs=runs if method == "simulation" else None, seed=seed if method == "simulation" else None,
                      lo=lo, hi=hi, bracketed=bracketed, evaluations=evaluations)


class _Evaluations:
    """The metric at a value of the key (``variant(value)`` evaluated exactly or by simulation), remembered with
    its 95% interval in the order evaluated; :class:`_Budget` beyond :data:`MAX_EVALUATIONS` values."""

    def __init__(self, metric, target, method, runs, seed, n_jobs, variant, options):
        self.metric, self.target, self.method, self.runs, self.seed = metric, target, method, runs, seed
        self.n_jobs, self.variant, self.options = n_jobs, variant, options
        self.cache: dict[Any, tuple[float, list[float]]] = {}
        self.order: list[Any] = []

    def __call__(self, v) -> float:
        if v in self.cache:
            return self.cache[v][0]
        if len(self.cache) >= MAX_EVALUATIONS:
            raise _Budget()
        s = self.variant(v)
        if self.method == "exact":
            ev = evaluate(s, runs=self.runs, seed=self.seed, simulate=False, exact=True)
            if ev.exact is None:
                raise _ExactFailed()
            summary = ev.exact
        else:
            summary = evaluate(s, runs=self.runs, seed=self.seed, n_jobs=self.n_jobs, exact=False,
                               **self.options).summary
        value = metric_value(summary, self.metric)
        ci = list(metric_interval(summary, self.metric))
        self.cache[v] = (value, ci)
        self.order.append(v)
        return value

    def dist(self, v) -> float:
        value = self.cache[v][0]
        return math.inf if math.isnan(value) else abs(value - self.target)

    def best(self):
        """The value evaluated whose metric is nearest the target (ties: the first evaluated)."""
        return min(self.order, key=lambda v: (self.dist(v), self.order.index(v)))


def _bisect_integer(f, target, a, b, da, db) -> None:
    """Bisect the integer bracket [a, b] (``da``, ``db``: the misses at its ends, of opposite signs)."""
    while b - a > 1 and da != 0 and db != 0:
        m = (a + b) // 2
        dm = f(m) - target
        if math.isnan(dm):
            break
        if dm == 0:
            a, b, da, db = m, m, 0.0, 0.0
        elif (dm > 0) == (da > 0):
            a, da = m, dm
        else:
            b, db = m, dm


def _bisect_float(f, target, a, b, da, db, eps) -> None:
    """Bisect the bracket [a, b] down to a width of ``eps`` (or a value that hits the target)."""
    while b - a > eps and da != 0 and db != 0:
        m = (a + b) / 2
        dm = f(m) - target
        if math.isnan(dm):
            break
        if dm == 0:
            break
        if (dm > 0) == (da > 0):
            a, da = m, dm
        else:
            b, db = m, dm


def _walk_to_better_neighbours(f: _Evaluations, lo, hi) -> None:
    best = f.best()
    for _ in range(MAX_EVALUATIONS):
        moved = False
        for nb in (best - 1, best + 1):
            if lo <= nb <= hi:
                f(nb)
                if f.dist(nb) < f.dist(best):
                    best, moved = nb, True
        if not moved:
            break


class _Budget(Exception):
    pass
