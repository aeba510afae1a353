"""Balance metrics of one simulation result: run-length spread, share of timeouts, first-check
advantage, and the tier or turn where most runs fail.

``balance_metrics(result)`` returns a dict with whichever of these apply to the result's kind:

- ``run_length``: over all runs, the rounds (turns) played: mean, sd, min, p10, p50, p90, max, iqr;
  ``run_length_success`` the same over successful runs (escape: escaped).
- ``timeout_share`` with ``timeout_share_ci`` (escape: runs that reached ``max_rounds``).
- ``first_check_advantage`` (escape): P(escape | at least one check succeeded in round 1) − P(escape | every
  round-1 check failed), over runs that made a check in round 1, with a 95% normal interval. Round 1 is
  read from a one-round replay of the same seed and runs: with R-GEN-7 seeding, round 1 draws the same
  uniform block whatever ``max_rounds`` is, so the replay's round 1 is the result's round 1.
  (restraint) ``first_mover_advantage``: the main metric with the binder acting first minus with the target
  acting first, with common random numbers.
- ``failure_tier`` (escape): among runs that did not escape, the tier holding the characters longest (per
  run, the tier with the most character-rounds as the highest goal tier), the most common one, with the
  share of failed runs it holds; ``failure_tiers`` all shares. ``failure_round`` (restraint): the round in
  which most duels end with the target taken out (incapacitated or arms complete), ``taken_out_round`` the
  spread of that round over the duels that end so; (campus) ``failure_turn``: the turn with most captures.

:func:`balance_table` turns the dict into a two-column table; :func:`balance_section` into a report
section (``sim.report.section``) that a kind's ``write_report`` can append.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from sim.stats import Z95, wilson_interval


def spread(values) -> dict[str, float] | None:
    """Mean, sd, min, p10, p50, p90, max and inter-quartile range of a sample (None when empty)."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return None
    q10, q25, q50, q75, q90 = np.percentile(x, [10, 25, 50, 75, 90])
    return {"mean": float(x.mean()), "sd": float(x.std(ddof=1)) if x.size > 1 else 0.0, "min": float(x.min()),
            "p10": float(q10), "p50": float(q50), "p90": float(q90), "max": float(x.max()), "iqr": float(q75 - q25)}


