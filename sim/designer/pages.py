"""Page assembly of the designer tools' reports (sweep, sensitivity): plain-language headers, values with
the precision their interval supports, the question and its answer first. The computations stay in
``sweep.py`` and ``sensitivity.py``; these functions only turn their frames into report blocks."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from sim.designer.balance import balance_metrics
from sim.designer.metrics import metric_unit
from sim.labels import fixed, metric_label, param_label, points
from sim.pages import balance_block, balance_table  # noqa: F401 - the kinds' reports use them too
from sim.report import answer, fmt_exact, fmt_num, fmt_pct, key_label, section, table


def _finite(v) -> bool:
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def estimate(metric: str, v, lo=None, hi=None) -> str:
    """``v`` with its interval (percent for probabilities)."""
    ci = (lo, hi) if _finite(lo) and _finite(hi) else None
    return fmt_pct(v, ci) if metric_unit(metric) == "probability" else fmt_num(v, ci)


def exact_text(metric: str, v) -> str:
    return fmt_exact(v, percent=metric_unit(metric) == "probability") if _finite(v) else "–"


def _param_value(v) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def sweep_table(df: pd.DataFrame, scenario=None):
    """One row per grid point: parameter values, the main metric with its interval and exact value."""
    params, main = df.attrs["params"], df.attrs["metric"]
    has_exact = f"{main}_exact" in df and df[f"{main}_exact"].notna().any()
    columns = [key_label(param_label(p, scenario), p) for p in params]
    columns.append(key_label(f"{metric_label(main)} (95% interval)", main))
    if has_exact:
        columns.append("exact")
    rows = []
    for _, r in df.iterrows():
        row = [_param_value(r[p]) for p in params]
        row.append(estimate(main, r[main], r.get(f"{main}_lo"), r.get(f"{main}_hi")))
        if has_exact:
            row.append(exact_text(main, r[f"{main}_exact"]))
        rows.append(row)
    return table(columns, rows)


def sweep_answer(df: pd.DataFrame, scenario=None):
    params, main = df.attrs["params"], df.attrs["metric"]
    values = df[main].astype(float)
    lo_i, hi_i = values.idxmin(), values.idxmax()

    def at(i):
        r = df.loc[i]
        where = ", ".join(f"{param_label(p, scenario)} = {_param_value(r[p])}" for p in params)
        return f"{estimate(main, r[main], r.get(f'{main}_lo'), r.get(f'{main}_hi'))} at {where}"

    question = f"How does {metric_label(main)} change with {', '.join(param_label(p, scenario) for p in params)}?"
    lines = [f"It ranges from {at(lo_i)} to {at(hi_i)}.",
             f"{len(df)} grid points, each {df.attrs['runs']:,} runs from seed {df.attrs['seed']} (common random "
             "numbers; 95% intervals in brackets)."]
    return answer(question, lines)


SENSITIVITY_COLUMNS = {
    "rank": "rank", "value": "value now", "step": "step", "metric_down": "metric one step down",
    "metric_base": "metric now", "metric_up": "metric one step up", "change_down": "change down",
    "change_up": "change up", "effect": "effect (larger change)", "effect_se": "± se",
    "within_noise": "within noise", "exact_effect": "exact effect",
}


def sensitivity_table(df: pd.DataFrame, scenario=None):
    """The ranked parameters, narrow enough for the page: the exact effect first where known, then the simulated
    effect (its 95% half-width, or "within noise" when that interval holds 0), then the metric one step down and
    up. The metric at the scenario's values is in the answer above the table."""
    metric = df.attrs["metric"]
    prob = metric_unit(metric) == "probability"
    has_exact = "exact_effect" in df and df["exact_effect"].notna().any()

    def amount(v, signed=True):
        if not _finite(v):
            return "–"
        return points(v, 2, signed) if prob else (
            f"{v:+.4g}" if signed else f"{v:.4g}")

    header = ["#", "parameter", "value (step)"] + (["exact effect"] if has_exact else []) + [
        "simulated effect", "one step down", "one step up"]
    rows = []
    for _, r in df.iterrows():
        if not _finite(r.get("effect")):
            simulated = "–"
        elif bool(r.get("within_noise", False)):
            simulated = f"within noise ({amount(r['effect'])})"
        else:
            simulated = f"{amount(r['effect'])} ± {amount(1.96 * r['effect_se'], signed=False)}"
        row = [str(r["rank"]), key_label(param_label(str(r["parameter"]), scenario), str(r["parameter"])),
               f"{r['value']:g} (± {r['step']:g})"]
        if has_exact:
            row.append(amount(r.get("exact_effect")))
        row += [simulated,
                estimate(metric, r["metric_down"], r.get("down_lo"), r.get("down_hi"))
                if _finite(r["metric_down"]) else "–",
                estimate(metric, r["metric_up"], r.get("up_lo"), r.get("up_hi"))
                if _finite(r["metric_up"]) else "–"]
        rows.append(row)
    return table(header, rows)


def sensitivity_answer(df: pd.DataFrame, scenario=None):
    a = df.attrs
    metric = a["metric"]
    lines = [f"At the scenario's values: {estimate(metric, a['base'], a.get('base_lo'), a.get('base_hi'))}."]
    if len(df):
        top = df.iloc[0]
        change = top.get("exact_effect", top.get("effect"))
        if not _finite(change):
            change = top.get("effect")
        if _finite(change):
            prob = metric_unit(metric) == "probability"
            amount = f"{fixed(100 * change, 2, signed=True)} percentage points" if prob else f"{change:+.4g}"
            exact = _finite(top.get("exact_effect"))
            noise = " (within noise)" if bool(top.get("within_noise", False)) and not exact else ""
            lines.insert(0, f"Most influential: {param_label(str(top['parameter']), scenario)} "
                            f"({'exactly ' if exact else ''}{amount} for one step of {top.get('step', 1):g}){noise}.")
    return answer(f"Which parameters move {metric_label(metric)} most?", lines)




def balance_section(result, metrics: dict[str, Any] | None = None) -> str:
    """An HTML report section with the balance metrics of ``result``."""
    metrics = balance_metrics(result) if metrics is None else metrics
    note = ("Run length: rounds played per run. First-check advantage: how much the first round's luck decides "
            "the outcome. Failure tier/round/turn: where the runs that fail get stuck.")
    return section("Balance", balance_block(metrics), note=note)


__all__ = ["balance_block", "balance_section", "balance_table", "estimate", "exact_text", "sensitivity_answer",
           "sensitivity_table", "sweep_answer", "sweep_table"]
