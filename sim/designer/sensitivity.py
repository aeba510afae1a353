"""Sensitivity: how much the main metric moves when each DC, ability score or ability moves one step.

Each parameter is moved one step down and one step up (where the scenario stays valid) with common random
numbers (same runs and seed as the baseline), and exactly where the kind supports it. The step is 1, and 2
for ability scores (``*.scores.*``): a score's modifier changes every two points, so a step of 1 can land on
the modifier's plateau and show no effect while the step the other way moves the metric. ``change_down`` and
``change_up`` are the metric's changes; the **effect** is the larger of the two in size (signed), and rows
are ranked by its size (exact where known). ``effect_se`` is the independent-samples bound
sqrt(se_step² + se_base²): with common random numbers the two estimates are positively correlated, so the
true error is smaller. ``within_noise`` marks a simulated effect whose 95% interval (effect ± 1.96 se)
contains 0: such an effect cannot be told apart from no effect at this run count.

Rows name the character, adversary or unit a key belongs to (``label``: ``Mira: scores.dex``) beside the
dotted key (``parameter``).

Which parameters: the kind's own choice where its kind object has a ``sensitivity_parameters`` hook (escape:
every tier DC on the path of the party's restraints, each tier present and the tiers it becomes, every party
member's scores, ``search.dc`` and ``attention.limit`` where set); else the integers whose dotted keys match its
``sensitivity_patterns`` (restraint: the binder's and the target's scores; campus: every PC's and adversary's
abilities and each mission's target; formation: the ambush representatives' values and each unit's combat and
evade); a kind with neither: every integer under a key named ``dc``, ``scores`` or ``abilities``.
"""

from __future__ import annotations

import fnmatch
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sim import kinds, report
from sim.designer.evaluate import evaluate, resolve_runs_seed
from sim.designer.metrics import Z95, main_metric, metric_interval, metric_unit, metric_value
from sim.designer.pages import sensitivity_answer, sensitivity_table
from sim.designer.params import get_value, scenario_data, with_values
from sim.errors import ScenarioError
from sim.palette import EXACT, series_colour

GENERIC_PARENTS = ("dc", "scores", "abilities")


def _leaves(node: Any, prefix: str = ""):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, f"{prefix}.{i}" if prefix else str(i))
    else:
        yield prefix, node


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def sensitivity_parameters(scenario) -> list[tuple[str, int]]:
    """The (dotted key, current value) pairs the sensitivity moves (module docstring)."""
    data = scenario_data(scenario)
    kind = kinds.get(scenario.kind)
    own = kind.sensitivity_parameters
    if own is not None:  # the kind chooses its keys (escape: the tier ladder on the party's way)
        return own(scenario, data)
    leaves = [(k, v) for k, v in _leaves(data) if _is_int(v)]
    patterns = kind.sensitivity_patterns
    if patterns:
        return [(k, v) for k, v in leaves if any(fnmatch.fnmatchcase(k, p) for p in patterns)]
    return [(k, v) for k, v in leaves if any(p in GENERIC_PARENTS for p in k.split(".")[:-1])
            or k.split(".")[-1] == "dc"]


def _point(scenario, key, value, metric, runs, seed, n_jobs, exact, options):
    try:
        variant = with_values(scenario, {key: value})
    except ScenarioError:
        return None
    ev = evaluate(variant, runs=runs, seed=seed, n_jobs=n_jobs, exact=exact, **options)
    return _read(ev, metric)


def _read(ev, metric):
    value = metric_value(ev.summary, metric)
    lo, hi = metric_interval(ev.summary, metric)
    se = (hi - lo) / (2 * Z95) if math.isfinite(lo) else math.nan
    ex = math.nan
    if ev.exact is not None:
        try:
            ex = metric_value(ev.exact, metric)
        except ScenarioError:
            pass
    return value, lo, hi, se, ex


def step_of(key: str) -> int:
    """2 for ability scores (the modifier changes every two points), else 1."""
    parts = key.split(".")
    return 2 if len(parts) >= 2 and parts[-2] == "scores" else 1


def parameter_label(scenario, key: str) -> str:
    """``party.0.scores.dex`` -> ``Mira: scores.dex`` (the member's, adversary's or unit's name)."""
    parts = key.split(".")
    if len(parts) >= 3 and parts[0] in ("party", "adversaries", "units", "missions") and parts[1].isdigit():
        items = getattr(scenario, parts[0], None) or []
        i = int(parts[1])
        name = getattr(items[i], "name", None) or getattr(items[i], "id", None) if i < len(items) else None
        if name:
            return f"{name}: {'.'.join(parts[2:])}"
    if parts[0] in ("binder", "target") and len(parts) >= 2:
        return f"{parts[0]}: {'.'.join(parts[1:])}"
    return key


