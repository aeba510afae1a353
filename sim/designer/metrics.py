"""Summary metrics by name, with their 95% intervals, for any kind whose summary follows SCENARIOS.md.

A metric is a summary key (``escape_rate``) or an element of a list-valued key addressed by its
0-based index (``escape_by_round.7`` is round 8), ``-1`` or ``last`` for the last element, or by its
1-based round (or turn) number after ``@`` (``escape_by_round@8`` is the same element as ``.7``).

Intervals, in order of preference: the summary's own ``<key>_ci``; ``<key>_se`` as ±1.96 SE; a Wilson
interval over the runs for the by-round proportions that are shares of all runs (the kind's ``run_proportions``,
its kind object in sim/<kind>/kind.py).
An exact summary (``runs`` is None) has the degenerate interval [v, v]. Otherwise no interval (NaN).
"""

from __future__ import annotations

import math
import re
from typing import Any

from sim import kinds
from sim.errors import ScenarioError
from sim.labels import (  # noqa: F401 - the one metric table and number format (sim/labels.py), re-exported
    decimals_for,
    format_estimate,
    is_proportion,
    metric_label,
    metric_unit,
)
from sim.stats import Z95, wilson_interval

#: summary keys that describe how a result was made, not what it measured.
META_KEYS = frozenset({"kind", "name", "runs", "seed", "policy", "scenario_hash", "sim_version",
                       "numpy_version", "exact", "mean_turns"})

_METRIC = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\.(-?\d+|last)|@(\d+))?")


def _kind(name: str | None):
    """The registered kind called ``name``, or None (a summary of a kind this installation does not know)."""
    return kinds.KINDS.get(name) if isinstance(name, str) else None


def main_metric(kind: str) -> str:
    """The metric ``kind`` is judged by (its kind object's ``main_metric``; "" for an unknown kind)."""
    found = _kind(kind)
    return found.main_metric if found is not None else ""


def headline(kind: str) -> list[str]:
    """The headline metrics of ``kind`` (the comparison index, the studio), its main metric first; [] where the
    kind declares none."""
    found = _kind(kind)
    return list(found.headline) if found is not None else []


def run_proportions(kind: str | None) -> frozenset[str]:
    """The summary keys of ``kind`` whose values are shares of all runs (a Wilson interval over ``runs`` holds);
    a summary that names no registered kind: those of every kind."""
    found = _kind(kind)
    if found is None:
        return frozenset().union(*(k.run_proportions for k in kinds.all_kinds()))
    return found.run_proportions


def parse_metric(metric: str) -> tuple[str, int | None]:
    m = _METRIC.fullmatch(metric or "")
    if not m or (m.group(3) is not None and int(m.group(3)) < 1):
        raise ScenarioError(f"expected a summary key, optionally with a 0-based list index or a 1-based round "
                            f"(e.g. escape_by_round.7 or escape_by_round@8); given {metric!r}", key="--metric")
    if m.group(3) is not None:
        return m.group(1), int(m.group(3)) - 1
    index = m.group(2)
    if index is None:
        return m.group(1), None
    return m.group(1), -1 if index == "last" else int(index)


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _is_exact(summary: dict) -> bool:
    return summary.get("runs") is None or bool(summary.get("exact"))


def metric_value(summary: dict, metric: str) -> float:
    """The value of ``metric`` in ``summary`` (NaN where the summary holds None there).

    Raises ScenarioError naming the available metrics when the key or index does not exist."""
    base, index = parse_metric(metric)
    if base not in summary:
        raise ScenarioError(f"no metric {base!r} in the {summary.get('kind', '')} summary; available: "
                            f"{', '.join(available_metrics(summary))}", key="--metric")
    value = summary[base]
    if index is None:
        if isinstance(value, list):
            raise ScenarioError(f"{base!r} is a list of {len(value)}; address one element, e.g. "
                                f"{base}@{len(value)} (round {len(value)}) or {base}.last", key="--metric")
        if value is None:
            return math.nan
        if not _number(value):
            raise ScenarioError(f"{base!r} is not a number", key="--metric")
        return float(value)
    if not isinstance(value, list):
        raise ScenarioError(f"{base!r} is not a list; use it without an index", key="--metric")
    if not -len(value) <= index < len(value):
        raise ScenarioError(f"index {index} out of range: {base!r} has {len(value)} elements "
                            f"(0..{len(value) - 1}, or @1..@{len(value)})", key="--metric")
    element = value[index]
    if element is None:
        return math.nan
    if not _number(element):
        raise ScenarioError(f"{base}.{index} is not a number", key="--metric")
    return float(element)


