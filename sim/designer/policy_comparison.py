"""Policy comparison for every kind: one scenario under several policy settings, common random numbers.

``python -m sim compare SCENARIO`` runs the scenario once per policy setting with the same seed and run
count, then writes ``compare.html``, ``compare.json`` and a chart of the kind's main metric per setting.
Escape has its own, richer comparison (paired per-run differences, action counts:
:mod:`sim.escape.policy_comparison`); this module serves the other kinds.

The settings a kind offers are read from its scenario model: every ``[policy]`` field whose type is a
choice (a ``Literal`` or a boolean) with more than one value. ``--policies`` lists the settings to
compare, each either a bare value of the kind's leading setting (its kind object's ``leading_policy``, e.g.
``counter`` for the
campus stance) or ``field=value`` (``rescue=true``); without ``--policies`` every value of the leading
setting is compared. A kind with no choice at all is refused with a one-line message.
"""

from __future__ import annotations

import math
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim import kinds, pipeline
from sim.designer.metrics import headline, main_metric, metric_interval, metric_value, present_metrics
from sim.designer.params import with_values
from sim.designer.scenario_comparison import metric_chart
from sim.errors import ScenarioError, SimError
from sim.report import atomic_write_text, section, summary_json, table_html, write_html
from sim.result import provenance
from sim.scenario import run_settings
from sim.stats import Z95


def policy_choices(scenario) -> dict[str, list[Any]]:
    """Each ``[policy]`` field with a fixed set of values (Literal or bool) -> its values, in model order."""
    model = type(getattr(scenario, "policy", None))
    fields = getattr(model, "model_fields", {})
    out: dict[str, list[Any]] = {}
    for name, info in fields.items():
        ann = info.annotation
        if typing.get_origin(ann) is typing.Literal:
            out[name] = list(typing.get_args(ann))
        elif ann is bool:
            out[name] = [False, True]
    return out


