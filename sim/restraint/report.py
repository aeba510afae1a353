"""The restraint report: the scenario's question and its answer first (P(target taken out) with its interval
and the exact value), then the inputs that decide it (binder, target with its restraints and condition, the
escape DCs by slot and level, composure settings), then the charts (level distributions per round, P(taken
out) by round, overload) and, folded below, the reference tables (escape check success by slot and level,
the full combat effect table R-RST-14, the composure table R-RST-24, class features)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from sim.palette import LEVEL_COLOURS, outcome_colour, series_colour
from sim.report import (
    answer,
    chart_text,
    definitions,
    description_block,
    details,
    fmt_exact,
    fmt_pct,
    join,
    legend_outside,
    new_figure,
    paragraph,
    save_figure,
    scenario_question,
    section,
    table,
    write_html,
)
from sim.report import table_html as _shared_table_html
from sim.restraint.exact import damage_distribution
from sim.restraint.model import LEVEL_NAMES, SLOTS
from sim.restraint.rules import compile_params
from sim.restraint.tables import (
    class_features_table,
    combat_effect_table,
    composure_table,
    escape_probability_table,
    rounds_to_overload_table,
)
from sim.result import SimulationResult
from sim.stats import wilson_interval


def table_html(df: pd.DataFrame, float_format: str = "{:.2f}", index: bool = True):
    """The shared table helper with readable column names (``hit_ac14`` -> ``hit AC 14``)."""
    df = df.rename(columns={c: _column_label(str(c)) for c in df.columns})
    return _shared_table_html(df, float_format=float_format, index=index)


def _column_label(col: str) -> str:
    import re

    m = re.fullmatch(r"(fighter_hit|hit_against|hit)_ac(\d+)", col)
    if m:
        what = {"hit": "wearer hits", "fighter_hit": "fighter wearer hits", "hit_against": "hit against wearer"}
        return f"{what[m.group(1)]}, AC {m.group(2)}"
    return col.replace("_", " ")


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
        ax.set_title(f"{chart_text(slot)}: level at the end of each round")
        ax.set_xlabel("round")
        ax.set_ylim(0, 1)
    axes[0][0].set_ylabel("probability")
    axes[0][-1].legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, title="level")
    save_figure(fig, out / "levels_by_round.png")
    return "levels_by_round.png"


def _by_round_chart(summary: dict, exact: dict | None, out: Path) -> str:
    fig, ax = new_figure("Target bound, by the end of each round", "round", "probability")
    keys = (  # either = the target taken out, the outcome the report asks about; its two ways as series
        ("incapacitated_by_round", "P(incapacitated)", series_colour(0)),
        ("arms_complete_by_round", "P(arms >= complete)", series_colour(1)),
        ("incapacitated_or_arms_complete_by_round", "P(either: taken out)", outcome_colour("taken out")),
    )
    for key, label, colour in keys:
        values = summary.get(key) or []
        rounds = np.arange(1, len(values) + 1)
        ax.plot(rounds, values, marker="o", color=colour, label=f"{label} (simulated)")
        if exact and exact.get(key):
            ax.plot(rounds, exact[key], linestyle="--", color=colour, label=f"{label} (exact)")
    ax.set_ylim(-0.02, 1.02)
    legend_outside(ax)
    save_figure(fig, out / "bound_by_round.png")
    return "bound_by_round.png"


def _heat_map(df: pd.DataFrame, title: str, xlabel: str, ylabel: str, path: Path, fmt: str) -> str:
    # at most 10 inches wide (1000 px at 100 dpi: the page's width, so the browser does not shrink it) and cells
    # tall and wide enough for 9-point numbers (12.5 px); numbers only where a cell holds them
    width = max(6.0, min(10.0, 2.2 + 0.75 * df.shape[1]))
    fig, ax = new_figure(title, xlabel, ylabel, size=(width, 1.4 + 0.5 * df.shape[0]))
    ax.grid(False)
    values = df.to_numpy(dtype=float)
    im = ax.imshow(values, aspect="auto", cmap="viridis")
    ax.set_xticks(range(df.shape[1]), [str(c) for c in df.columns], fontsize=9)
    ax.set_yticks(range(df.shape[0]), [chart_text(i) for i in df.index], fontsize=9)
    cell = (width - 2.2) / max(df.shape[1], 1)  # inches per column
    if values.size <= 400 and cell >= 0.36:
        for (i, j), v in np.ndenumerate(values):
            if np.isfinite(v):
                colour = "w" if v < np.nanmean(values) else "k"
                ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=9, color=colour)
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
        ax.plot(rounds, values, marker=".", color=series_colour(i), label=f"{chart_text(name)} (simulated)")
        if name in exact_series:
            ax.plot(rounds, exact_series[name], linestyle="--", color=series_colour(i),
                    label=f"{chart_text(name)} (exact)")
    ax.set_ylim(-0.02, 1.02)
    legend_outside(ax)
    save_figure(fig, out / "overload_by_round.png")
    return "overload_by_round.png"


def _dc_ladder(s) -> str:
    """The escape DCs in effect (R-RST-2), slot by level, the target's starting levels marked."""
    effects = combat_effect_table(s.table.attack_bonus, s.table.ac)
    levels = list(dict.fromkeys(effects["level"]))
    start = dict(zip(SLOTS, s.target.restraints.as_tuple(), strict=True))
    rows = []
    for slot in dict.fromkeys(effects["slot"]):
        part = effects[effects["slot"] == slot].set_index("level")["escape_dc"]
        cells = [slot]
        for lv in levels:
            dc = part.get(lv)
            text = "–" if dc is None or pd.isna(dc) else str(int(dc))
            if start.get(slot) and lv.split(" ")[0] == str(start[slot]):
                text += " (start)"
            cells.append(text)
        rows.append(cells)
    return table(["escape DC: slot"] + levels, rows)


