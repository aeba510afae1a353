"""report.html and PNG charts for kind = "formation" (R-MDK-14), built from the summary, the streaming
aggregate (``result.extra["aggregate"]``), the scenario and the exact summary only: never from
``result.runs``, so a streamed result (empty runs) is reported the same way."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from sim.formation.rules import (
    AMBUSH_MARGIN,
    AMBUSH_STEP,
    N_PAIRS,
    opposed_counts,
    session_reward_dp,
    sixes_dp_distribution,
)
from sim.formation.switches import switch_effects
from sim.formation.targeting import targeting_table
from sim.report import new_figure, save_figure, section, table_html, write_html

HEAT_DIFFS = tuple(range(-8, 9))  # athletics − information
HEAT_STEPS = tuple(range(0, 5))  # powered armor + super-perception count (each −2 net)


def ambush_grid() -> tuple[np.ndarray, np.ndarray]:
    """Exact P(win), P(win by 2) over (athletics − information) × modifier count (R-MDK-20)."""
    win = np.zeros((len(HEAT_STEPS), len(HEAT_DIFFS)))
    by2 = np.zeros_like(win)
    for i, k in enumerate(HEAT_STEPS):
        for j, d in enumerate(HEAT_DIFFS):
            w, b = opposed_counts(d - AMBUSH_STEP * k, 0, AMBUSH_MARGIN)
            win[i, j], by2[i, j] = w / N_PAIRS, b / N_PAIRS
    return win, by2


def _heatmap(out_dir: Path, scenario) -> str:
    import matplotlib.pyplot as plt

    win, by2 = ambush_grid()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    a = scenario.ambush
    here = (a.ambusher_athletics - a.defender_information, a.powered_armor + a.super_perception)
    for ax, grid, title in ((axes[0], win, "P(ambush wins)"), (axes[1], by2, "P(ambush wins by >= 2)")):
        im = ax.imshow(grid, origin="lower", aspect="auto", vmin=0, vmax=1, cmap="viridis",
                       extent=(HEAT_DIFFS[0] - 0.5, HEAT_DIFFS[-1] + 0.5, HEAT_STEPS[0] - 0.5, HEAT_STEPS[-1] + 0.5))
        ax.set_title(f"{title} (exact, R-MDK-20)")
        ax.set_xlabel("ambusher athletics - defender information")
        ax.set_ylabel("powered armor + super-perception (each -2)")
        if HEAT_DIFFS[0] <= here[0] <= HEAT_DIFFS[-1] and here[1] <= HEAT_STEPS[-1]:
            ax.plot([here[0]], [here[1]], marker="s", mfc="none", mec="red", ms=14, mew=2)
        fig.colorbar(im, ax=ax, label="probability")
    save_figure(fig, out_dir / "ambush_heatmap.png")
    return "ambush_heatmap.png"


def _dp_chart(out_dir: Path, result) -> str:
    s = result.scenario.session
    agg = result.extra["aggregate"]
    reward = session_reward_dp(s.stars)
    fig, ax = new_figure("DP income per session (R-MDK-21)", "DP earned in the session", "probability")
    seen = np.flatnonzero(agg.dp_counts)
    ax.bar(seen, agg.dp_counts[seen] / agg.runs, width=0.8, alpha=0.6, label="simulated")
    dist = {v: q for v, q in sixes_dp_distribution(s.checks).items() if q >= 1e-5}  # visible mass only
    ax.plot([reward + v for v in dist], list(dist.values()), "k.", label="exact")
    ax.legend()
    save_figure(fig, out_dir / "dp_income.png")
    return "dp_income.png"


def _skirmish_chart(out_dir: Path, result) -> str:
    agg = result.extra["aggregate"]
    n = agg.runs
    fig, ax = new_figure("Skirmish: rounds until the end, by outcome", "rounds", "share of runs")
    for code, label in ((0, "A"), (1, "B"), (2, "draw")):
        row = agg.winner_rounds[code + 1]
        total = int(row.sum())
        if total:
            seen = np.flatnonzero(row)
            ax.plot(seen, row[seen] / n, marker="o", label=f"{label} ({total / n:.1%})")
    ax.legend(title="winner")
    save_figure(fig, out_dir / "skirmish_rounds.png")
    return "skirmish_rounds.png"


def _html_table(df: pd.DataFrame) -> str:
    """table_html with every non-float column as text (its formatter passes other values through
    unchanged, which pandas rejects for integers)."""
    df = df.copy()
    for col in df.columns:
        if not pd.api.types.is_float_dtype(df[col]):
            df[col] = df[col].astype(str)
    return table_html(df, index=False)


def write_report(result, out_dir, exact_summary=None) -> Path:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    scenario = result.scenario
    s = result.summary
    rows = []
    for key in ("ambush_win", "ambush_win_by_2", "dp_per_session"):
        ci = s.get(key + "_ci")
        rows.append({"key": key, "simulated": s[key],
                     "95% interval": f"[{ci[0]:.4f}, {ci[1]:.4f}]" if ci else "",
                     "exact": exact_summary.get(key) if exact_summary else np.nan})
    sections = [section("Summary", _html_table(pd.DataFrame(rows)),
                        note=scenario.description or None)]
    sections.append(section("Ambush probability (R-MDK-12, R-MDK-20)", image=_heatmap(out_dir, scenario),
                            note="Exact over the 36 × 36 dark-dice outcomes; the red square is this scenario."))
    table = targeting_table(scenario)
    if len(table):
        shown = table.drop(columns=["legal"])
        sections.append(section("Targeting table (R-MDK-6 .. R-MDK-9, R-MDK-14)", _html_table(shown),
                                note="Starting formation; hit probability is exact: 戦闘 + penalty against "
                                     "evade, opposed 2DR, ties to the defender (R-MDK-2)."))
    sections.append(section("DP income per session (R-MDK-3, R-MDK-21)", image=_dp_chart(out_dir, result)))
    if "skirmish_win_a" in s:
        out_rows = pd.DataFrame([
            {"outcome": "side A wins", "rate": s["skirmish_win_a"], "ci": str(np.round(s["skirmish_win_a_ci"], 4))},
            {"outcome": "side B wins", "rate": s["skirmish_win_b"], "ci": str(np.round(s["skirmish_win_b_ci"], 4))},
            {"outcome": "draw (round limit)", "rate": s["skirmish_draw"],
             "ci": str(np.round(s["skirmish_draw_ci"], 4))},
        ])
        extra = (f"<p>mean rounds {s['skirmish_mean_rounds']:.3f}; mean survivors A "
                 f"{s['skirmish_mean_survivors_a']:.3f}, B {s['skirmish_mean_survivors_b']:.3f}; "
                 f"mean enslavement DP for side A {s['enslave_dp_mean']:.3f}</p>")
        sections.append(section("Skirmish outcomes (R-MDK-14)", _html_table(out_rows) + extra,
                                image=_skirmish_chart(out_dir, result)))
    seed = s.get("seed") if s.get("seed") is not None else 1
    sections.append(section("The seed's readings (issue 18: R-MDK-3/5/6/11/21)",
                            _html_table(switch_effects(scenario, seed=seed)),
                            note="Each row changes one switch from the reading before issue 18; 2,000 runs each "
                                 "on this report's seed (sim.formation.switches)."))
    title = f"Formation: {scenario.name or scenario.slug}"
    return write_html(out_dir / "report.html", title, sections, summary=s)
