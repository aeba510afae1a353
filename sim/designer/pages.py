"""Page assembly of the designer tools' reports (sweep, sensitivity): plain-language headers, values with
the precision their interval supports, the question and its answer first. The computations stay in
``sweep.py`` and ``sensitivity.py``; these functions only turn their frames into report blocks."""

from __future__ import annotations

import math

import pandas as pd

from sim.designer.metrics import metric_unit
from sim.labels import metric_label, param_label
from sim.report import answer, fmt_exact, fmt_num, fmt_pct, key_label, table


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
    """The ranked parameters with plain-language names (members by name) and readable numbers; columns the
    computation adds later are shown with their key humanised."""
    metric = df.attrs["metric"]
    prob = metric_unit(metric) == "probability"
    hidden = {"down_lo", "down_hi", "up_lo", "up_hi", "exact_down", "exact_base", "exact_up", "label"}
    cols = [c for c in df.columns if c not in hidden and not c.endswith(("_lo", "_hi"))]
    header = []
    for c in cols:
        if c == "parameter":
            header.append("parameter")
        else:
            header.append(key_label(SENSITIVITY_COLUMNS.get(c, c.replace("_", " ")), c))
    rows = []
    for _, r in df.iterrows():
        row = []
        for c in cols:
            v = r[c]
            if c == "parameter":
                row.append(key_label(param_label(str(v), scenario), str(v)))
            elif c.startswith(("metric_", "exact_")) and c != "exact_effect" and _finite(v):
                lo, hi = (r.get("down_lo"), r.get("down_hi")) if c == "metric_down" else \
                    (r.get("up_lo"), r.get("up_hi")) if c == "metric_up" else (None, None)
                row.append(estimate(metric, v, lo, hi))
            elif isinstance(v, float):
                if not _finite(v):
                    row.append("–")
                elif prob and c not in ("value", "step"):
                    row.append(f"{100 * v:+.2f} pp" if c != "effect_se" else f"{100 * v:.2f} pp")
                else:
                    row.append(f"{v:+.4g}" if c not in ("value", "step") else f"{v:g}")
            else:
                row.append(str(v))
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
            amount = f"{100 * change:+.2f} percentage points" if metric_unit(metric) == "probability" \
                else f"{change:+.4g}"
            noise = " (within noise)" if bool(top.get("within_noise", False)) and not _finite(
                top.get("exact_effect")) else ""
            lines.insert(0, f"Most influential: {param_label(str(top['parameter']), scenario)} ({amount} for one "
                            f"step of {top.get('step', 1):g}){noise}.")
    return answer(f"Which parameters move {metric_label(metric)} most?", lines)




def balance_block(metrics: dict):
    """The balance metrics as a table: plain-language names (key in small type), shares as percentages with
    their intervals, spreads as mean, sd and percentiles."""
    from sim.designer.balance import balance_table

    base = dict(zip(balance_table(metrics)["metric"], balance_table(metrics)["value"], strict=True))
    rows = []
    for key, text in base.items():
        value = metrics.get(key)
        if key == "timeout_share":
            text = fmt_pct(value, metrics.get("timeout_share_ci"))
        elif key == "first_check_advantage" and isinstance(value, dict):
            ci = value["ci"]
            text = (f"{100 * value['value']:+.1f} percentage points ({100 * ci[0]:+.1f} to {100 * ci[1]:+.1f}): "
                    f"P(escape) {fmt_pct(value['p_after_success'])} after a round-1 success, "
                    f"{fmt_pct(value['p_after_failure'])} after none")
        elif key == "first_mover_advantage" and isinstance(value, dict):
            text = (f"{100 * value['value']:+.1f} percentage points ({metric_label(value['metric'])}: binder first "
                    f"{fmt_pct(value['binder_first'])}, target first {fmt_pct(value['target_first'])})")
        elif key in ("failure_tier_share", "failure_round_share") and isinstance(value, float):
            text = fmt_pct(value)
        elif key == "failure_tiers" and isinstance(value, dict):
            text = ", ".join(f"{k} {fmt_pct(v, decimals=0)}" for k, v in value.items())
        rows.append([key_label(metric_label(key), key), text])
    return table(["balance metric", "value"], rows)


__all__ = ["balance_block", "estimate", "exact_text", "sensitivity_answer", "sensitivity_table", "sweep_answer",
           "sweep_table"]