def metric_interval(summary: dict, metric: str) -> tuple[float, float]:
    """The 95% interval of ``metric`` (see the module docstring); (NaN, NaN) where none is known."""
    base, index = parse_metric(metric)
    value = metric_value(summary, metric)
    if math.isnan(value):
        return math.nan, math.nan
    if _is_exact(summary):
        return value, value
    ci = summary.get(f"{base}_ci")
    se = summary.get(f"{base}_se")
    if index is not None:
        ci = ci[index] if isinstance(ci, list) and len(ci) == len(summary[base]) else None
        se = se[index] if isinstance(se, list) and len(se) == len(summary[base]) else None
    if isinstance(ci, list | tuple) and len(ci) == 2 and all(_number(c) for c in ci):
        return float(ci[0]), float(ci[1])
    runs = summary.get("runs")
    if base in run_proportions(summary.get("kind")) and _number(runs) and runs > 0 and 0 <= value <= 1:
        lo, hi = wilson_interval(value * runs, int(runs))
        return lo, hi
    if _number(se) and math.isfinite(se):
        return value - Z95 * se, value + Z95 * se
    return math.nan, math.nan


def half_width(summary: dict, metric: str) -> float:
    """The larger distance from the value to an end of its 95% interval (>= the usual (hi - lo) / 2;
    for a Wilson interval also >= the normal-approximation half-width 1.96 sqrt(p(1-p)/n))."""
    value = metric_value(summary, metric)
    lo, hi = metric_interval(summary, metric)
    if math.isnan(lo):
        raise ScenarioError(f"metric {metric!r} has no interval in the summary", key="--metric")
    width = max(value - lo, hi - value, (hi - lo) / 2)
    runs = summary.get("runs")
    if _number(runs) and runs > 0 and 0 <= value <= 1 and _wilson_like(summary, metric, value, lo, hi):
        width = max(width, Z95 * math.sqrt(value * (1 - value) / runs))
    return width


def _wilson_like(summary: dict, metric: str, value: float, lo: float, hi: float) -> bool:
    runs = int(summary["runs"])
    wlo, whi = wilson_interval(value * runs, runs)
    return abs(wlo - lo) < 1e-9 and abs(whi - hi) < 1e-9


def present_metrics(summary: dict, names) -> list[str]:
    """The metrics of ``names`` that ``summary`` holds (in order)."""
    out = []
    for m in names:
        try:
            metric_value(summary, m)
        except ScenarioError:
            continue
        out.append(m)
    return out


def available_metrics(summary: dict) -> list[str]:
    """Scalar metrics and list metrics (shown as ``key.N``) of a summary."""
    out = []
    for key, value in summary.items():
        if key in META_KEYS or key.endswith(("_ci", "_se")):
            continue
        if _number(value) or value is None:
            out.append(key)
        elif isinstance(value, list) and value and all(_number(v) or v is None for v in value):
            out.append(f"{key}.N")
    return out


def scalar_metrics(summary: dict) -> list[str]:
    """Every scalar metric of a summary (numbers or None; not provenance, intervals or SEs)."""
    return [k for k, v in summary.items()
            if k not in META_KEYS and not k.endswith(("_ci", "_se")) and (_number(v) or v is None)]


def param_unit(key: str) -> str:
    """A unit for a parameter's axis label, from the last part of its dotted key."""
    last = key.rsplit(".", 1)[-1]
    parent = key.rsplit(".", 2)[-2] if key.count(".") >= 1 else ""
    if last == "dc" or last == "target":
        return "DC"
    if parent == "scores":
        return "ability score"
    if parent == "abilities":
        return "ability value"
    if last in ("limit", "assist", "guide", "search", "per_round"):
        return "attention points"
    if "round" in last or last == "turns":
        return "rounds"
    if last == "level":
        return "character level"
    return "value"