def _value_text(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def describe_choices(scenario) -> str:
    choices = policy_choices(scenario)
    return "; ".join(f"{k}={'|'.join(_value_text(v) for v in vals)}" for k, vals in choices.items()) or "none"


def comparable(scenario) -> bool:
    """Whether the kind offers more than one policy setting to compare."""
    return any(len(v) > 1 for v in policy_choices(scenario).values())


def _comparable_kinds(but: str) -> str:
    """The other kinds ``compare`` takes, for a refusal: "escape (policy.name), campus (policy.stance) and ..."."""
    names = [f"{k.name} (policy.{k.leading_policy or 'name'})" for k in kinds.all_kinds()
             if k.name != but and (k.own_compare or k.leading_policy)]
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def parse_variants(scenario, text: str | None) -> list[tuple[str, str, Any]]:
    """``--policies`` -> [(label, field, value)]; None -> every value of the leading setting."""
    choices = policy_choices(scenario)
    kind = scenario.kind
    leading = kinds.get(kind).leading_policy  # the field a bare value sets
    if not comparable(scenario):
        raise SimError(f"{scenario.source}: compare needs a choice of policies; a {kind} scenario has one "
                       f"(policy.{describe_choices(scenario).replace('=', ' = ')}); compare supports "
                       f"{_comparable_kinds(kind)}")
    if leading not in choices or len(choices.get(leading, [])) < 2:
        leading = next(k for k, v in choices.items() if len(v) > 1)
    if text is None:
        return [(_value_text(v), leading, v) for v in choices[leading]]
    out = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            raise ScenarioError(f"expected a comma-separated list of policy settings; given {text!r}",
                                file=scenario.source, key="--policies")
        fname, _, raw = part.partition("=") if "=" in part else (leading, "=", part)
        fname, raw = fname.strip(), raw.strip()
        if fname.startswith("policy."):
            fname = fname[len("policy."):]
        if fname not in choices:
            raise ScenarioError(f"no policy setting {fname!r} for {kind}; compare supports "
                                f"{describe_choices(scenario)}", file=scenario.source, key="--policies")
        match = [v for v in choices[fname] if _value_text(v) == raw.lower()]
        if not match:
            raise ScenarioError(f"{fname} must be one of {', '.join(_value_text(v) for v in choices[fname])}; "
                                f"given {raw!r}", file=scenario.source, key="--policies")
        label = _value_text(match[0]) if fname == leading else f"{fname}={_value_text(match[0])}"
        out.append((label, fname, match[0]))
    labels = [label for label, _, _ in out]
    for i, label in enumerate(labels):
        if label in labels[:i]:
            raise ScenarioError(f"expected each policy setting once; given {label!r} twice",
                                file=scenario.source, key="--policies")
    return out


@dataclass
class PolicyComparison:
    scenario: Any
    runs: int
    seed: int
    labels: list[str]
    settings: dict[str, dict[str, Any]]  # label -> {policy field: value}
    summaries: dict[str, dict[str, Any]]
    metrics: list[str]
    differences: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        rows = {}
        for label in self.labels:
            s = self.summaries[label]
            rows[label] = {"settings": self.settings[label],
                           **{m: _metric_entry(s, m) for m in self.metrics}}
        return {"kind": self.scenario.kind, "name": self.scenario.name, "runs": self.runs, "seed": self.seed,
                "baseline": self.labels[0], "policies": self.labels, "metrics": self.metrics,
                "results": rows, "differences": self.differences,
                **{k: v for k, v in provenance(self.scenario, self.seed, self.runs).items()
                   if k not in ("seed", "runs")}}


def _metric_entry(summary: dict, metric: str) -> dict[str, Any]:
    value = metric_value(summary, metric)
    lo, hi = metric_interval(summary, metric)
    clean = [None if math.isnan(x) else x for x in (value, lo, hi)]
    return {"value": clean[0], "ci": None if clean[1] is None else [clean[1], clean[2]]}


def _metrics_of(summary: dict) -> list[str]:
    names = headline(summary.get("kind", "")) or [main_metric(summary.get("kind", ""))]
    return present_metrics(summary, names)


def compare_policies(scenario, policies: str | None = None, runs: int | None = None, seed: int | None = None,
                     n_jobs: int = 1) -> PolicyComparison:
    """Simulate ``scenario`` once per policy setting (same seed and runs: common random numbers)."""
    variants = parse_variants(scenario, policies)
    runs, seed = run_settings(scenario, runs, seed)
    built = {label: with_values(scenario, {f"policy.{fname}": value}) for label, fname, value in variants}
    summaries = {label: pipeline.run(s, runs=runs, seed=seed, n_jobs=n_jobs, exact=False).summary
                 for label, s in built.items()}
    labels = [label for label, _, _ in variants]
    metrics = _metrics_of(summaries[labels[0]])
    res = PolicyComparison(scenario, runs, seed, labels, {label: {f: v} for label, f, v in variants}, summaries,
                           metrics)
    base = summaries[labels[0]]
    for label in labels[1:]:
        res.differences[label] = {m: difference(base, summaries[label], m) for m in metrics}
    return res


def difference(base: dict, other: dict, metric: str) -> dict[str, Any]:
    """``other - base`` with a 95% interval from the two intervals as if independent. Both runs read the same
    dice (common random numbers), which correlates them positively, so this interval is conservative."""
    v0, v1 = metric_value(base, metric), metric_value(other, metric)
    (l0, h0), (l1, h1) = metric_interval(base, metric), metric_interval(other, metric)
    if any(math.isnan(x) for x in (v0, v1, l0, h0, l1, h1)):
        return {"difference": None if math.isnan(v1 - v0) else v1 - v0, "ci": None}
    se = math.hypot((h0 - l0) / (2 * Z95), (h1 - l1) / (2 * Z95))
    d = v1 - v0
    return {"difference": d, "ci": [d - Z95 * se, d + Z95 * se],
            "within_noise": bool(d - Z95 * se <= 0 <= d + Z95 * se)}


def write_policy_report(res: PolicyComparison, out_dir: Path) -> list[Path]:
    """compare.html, compare.json and one chart per headline metric in ``out_dir``."""
    import pandas as pd

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for label in res.labels:
        s = res.summaries[label]
        row: dict[str, Any] = {"scenario": label}
        for m in res.metrics:
            e = _metric_entry(s, m)
            row[m] = math.nan if e["value"] is None else e["value"]
            row[f"{m}_lo"], row[f"{m}_hi"] = (e["ci"] or [math.nan, math.nan])
        rows.append(row)
    df = pd.DataFrame(rows)
    written = [metric_chart(df, m, out, rows="policy") for m in res.metrics]
    table = pd.DataFrame([{"policy": label, **{m: _cell(res.summaries[label], m) for m in res.metrics}}
                          for label in res.labels])
    diff_rows = []
    for label in res.labels[1:]:
        row = {"policy": f"{label} − {res.labels[0]}"}
        for m in res.metrics:
            d = res.differences[label][m]
            row[m] = "–" if d["difference"] is None else (
                f"{d['difference']:+.4f}" + (f" [{d['ci'][0]:+.4f}, {d['ci'][1]:+.4f}]" if d["ci"] else "")
                + (" (within noise)" if d.get("within_noise") else ""))
        diff_rows.append(row)
    atomic_write_text(out / "compare.json", summary_json(res.as_dict()))
    written.append(out / "compare.json")
    scen = res.scenario
    sections = [
        section("Headline by policy", table_html(table, index=False),
                note=f"Every policy ran the same {res.runs:,} runs with seed {res.seed} (common random numbers). "
                     "Values with their 95% intervals."),
        section(f"Difference to {res.labels[0]}", table_html(pd.DataFrame(diff_rows), index=False),
                note="Intervals combine the two 95% intervals as if independent; the runs share their dice, "
                     "so the true interval of the difference is narrower. 'within noise': the interval "
                     "contains 0."),
    ]
    sections += [section(f"{m} by policy", image=p.name) for m, p in zip(res.metrics, written, strict=False)]
    title = f"{scen.kind.capitalize()} policies compared — {scen.name or scen.slug}"
    summary = {"kind": scen.kind, "runs": res.runs, "seed": res.seed, **provenance(scen, res.seed, res.runs)}
    written.append(write_html(out / "compare.html", title, sections, summary))
    return written


def _cell(summary: dict, metric: str) -> str:
    e = _metric_entry(summary, metric)
    if e["value"] is None:
        return "–"
    text = f"{e['value']:.4f}"
    if e["ci"] is not None and e["ci"][0] != e["ci"][1]:
        text += f" [{e['ci'][0]:.4f}, {e['ci'][1]:.4f}]"
    return text
