"""Campus report: clear rate with interval, per-turn capture hazard, escape-check success by turn (the
balance of "target = turn number"), win rate per adversary template and per stance, vitality at the end,
status over the turns (R-CAM-41, R-CAM-59).

Built only from ``result.summary``, ``result.aggregate`` (:class:`~sim.campus.aggregate.CampusAggregate`)
and the scenario, never from ``result.runs``, so a streamed result (``keep_runs=False``) reports the same."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sim.campus.model import STANCES
from sim.campus.params import CAPTURED, CLEARED, GAME_OVER, STATUS_NAMES
from sim.campus.stances import stance_table
from sim.palette import BASELINE, outcome_colour, series_colour
from sim.report import (
    answer,
    chart_text,
    definitions,
    description_block,
    details,
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
from sim.stats import wilson_interval


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
        grid = _BLOCK_TABLE(["PC \\ adversary"] + list(STANCES),
                            [[a] + ["win" if int(r[f"{a}_vs_{b}"]) else "–" for b in STANCES] for a in STANCES])
        rows.append([
            r["pc"], r["adversary"], grid,
            _mix(r[f"eq_{a}"] for a in STANCES), str(r["value"]),
            _mix(r[f"adv_eq_{a}"] for a in STANCES),
            _mix(r[f"vs_weights_{a}"] for a in STANCES),
            f"{r['best_vs_weights']} ({r['best_vs_weights_win']})",
        ])
    columns = ["PC", "adversary", "who wins each pairing of stances", "PC equilibrium mix (fight / flee / hide)",
               "game value", "adversary minimax mix", "win vs its stance weights (fight / flee / hide)",
               "best pure stance (counter)"]
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
    ax.set_xticks(range(len(advs)), [chart_text(a) for a in advs])
    ax.set_yticks(range(len(pcs)), [chart_text(p) for p in pcs])
    for y, p in enumerate(pcs):
        for x, a in enumerate(advs):
            ax.text(x, y, labels[(p, a)], ha="center", va="center", color="w" if grid[y, x] < 0.5 else "k")
    fig.colorbar(im, ax=ax, label="game value (P(PC wins))")
    save_figure(fig, out / "stance_game_value.png")
    note = ("At the PCs' starting abilities. A confrontation is decided by the two stances (R-CAM-2..4, a tie is a "
            "loss for the PC). The equilibrium mix is the PC's exact maximin strategy when the "
            "adversary may pick any stance (ties towards the template's own weights); the game value is the win "
            "probability it guarantees. The last columns use the template's stance weights, as the counter "
            "policy does; the equilibrium stance policy plays the mix.")
    return section(title, details("Table: stance games, equilibria and counters", _BLOCK_TABLE(columns, rows)),
                   image="stance_game_value.png", note=note,
                   alt="Heat map: win probability the PC's equilibrium stance mix guarantees, per PC and adversary")


_BLOCK_TABLE = table


def _answer(result, s: dict, agg) -> str:
    scen = result.scenario
    n = agg.runs
    question = scenario_question(scen.description, "How often do the PCs clear the game?")
    go = s["game_over_rate"]
    lines = [f"{fmt_pct(s['clear_rate'], s['clear_rate_ci'])} of PCs clear the game (the mean of the "
             f"{len(s['pc_names'])} PCs' clear rates)."]
    lines.append(f"Every PC clears in {fmt_pct(s['party_clear_rate'], s['party_clear_rate_ci'])} of games; "
                 f"{fmt_pct(go, wilson_interval(round(go * n), n))} of PCs end with their game over and "
                 f"{fmt_pct(s['captured_at_end_rate'])} still captured (95% intervals in brackets).")
    win = {k: v for k, v in s["win_rate_by_adversary"].items() if v is not None}
    if win:
        hardest = min(win, key=win.get)
        duels = s["duels_per_game_by_adversary"].get(hardest, 0)
        lines.append(f"Hardest adversary: {hardest} (the PC wins {fmt_pct(win[hardest])} of duels against it; "
                     f"{duels:.2f} confrontations per game).")
    if s.get("rescues_tried_per_game"):
        lines.append(f"Rescues: {s['rescues_tried_per_game']:.2f} tried per game, "
                     f"{fmt_pct(s['rescue_success_rate'] or 0)} succeed.")
    if s.get("bought_rate_by_item"):  # R-CAM-9a
        turns = s["bought_turn_by_item"]
        lines.append("Purchases: " + "; ".join(
            f"{item} bought by {fmt_pct(rate)} of PCs"
            + (f" (in turn {turns[item]:.1f} on average)" if turns[item] else "")
            for item, rate in s["bought_rate_by_item"].items()) + ".")
    return answer(question, lines)


def _inputs(scen) -> str:
    r = scen.rules
    pairs = [("turns", str(r.turns)), ("largest team", str(r.team_max)), ("starting vitality", str(r.vitality)),
             ("escape-check offset", f"{r.escape_offset:+d}"), ("destinations offered per turn", str(r.options)),
             ("locations", ", ".join(
                 loc.id + (" (exit" + (f", opens turn {loc.opens_on}" if loc.opens_on > 1 else "") + ")"
                           if loc.exit else "") + (" (capture room)" if loc.capture_room else "")
                 for loc in scen.locations))]
    for key in ("fights", "policy"):
        value = getattr(r, key, None) if key == "fights" else getattr(scen, key, None)
        if value is not None:
            pairs.append((key, str(getattr(value, "name", value))))
    if r.miso_bomb:  # R-CAM-25a: the reading used
        pairs.append(("miso bombs in missions", "take part, lower the total" if r.miso_in_missions else "no part"))
    costs = scen.growth.costs
    if scen.policy.buy:  # R-CAM-9a
        prices = {sk.name: sk.cost for sk in costs.skills}
        pairs.append(("purchases (in order)", ", ".join(
            f"{item} ({prices.get(item, costs.team)} gp)" for item in scen.policy.buy)
            + ("; saving for the next" if scen.policy.save_for_buy else "")))
    pcs = []
    for m in scen.party:
        skills = []
        for sk in m.skills:
            text = sk.kind.replace("_", " ")
            if sk.stances:
                text += " " + "/".join(sk.stances)
            if sk.value is not None:
                text += f" {sk.value:+g}" if sk.kind == "bonus" else f" ×{sk.value:g}"
            if sk.when:
                text += f" ({sk.when})"
            if sk.name:
                text += f" {sk.name}"
            skills.append(text)
        pcs.append([m.name, str(m.abilities.fight), str(m.abilities.flee), str(m.abilities.hide),
                    str(m.vitality if m.vitality is not None else r.vitality), m.team or "–",
                    "; ".join(skills) or "none"])
    advs = []
    for a in scen.adversaries:
        weights = a.stance
        if weights is None:
            w = "uniform"
        elif isinstance(weights, str):
            w = f"always {weights}"
        else:
            w = " / ".join(f"{getattr(weights, st):g}" for st in STANCES)
        advs.append([a.name, " / ".join(str(getattr(a.abilities, st)) for st in STANCES),
                     " / ".join(f"{getattr(a.bonus, st):+d}" for st in STANCES), w, str(a.reward),
                     "yes" if a.boss else "no"])
    return join(
        definitions(pairs),
        section("PCs", table(["PC", "fight", "flee", "hide", "vitality", "team", "skills"], pcs), level=3),
        section("Adversary templates", table(["adversary", "abilities (fight / flee / hide)",
                                              "stance bonus (fight / flee / hide)",
                                              "stance weights (fight / flee / hide)", "reward", "boss"], advs),
                level=3),
    )


def write_report(result, out_dir, exact_summary=None) -> Path:
    """Write report.html and the PNG charts into ``out_dir`` (campus has no exact analysis)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    s = result.summary
    scen = result.scenario
    fights = {"until_cleared": "confrontations repeat at each location until no adversary or no free PC is left "
                               "there (R-CAM-6, rules.fights = \"until_cleared\")",
              "once": "each PC fights at most once a turn (R-CAM-6, rules.fights = \"once\", the reading before "
                      "the revision)"}[scen.rules.fights]
    sections = [_answer(result, s, result.aggregate), paragraph(f"Fights: {fights}."),
                description_block(scen.description), section("Inputs that decide it", _inputs(scen)),
                _outcome_section(result, out), _status_section(result, out), _captures_section(result, out),
                _escape_checks_section(result, out), *_win_rate_sections(result, out),
                _vitality_section(result, out), stance_section(result.scenario, out)]
    write_html(out / "report.html", f"Campus: {s.get('name') or result.scenario.slug}", sections, summary=s)
    return out / "report.html"


