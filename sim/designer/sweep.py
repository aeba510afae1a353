"""Parameter sweeps: a grid over any scenario values by dotted key, with common random numbers.

``sweep(scenario, axes, runs, seed)`` returns one row per grid point: the parameter values, then every
scalar summary metric with its 95% interval (``<metric>``, ``<metric>_lo``, ``<metric>_hi``) and, where the
kind solves the variant exactly, ``<metric>_exact``. The main metric of the kind is always included (for a
list-valued main metric, e.g. restraint's, as ``key.last``). ``write_sweep`` writes ``sweep.csv``, charts
(metric against parameter with interval bands; a heat map for two parameters) and ``report.html``.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sim import report
from sim.designer.evaluate import evaluate, resolve_runs_seed
from sim.designer.metrics import main_metric, metric_unit, param_unit, scalar_metrics
from sim.designer.pages import sweep_answer, sweep_table
from sim.designer.params import GridAxis, parse_axis, with_values
from sim.errors import ScenarioError
from sim.labels import format_value, metric_label, param_label
from sim.palette import EXACT, SERIES, outcome_colour
from sim.pipeline import metric_row

MAX_POINTS = 2_000


def grid_scenarios(scenario, axes: list[GridAxis]) -> list[tuple[dict[str, Any], Any]]:
    """Every grid point's values and validated scenario (all validated before anything is simulated)."""
    keys = [a.key for a in axes]
    if len(set(keys)) != len(keys):
        raise ScenarioError("each --param key at most once", file=scenario.source)
    count = math.prod(len(a.values) for a in axes)
    if count > MAX_POINTS:
        raise ScenarioError(f"expected at most {MAX_POINTS} grid points; the grid has {count}", file=scenario.source)
    out = []
    for combo in itertools.product(*(a.values for a in axes)):
        values = dict(zip(keys, combo, strict=True))
        out.append((values, with_values(scenario, values)))
    return out


def sweep(scenario, axes: list[GridAxis | str], runs: int | None = None, seed: int | None = None,
          n_jobs: int = 1, exact: bool = True, metric: str | None = None, progress=None, **options) -> pd.DataFrame:
    """One row per grid point (see the module docstring). Every point is simulated with the same
    ``runs`` and ``seed`` (defaults: the base scenario's ``[run]``): common random numbers."""
    axes = [parse_axis(a) if isinstance(a, str) else a for a in axes]
    if not axes:
        raise ScenarioError("expected at least one --param KEY=START:STOP:STEP", file=scenario.source)
    flags = (runs, seed)
    runs, seed = resolve_runs_seed(scenario, runs, seed)
    points = grid_scenarios(scenario, axes)
    metric = metric or main_metric(scenario.kind)
    rows = []
    for i, (values, variant) in enumerate(points):
        # the same runs and seed everywhere, unless the sweep is over run.runs or run.seed itself
        n, s = resolve_runs_seed(variant, *flags)
        ev = evaluate(variant, values, runs=n, seed=s, n_jobs=n_jobs, exact=exact, **options)
        rows.append(_row(ev, metric))
        if progress:
            progress(i + 1, len(points), values)
    df = pd.DataFrame(rows)
    ordered = [a.key for a in axes]
    metric_cols = [c for c in df.columns if c not in ordered and c not in ("runs", "seed")]
    df = df[ordered + metric_cols + ["runs", "seed"]]
    df.attrs.update(metric=metric, params=ordered, runs=runs, seed=seed, kind=scenario.kind,
                    name=scenario.name or scenario.slug)
    return df


def _row(ev, metric: str) -> dict:
    s, x = ev.summary, ev.exact
    row: dict[str, Any] = dict(ev.values)
    names = [metric] + [m for m in scalar_metrics(s) if m != metric] if metric else scalar_metrics(s)
    row.update(metric_row(s, x, names))  # raises a clean error for an unknown --metric
    row["runs"], row["seed"] = s["runs"], s["seed"]
    return row


# --------------------------------------------------------------------------------------------
# charts and files


def _chart_metrics(df: pd.DataFrame) -> list[str]:
    """The main metric, then every other metric with an interval somewhere in the sweep."""
    main = df.attrs.get("metric")
    params = df.attrs.get("params", [])
    out = [main] if main else []
    for col in df.columns:
        if col in params or col in ("runs", "seed") or col.endswith(("_lo", "_hi", "_exact")) or col in out:
            continue
        if f"{col}_lo" in df and df[f"{col}_lo"].notna().any():
            out.append(col)
    return out


