"""Fit several integer parameters at once so that several metrics on several scenarios come as close
as possible to their targets (``python -m sim fit FIT.toml``; docs/designer.md, "Fitting a ladder").

The objective is the weighted sum of squared differences ``sum_t w_t (m_t(x) - v_t)^2`` over the
targets ``t``; ``x`` is the vector of parameter values, every one applied to every target scenario.
Each target scenario is evaluated exactly where its kind solves the variant exactly (``sim.exact``),
otherwise by simulation with common random numbers (the same runs and seed for every variant, so two
variants differ by their rules, not by noise). Equal variants are evaluated once (a cache keyed by
scenario and values).

Search, in this order:

1. **Scan.** From a starting point ``x0`` (the ladder spread evenly over the bounds), each parameter is
   moved over its whole range with the others at ``x0``. A target whose metric changes along one
   parameter only *depends* on that parameter.
2. **Separable case** (every target depends on at most one parameter): the scan has tabulated every
   target's metric over its parameter's whole range, so the objective is a sum of one-parameter terms
   ``g_k(x_k)`` and its minimum over the integer box is found exactly: each ``x_k`` on its own, or,
   with ``increasing = true``, by dynamic programming over the ladder
   (``best_k(v) = g_k(v) + min_{u < v} best_{k-1}(u)``). The optimum is then evaluated once more to
   confirm the prediction.
3. **Otherwise**, exhaustive search when the feasible box holds at most ``MAX_EXHAUSTIVE`` points,
   else coordinate descent with restarts: each parameter in turn takes the best value allowed by its
   bounds and (ladder) its neighbours, until a full pass improves nothing; restarts begin at the scan's
   separable estimate, at ``x0`` and at ladders drawn at random (fixed seed). This finds a good
   optimum, not a certified one.

Ties go to the first point found (lowest values in the scan order).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import Field, ValidationError, field_validator

from sim import pipeline, report
from sim.designer.evaluate import exact_summary
from sim.designer.metrics import metric_interval, metric_value, parse_metric
from sim.designer.params import field_bounds, split_key, with_values
from sim.designer.scenario_text import variant_text
from sim.errors import ScenarioError
from sim.labels import format_value
from sim.palette import EXACT, series_colour
from sim.scenario import Strict, format_validation_errors, load_scenario, read_toml_file
from sim.version import __version__

MAX_PARAMS = 8
MAX_TARGETS = 50
MAX_EXHAUSTIVE = 2_000
#: ``method = "exhaustive"``: feasible points x target scenarios, counted before any point is built or evaluated
MAX_EXHAUSTIVE_EVALUATIONS = 10_000
MAX_RESTARTS = 20
DEFAULT_RESTARTS = 4

Bound = int | dict[str, int]


class FitSettings(Strict):
    """The ``[fit]`` table."""

    params: list[str] = Field(..., min_length=1, max_length=MAX_PARAMS)
    increasing: bool = False
    lo: Bound
    hi: Bound
    method: str = "auto"
    restarts: int = Field(DEFAULT_RESTARTS, ge=0, le=MAX_RESTARTS)
    runs: int | None = Field(None, ge=1, le=100_000_000)
    seed: int | None = Field(None, ge=0, le=2**63 - 1)

    @field_validator("params")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        for key in value:
            split_key(key)
        if len(set(value)) != len(value):
            raise ValueError("each parameter at most once")
        return value

    @field_validator("method")
    @classmethod
    def _method(cls, value: str) -> str:
        if value not in ("auto", "exhaustive", "coordinate"):
            raise ValueError(f"expected one of auto, exhaustive, coordinate; given {value!r}")
        return value


class FitTarget(Strict):
    """One ``[[target]]``: a metric of a scenario and the value it should take."""

    scenario: str = Field(..., min_length=1, max_length=1000)
    metric: str = Field(..., min_length=1, max_length=200)
    value: Annotated[float, Field(allow_inf_nan=False)]
    weight: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 1.0

    @field_validator("value", "weight", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        return value


class FitFile(Strict):
    fit: FitSettings
    target: list[FitTarget] = Field(..., min_length=1, max_length=MAX_TARGETS)


@dataclass
class FitSpec:
    """A validated fit file: settings, targets and their loaded scenarios."""

    file: str
    settings: FitSettings
    targets: list[FitTarget]
    scenarios: list[Any]            # one per distinct scenario file
    target_scenario: list[int]      # index into ``scenarios`` per target
    lo: list[int]
    hi: list[int]

    @property
    def params(self) -> list[str]:
        return list(self.settings.params)


def read_toml(path: Path, file: str) -> dict:
    p = Path(path)
    if p.is_dir():
        raise ScenarioError("is a folder; expected a fit file (TOML)", file=file)
    return read_toml_file(p, "fit file", file)  # the scenario files' guard (sim/scenario.py)


def _bounds(settings: FitSettings, file: str) -> tuple[list[int], list[int]]:
    def per_param(bound: Bound, name: str) -> list[int]:
        if isinstance(bound, int):
            return [bound] * len(settings.params)
        unknown = sorted(set(bound) - set(settings.params))
        if unknown:
            raise ScenarioError(f"{unknown[0]!r} is not one of fit.params", file=file, key=f"fit.{name}")
        missing = [k for k in settings.params if k not in bound]
        if missing:
            raise ScenarioError(f"no bound for {missing[0]!r} (give a number for every parameter, or one for all)",
                                file=file, key=f"fit.{name}")
        return [bound[k] for k in settings.params]

    lo, hi = per_param(settings.lo, "lo"), per_param(settings.hi, "hi")
    for key, a, b in zip(settings.params, lo, hi, strict=True):
        if a > b:
            raise ScenarioError(f"lo {a} > hi {b} for {key!r}", file=file, key="fit.lo")
        if b - a > 1000:
            raise ScenarioError(f"the range {a}..{b} of {key!r} holds more than 1,001 values", file=file,
                                key="fit.hi")
    if settings.increasing:
        low = _lowest_ladder(lo, hi)
        if low is None:
            raise ScenarioError(f"an increasing ladder of {len(lo)} values does not fit in the bounds "
                                f"(lo {lo}, hi {hi})", file=file, key="fit.increasing")
    return lo, hi


def _lowest_ladder(lo: list[int], hi: list[int]) -> list[int] | None:
    """The lowest strictly increasing vector within the bounds, or None if there is none."""
    out: list[int] = []
    for a, b in zip(lo, hi, strict=True):
        v = a if not out else max(a, out[-1] + 1)
        if v > b:
            return None
        out.append(v)
    return out


def load_fit(path: str | Path) -> FitSpec:
    """Read and validate a fit file; every problem is a ScenarioError naming the file and key."""
    file = str(path)
    data = read_toml(Path(path), file)
    try:
        model = FitFile.model_validate(data)
    except ValidationError as exc:
        raise format_validation_errors(FitFile, exc.errors(), file, data) from None
    settings = model.fit
    lo, hi = _bounds(settings, file)
    base = Path(path).resolve().parent
    scenarios: list[Any] = []
    index_of: dict[Path, int] = {}
    target_scenario: list[int] = []
    for i, target in enumerate(model.target):
        where = (base / target.scenario).resolve()
        if where not in index_of:
            if not where.is_file():
                raise ScenarioError(f"no such scenario file {target.scenario!r} (paths are relative to the fit "
                                    "file)", file=file, key=f"target.{i}.scenario")
            index_of[where] = len(scenarios)
            scenarios.append(load_scenario(where))
        target_scenario.append(index_of[where])
        try:
            parse_metric(target.metric)
        except ScenarioError as exc:
            raise ScenarioError(exc.detail, file=file, key=f"target.{i}.metric") from None
    for scenario in scenarios:
        for k, key in enumerate(settings.params):
            _check_param(scenario, key, lo[k], hi[k], file)
    _check_search_space(settings, lo, hi, len(scenarios), file)
    return FitSpec(file, settings, list(model.target), scenarios, target_scenario, lo, hi)


def _check_search_space(settings: FitSettings, lo: list[int], hi: list[int], n_scenarios: int, file: str) -> None:
    """An exhaustive search evaluates every feasible point on every target scenario: count them (without building
    them) and refuse more than :data:`MAX_EXHAUSTIVE_EVALUATIONS` before anything is evaluated."""
    if settings.method != "exhaustive":
        return
    points = count_feasible(lo, hi, settings.increasing)
    if points * n_scenarios > MAX_EXHAUSTIVE_EVALUATIONS:
        raise ScenarioError(f"an exhaustive search over {points:,} feasible points x {n_scenarios} scenario(s) "
                            f"would take {points * n_scenarios:,} evaluations; expected at most "
                            f"{MAX_EXHAUSTIVE_EVALUATIONS:,} (narrow fit.lo/fit.hi, or use method \"auto\" or "
                            "\"coordinate\")", file=file, key="fit.method")


def _check_param(scenario, key: str, lo: int, hi: int, file: str) -> None:
    where = f"{scenario.source} (kind {scenario.kind})"
    try:
        bounds = field_bounds(scenario, key)
    except ScenarioError as exc:
        raise ScenarioError(f"{key!r} is not a valid parameter of {where}: {exc.detail}", file=file,
                            key="fit.params") from None
    if bounds.integer and bounds.lo is not None and lo < bounds.lo:
        raise ScenarioError(f"lo {lo} is below the smallest value {bounds.lo} that {key!r} allows", file=file,
                            key="fit.lo")
    if bounds.integer and bounds.hi is not None and hi > bounds.hi:
        raise ScenarioError(f"hi {hi} is above the largest value {bounds.hi} that {key!r} allows", file=file,
                            key="fit.hi")
    try:
        with_values(scenario, {key: lo})
    except ScenarioError as exc:
        raise ScenarioError(f"{key!r} is not a valid parameter of {where}: {exc.detail}", file=file,
                            key="fit.params") from None
    if not bounds.integer:
        raise ScenarioError(f"{key!r} is not an integer value of {where}", file=file, key="fit.params")


# --------------------------------------------------------------------------------------------
# evaluation


@dataclass
class _Point:
    summary: dict
    exact: bool


class Evaluator:
    """Evaluates every target at a value vector; each (scenario, values) variant is solved once."""

    def __init__(self, spec: FitSpec, runs: int | None = None, seed: int | None = None, n_jobs: int = 1,
                 progress=None):
        self.spec = spec
        self.runs = runs if runs is not None else spec.settings.runs
        self.seed = seed if seed is not None else spec.settings.seed
        self.n_jobs = n_jobs
        self.progress = progress
        self._cache: dict[tuple[int, tuple[int, ...]], _Point] = {}
        self.evaluations = 0
        self.method: dict[int, str] = {}

    def _variant(self, s: int, x: tuple[int, ...]):
        scenario = self.spec.scenarios[s]
        return with_values(scenario, dict(zip(self.spec.params, x, strict=True)))

    def point(self, s: int, x: tuple[int, ...]) -> _Point:
        key = (s, tuple(int(v) for v in x))
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        variant = self._variant(s, key[1])
        notes: list[str] = []
        summary = exact_summary(variant, notes)  # exact where the kind solves the variant within its budget
        if summary is not None:
            exact = True
            self.method[s] = "exact"
        else:
            base = self.spec.scenarios[s]
            runs = int(base.run.runs if self.runs is None else self.runs)
            seed = int(base.run.seed if self.seed is None else self.seed)
            summary = pipeline.run(variant, runs=runs, seed=seed, n_jobs=self.n_jobs, exact=False).summary
            exact = False
            self.method[s] = f"simulation ({runs:,} runs, seed {seed}, common random numbers)" + (
                " - exact refused on its budget" if notes else "")
        self.evaluations += 1
        if self.progress is not None:
            self.progress(self.evaluations)
        point = self._cache[key] = _Point(summary, exact)
        return point

    def metric(self, t: int, x: tuple[int, ...]) -> float:
        target = self.spec.targets[t]
        point = self.point(self.spec.target_scenario[t], x)
        try:
            return metric_value(point.summary, target.metric)
        except ScenarioError as exc:
            raise ScenarioError(exc.detail, file=self.spec.file, key=f"target.{t}.metric") from None

    def loss(self, t: int, x: tuple[int, ...]) -> float:
        target = self.spec.targets[t]
        value = self.metric(t, x)
        if math.isnan(value):
            return math.inf
        return target.weight * (value - target.value) ** 2

    def objective(self, x: tuple[int, ...]) -> float:
        return sum(self.loss(t, x) for t in range(len(self.spec.targets)))


# --------------------------------------------------------------------------------------------
# search


def feasible(x: tuple[int, ...], lo: list[int], hi: list[int], increasing: bool) -> bool:
    if any(v < a or v > b for v, a, b in zip(x, lo, hi, strict=True)):
        return False
    return not increasing or all(x[k] < x[k + 1] for k in range(len(x) - 1))


def feasible_points(lo: list[int], hi: list[int], increasing: bool, limit: int | None = None):
    """Every feasible vector in scan order (lexicographic), or None when there are more than ``limit``."""
    count = count_feasible(lo, hi, increasing)
    if limit is not None and count > limit:
        return None
    ranges = [range(a, b + 1) for a, b in zip(lo, hi, strict=True)]
    return [x for x in product(*ranges) if feasible(x, lo, hi, increasing)]


def count_feasible(lo: list[int], hi: list[int], increasing: bool) -> int:
    if not increasing:
        return math.prod(b - a + 1 for a, b in zip(lo, hi, strict=True))
    # ways[v]: ladders of the first k params ending at value v (dynamic programming over the ladder)
    values = sorted(set().union(*(range(a, b + 1) for a, b in zip(lo, hi, strict=True))))  # <= 1,001 per param
    ways = {v: 1 for v in values if lo[0] <= v <= hi[0]}
    for k in range(1, len(lo)):
        running, nxt = 0, {}
        for v in values:
            if lo[k] <= v <= hi[k]:
                nxt[v] = running
            running += ways.get(v, 0)
        ways = nxt
    return sum(ways.values())


def spread_ladder(lo: list[int], hi: list[int], increasing: bool) -> tuple[int, ...]:
    """The starting point: middle values, or for a ladder values spread evenly over the bounds."""
    n = len(lo)
    if not increasing:
        return tuple((a + b) // 2 for a, b in zip(lo, hi, strict=True))
    low, high = min(lo), max(hi)
    x = [round(low + (high - low) * (k + 1) / (n + 1)) for k in range(n)]
    return _repair(x, lo, hi)


def _repair(x: list[int], lo: list[int], hi: list[int]) -> tuple[int, ...]:
    """The nearest increasing vector within the bounds (push up from the left, then down from the right)."""
    out = list(x)
    for k in range(len(out)):
        floor = lo[k] if k == 0 else max(lo[k], out[k - 1] + 1)
        out[k] = max(out[k], floor)
    for k in reversed(range(len(out))):
        ceil = hi[k] if k == len(out) - 1 else min(hi[k], out[k + 1] - 1)
        out[k] = min(out[k], ceil)
    return tuple(out)


def separable_optimum(tables: list[dict[int, float]], lo: list[int], hi: list[int],
                      increasing: bool) -> tuple[int, ...]:
    """The minimum of ``sum_k g_k(x_k)`` over the box (and the ladder), ``g_k = tables[k]``; ties lowest."""
    n = len(tables)
    if not increasing:
        return tuple(min(range(lo[k], hi[k] + 1), key=lambda v, k=k: (tables[k][v], v)) for k in range(n))
    # best[k][v]: the least sum of g_0..g_k with x_k = v and x_0 < ... < x_k; arg[k][v]: x_{k-1} there
    best: list[dict[int, float]] = [{v: tables[0][v] for v in range(lo[0], hi[0] + 1)}]
    arg: list[dict[int, int]] = [{}]
    for k in range(1, n):
        prev, cur, back = best[k - 1], {}, {}
        running, running_arg = math.inf, None
        candidates = sorted(prev)
        i = 0
        for v in range(lo[k], hi[k] + 1):
            while i < len(candidates) and candidates[i] < v:
                u = candidates[i]
                if prev[u] < running:
                    running, running_arg = prev[u], u
                i += 1
            if running_arg is not None:
                cur[v] = tables[k][v] + running
                back[v] = running_arg
        best.append(cur)
        arg.append(back)
    last = min(best[-1], key=lambda v: (best[-1][v], v))
    x = [last]
    for k in range(n - 1, 0, -1):
        x.append(arg[k][x[-1]])
    return tuple(reversed(x))


def coordinate_descent(objective, start: tuple[int, ...], lo: list[int], hi: list[int],
                       increasing: bool) -> tuple[tuple[int, ...], float]:
    x, best = tuple(start), objective(tuple(start))
    improved = True
    while improved:
        improved = False
        for k in range(len(x)):
            a = lo[k] if not (increasing and k > 0) else max(lo[k], x[k - 1] + 1)
            b = hi[k] if not (increasing and k < len(x) - 1) else min(hi[k], x[k + 1] - 1)
            for v in range(a, b + 1):
                if v == x[k]:
                    continue
                y = x[:k] + (v,) + x[k + 1:]
                f = objective(y)
                if f < best - 1e-15:
                    x, best, improved = y, f, True
    return x, best


@dataclass
class FitResult:
    spec: FitSpec
    values: dict[str, int]
    loss: float
    search: str
    evaluations: int
    seconds: float
    targets: list[dict] = field(default_factory=list)
    dependencies: list[list[str]] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "values": self.values, "loss": self.loss, "search": self.search, "evaluations": self.evaluations,
            "seconds": round(self.seconds, 3), "targets": self.targets, "params": self.spec.params,
            "increasing": self.spec.settings.increasing, "lo": self.spec.lo, "hi": self.spec.hi,
            "sim_version": __version__,
        }


def fit(spec: FitSpec, runs: int | None = None, seed: int | None = None, n_jobs: int = 1,
        progress=None) -> FitResult:
    """Search the integer box (module docstring) and return the best values and what they achieve."""
    started = time.perf_counter()
    ev = Evaluator(spec, runs=runs, seed=seed, n_jobs=n_jobs, progress=progress)
    lo, hi, increasing = spec.lo, spec.hi, spec.settings.increasing
    x0 = spread_ladder(lo, hi, increasing)
    for t in range(len(spec.targets)):  # a metric the kind does not produce fails here, before anything is written
        ev.metric(t, x0)
    method = spec.settings.method
    points = feasible_points(lo, hi, increasing, MAX_EXHAUSTIVE // max(1, len(spec.scenarios)))
    scan, depends = _scan(spec, ev, x0) if method != "exhaustive" else ([], [set() for _ in spec.targets])
    separable = method != "exhaustive" and all(len(d) <= 1 for d in depends)
    if separable and method == "auto":
        x, best, search = _separable_search(spec, ev, _loss_tables(spec, scan, depends))
    elif method == "exhaustive" or (method == "auto" and points is not None):
        x, best, search = _exhaustive_search(ev, points if points is not None else feasible_points(lo, hi, increasing))
    else:
        x, best, search = _descent_search(spec, ev, x0, _loss_tables(spec, scan, depends) if scan else None)
    result = FitResult(spec, dict(zip(spec.params, (int(v) for v in x), strict=True)), best, search,
                       ev.evaluations, time.perf_counter() - started,
                       dependencies=[[spec.params[k] for k in sorted(d)] for d in depends] if scan else [])
    result.targets.extend(_target_rows(spec, ev, x, result.dependencies))
    return result


def _scan(spec: FitSpec, ev: Evaluator, x0: tuple[int, ...]) -> tuple[list[dict[int, list[float]]], list[set[int]]]:
    """(scan, depends): ``scan[k][v]`` the targets' metrics with x_k = v and the others at ``x0``;
    ``depends[t]`` the parameters whose values change target t's metric in that scan."""
    scan: list[dict[int, list[float]]] = []
    n_targets = len(spec.targets)
    depends: list[set[int]] = [set() for _ in range(n_targets)]
    for k in range(len(spec.lo)):
        scan.append({})
        for v in range(spec.lo[k], spec.hi[k] + 1):
            x = x0[:k] + (v,) + x0[k + 1:]
            scan[k][v] = [ev.metric(t, x) for t in range(n_targets)]
        for t in range(n_targets):
            seen = {repr(scan[k][v][t]) for v in scan[k]}
            if len(seen) > 1:
                depends[t].add(k)
    return scan, depends