def _outcome_section(result, out: Path):
    """Per PC outcomes at the end of the game: cleared, captured, game over (table and stacked bars)."""
    s, agg = result.summary, result.aggregate
    names = s["pc_names"]
    rows = []
    cleared, captured, over = (agg.status_share(code) for code in (CLEARED, CAPTURED, GAME_OVER))
    n = agg.runs
    for i, nm in enumerate(names):
        rows.append([nm, fmt_pct(float(cleared[i]), wilson_interval(round(float(cleared[i]) * n), n)),
                     fmt_pct(float(captured[i])), fmt_pct(float(over[i])), f"{agg.vitality_sum[i] / n:.2f}",
                     f"{agg.gp_sum[i] / n:.2f}"])
    fig, ax = new_figure("Outcome per PC (at the end of the game)", "PC", "share of games")
    bottom = np.zeros(len(names))
    for label, vals in (("cleared", cleared), ("captured at the end", captured), ("game over", over)):
        vals = np.asarray(vals, dtype=float)
        ax.bar([chart_text(nm, 20) for nm in names], vals, bottom=bottom, label=label, color=outcome_colour(label))
        bottom += vals
    ax.set_ylim(0, 1)
    legend_outside(ax)
    save_figure(fig, out / "outcome_by_pc.png")
    return section("Outcome per PC", table(["PC", "cleared (95% interval)", "captured at the end", "game over",
                                            "mean vitality at the end", "mean gp at the end"], rows),
                   image="outcome_by_pc.png", alt="Stacked bars: outcome shares per PC")


