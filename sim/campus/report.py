"""Campus report: clear rate with interval, per-turn capture hazard, escape-check success by turn (the
balance of "target = turn number"), win rate per adversary template and per stance, vitality at the end,
status over the turns (R-CAM-41, R-CAM-59).

Built only from ``result.summary``, ``result.extra["aggregate"]`` (:class:`~sim.campus.aggregate.CampusAggregate`)
and the scenario, never from ``result.runs``, so a streamed result (``keep_runs=False``) reports the same."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd

from sim.campus.model import STANCES
from sim.campus.params import CAPTURED, CLEARED, GAME_OVER, STATUS_NAMES
from sim.campus.stances import stance_table
from sim.report import new_figure, save_figure, section, table_html, write_html


def _fmt(x) -> str:
    return "–" if x is None else f"{x:.4f}"


def _mix(values) -> str:
    return " / ".join(str(v) for v in values)


def stance_section(scenario, out: Path) -> str:
    """Stance analysis (issue 7): per PC x adversary template the 3x3 stance game at the starting abilities,
    its exact equilibrium and the best pure stance against the template's own weights; a heat map of the
    game values."""
    table = stance_table(scenario)
    title = "Stance analysis (PC x adversary)"
    if table.empty:
        return section(title, "<p>No adversary templates.</p>")
    rows = []
    for _, r in table.iterrows():
        grid = " ".join("".join(str(r[f"{a}_vs_{b}"]) for b in STANCES) for a in STANCES)
        rows.append({
            "PC": r["pc"],
            "adversary": r["adversary"],
            "wins (rows PC fight/flee/hide; cols adversary fight/flee/hide)": grid,
            "PC equilibrium mix (fight / flee / hide)": _mix(r[f"eq_{a}"] for a in STANCES),
            "game value": str(r["value"]),
            "adversary minimax mix": _mix(r[f"adv_eq_{a}"] for a in STANCES),
            "win vs its stance weights (fight / flee / hide)": _mix(r[f"vs_weights_{a}"] for a in STANCES),
            "best pure stance (counter)": f"{r['best_vs_weights']} ({r['best_vs_weights_win']})",
        })
    shown = pd.DataFrame(rows)
    pcs = list(dict.fromkeys(table["pc"]))
    advs = list(dict.fromkeys(table["adversary"]))
    grid = np.array([[float(table[(table.pc == p) & (table.adversary == a)]["value"].iloc[0]) for a in advs]
                     for p in pcs])
    labels = {(p, a): str(v) for p, a, v in zip(table["pc"], table["adversary"], table["value"], strict=True)}
    fig, ax = new_figure("Stance game value: win probability the PC's equilibrium mix guarantees",
                         "adversary template", "PC",
                         size=(max(5.0, 1.3 * len(advs) + 3), max(3.0, 0.55 * len(pcs) + 2)))
    ax.grid(False)
    im = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(advs)), advs)
    ax.set_yticks(range(len(pcs)), pcs)
    for y, p in enumerate(pcs):
        for x, a in enumerate(advs):
            ax.text(x, y, labels[(p, a)], ha="center", va="center", color="w" if grid[y, x] < 0.5 else "k")
    fig.colorbar(im, ax=ax, label="game value (P(PC wins))")
    save_figure(fig, out / "stance_game_value.png")
    note = ("At the PCs' starting abilities. A confrontation is decided by the two stances (R-CAM-2..4, a tie is a "
            "loss for the PC): 1 = the PC wins. The equilibrium mix is the PC's exact maximin strategy when the "
            "adversary may pick any stance (ties towards the template's own weights); the game value is the win "
            "probability it guarantees. The last columns use the template's stance weights, as the counter "
            "policy does; the equilibrium stance policy plays the mix.")
    return section(title, table_html(shown, index=False), image="stance_game_value.png", note=note)


def write_report(result, out_dir, exact_summary=None) -> Path:
    """Write report.html and the PNG charts into ``out_dir`` (campus has no exact analysis)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    s = result.summary
    agg = result.extra["aggregate"]
    names = s["pc_names"]
    T = len(s["capture_by_turn"])
    turns = np.arange(1, T + 1)
    sections = []

    lo, hi = s["clear_rate_ci"]
    plo, phi = s["party_clear_rate_ci"]
    head = pd.DataFrame(
        {
            "value": [s["clear_rate"], s["party_clear_rate"], s["game_over_rate"], s["captured_at_end_rate"],
                      s["rescues_tried_per_game"], s["rescue_success_rate"]],
            "95% interval": [f"[{lo:.4f}, {hi:.4f}]", f"[{plo:.4f}, {phi:.4f}]", "", "", "", ""],
        },
        index=["clear rate (mean over PCs)", "party clear rate", "game over rate", "captured at the end",
               "rescues tried per game", "rescue success rate"],
    )
    desc = html.escape(result.scenario.description.strip()) if result.scenario.description else ""
    fights = {"until_cleared": "confrontations repeat at each location until no adversary or no free PC is left "
                               "there (R-CAM-6, rules.fights = \"until_cleared\")",
              "once": "each PC fights at most once a turn (R-CAM-6, rules.fights = \"once\", the reading before "
                      "the revision)"}[result.scenario.rules.fights]
    sections.append(section("Summary", (f"<p>{desc}</p>" if desc else "") + f"<p>Fights: {html.escape(fights)}.</p>"
                            + table_html(head)))

    # per PC outcomes
    rows = []
    cleared, captured, over = (agg.status_share(code) for code in (CLEARED, CAPTURED, GAME_OVER))
    for i, nm in enumerate(names):
        rows.append({
            "PC": nm,
            "cleared": float(cleared[i]),
            "captured at end": float(captured[i]),
            "game over": float(over[i]),
            "mean vitality at end": float(agg.vitality_sum[i] / agg.runs),
            "mean gp at end": float(agg.gp_sum[i] / agg.runs),
        })
    per_pc = pd.DataFrame(rows).set_index("PC")
    fig, ax = new_figure("Outcome per PC", "PC", "share of games")
    bottom = np.zeros(len(names))
    for label, key in (("cleared", "cleared"), ("captured at end", "captured at end"), ("game over", "game over")):
        vals = per_pc[key].to_numpy()
        ax.bar(names, vals, bottom=bottom, label=label)
        bottom += vals
    ax.legend()
    save_figure(fig, out / "outcome_by_pc.png")
    sections.append(section("Outcome per PC", table_html(per_pc), image="outcome_by_pc.png"))

    # status over the turns
    fig, ax = new_figure("Status of the PCs after each turn", "turn", "share of PCs")
    per_turn = agg.status_by_turn.sum(axis=1)  # (T, statuses): PC-games by status after each turn
    shares = [per_turn[:, k] / (agg.runs * len(names)) for k in range(len(STATUS_NAMES))]
    ax.stackplot(turns, *shares, labels=list(STATUS_NAMES))
    ax.set_ylim(0, 1)
    ax.legend(loc="lower left")
    save_figure(fig, out / "status_by_turn.png")
    sections.append(section("Status over the turns", image="status_by_turn.png"))

    # capture hazard
    hazard = [np.nan if h is None else h for h in s["capture_hazard_by_turn"]]
    fig, ax = new_figure("Capture hazard per turn", "turn", "P(captured in turn t | free at its start)")
    ax.plot(turns, hazard, marker="o", label="hazard")
    ax.plot(turns, s["capture_by_turn"], marker="s", linestyle="--", label="expected captures per game")
    ax.legend()
    save_figure(fig, out / "capture_hazard.png")
    tab = pd.DataFrame({"capture hazard": [_fmt(h) for h in s["capture_hazard_by_turn"]],
                        "expected captures": s["capture_by_turn"],
                        "escape checks per game": s["escape_checks_by_turn"],
                        "escape success": [_fmt(e) for e in s["escape_success_by_turn"]]}, index=turns)
    tab.index.name = "turn"
    sections.append(section("Captures per turn", image="capture_hazard.png"))

    # escape checks: target = turn number
    esc = [np.nan if e is None else e for e in s["escape_success_by_turn"]]
    fig, ax = new_figure("Escape-check success by turn (target = turn + offset)", "turn", "P(check succeeds)")
    ax.plot(turns, esc, marker="o", label="success rate")
    ax.set_ylim(-0.02, 1.02)
    ax2 = ax.twinx()
    ax2.bar(turns, s["escape_checks_by_turn"], alpha=0.25, color="gray", label="checks per game")
    ax2.set_ylabel("checks per game")
    ax.legend(loc="upper right")
    save_figure(fig, out / "escape_by_turn.png")
    sections.append(section("Escape checks by turn", table_html(tab), image="escape_by_turn.png",
                            note="Target = turn number + offset (R-CAM-11); pooled over all checks of the turn "
                                 "(R-CAM-59). Later turns need higher minimum abilities or more rescuers."))

    # win rates
    adv = pd.DataFrame({
        "confrontations per game": s["duels_per_game_by_adversary"],
        "PC win rate": {k: (np.nan if v is None else v) for k, v in s["win_rate_by_adversary"].items()},
    })
    adv.index.name = "adversary"
    fig, ax = new_figure("PC win rate per adversary template", "adversary", "P(PC wins a duel)")
    ax.bar(adv.index.astype(str), adv["PC win rate"].fillna(0))
    ax.set_ylim(0, 1)
    save_figure(fig, out / "win_rate_by_adversary.png")
    sections.append(section("Win rate per adversary", table_html(adv), image="win_rate_by_adversary.png"))
    sta = pd.DataFrame({
        "duels per game": s["duels_per_game_by_stance"],
        "PC win rate": {k: (np.nan if v is None else v) for k, v in s["win_rate_by_stance"].items()},
    })
    sta.index.name = "PC stance"
    fig, ax = new_figure("PC win rate per stance", "PC stance", "P(PC wins a duel)")
    ax.bar(list(STANCES), sta["PC win rate"].fillna(0).to_numpy())
    ax.set_ylim(0, 1)
    save_figure(fig, out / "win_rate_by_stance.png")
    sections.append(section("Win rate per stance", table_html(sta), image="win_rate_by_stance.png"))

    # vitality at the end
    fig, ax = new_figure("Vitality at the end of the game", "vitality", "share of games")
    xs = agg.vitality_values()
    width = 0.8 / max(len(names), 1)
    for i, nm in enumerate(names):
        counts = agg.vitality_counts[i] / agg.runs
        ax.bar(xs + i * width - 0.4 + width / 2, counts, width=width, label=nm)
    ax.legend()
    save_figure(fig, out / "vitality_end.png")
    sections.append(section("Vitality at the end", image="vitality_end.png"))

    sections.append(stance_section(result.scenario, out))

    write_html(out / "report.html", f"Campus: {s.get('name') or result.scenario.slug}", sections, summary=s)
    return out / "report.html"