def _by_round_table(summary: dict, exact: dict | None) -> str:
    """One row per round: each probability simulated (95% interval) and, when given, exact."""
    n = summary["runs"]
    keys = (("incapacitated_by_round", "incapacitated"), ("arms_complete_by_round", "arms complete"),
            ("incapacitated_or_arms_complete_by_round", "taken out (either)"))
    columns = ["round"]
    for _, label in keys:
        columns.append(f"{label} by its end")
        if exact and exact.get(keys[0][0]):
            columns.append(f"{label}, exact")
    columns.append("escape checks in the round")
    rows = []
    length = len(summary.get(keys[0][0]) or [])
    for r in range(length):
        row = [str(r + 1)]
        for key, _ in keys:
            v = float(summary[key][r])
            row.append(fmt_pct(v, wilson_interval(round(v * n), n)))
            if exact and exact.get(keys[0][0]):
                row.append(fmt_exact(exact[key][r]))
        checks = summary.get("escape_checks_by_round") or []
        row.append(f"{checks[r]:.2f}" if r < len(checks) else "–")
        rows.append(row)
    return table(columns, rows)


def _main(summary: dict) -> tuple[float, list[float]]:
    either = summary.get("incapacitated_or_arms_complete_by_round") or [0.0]
    v = float(either[-1])
    n = summary["runs"]
    return v, list(wilson_interval(round(v * n), n))


def _answer(result: SimulationResult, exact: dict | None) -> str:
    s, summary = result.scenario, result.summary
    rounds = len(summary.get("incapacitated_or_arms_complete_by_round") or []) or s.run.rounds
    lines = []
    if s.binder is not None:
        question = scenario_question(s.description, f"How likely is the target taken out (incapacitated or its "
                                                    f"arms complete) within {rounds} rounds?")
        v, ci = _main(summary)
        ex = ""
        if exact and exact.get("incapacitated_or_arms_complete_by_round"):
            ex = f"; exact {fmt_exact(exact['incapacitated_or_arms_complete_by_round'][-1])}"
        lines.append(f"The target is taken out within {rounds} rounds in {fmt_pct(v, ci)} of duels{ex}.")
        n = summary["runs"]
        arms = float(summary["arms_complete_by_round"][-1])
        inc = float(summary["incapacitated_by_round"][-1])
        lines.append(f"Arms complete: {fmt_pct(arms, wilson_interval(round(arms * n), n))}; incapacitated: "
                     f"{fmt_pct(inc, wilson_interval(round(inc * n), n))} (95% intervals in brackets).")
        se = summary.get("mean_escape_checks_se")
        lines.append(f"The target makes {summary['mean_escape_checks']:.{1 if not se or se > 0.05 else 2}f} "
                     f"escape checks per duel on average and wins "
                     f"{summary.get('mean_escape_successes') or 0:.1f} of them; the binder wins "
                     f"{summary.get('mean_bindings_won') or 0:.1f} bindings.")
    else:
        question = scenario_question(s.description, "How many rounds does each composure pool hold out under the "
                                                    "stimulus?")
        lines.append("No binder: the duel only tracks the target's escape checks and composure.")
    if "overload_by_round" in summary:
        o = float(summary["overload_by_round"][-1])
        n = summary["runs"]
        lines.append(f"The target is overloaded by the end in {fmt_pct(o, wilson_interval(round(o * n), n))} "
                     "of runs.")
        if exact and exact.get("mean_rounds_to_overload") is not None:
            lines.append(f"Mean rounds until the target's overload (exact): {exact['mean_rounds_to_overload']:.2f}.")
    if "mean_overloads" in summary:  # R-RST-33
        dazed = summary.get("dazed_by_round") or [0.0]
        lines.append(f"In the duel the target overloads {summary['mean_overloads']:.2f} times on average and is "
                     f"dazed (no escape attempt) in round {len(dazed)} in {dazed[-1]:.1%} of duels (R-RST-33).")
    return answer(question, lines)