def _status_section(result, out: Path):
    """Status over the turns, per PC-game, with the end of the game (free PCs clear) as the last column."""
    agg = result.aggregate
    T = len(result.summary["capture_by_turn"])
    fig, ax = new_figure("Status of a PC after each turn (each PC in each game counts once)", "turn",
                         "share of PC-games")
    per_turn = agg.status_by_turn.sum(axis=1)  # (T, statuses): PC-games by status after each turn
    final = agg.final_counts.sum(axis=0)  # (statuses,) PC-games by final status
    total = agg.runs * len(result.summary["pc_names"])
    x = np.arange(1, T + 2)
    shares = [np.append(per_turn[:, k], final[k]) / total for k in range(len(STATUS_NAMES))]
    names_shown = [nm.replace("_", " ") for nm in STATUS_NAMES]
    ax.stackplot(x, *shares, labels=names_shown, colors=[outcome_colour(nm) for nm in names_shown], step="mid")
    ax.set_xticks(list(range(1, T + 1, max(1, T // 12))) + [T + 1],
                  [str(v) for v in range(1, T + 1, max(1, T // 12))] + ["end"])
    ax.set_ylim(0, 1)
    legend_outside(ax)
    save_figure(fig, out / "status_by_turn.png")
    return section(
        "Status over the turns", image="status_by_turn.png",
        alt="Stacked area: share of PC-games free, captured, cleared or over after each turn and at the end",
        note="Shares of PC-games (one PC in one game), so they average over the PCs like the clear rate. A PC "
             "that is still free after the last turn clears the game then (R-CAM-41): the 'end' column is the "
             "final status and its cleared share equals the clear rate.")


def _captures_section(result, out: Path):
    """The capture hazard per turn and the expected captures per game."""
    s = result.summary
    turns = np.arange(1, len(s["capture_by_turn"]) + 1)
    hazard = [np.nan if h is None else h for h in s["capture_hazard_by_turn"]]
    fig, ax = new_figure("Capture hazard per turn", "turn", "probability / expected captures")
    captured = outcome_colour("captured")
    ax.plot(turns, hazard, marker="o", color=captured, label="P(captured in the turn | free at its start)")
    ax.plot(turns, s["capture_by_turn"], marker="s", linestyle="--", color=captured,
            label="expected captures per game")
    legend_outside(ax)
    save_figure(fig, out / "capture_hazard.png")
    return section("Captures per turn", image="capture_hazard.png",
                   alt="Line chart: capture hazard and expected captures per turn")


def _escape_checks_section(result, out: Path):
    """Escape checks by turn (R-CAM-11: target = turn number + offset), with the per-turn table."""
    s = result.summary
    turns = np.arange(1, len(s["capture_by_turn"]) + 1)
    tab = table(["turn", "capture hazard", "expected captures per game", "escape checks per game",
                 "escape-check success"],
                [[str(t_), fmt_pct(h), f"{c:.3f}", f"{e:.2f}", fmt_pct(sr)] for t_, h, c, e, sr in
                 zip(turns, s["capture_hazard_by_turn"], s["capture_by_turn"], s["escape_checks_by_turn"],
                     s["escape_success_by_turn"], strict=True)])
    esc = [np.nan if e is None else e for e in s["escape_success_by_turn"]]
    fig, ax = new_figure("Escape-check success by turn (target = turn + offset)", "turn",
                         "P(check succeeds) (line)")
    (line,) = ax.plot(turns, esc, marker="o", color=series_colour(0), label="success rate (left axis)")
    ax.set_ylim(-0.02, 1.02)
    ax2 = ax.twinx()
    bars = ax2.bar(turns, s["escape_checks_by_turn"], alpha=0.5, color=BASELINE, label="checks per game (right axis)")
    ax2.set_ylabel("checks per game (bars)")
    ax.legend(handles=[line, bars], loc="upper left", bbox_to_anchor=(1.12, 1.0), fontsize="small")
    save_figure(fig, out / "escape_by_turn.png")
    return section("Escape checks by turn", details("Table: per turn", tab), image="escape_by_turn.png",
                   alt="Line: escape-check success by turn; bars: checks per game",
                   note="Target = turn number + offset (R-CAM-11); pooled over all checks of the turn "
                        "(R-CAM-59). Later turns need higher minimum abilities or more rescuers.")


def _win_rate_sections(result, out: Path) -> list:
    """The PC win rate per adversary template and per stance."""
    s = result.summary
    adv_rows = [[k, f"{s['duels_per_game_by_adversary'][k]:.2f}", fmt_pct(v)]
                for k, v in s["win_rate_by_adversary"].items()]
    advs = list(s["win_rate_by_adversary"])
    fig, ax = new_figure("PC win rate per adversary template", "adversary", "P(PC wins a duel)")
    ax.bar([chart_text(a, 20) for a in advs], [v or 0 for v in s["win_rate_by_adversary"].values()],
           color=outcome_colour("duel won"))
    ax.set_ylim(0, 1)
    save_figure(fig, out / "win_rate_by_adversary.png")
    by_adversary = section("Win rate per adversary",
                           table(["adversary", "confrontations per game", "PC win rate"], adv_rows),
                           image="win_rate_by_adversary.png", alt="Bar chart: PC win rate per adversary template")
    st_rows = [[k, f"{s['duels_per_game_by_stance'][k]:.2f}", fmt_pct(v)] for k, v in s["win_rate_by_stance"].items()]
    fig, ax = new_figure("PC win rate per stance", "PC stance", "P(PC wins a duel)")
    ax.bar(list(STANCES), [s["win_rate_by_stance"].get(st) or 0 for st in STANCES], color=outcome_colour("duel won"))
    ax.set_ylim(0, 1)
    save_figure(fig, out / "win_rate_by_stance.png")
    return [by_adversary,
            section("Win rate per stance", table(["PC stance", "duels per game", "PC win rate"], st_rows),
                    image="win_rate_by_stance.png", alt="Bar chart: PC win rate per stance")]


def _vitality_section(result, out: Path):
    """The distribution of vitality at the end of the game, per PC."""
    agg = result.aggregate
    names = result.summary["pc_names"]
    fig, ax = new_figure("Vitality at the end of the game", "vitality", "share of games")
    xs = agg.vitality_values()
    width = 0.8 / max(len(names), 1)
    for i, nm in enumerate([chart_text(nm, 20) for nm in names]):
        counts = agg.vitality_counts[i] / agg.runs
        ax.bar(xs + i * width - 0.4 + width / 2, counts, width=width, label=nm)
    legend_outside(ax, title="PC")
    save_figure(fig, out / "vitality_end.png")
    return section("Vitality at the end", image="vitality_end.png",
                   alt="Grouped bars: distribution of vitality at the end of the game per PC")