def moved(df: pd.DataFrame, metric: str) -> bool:
    """Whether ``metric`` takes more than one value over the sweep (simulated or exact). Every point runs on the
    same random numbers, so a metric the swept values cannot reach is exactly equal at every point."""
    for col in (metric, f"{metric}_exact"):
        if col in df:
            v = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float)
            v = v[np.isfinite(v)]
            if v.size and float(v.max() - v.min()) > 1e-12:
                return True
    return False


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in text)


def _x_positions(values: pd.Series) -> tuple[np.ndarray, list[str] | None]:
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        return values.to_numpy(dtype=float), None
    labels = [str(v) for v in values]
    return np.arange(len(labels), dtype=float), labels


def line_chart(df: pd.DataFrame, x_key: str, metric: str, out: Path, group_key: str | None = None,
               max_lines: int = 10) -> Path:
    """``metric`` against ``x_key`` with its 95% band (one line per value of ``group_key``)."""
    n = df.attrs.get("runs")
    title = report.chart_text(metric_label(metric), 60) + f"\nvs {report.chart_text(x_key, 50)}" + \
        (f" by {report.chart_text(group_key, 50)}" if group_key else "")
    fig, ax = report.new_figure(title, f"{report.chart_text(x_key, 50)} ({param_unit(x_key)})",
                                f"{report.chart_text(metric, 50)} ({metric_unit(metric)})")
    groups = [(None, df)] if group_key is None else list(df.groupby(group_key, sort=False))[:max_lines]
    labels = None
    if group_key is None and _x_positions(df[x_key])[1] is not None:  # text or true/false values: bars, no line
        _bars(ax, df, x_key, metric, n)
        labels = [str(v) for v in df[x_key]]
        groups = []
    for gval, part in groups:
        x, labels = _x_positions(part[x_key])
        y = part[metric].to_numpy(dtype=float)
        name = "simulated" if gval is None else report.chart_text(f"{group_key} = {gval}", 50)
        colour = {"color": outcome_colour(metric.split(".")[0])} if gval is None and outcome_colour(
            metric.split(".")[0], "") else {}  # one line: its outcome's colour; several: the series cycle
        line = ax.plot(x, y, marker="o", label=f"{name} ({n:,} runs)" if gval is None else name, **colour)[0]
        lo, hi = part[f"{metric}_lo"].to_numpy(dtype=float), part[f"{metric}_hi"].to_numpy(dtype=float)
        if np.isfinite(lo).any():
            ax.fill_between(x, lo, hi, alpha=0.2, color=line.get_color(),
                            label="95% interval" if gval is None else None)
        if f"{metric}_exact" in part and part[f"{metric}_exact"].notna().any():
            ax.plot(x, part[f"{metric}_exact"].to_numpy(dtype=float), "--", color=EXACT if gval is None else
                    line.get_color(), label="exact" if gval is None else None)
    if labels is not None:
        ax.set_xticks(np.arange(len(labels)), [report.chart_text(lb, 20) for lb in labels])
    if metric_unit(metric) == "probability":
        ax.set_ylim(-0.02, 1.02)
    report.legend_outside(ax)
    return report.save_figure(fig, out / f"sweep_{_slug(metric)}{'_by_' + _slug(group_key) if group_key else ''}.png")


def _bars(ax, df: pd.DataFrame, x_key: str, metric: str, n) -> None:
    """One bar per categorical value with its 95% interval as an error bar, the exact value as a mark."""
    x = np.arange(len(df), dtype=float)
    y = df[metric].to_numpy(dtype=float)
    lo, hi = df[f"{metric}_lo"].to_numpy(dtype=float), df[f"{metric}_hi"].to_numpy(dtype=float)
    err = np.vstack([y - lo, hi - y]) if np.isfinite(lo).all() and np.isfinite(hi).all() else None
    ax.bar(x, y, width=0.6, yerr=err, capsize=6, color=outcome_colour(metric.split(".")[0], "") or SERIES[0],
           label=f"simulated ({n:,} runs)" + (", 95% interval" if err is not None else ""))
    if f"{metric}_exact" in df and df[f"{metric}_exact"].notna().any():
        ax.scatter(x, df[f"{metric}_exact"].to_numpy(dtype=float), marker="D", color=EXACT, zorder=3,
                   label="exact")