def reading_text(s) -> str:
    """The rule readings used (R-RST-31 … R-RST-33), in words."""
    rec = ("class recoveries in the composure race: absolute focus, channel divinity, ki (R-RST-32, "
           "rules.recoveries = true, the seed)" if s.rules.recoveries else
           "no class recoveries in the composure race (R-RST-32, rules.recoveries = false, the earlier tables)")
    duel = (f"an overload in the duel dazes the target for {s.overload.dazed_rounds} round(s) (R-RST-33, "
            "rules.overload_in_duel = true, the seed)" if s.rules.overload_in_duel else
            "the duel ignores composure (R-RST-33, rules.overload_in_duel = false, the earlier reading)")
    return f"{rec}; {duel}; a druid adds its wis mod only when positive (R-RST-31)"


def _inputs(s, p) -> str:
    blocks = []
    if s.binder is not None:
        b = s.binder
        pairs = [("scores", ", ".join(f"{k} {v}" for k, v in b.scores.as_dict().items())),
                 ("binds", ", ".join(b.slots)), ("method", b.method),
                 ("flanking", f"yes, choosing {b.flank_choice.replace('_', ' ')}" if b.flanking else "no"),
                 ("acts first", s.target.initiative)]
        blocks.append(section("Binder", definitions(pairs), level=3))
    t = s.target
    start = [f"{slot} {LEVEL_NAMES[lv]}" for slot, lv in zip(SLOTS, t.restraints.as_tuple(), strict=True) if lv]
    pairs = [("class and level", f"{t.class_} {t.level}"),
             ("scores", ", ".join(f"{k} {v}" for k, v in t.scores.as_dict().items())),
             ("condition", t.condition), ("starting restraints", ", ".join(start) or "none"),
             ("favoured terrain", "yes" if t.favoured_terrain else "no"),
             ("composure maximum", str(p.composure_max))]
    blocks.append(section("Target", definitions(pairs), level=3))
    c = s.composure
    pairs = [("stimulus per round", f"{c.stimulus} ({c.kind})" if c.stimulus else "none"),
             ("rounds", str(c.rounds or s.run.rounds)),
             ("party pools", ", ".join(f"{m.name} ({m.class_} {m.level})" for m in c.party) or "none"),
             ("dice stacking", s.rules.dice_stacking), ("duel rounds", str(s.run.rounds)),
             ("reading", reading_text(s))]
    blocks.append(section("Composure and run settings", definitions(pairs), level=3))
    return join(*blocks)