def _loss_tables(spec: FitSpec, scan: list, depends: list[set[int]]) -> list[dict[int, float]]:
    """Per parameter k, the weighted squared misses of the targets that depend on it (a target that depends on
    none counts with the first parameter), by value: the terms of a separable loss."""
    out = []
    for k in range(len(spec.lo)):
        row = {}
        for v in range(spec.lo[k], spec.hi[k] + 1):
            total = 0.0
            for t in range(len(spec.targets)):
                if k in depends[t] or (not depends[t] and k == 0):
                    m = scan[k][v][t]
                    w, goal = spec.targets[t].weight, spec.targets[t].value
                    total += math.inf if math.isnan(m) else w * (m - goal) ** 2
            row[v] = total
        out.append(row)
    return out


def _separable_search(spec: FitSpec, ev: Evaluator, tables: list[dict[int, float]]):
    """(x, loss, how): the exact minimum of a separable loss, checked against a real evaluation (refined by
    coordinate descent where the prediction does not hold)."""
    lo, hi, increasing = spec.lo, spec.hi, spec.settings.increasing
    x = separable_optimum(tables, lo, hi, increasing)
    best = ev.objective(x)
    predicted = sum(tables[k][x[k]] for k in range(len(lo)))
    search = ("separable: each target depends on one parameter; exact minimum by "
              + ("dynamic programming over the ladder" if increasing else "minimising each parameter alone"))
    if not math.isclose(best, predicted, rel_tol=1e-9, abs_tol=1e-12):
        x, best = coordinate_descent(ev.objective, x, lo, hi, increasing)
        search += "; the prediction did not hold, refined by coordinate descent"
    return x, best, search


