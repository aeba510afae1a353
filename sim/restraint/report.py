"""The restraint report: level distributions per round (stacked), P(arms complete) and
P(incapacitated) by round, the combat effect table (R-RST-14) and the composure table (R-RST-24)
as tables and heat maps."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd

from sim.report import new_figure, save_figure, section, write_html
from sim.report import table_html as _shared_table_html
from sim.restraint.exact import damage_distribution
from sim.restraint.model import LEVEL_NAMES
from sim.restraint.rules import compile_params
from sim.restraint.tables import (
    class_features_table,
    combat_effect_table,
    composure_table,
    escape_probability_table,
    rounds_to_overload_table,
)
from sim.result import SimulationResult


def table_html(df: pd.DataFrame, float_format: str = "{:.4f}", index: bool = True) -> str:
    """The shared table helper, with every non-float column turned into text first, missing values
    (None, pd.NA) shown as a dash."""
    df = df.copy()
    for col in df.columns:
        if not pd.api.types.is_float_dtype(df[col]):
            df[col] = [("–" if v is None or v is pd.NA else str(v)) for v in df[col]]
    return _shared_table_html(df, float_format=float_format, index=index)


LEVEL_COLOURS = ("#e8f1fa", "#a6cee3", "#1f78b4", "#fdbf6f", "#e31a1c", "#4a1486")


def _stacked_levels(summary: dict, out: Path) -> str | None:
    dist = summary.get("level_distribution_by_round") or {}
    if not dist:
        return None
    slots = list(dist)
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(slots), figsize=(4.2 * len(slots) + 1, 4.2), squeeze=False, sharey=True)
    for ax, slot in zip(axes[0], slots, strict=True):
        arr = np.asarray(dist[slot])  # (rounds, 6)
        rounds = np.arange(1, arr.shape[0] + 1)
        bottom = np.zeros(arr.shape[0])
        for level in range(arr.shape[1]):
            ax.bar(rounds, arr[:, level], bottom=bottom, color=LEVEL_COLOURS[level], label=LEVEL_NAMES[level],
                   width=0.85)
            bottom += arr[:, level]
        ax.set_title(f"{slot}: level at end of round")
        ax.set_xlabel("round")
        ax.set_ylim(0, 1)
    axes[0][0].set_ylabel("probability")
    axes[0][-1].legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8)
    save_figure(fig, out / "levels_by_round.png")
    return "levels_by_round.png"


def _by_round_chart(summary: dict, exact: dict | None, out: Path) -> str:
    fig, ax = new_figure("Target bound, by the end of each round", "round", "probability")
    keys = (
        ("incapacitated_by_round", "P(incapacitated)", "C0"),
        ("arms_complete_by_round", "P(arms >= complete)", "C1"),
        ("incapacitated_or_arms_complete_by_round", "P(either)", "C2"),
    )
    for key, label, colour in keys:
        values = summary.get(key) or []
        rounds = np.arange(1, len(values) + 1)
        ax.plot(rounds, values, marker="o", color=colour, label=f"{label} (simulated)")
        if exact and exact.get(key):
            ax.plot(rounds, exact[key], linestyle="--", color=colour, label=f"{label} (exact)")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=8)
    save_figure(fig, out / "bound_by_round.png")
    return "bound_by_round.png"


def _heat_map(df: pd.DataFrame, title: str, xlabel: str, ylabel: str, path: Path, fmt: str) -> str:
    width = max(6.0, min(16.0, 1.2 + 0.6 * df.shape[1]))
    fig, ax = new_figure(title, xlabel, ylabel, size=(width, 1.2 + 0.4 * df.shape[0]))
    ax.grid(False)
    values = df.to_numpy(dtype=float)
    im = ax.imshow(values, aspect="auto", cmap="viridis")
    ax.set_xticks(range(df.shape[1]), [str(c) for c in df.columns], fontsize=7)
    ax.set_yticks(range(df.shape[0]), [str(i) for i in df.index], fontsize=7)
    if values.size <= 400:
        for (i, j), v in np.ndenumerate(values):
            if np.isfinite(v):
                colour = "w" if v < np.nanmean(values) else "k"
                ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=6, color=colour)
    fig.colorbar(im, ax=ax)
    save_figure(fig, path)
    return path.name


def _overload_chart(summary: dict, exact: dict | None, out: Path) -> str | None:
    if "overload_by_round" not in summary:
        return None
    fig, ax = new_figure("First overload under the stimulus (R-RST-24)", "round", "P(overloaded by the end of round)")
    series = {"target": summary["overload_by_round"], **summary.get("party_overload_by_round", {})}
    exact_series = {}
    if exact and "overload_by_round" in exact:
        exact_series = {"target": exact["overload_by_round"], **exact.get("party_overload_by_round", {})}
    for i, (name, values) in enumerate(series.items()):
        rounds = np.arange(1, len(values) + 1)
        ax.plot(rounds, values, marker=".", color=f"C{i}", label=f"{name} (simulated)")
        if name in exact_series:
            ax.plot(rounds, exact_series[name], linestyle="--", color=f"C{i}", label=f"{name} (exact)")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=8)
    save_figure(fig, out / "overload_by_round.png")
    return "overload_by_round.png"


HEADLINES = (
    ("incapacitated_by_round", "P(incapacitated)"),
    ("arms_complete_by_round", "P(arms complete)"),
    ("incapacitated_or_arms_complete_by_round", "P(either)"),
    ("escape_checks_by_round", "escape checks"),
)


def _headline_table(summary: dict, exact: dict | None) -> str:
    """One row per round; each quantity simulated and, when given, exact."""
    columns = {}
    for key, label in HEADLINES:
        columns[label] = [float(v) for v in summary.get(key) or []]
        if exact and exact.get(key):
            columns[f"{label} exact"] = [float(v) for v in exact[key]]
    df = pd.DataFrame(columns)
    df.index = pd.RangeIndex(1, len(df) + 1, name="round")
    return table_html(df)


def write_report(result: SimulationResult, out_dir, exact_summary: dict | None = None) -> Path:
    """Write report.html and the PNG charts into ``out_dir``.

    Built from ``result.summary`` (and ``exact_summary``) alone, never ``result.runs``, so a streamed
    result (``simulate(keep_runs=False)``, empty runs) gives the same report."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    s = result.scenario
    summary = result.summary
    p = compile_params(s)
    sections = []
    if s.description:
        sections.append(f"<p>{html.escape(s.description)}</p>")
    key_rows = {
        "mean escape checks": summary["mean_escape_checks"],
        "mean escape successes": summary.get("mean_escape_successes"),
        "mean bindings won": summary.get("mean_bindings_won"),
        "composure max (target, R-RST-25)": summary["composure_max"],
    }
    if exact_summary:
        key_rows["mean escape checks (exact)"] = exact_summary["mean_escape_checks"]
    sections.append(section("Summary", table_html(pd.DataFrame({"value": key_rows}))))
    image = _stacked_levels(summary, out)
    if image:
        sections.append(section("Level distribution per round (R-RST-13)", image=image))
    sections.append(
        section(
            "P(incapacitated) and P(arms complete) by round (R-RST-26)",
            _headline_table(summary, exact_summary),
            image=_by_round_chart(summary, exact_summary, out),
        )
    )
    esc = escape_probability_table(p).set_index("slot")
    sections.append(
        section(
            "Escape check success by slot and level (a restraint alone; R-RST-2, R-RST-30)",
            table_html(esc),
            image=_heat_map(esc, "P(escape check succeeds)", "level", "slot", out / "escape_heat.png", "{:.2f}"),
        )
    )
    effects = combat_effect_table(s.table.attack_bonus, s.table.ac)
    hit_cols = [f"hit_ac{ac}" for ac in s.table.ac]
    hits = effects.set_index(effects["slot"] + " " + effects["level"])[hit_cols]
    sections.append(
        section(
            f"Combat effect table (R-RST-14), attack bonus {s.table.attack_bonus:+d}",
            table_html(effects, index=False),
            image=_heat_map(hits, "P(weapon attack hits) by restraint", "armour class", "restraint",
                            out / "effect_heat.png", "{:.2f}"),
            note="hit_acX: the wearer's weapon attack with its penalty die; fighter_hit_acX: a fighter's "
            "attack ignoring restraint penalties (R-RST-12); hit_against_acX: an attack with the same bonus "
            "against the wearer.",
        )
    )
    table = composure_table(s.target.scores.as_dict())
    sections.append(
        section(
            "Composure maximum by class and level (R-RST-20, R-RST-25), the target's scores",
            table_html(table),
            image=_heat_map(table, "Composure maximum", "level", "class", out / "composure_heat.png", "{:.0f}"),
        )
    )
    if p.n_pools:
        expected = rounds_to_overload_table(table, damage_distribution(p, 0))
        sections.append(
            section(
                f"Expected rounds until overload under {s.composure.stimulus} per round (R-RST-24, exact)",
                table_html(expected, float_format="{:.2f}"),
                image=_heat_map(expected, "Expected rounds until overload", "level", "class",
                                out / "overload_heat.png", "{:.1f}"),
            )
        )
        image = _overload_chart(summary, exact_summary, out)
        party = pd.DataFrame(
            [{"name": "target", "class": s.target.class_, "level": s.target.level, "composure_max": p.composure_max}]
            + list(summary.get("party_composure") or [])
        )
        if exact_summary and "mean_rounds_to_overload" in exact_summary:
            means = {"target": exact_summary["mean_rounds_to_overload"],
                     **exact_summary.get("party_mean_rounds_to_overload", {})}
            party["mean rounds to overload (exact)"] = [
                float("nan") if means.get(n) is None else float(means[n]) for n in party["name"]
            ]
        body = table_html(party, index=False) if len(party) else ""
        sections.append(section("Composure pools under the stimulus", body, image=image))
    feats = class_features_table(s.target.level, s.target.scores.as_dict())
    sections.append(
        section(f"Class features at level {s.target.level} (R-RST-12, R-RST-23)", table_html(feats, index=False))
    )
    title = f"Restraint: {s.name or s.slug}"
    return write_html(out / "report.html", title, sections, summary)