def write_report(result: SimulationResult, out_dir, exact_summary: dict | None = None) -> Path:
    """Write report.html and the PNG charts into ``out_dir``.

    Built from ``result.summary`` (and ``exact_summary``) alone, never ``result.runs``, so a streamed
    result (``simulate(keep_runs=False)``, empty runs) gives the same report."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    s = result.scenario
    summary = result.summary
    p = compile_params(s)
    sections = [_answer(result, exact_summary), description_block(s.description),
                section("Inputs that decide it", _inputs(s, p)), _escape_section(s, p, out)]
    image = _stacked_levels(summary, out)
    if image:
        sections.append(section("Level distribution per round (R-RST-13)", image=image,
                                alt="Stacked bars: restraint level at the end of each round, per slot"))
    sections.append(section(
        "P(incapacitated) and P(arms complete) by round (R-RST-26)",
        details("Table: by round, with 95% intervals" + (" and exact values" if exact_summary else ""),
                _by_round_table(summary, exact_summary)),
        image=_by_round_chart(summary, exact_summary, out),
        alt="Line chart: probability the target is incapacitated, has its arms complete, or either, by round"))
    if p.n_pools:
        sections.append(_pools_section(s, p, summary, exact_summary, out))
    sections += [_effect_section(s, out), *_composure_sections(s, p, out)]
    feats = class_features_table(s.target.level, s.target.scores.as_dict())
    sections.append(section(f"Class features at level {s.target.level} (R-RST-12, R-RST-23)",
                            table_html(feats, index=False), note="Reference.", folded=True))
    title = f"Restraint: {s.name or s.slug}"
    return write_html(out / "report.html", title, sections, summary)


def _escape_section(s, p, out: Path):
    """Escape check success by slot and level (R-RST-2, R-RST-30): the DC ladder and a heat map."""
    esc = escape_probability_table(p).set_index("slot")
    binds = set(s.binder.slots) if s.binder is not None else set()
    return section(
        "Escape check success by slot and level (R-RST-2, R-RST-30)",
        join(_dc_ladder(s),
             paragraph("The escape DC of each slot and level (R-RST-2); the chart shows the target's chance to escape "
                       "one restraint alone at each level. The binder binds: "
                       + (", ".join(sorted(binds)) or "nothing") + "."),
             details("Table: P(escape check succeeds) by slot and level", table_html(esc.rename(columns=str)))),
        image=_heat_map(esc, "P(escape check succeeds)", "level", "slot", out / "escape_heat.png", "{:.2f}"),
        alt="Heat map: escape-check success probability by slot and level")


def _pools_section(s, p, summary: dict, exact_summary: dict | None, out: Path):
    """The composure pools under the stimulus: first overload by round, per pool (and exact mean rounds)."""
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
    return section("Composure pools under the stimulus", body, image=image,
                   alt="Line chart: probability of the first overload by round, per pool")


def _effect_section(s, out: Path):
    """The combat effect table (R-RST-14) and the hit chances of the wearer's weapon attack."""
    effects = combat_effect_table(s.table.attack_bonus, s.table.ac)
    hit_cols = [f"hit_ac{ac}" for ac in s.table.ac]
    hits = effects.set_index(effects["slot"] + " " + effects["level"])[hit_cols]
    hits.columns = [c.removeprefix("hit_ac") for c in hits.columns]
    return section(
        f"Combat effect table (R-RST-14), attack bonus {s.table.attack_bonus:+d}",
        table_html(effects, index=False),
        image=_heat_map(hits, "P(the wearer's weapon attack hits) by restraint", "armour class", "restraint",
                        out / "effect_heat.png", "{:.2f}"),
        alt="Heat map: probability the wearer's weapon attack hits, by restraint and armour class",
        note="Reference. 'wearer hits': the wearer's weapon attack with its penalty die; 'fighter wearer hits': a "
             "fighter's attack ignoring restraint penalties (R-RST-12); 'hit against wearer': an attack with the "
             "same bonus against the wearer.", folded=True)


def _composure_sections(s, p, out: Path) -> list:
    """Composure maximum by class and level (R-RST-20, R-RST-25) and, with pools, the expected rounds until
    overload (R-RST-24)."""
    table_ = composure_table(s.target.scores.as_dict())
    table_.index.name = "class"
    sections = [section(
        "Composure maximum by class and level (R-RST-20, R-RST-25), the target's scores",
        table_html(table_, float_format="{:.0f}"),
        image=_heat_map(table_, "Composure maximum", "level", "class", out / "composure_heat.png", "{:.0f}"),
        alt="Heat map: composure maximum by class and level", note="Reference.", folded=True)]
    if p.n_pools:
        expected = rounds_to_overload_table(table_, damage_distribution(p, 0))
        sections.append(section(
            f"Expected rounds until overload under {s.composure.stimulus} per round (R-RST-24, exact, without the "
            "class recoveries of R-RST-32)",
            table_html(expected, float_format="{:.1f}"),
            image=_heat_map(expected, "Expected rounds until overload", "level", "class",
                            out / "overload_heat.png", "{:.1f}"),
            alt="Heat map: expected rounds until overload by class and level", note="Reference.", folded=True))
    return sections