def heat_map(df: pd.DataFrame, x_key: str, y_key: str, metric: str, out: Path) -> Path:
    """``metric`` over a two-parameter grid, each cell annotated with its value."""
    table = df.pivot_table(index=y_key, columns=x_key, values=metric, aggfunc="first", sort=False)
    fig, ax = report.new_figure(f"{metric} over {x_key} × {y_key}", f"{x_key} ({param_unit(x_key)})",
                                f"{y_key} ({param_unit(y_key)})", size=(7.5, 5.0))
    ax.grid(False)
    data = table.to_numpy(dtype=float)
    prob = metric_unit(metric) == "probability"
    im = ax.imshow(data, origin="lower", aspect="auto", cmap="viridis",
                   vmin=0 if prob else None, vmax=1 if prob else None)
    ax.set_xticks(range(len(table.columns)), [str(c) for c in table.columns])
    ax.set_yticks(range(len(table.index)), [str(i) for i in table.index])
    cbar = fig.colorbar(im, ax=ax)
    cbar.set_label(f"{metric} ({metric_unit(metric)})")
    if data.size <= 400:
        for (r, c), v in np.ndenumerate(data):
            if np.isfinite(v):
                ax.text(c, r, f"{v:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if prob and v < 0.5 else "black")
    return report.save_figure(fig, out / f"heatmap_{_slug(metric)}.png")


def _title(text: str, scenario) -> str:
    """A chart title "<metric> vs <param>[ by <param>]" / "<metric> heat map" in plain words."""
    words = text.split(" ")
    out = []
    for i, w in enumerate(words):
        if i == 0:
            out.append(metric_label(w))
        elif words[i - 1] in ("vs", "by"):
            out.append(param_label(w, scenario))
        else:
            out.append(w)
    return " ".join(out)


def _unchanged_section(df: pd.DataFrame, unchanged: list[str]):
    """The metrics the swept values did not move, with their one value (they get no chart)."""
    return report.section("Unchanged by this sweep", report.paragraph(
        "These metrics have the same value at every point (the swept values do not reach them; every point ran on "
        "the same random numbers), so they get no chart: " + "; ".join(
                   f"{metric_label(m)} ({m}) {format_value(m, float(df[m].iloc[0]), 2)}" for m in unchanged) + "."))


def write_sweep(df: pd.DataFrame, out_dir: Path, scenario=None) -> list[Path]:
    """``sweep.csv``, charts and ``report.html`` into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    report.atomic_write_text(out / "sweep.csv", df.to_csv(index=False))
    written.append(out / "sweep.csv")
    params = df.attrs["params"]
    main = df.attrs["metric"]
    sections = []
    charts: list[tuple[str, Path]] = []
    unchanged: list[str] = []
    if len(params) == 1:  # every metric that the swept values moved (the main metric first)
        for m in _chart_metrics(df):
            if moved(df, m):
                charts.append((f"{m} vs {params[0]}", line_chart(df, params[0], m, out)))
            else:
                unchanged.append(m)
    else:
        if len(params) == 2:
            charts.append((f"{main} heat map", heat_map(df, params[0], params[1], main, out)))
            charts.append((f"{main} vs {params[0]} by {params[1]}", line_chart(df, params[0], main, out, params[1])))
        else:
            combo = "_".join(params[1:])
            df2 = df.copy()
            df2.attrs = df.attrs
            df2[combo] = df2[params[1:]].astype(str).agg(", ".join, axis=1)
            charts.append((f"{main} vs {params[0]}", line_chart(df2, params[0], main, out, combo)))
    written.extend(p for _, p in charts)
    note = (f"Every grid point was simulated with the same {df.attrs['runs']:,} runs from seed {df.attrs['seed']} "
            "(common random numbers), so differences between points come from the rules, not from noise. "
            "Bands and brackets are 95% intervals; 'exact' is exact analysis where the kind supports it; sweep.csv "
            "has every metric.")

    sections.append(sweep_answer(df, scenario))
    if scenario is not None:
        sections.append(report.description_block(scenario.description))
    sections.append(report.section("Sweep of " + ", ".join(param_label(p, scenario) for p in params),
                                   sweep_table(df, scenario), note=note, key=", ".join(params)))
    for title, path in charts:
        sections.append(report.section(_title(title, scenario), image=path.name,
                                       alt=f"Chart: {_title(title, scenario)}", key=title))
    if unchanged:
        sections.append(_unchanged_section(df, unchanged))
    sections.append(report.paragraph(report.join(report.link("sweep.csv", "sweep.csv"),
                                                 ": every scalar metric with its interval.")))
    name = df.attrs.get("name", "")
    meta = {"kind": df.attrs.get("kind"), "runs": df.attrs["runs"], "seed": df.attrs["seed"]}
    if scenario is not None:
        meta["scenario_hash"] = scenario.scenario_hash
    written.append(report.write_html(out / "report.html", f"Sweep — {name}", sections, meta))
    return written
