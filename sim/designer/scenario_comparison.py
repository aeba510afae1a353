"""Batch runs and the comparison index: several scenarios side by side.

``python -m sim run A.toml B.toml`` (or a folder) runs each scenario into ``OUT/<slug>/`` exactly as a single
``run`` would (:func:`sim.pipeline.run`), then writes ``OUT/index.html``: the headline metrics of every
scenario with their 95% intervals in one table, one chart per metric across scenarios, and a link to each
scenario's report; ``index.csv`` and ``index.json`` hold the same numbers.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from sim import report
from sim.designer.metrics import headline, main_metric, metric_unit, present_metrics, scalar_metrics
from sim.errors import ScenarioError
from sim.labels import metric_label
from sim.limits import bounded_folder_name
from sim.palette import EXACT, outcome_colour
from sim.pipeline import metric_row


def _is_fit_file(path: Path) -> bool:
    """A fit file (``python -m sim fit``) found in a folder is not a scenario: a folder run skips it."""
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # malformed, not UTF-8, an integer too long to convert
        return False  # let the loader report it
    return "fit" in data and "kind" not in data


def scenario_files(paths: list[str]) -> list[Path]:
    """The scenario files named by ``paths``: files as given, folders searched for ``*.toml`` (recursively,
    sorted). Raises ScenarioError for a missing path or a folder without scenarios."""
    out: list[Path] = []
    for text in paths:
        p = Path(text)
        if p.is_dir():
            found = sorted(q for q in p.rglob("*.toml") if q.is_file() and not _is_fit_file(q))
            if not found:
                raise ScenarioError("no *.toml scenario files in this folder", file=text)
            out.extend(found)
        elif p.is_file() or p.exists():  # a pipe or device: the reader refuses it as not a regular file
            out.append(p)
        else:
            raise ScenarioError("no such scenario file or folder", file=text)
    seen: set[Path] = set()
    unique = []
    for p in out:
        r = p.resolve()
        if r not in seen:
            seen.add(r)
            unique.append(p)
    return unique


def output_folders(scenarios: list, base: Path) -> list[Path]:
    """One folder per scenario under ``base``: its slug, made unique with the file name or a number."""
    used: set[str] = set()
    out = []
    for s in scenarios:
        name = s.slug
        if name in used:  # the file's stem, reduced like a slug (no separators, no "..", no control characters)
            stem = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in Path(s.source).stem.lower())
            name = f"{name}_{stem.strip('_') or 'scenario'}"
        name = bounded_folder_name(name)
        k = 2
        candidate = name
        while candidate in used or candidate == "index":
            candidate = bounded_folder_name(f"{name}_{k}")
            k += 1
        used.add(candidate)
        out.append(base / candidate)
    return out


def headline_metrics(summary: dict) -> list[str]:
    """The metrics of the index for one summary: the kind's headline list, else its main metric and every
    scalar metric with an interval."""
    kind = summary.get("kind", "")
    names = headline(kind)
    if not names:
        names = [main_metric(kind)] if main_metric(kind) else []
        names += [m for m in scalar_metrics(summary) if f"{m}_ci" in summary and m not in names]
    return present_metrics(summary, names)


def index_frame(entries: list[dict]) -> pd.DataFrame:
    """One row per scenario: file, name, kind, runs, seed, report link, and per headline metric its value,
    ``_lo``, ``_hi`` (and ``_exact`` beside an exact summary: :func:`sim.pipeline.metric_row`)."""
    rows = []
    for e in entries:
        s, x = e["summary"], e.get("exact")
        row = {"scenario": e["name"], "file": e["file"], "kind": s.get("kind"), "runs": s.get("runs"),
               "seed": s.get("seed"), "report": e["report"]}
        row.update(metric_row(s, x, headline_metrics(s)))
        rows.append(row)
    return pd.DataFrame(rows)


def _metric_columns(df: pd.DataFrame) -> list[str]:
    fixed = {"scenario", "file", "kind", "runs", "seed", "report"}
    return [c for c in df.columns if c not in fixed and not c.endswith(("_lo", "_hi", "_exact"))]


def metric_chart(df: pd.DataFrame, metric: str, out: Path, rows: str = "scenario") -> Path:
    """``metric`` of every scenario (or policy: ``rows``) that has it, with 95% whiskers (and exact values as
    crosses)."""
    part = df[df[metric].notna()]
    height = max(3.0, 0.45 * len(part) + 1.6)
    fig, ax = report.new_figure(report.chart_text(metric_label(metric), 70),
                                f"{report.chart_text(metric, 60)} ({metric_unit(metric)})", rows, size=(8.0, height))
    y = np.arange(len(part))[::-1]
    v = part[metric].to_numpy(dtype=float)
    lo, hi = part[f"{metric}_lo"].to_numpy(dtype=float), part[f"{metric}_hi"].to_numpy(dtype=float)
    err = np.vstack([np.where(np.isfinite(lo), v - lo, 0), np.where(np.isfinite(hi), hi - v, 0)])
    ax.barh(y, v, color=outcome_colour(metric.split(".")[0]), height=0.6, label="simulated")
    ax.errorbar(v, y, xerr=np.abs(err), fmt="none", ecolor=EXACT, capsize=4, label="95% interval")
    if f"{metric}_exact" in part and part[f"{metric}_exact"].notna().any():
        ax.plot(part[f"{metric}_exact"].to_numpy(dtype=float), y, "x", color=EXACT, markersize=9, markeredgewidth=2,
                label="exact")
    ax.set_yticks(y, [report.chart_text(s, 30) for s in part["scenario"]])
    if metric_unit(metric) == "probability":
        ax.set_xlim(0, 1.02)
    report.legend_outside(ax)
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in metric)
    return report.save_figure(fig, out / f"index_{safe}.png")


def _cell(row, m: str):
    """One index cell: the value with its interval at the precision the interval supports (percent for
    probabilities), and the exact value below it where known."""
    v = row.get(m)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    lo, hi = row.get(f"{m}_lo"), row.get(f"{m}_hi")
    ci = (lo, hi) if lo is not None and not math.isnan(lo) and hi is not None and not math.isnan(hi) else None
    prob = metric_unit(m) == "probability"
    text = report.fmt_pct(v, ci) if prob else report.fmt_num(v, ci)
    ex = row.get(f"{m}_exact")
    if ex is not None and not (isinstance(ex, float) and math.isnan(ex)):
        return report.join(text, report.paragraph(f"exact {report.fmt_exact(ex, percent=prob)}", "key"))
    return text


def _table(df: pd.DataFrame, metrics: list[str]):
    columns = ["scenario", "runs"] + [report.key_label(metric_label(m), m) for m in metrics]
    rows = []
    for _, row in df.iterrows():
        rows.append([report.link(str(row["report"]), str(row["scenario"])), f"{int(row['runs']):,}"]
                    + [_cell(row, m) for m in metrics])
    return report.table(columns, rows)


def write_index(entries: list[dict], out_dir: Path, title: str = "Scenario comparison") -> list[Path]:
    """``index.html`` (table with links, one chart per metric), ``index.csv`` and ``index.json``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    df = index_frame(entries)
    metrics = _metric_columns(df)
    charts = [(m, metric_chart(df, m, out)) for m in metrics]
    tables = []
    for kind in dict.fromkeys(df["kind"]):
        part = df[df["kind"] == kind]
        cols = [m for m in metrics if part[m].notna().any()]
        tables.append(report.section(f"{kind}", _table(part, cols), level=3))
    note = ("Headline metrics with 95% intervals in brackets (percentages for probabilities); each scenario's name "
            "links to its own report. Runs and seeds are per scenario (shown in each report).")
    sections = [report.section("Headline metrics", report.join(*tables), note=note)]
    sections += [report.section(report.key_label(metric_label(m), m), image=p.name,
                                alt=f"Bar chart: {metric_label(m)} per scenario with 95% interval whiskers")
                 for m, p in charts]
    sections.append(report.paragraph(report.join(report.link("index.csv", "index.csv"), " · ",
                                                 report.link("index.json", "index.json"))))
    report.atomic_write_text(out / "index.csv", df.to_csv(index=False))
    records = [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
               for r in df.astype(object).to_dict(orient="records")]
    report.atomic_write_text(out / "index.json", report.summary_json(records))
    report.write_html(out / "index.html", title, sections)
    return [out / "index.html", out / "index.csv", out / "index.json"] + [p for _, p in charts]