def spread_from_counts(counts) -> dict[str, float] | None:
    """:func:`spread` of a sample given as a histogram (``counts[v]`` = how often value v occurred)."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if total == 0:
        return None
    values = np.arange(len(counts), dtype=float)
    mean = float((values * counts).sum() / total)
    var = float(((values - mean) ** 2 * counts).sum() / (total - 1)) if total > 1 else 0.0
    cum = np.cumsum(counts)

    def q(f):  # the percentile by linear interpolation between order statistics, as np.percentile
        pos = f * (total - 1)
        lo, hi = int(np.floor(pos)), int(np.ceil(pos))
        vlo, vhi = values[np.searchsorted(cum, lo + 1)], values[np.searchsorted(cum, hi + 1)]
        return float(vlo + (vhi - vlo) * (pos - lo))

    nz = np.flatnonzero(counts)
    return {"mean": mean, "sd": var**0.5, "min": float(nz[0]), "p10": q(0.10), "p50": q(0.50), "p90": q(0.90),
            "max": float(nz[-1]), "iqr": q(0.75) - q(0.25)}


def _difference(success: np.ndarray, group: np.ndarray) -> dict[str, Any] | None:
    """P(success | group) − P(success | not group) with a 95% normal interval."""
    n1, n0 = int(group.sum()), int((~group).sum())
    if n1 == 0 or n0 == 0:
        return None
    p1, p0 = float(success[group].mean()), float(success[~group].mean())
    se = math.sqrt(p1 * (1 - p1) / n1 + p0 * (1 - p0) / n0)
    d = p1 - p0
    return {"value": d, "ci": [d - Z95 * se, d + Z95 * se], "p_after_success": p1, "p_after_failure": p0,
            "n_after_success": n1, "n_after_failure": n0}


def _restraint(result, replay: bool) -> dict[str, Any]:
    from sim.designer.metrics import main_metric, metric_value

    s = result.summary
    out: dict[str, Any] = {}
    either = np.asarray(s.get("incapacitated_or_arms_complete_by_round") or [], dtype=float)
    if either.size and either[-1] > 0:
        new = np.diff(np.concatenate([[0.0], either]))
        out["failure_round"] = int(new.argmax()) + 1
        out["failure_round_share"] = float(new.max())
    runs = result.runs
    agg = result.extra.get("aggregate")
    if "first_incapacitated_round" in runs and len(runs):
        never = np.iinfo(np.int64).max
        rounds = [runs[c].to_numpy(dtype=np.int64) for c in ("first_incapacitated_round", "first_arms_complete_round")]
        first = np.minimum.reduce([np.where(r > 0, r, never) for r in rounds])
        taken = first < never
        out["taken_out_round"] = spread(first[taken])
    elif agg is not None:  # a streamed result: runs by the first round taken out (index 0 = never)
        counts = np.asarray(agg.taken_out, dtype=np.int64).copy()
        counts[0] = 0
        out["taken_out_round"] = spread_from_counts(counts)
    if replay and s.get("seed") is not None and result.scenario is not None:
        import sim
        from sim.designer.params import with_values

        metric = main_metric("restraint")
        values = {}
        for who in ("binder", "target"):
            variant = with_values(result.scenario, {"target.initiative": who})
            summary = sim.simulate(variant, runs=s["runs"], seed=s["seed"], keep_runs=False).summary  # only its summary
            values[who] = metric_value(summary, metric)
        out["first_mover_advantage"] = {"metric": metric, "value": values["binder"] - values["target"],
                                        "binder_first": values["binder"], "target_first": values["target"]}
    return out


def _campus(result) -> dict[str, Any]:
    s = result.summary
    out: dict[str, Any] = {}
    captures = np.asarray([v or 0.0 for v in s.get("capture_by_turn") or []], dtype=float)
    if captures.size and captures.max() > 0:
        out["failure_turn"] = int(captures.argmax()) + 1
        out["failure_turn_captures"] = float(captures.max())
    runs = result.runs
    ends = [c for c in runs.columns if c.endswith("_end_turn")]
    agg = result.extra.get("aggregate")
    if ends:
        out["run_length"] = spread(runs[ends].to_numpy().ravel())
    elif agg is not None and hasattr(agg, "end_turn_counts"):  # streamed: the end-turn histogram of every PC
        out["run_length"] = spread_from_counts(agg.end_turn_counts.sum(axis=0))
    return out


def escape_from_aggregate(agg) -> dict[str, Any]:
    """Balance metrics of a streamed escape result from its aggregate (``sim.escape.aggregate``): run-length
    spread, timeout share, first-check advantage (escape rate after a round-1 success minus after round-1
    failures) and the tier where most failed runs were held. Kept here so that this module needs nothing
    from the escape report (which uses :func:`balance_table`)."""
    from sim.escape.model import TIER_IDS

    n = agg.runs
    out: dict[str, Any] = {"run_length": spread_from_counts(agg.rounds_all),
                           "run_length_success": spread_from_counts(agg.escaped_at)}
    timeouts = int(agg.outcomes[3])
    out["timeout_share"] = timeouts / n
    out["timeout_share_ci"] = wilson_interval(timeouts, n)
    fr = agg.first_round  # rows: no check, checks without success, a success; columns: not escaped, escaped
    n1, n0 = int(fr[2].sum()), int(fr[1].sum())
    if n1 and n0:
        p1, p0 = fr[2, 1] / n1, fr[1, 1] / n0
        se = float(np.sqrt(p1 * (1 - p1) / n1 + p0 * (1 - p0) / n0))
        d = float(p1 - p0)
        out["first_check_advantage"] = {"value": d, "ci": [d - Z95 * se, d + Z95 * se], "p_after_success": float(p1),
                                        "p_after_failure": float(p0), "n_after_success": n1, "n_after_failure": n0,
                                        "runs_with_a_round_1_check": n1 + n0}
    failed = int(agg.failure_tiers.sum())
    if failed:
        shares = {TIER_IDS[t]: float(c / failed) for t, c in enumerate(agg.failure_tiers) if c > 0}
        top = max(shares, key=shares.get)
        out["failure_tier"], out["failure_tier_share"], out["failure_tiers"] = top, shares[top], shares
    else:
        out["failure_tier"] = None
    return out


def balance_metrics(result, replay: bool = True) -> dict[str, Any]:
    """The balance metrics that apply to ``result``'s kind (module docstring). ``replay=False`` skips
    the metrics that need a second simulation (first-check / first-mover advantage)."""
    kind = result.summary.get("kind")
    if kind == "escape":
        return escape_from_aggregate(result.extra["aggregate"])  # every escape result carries its aggregate
    if kind == "restraint":
        return _restraint(result, replay)
    if kind == "campus":
        return _campus(result)
    out: dict[str, Any] = {}
    runs = result.runs
    for col in ("rounds", "skirmish_rounds"):
        if col in runs:
            out["run_length"] = spread(runs[col].to_numpy())
            break
    else:  # a streamed result (empty runs): the rounds histogram of its aggregate (formation)
        counts = getattr(result.extra.get("aggregate"), "rounds_counts", None)
        if counts is not None:
            out["run_length"] = spread_from_counts(counts)
    return out


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


def balance_section(result, metrics: dict[str, Any] | None = None) -> str:
    """An HTML report section with the balance metrics of ``result``."""
    from sim.designer.pages import balance_block
    from sim.report import section

    metrics = balance_metrics(result) if metrics is None else metrics
    note = ("Run length: rounds played per run. First-check advantage: how much the first round's luck decides "
            "the outcome. Failure tier/round/turn: where the runs that fail get stuck.")
    return section("Balance", balance_block(metrics), note=note)