def _exhaustive_search(ev: Evaluator, points: list):
    x, best = points[0], math.inf
    for y in points:
        f = ev.objective(y)
        if f < best:
            x, best = y, f
    return x, best, f"exhaustive over {len(points):,} feasible points"


def _descent_search(spec: FitSpec, ev: Evaluator, x0: tuple[int, ...], tables: list | None):
    """Coordinate descent from the separable guess (when there was a scan), ``x0`` and random restarts."""
    lo, hi, increasing = spec.lo, spec.hi, spec.settings.increasing
    starts = [x0]
    if tables is not None:
        starts.insert(0, separable_optimum(tables, lo, hi, increasing))
    rng = np.random.default_rng(0)
    for _ in range(spec.settings.restarts):
        raw = [int(rng.integers(a, b + 1)) for a, b in zip(lo, hi, strict=True)]
        starts.append(_repair(sorted(raw), lo, hi) if increasing else tuple(raw))
    x, best = None, math.inf
    for start in dict.fromkeys(starts):
        if not feasible(start, lo, hi, increasing):
            continue
        y, f = coordinate_descent(ev.objective, start, lo, hi, increasing)
        if f < best:
            x, best = y, f
    n_starts = len(dict.fromkeys(starts))
    return x, best, f"coordinate descent from {n_starts} starting points (a good optimum, not certified)"


