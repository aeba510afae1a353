"""The studio's model: one scenario, its controls, and answers for variants (no web code here).

A variant is the base scenario with some dotted keys changed (:func:`sim.designer.params.with_values`, so it
is validated exactly like a file). It is answered exactly where the kind solves it (``sim.exact``),
otherwise by simulation with common random numbers: the same seed for every variant, and a run count
chosen so that the first answer comes within about a second; :meth:`Studio.refine` then adds runs (the
first runs of a larger count are the same runs, R-GEN-7) so the interval shrinks while the page shows it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim import kinds, pipeline
from sim.batch import CHUNK_RUNS as CHUNK_SIZE
from sim.designer.metrics import headline as headline_metrics
from sim.designer.metrics import main_metric, metric_interval, metric_value
from sim.designer.params import field_bounds, get_value, scenario_data, with_values
from sim.designer.scenario_text import variant_text
from sim.designer.sensitivity import sensitivity_parameters
from sim.errors import SimError
from sim.report import atomic_write_text
from sim.scenario import load_scenario

FIRST_ANSWER_SECONDS = 1.0
MAX_RUNS = 1_000_000
MIN_RUNS = 1_000

#: the list metric drawn as a curve, per kind (by round or by turn)

@dataclass(frozen=True)
class Control:
    key: str
    label: str
    group: str
    value: Any
    lo: int | None = None
    hi: int | None = None
    options: tuple[str, ...] = ()


@dataclass
class Answer:
    """What is known about one variant: its summary, how it was made, and the headline numbers."""

    values: dict[str, Any]
    summary: dict
    exact: bool
    runs: int | None
    seconds: float
    metric: str
    value: float
    interval: tuple[float, float]
    headline: list[tuple[str, float, float, float]] = field(default_factory=list)

    @property
    def method(self) -> str:
        return "exact" if self.exact else f"{self.runs:,} simulated runs (95% interval)"


def _group(key: str, scenario) -> tuple[str, str]:
    parts = key.split(".")
    if parts[0] == "rules" and parts[1] == "tiers":
        return "Tier ladder (DC)", f"{parts[2]} DC"
    if parts[0] in ("party", "pcs", "units", "adversaries") and len(parts) >= 2 and parts[1].isdigit():
        data = scenario_data(scenario)
        who = get_value(data, f"{parts[0]}.{parts[1]}.name") or f"{parts[0]} {int(parts[1]) + 1}"
        return f"{who}", parts[-1]
    if parts[0] in ("attention", "search"):
        return "Attention and search", ".".join(parts)
    return "Other", key


class Studio:
    """One scenario, its controls, a baseline answer and answers for variants."""

    def __init__(self, scenario, seed: int | None = None, first_answer_seconds: float = FIRST_ANSWER_SECONDS):
        self.scenario = scenario
        self.kind = scenario.kind
        self.metric = main_metric(self.kind)
        self.seed = int(scenario.run.seed if seed is None else seed)
        self.first_answer_seconds = first_answer_seconds
        self._rate: float | None = None  # runs per second, measured on the first simulation
        self.controls = self._controls()
        self._baselines: dict[int, Answer] = {}  # simulated baseline answers by run count
        self.baseline = self.answer({})

    # ------------------------------------------------------------------ controls

    def _controls(self) -> list[Control]:
        out: list[Control] = []
        kind = kinds.get(self.kind)
        keys = [k for k, _ in sensitivity_parameters(self.scenario)]
        keys += [k for k in kinds.KINDS[self.kind].studio_keys if k not in keys]  # escape: attention
        data = scenario_data(self.scenario)
        for key in dict.fromkeys(keys):
            value = get_value(data, key)
            bounds = field_bounds(self.scenario, key)
            if value is None:  # a key the scenario leaves out: the rules' value (escape: a tier's DC, R-ESC-2)
                value = kind.rule_default(key)
            if value is None or isinstance(value, bool) or not isinstance(value, int):
                continue
            lo, hi = bounds.lo, bounds.hi
            lo = max(lo if lo is not None else value - 20, value - 20, 1 if key.endswith(".dc") else -1000)
            hi = min(hi if hi is not None else value + 20, value + 20)
            group, name = _group(key, self.scenario)
            out.append(Control(key, name, group, value, int(lo), int(hi)))
        builtin = kind.builtin_policies  # () where the [policy] table holds settings
        if builtin and kind.info.supports_optimal:
            builtin = (*builtin, "optimal")  # the solved decision table (R-ESC-5/6 choices), exact where in budget
        if builtin and self.scenario.policy.name in builtin:
            out.append(Control("policy.name", "policy", "Policy", self.scenario.policy.name, options=builtin))
        return out

    # ------------------------------------------------------------------ answers

    def variant(self, values: dict[str, Any]):
        """The validated variant (a ScenarioError names the key when the rules refuse it)."""
        changed = {k: v for k, v in values.items() if v != self.base_value(k)}
        return with_values(self.scenario, changed) if changed else self.scenario

    def base_value(self, key: str) -> Any:
        for c in self.controls:
            if c.key == key:
                return c.value
        return get_value(scenario_data(self.scenario), key)

    def changes(self, values: dict[str, Any]) -> list[tuple[str, Any, Any]]:
        return [(k, self.base_value(k), v) for k, v in values.items() if v != self.base_value(k)]

    def first_runs(self) -> int:
        """Runs that answer within ``first_answer_seconds`` (whole chunks when large; at least MIN_RUNS)."""
        if self._rate is None:
            start = time.perf_counter()
            pipeline.run(self.scenario, runs=MIN_RUNS, seed=self.seed, exact=False)
            self._rate = MIN_RUNS / max(time.perf_counter() - start, 1e-6)
        runs = int(self._rate * self.first_answer_seconds)
        if runs >= CHUNK_SIZE:
            runs = runs // CHUNK_SIZE * CHUNK_SIZE
        return max(MIN_RUNS, min(runs, MAX_RUNS))

    def answer(self, values: dict[str, Any], runs: int | None = None) -> Answer:
        variant = self.variant(values)
        start = time.perf_counter()
        summary = pipeline.run(variant, simulate=False).exact  # within the kind's budget (a large party: None)
        if summary is not None:
            exact, used = True, None
        else:
            used = runs or self.first_runs()
            summary, exact = pipeline.run(variant, runs=used, seed=self.seed, exact=False).summary, False
        value = metric_value(summary, self.metric)
        interval = metric_interval(summary, self.metric)
        headline = []
        for m in headline_metrics(self.kind) or [self.metric]:
            try:
                v = metric_value(summary, m)
            except SimError:
                continue
            lo, hi = metric_interval(summary, m)
            headline.append((m, v, lo, hi))
        got = Answer(dict(values), summary, exact, used, time.perf_counter() - start, self.metric, value, interval,
                     headline)
        if not exact and not self.changes(values):
            self._baselines.setdefault(used, got)
        elif not exact:
            self.baseline_for(got)  # computed here, beside the variant (in the background when refining)
        return got

    def baseline_for(self, answer: Answer) -> Answer:
        """The baseline to compare ``answer`` with: the exact one when exact, otherwise the baseline simulated
        with the same seed and the same run count, so that both read the same random numbers run for run (common
        random numbers) and an unchanged variant shows no change at all."""
        if answer.exact or answer.runs is None or self.baseline.exact:
            return self.baseline
        if answer.runs not in self._baselines:
            self._baselines[answer.runs] = self.answer({}, runs=answer.runs)
        return self._baselines[answer.runs]

    def refine(self, answer: Answer) -> Answer | None:
        """The same variant with four times the runs (None when exact or at the cap)."""
        if answer.exact or answer.runs is None or answer.runs >= MAX_RUNS:
            return None
        return self.answer(answer.values, runs=min(MAX_RUNS, answer.runs * 4))

    def curve(self, answer: Answer) -> tuple[str, list[float], list[tuple[float, float]]] | None:
        spec = kinds.KINDS[self.kind].studio_curve
        if spec is None or not isinstance(answer.summary.get(spec[0]), list):
            return None
        key, title = spec
        values = [math.nan if v is None else float(v) for v in answer.summary[key]]
        bands = []
        for i in range(len(values)):
            try:
                bands.append(metric_interval(answer.summary, f"{key}.{i}"))
            except SimError:
                bands.append((math.nan, math.nan))
        return title, values, bands

    # ------------------------------------------------------------------ save

    def save(self, values: dict[str, Any], path: str | Path) -> Path:
        """Write the variant as a scenario file: the original text with the changes written in and a first
        comment listing them; the written file is validated before it replaces anything."""
        self.variant(values)  # refuse an invalid variant before writing
        source = Path(self.scenario.source)
        changes = self.changes(values)
        listing = "; ".join(f"{k}: {old} -> {new}" for k, old, new in changes) or "no changes"
        path = Path(path)
        text = variant_text(source, {k: new for k, _, new in changes},
                            f"Saved from the studio (base: {source.name}). Changes: {listing}", path)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
        return path

    def report(self, values: dict[str, Any], out_dir: str | Path, runs: int | None = None) -> Path:
        """The usual report of the variant, as ``python -m sim run variant.toml --no-runs`` writes it (simulated
        with the scenario's runs, exact overlay where known), made in this process by :func:`sim.pipeline.run`:
        ``out_dir/variant.toml`` and the folder ``out_dir/report/`` (the page confines both to its output
        folder first: sim/studio/security.py). Returns the report's path."""
        out_dir = Path(out_dir)
        report_dir = out_dir / "report"
        saved = self.save(values, out_dir / "variant.toml")
        variant = load_scenario(saved)  # the report names the saved file, as the command line's would
        with pipeline.owned_folder(report_dir, "run"):  # the lock and records `run` uses
            pipeline.run(variant, report_dir, runs=runs, write_runs=False)
        return report_dir / "report.html"