def sensitivity(scenario, metric: str | None = None, runs: int | None = None, seed: int | None = None,
                n_jobs: int = 1, exact: bool = True, parameters: list[str] | None = None, progress=None,
                **options) -> pd.DataFrame:
    """One row per parameter, ranked by the size of its larger one-step effect (module docstring)."""
    metric = metric or main_metric(scenario.kind)
    runs, seed = resolve_runs_seed(scenario, runs, seed)
    params = _chosen_parameters(scenario, parameters) if parameters else sensitivity_parameters(scenario)
    if not params:
        raise ScenarioError("no DC, ability score or ability found to move", file=scenario.source)
    base_ev = evaluate(scenario, runs=runs, seed=seed, n_jobs=n_jobs, exact=exact, **options)
    base = _read(base_ev, metric)
    rows = []
    for i, (key, value) in enumerate(params):
        step = step_of(key)
        down = _point(scenario, key, value - step, metric, runs, seed, n_jobs, exact, options)
        up = _point(scenario, key, value + step, metric, runs, seed, n_jobs, exact, options)
        rows.append({"parameter": key, "label": parameter_label(scenario, key), "value": value, "step": step,
                     **_effect_row(base, down, up)})
        if progress:
            progress(i + 1, len(params), key)
    df = pd.DataFrame(rows)
    if df["exact_base"].isna().all():
        df = df.drop(columns=[c for c in df.columns if c.startswith("exact_")])
    rank = df["exact_effect"] if "exact_effect" in df else df["effect"]
    df = df.assign(_rank=rank.abs().fillna(-1)).sort_values("_rank", ascending=False, kind="stable")
    df = df.drop(columns="_rank").reset_index(drop=True)
    df.insert(0, "rank", np.arange(1, len(df) + 1))
    b_val, b_lo, b_hi, _, b_ex = base
    df.attrs.update(metric=metric, runs=runs, seed=seed, kind=scenario.kind, base=b_val, base_lo=b_lo,
                    base_hi=b_hi, base_exact=b_ex, name=scenario.name or scenario.slug)
    return df


def _chosen_parameters(scenario, parameters: list[str]) -> list[tuple[str, int]]:
    """(key, value) of the keys asked for: effective values (e.g. default tier DCs), integers only."""
    data = scenario_data(scenario)
    known = dict(sensitivity_parameters(scenario))  # effective values, e.g. default tier DCs
    params = []
    for key in parameters:
        v = known[key] if key in known else get_value(data, key, file=scenario.source)
        if not _is_int(v):
            raise ScenarioError(f"expected an integer value to move by a step; given {v!r}",
                                file=scenario.source, key=key)
        params.append((key, v))
    return params


def _effect_row(base: tuple, down: tuple | None, up: tuple | None) -> dict:
    """The metric one step down and up (None: the step leaves the key's valid range), the changes from the
    baseline ``base`` and the effect: the larger change, with its standard error (and the exact one)."""
    b_val, b_lo, b_hi, b_se, b_ex = base
    nan5 = (math.nan,) * 5
    d_val, d_lo, d_hi, d_se, d_ex = down or nan5
    u_val, u_lo, u_hi, u_se, u_ex = up or nan5
    ch_down, ch_up = d_val - b_val, u_val - b_val
    use_up = down is None or (up is not None and abs(ch_up) >= abs(ch_down))
    if down is None and up is None:
        effect = effect_se = math.nan
    elif use_up:
        effect, effect_se = ch_up, math.hypot(u_se, b_se)
    else:
        effect, effect_se = ch_down, math.hypot(d_se, b_se)
    ex_down, ex_up = d_ex - b_ex, u_ex - b_ex
    if math.isnan(ex_down) and math.isnan(ex_up):
        ex_effect = math.nan
    elif math.isnan(ex_down) or (not math.isnan(ex_up) and abs(ex_up) >= abs(ex_down)):
        ex_effect = ex_up
    else:
        ex_effect = ex_down
    noise = bool(math.isfinite(effect) and math.isfinite(effect_se) and abs(effect) <= Z95 * effect_se)
    return {
        "metric_down": d_val, "down_lo": d_lo, "down_hi": d_hi,
        "metric_base": b_val,
        "metric_up": u_val, "up_lo": u_lo, "up_hi": u_hi,
        "change_down": ch_down, "change_up": ch_up,
        "effect": effect, "effect_se": effect_se, "within_noise": noise,
        "exact_down": d_ex, "exact_base": b_ex, "exact_up": u_ex, "exact_effect": ex_effect,
    }