def _target_rows(spec: FitSpec, ev: Evaluator, x, dependencies: list[list[str]]) -> list[dict]:
    """What the fitted values achieve, target by target (metric, 95% interval, loss)."""
    rows = []
    for t, target in enumerate(spec.targets):
        s = spec.target_scenario[t]
        point = ev.point(s, x)
        achieved = metric_value(point.summary, target.metric)
        lo_ci, hi_ci = metric_interval(point.summary, target.metric)
        rows.append({
            "scenario": target.scenario, "name": spec.scenarios[s].name, "metric": target.metric,
            "value": target.value, "weight": target.weight,
            "achieved": achieved, "interval": [lo_ci, hi_ci],
            "loss": target.weight * (achieved - target.value) ** 2, "method": ev.method[s],
            "depends_on": dependencies[t] if dependencies else None,
        })
    return rows


def brute_force(spec: FitSpec, runs: int | None = None, seed: int | None = None) -> tuple[tuple[int, ...], float]:
    """Every feasible point evaluated (the oracle the tests compare :func:`fit` with)."""
    ev = Evaluator(spec, runs=runs, seed=seed)
    best_x, best = None, math.inf
    for x in feasible_points(spec.lo, spec.hi, spec.settings.increasing):
        f = ev.objective(x)
        if f < best:
            best_x, best = x, f
    return best_x, best


