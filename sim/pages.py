"""Page pieces shared by the kinds' reports and the designer's pages (a foundation module: it imports no kind and
no tool): the balance metrics as a table."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from sim.labels import metric_label
from sim.report import fmt_pct, key_label, table


def balance_table(metrics: dict[str, Any]) -> pd.DataFrame:
    """Two columns, ``metric`` and ``value``, readable in a report."""
    rows = []

    def fmt(v):
        return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.4g}"

    for key, value in metrics.items():
        if value is None:
            rows.append((key, "–"))
        elif key in ("run_length", "run_length_success", "taken_out_round"):
            rows.append((key, f"mean {fmt(value['mean'])}, sd {fmt(value['sd'])}, p10–p50–p90 "
                              f"{fmt(value['p10'])}–{fmt(value['p50'])}–{fmt(value['p90'])}, "
                              f"range {fmt(value['min'])}–{fmt(value['max'])}"))
        elif key in ("first_check_advantage",):
            rows.append((key, f"{value['value']:+.4f} [{value['ci'][0]:+.4f}, {value['ci'][1]:+.4f}] "
                              f"(P(escape) {value['p_after_success']:.4f} after a round-1 success, "
                              f"{value['p_after_failure']:.4f} after none)"))
        elif key == "first_mover_advantage":
            rows.append((key, f"{value['value']:+.4f} ({value['metric']}: binder first "
                              f"{value['binder_first']:.4f}, target first {value['target_first']:.4f})"))
        elif key.endswith("_ci"):
            continue
        elif key == "timeout_share":
            ci = metrics.get("timeout_share_ci", [math.nan, math.nan])
            rows.append((key, f"{value:.4f} [{ci[0]:.4f}, {ci[1]:.4f}]"))
        elif isinstance(value, dict):
            rows.append((key, ", ".join(f"{k} {fmt(v)}" for k, v in value.items())))
        elif isinstance(value, float):
            rows.append((key, fmt(value)))
        else:
            rows.append((key, str(value)))
    return pd.DataFrame(rows, columns=["metric", "value"])


def balance_block(metrics: dict):
    """The balance metrics as a table: plain-language names (key in small type), shares as percentages with
    their intervals, spreads as mean, sd and percentiles."""
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


__all__ = ["balance_block", "balance_table"]