def tornado_chart(df: pd.DataFrame, out: Path, top: int = 20) -> Path:
    """Bars from the baseline to the metric one step down and one step up of each parameter, with 95%
    whiskers."""
    metric = df.attrs["metric"]
    part = df.head(top).iloc[::-1]
    height = max(3.0, 0.38 * len(part) + 1.5)
    fig, ax = report.new_figure(f"Sensitivity of {metric} (one step down / up)",
                                f"{metric} ({metric_unit(metric)})", "parameter", size=(8.5, height))
    base = df.attrs["base"]
    y = np.arange(len(part))
    for col, lo, hi, colour, label, offset in (
            ("metric_down", "down_lo", "down_hi", series_colour(1), "step down", -0.2),
            ("metric_up", "up_lo", "up_hi", series_colour(0), "step up", 0.2)):
        vals = part[col].to_numpy(dtype=float)
        ok = np.isfinite(vals)
        ax.barh(y[ok] + offset, vals[ok] - base, left=base, height=0.38, color=colour, label=label)
        err = np.vstack([vals - part[lo].to_numpy(dtype=float), part[hi].to_numpy(dtype=float) - vals])
        ok &= np.isfinite(err).all(axis=0)
        ax.errorbar(vals[ok], y[ok] + offset, xerr=np.abs(err[:, ok]), fmt="none", ecolor=EXACT, capsize=3,
                    label="95% interval" if offset > 0 else None)
    ax.axvline(base, color=EXACT, lw=1, label=f"baseline {base:.4g}")
    ax.set_yticks(y, [report.chart_text(f"{lab} ({v} ± {st})", 50) for lab, v, st in zip(part["label"], part["value"],
                                                                                         part["step"], strict=True)])
    report.legend_outside(ax)
    return report.save_figure(fig, Path(out) / "tornado.png")


def write_sensitivity(df: pd.DataFrame, out_dir: Path, scenario=None) -> list[Path]:
    """``sensitivity.csv``, ``tornado.png`` and ``report.html`` into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    report.atomic_write_text(out / "sensitivity.csv", df.to_csv(index=False))
    chart = tornado_chart(df, out)
    a = df.attrs
    note = (f"Each parameter moved one step down and up (ability scores by 2) with the same {a['runs']:,} runs "
            f"from seed {a['seed']} (common random numbers). The effect is the larger change of the two; the "
            "exact effect comes first where the kind solves the variants exactly. The simulated effect shows its "
            "95% half-width (an upper bound: independent samples), or 'within noise' when that interval holds 0.")

    sections = [sensitivity_answer(df, scenario),
                report.description_block(scenario.description) if scenario is not None else "",
                report.section("Ranked by the larger one-step effect", sensitivity_table(df, scenario), note=note),
                report.section("Tornado chart", image=chart.name,
                               alt="Tornado chart: the metric one step down and up of each parameter, with 95% "
                                   "whiskers"),
                report.paragraph(report.link("sensitivity.csv", "sensitivity.csv"))]
    meta = {"kind": a["kind"], "runs": a["runs"], "seed": a["seed"]}
    if scenario is not None:
        meta["scenario_hash"] = scenario.scenario_hash
    page = report.write_html(out / "report.html", f"Sensitivity — {a['name']}", sections, meta)
    return [out / "sensitivity.csv", chart, page]


def format_table(df: pd.DataFrame) -> str:
    """A plain-text ranked table for the terminal: step, the two changes, the effect and whether it is
    within noise (or its exact value)."""
    view = df.copy()
    view["noise"] = np.where(view["within_noise"], "within noise", "")
    if "exact_effect" in view:
        view.loc[view["exact_effect"].notna(), "noise"] = ""  # exact: no noise to speak of
    cols = ["rank", "label", "parameter", "value", "step", "change_down", "change_up", "effect", "effect_se"]
    if "exact_effect" in view:
        cols.append("exact_effect")
    cols.append("noise")
    fmt = {c: (lambda v: f"{v:.4f}") if c.endswith("_se") else (lambda v: f"{v:+.4f}")
           for c in ("change_down", "change_up", "effect", "effect_se", "exact_effect")}
    return view[cols].to_string(index=False, formatters={c: f for c, f in fmt.items() if c in cols})