__all__ = ["FitSpec", "FitResult", "load_fit", "fit", "brute_force", "count_feasible", "separable_optimum"]


# --------------------------------------------------------------------------------------------
# output


def fitted_toml(scenario_file: str | Path, values: dict[str, int], fit_file: str,
                dest: str | Path | None = None) -> str:
    """The scenario file's text with the fitted values written in (see :mod:`sim.designer.scenario_text`)."""
    changes = ", ".join(f"{k} = {v}" for k, v in values.items())
    dest = dest if dest is not None else Path(scenario_file).with_suffix(".fitted.toml")
    return variant_text(scenario_file, {k: int(v) for k, v in values.items()},
                        f"Fitted by `python -m sim fit {Path(fit_file).name}`: {changes}", dest)


def format_table(result: FitResult) -> str:
    """The console table: fitted values, then each target with what it achieved."""
    lines = ["Fitted values: " + ", ".join(f"{k} = {v}" for k, v in result.values.items()),
             f"Loss {result.loss:.6g} · {result.evaluations} evaluations in {result.seconds:.1f} s · {result.search}",
             ""]
    header = ("scenario", "metric", "target", "achieved", "95% interval", "weight", "method")
    rows = [header]
    for t in result.targets:
        lo, hi = t["interval"]
        m = t["metric"]
        rows.append((t["scenario"], m, format_value(m, t["value"]), format_value(m, t["achieved"]),
                     f"[{format_value(m, lo)}, {format_value(m, hi)}]", f"{t['weight']:g}", t["method"]))
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(header))]
    for r in rows:
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return "\n".join(lines)


def _chart(result: FitResult, out: Path) -> Path:
    n = len(result.targets)
    fig, ax = report.new_figure("Targets and what the fitted values achieve", "metric value", "",
                                size=(7.5, 1.2 + 0.5 * n))
    ys = np.arange(n)[::-1]
    for y, t in zip(ys, result.targets, strict=True):
        lo, hi = t["interval"]
        ax.plot([t["value"]], [y], marker="|", markersize=18, color=EXACT, label="target" if y == ys[0] else None)
        if not math.isnan(lo) and hi > lo:
            ax.plot([lo, hi], [y, y], color=series_colour(0), linewidth=2, label="95% interval" if y == ys[0] else None)
        ax.plot([t["achieved"]], [y], "o", color=series_colour(0), label="achieved" if y == ys[0] else None)
    ax.set_yticks(ys, [f"{Path(t['scenario']).stem}: {t['metric']}" for t in result.targets])
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25 if n > 2 else -0.45), ncol=3, frameon=False)
    return report.save_figure(fig, out / "fit.png")


def write_fit(result: FitResult, out_dir: str | Path) -> list[Path]:
    """``fit.json``, ``fit.png``, one ``<scenario>.fitted.toml`` per scenario and ``report.html``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    spec = result.spec
    written = [out / "fit.json"]
    data = result.as_dict()
    data["fit_file"] = spec.file
    report.atomic_write_text(out / "fit.json", report.summary_json(data))
    fitted = []
    for scenario in spec.scenarios:
        name = f"{Path(scenario.source).stem}.fitted.toml"
        text = fitted_toml(scenario.source, result.values, spec.file, out / name)
        report.atomic_write_text(out / name, text)
        fitted.append(out / name)
    written += fitted
    written.append(_chart(result, out))
    worst = max(result.targets, key=lambda t: t["loss"])
    got, wanted = (format_value(worst["metric"], worst[k]) for k in ("achieved", "value"))
    lines = [f"Fitted values: {', '.join(f'{k} = {v}' for k, v in result.values.items())}.",
             f"The farthest target is {worst['metric']} of {worst['scenario']}: {got} against {wanted} (weighted "
             f"squared error of the fit {result.loss:.3g}).",
             f"Search: {result.search}; {result.evaluations} evaluations in {result.seconds:.1f} s."]
    value_rows = [[k, str(v), str(a), str(b)] for (k, v), a, b in zip(result.values.items(), spec.lo, spec.hi,
                                                                         strict=True)]
    target_rows = [[t["name"] or t["scenario"], t["metric"], format_value(t["metric"], t["value"]),
                    format_value(t["metric"], t["achieved"]),
                    "exact" if t["method"] == "exact" else
                    f"[{format_value(t['metric'], t['interval'][0])}, {format_value(t['metric'], t['interval'][1])}]",
                    f"{t['weight']:g}", f"{t['loss']:.3g}",
                    t["method"]] for t in result.targets]
    sections = [
        report.answer("Which values bring every target closest?", lines),
        report.section("Fitted values", report.table(["parameter", "fitted value", "lo", "hi"], value_rows)),
        report.section("Targets", report.table(["scenario (name or file)", "metric", "target", "achieved",
                                                "95% interval", "weight", "weighted squared error", "evaluated by"],
                                               target_rows)),
        report.section("Targets and achieved values", image="fit.png",
                       alt="Chart: each target's value and what the fitted values achieve, with 95% intervals"),
        report.section("Fitted scenarios", report.items(report.link(p.name, p.name) for p in fitted),
                       note="Each scenario file with the fitted values written in (comments kept)."),
    ]
    written.append(report.write_html(out / "report.html", "Ladder fit", sections))
    return written
