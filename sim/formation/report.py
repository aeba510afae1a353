"""report.html and PNG charts for kind = "formation" (R-MDK-14), built from the summary, the streaming
aggregate (``result.aggregate``), the scenario and the exact summary only: never from
``result.runs``, so a streamed result (empty runs) is reported the same way."""

from __future__ import annotations

from pathlib import Path

import numpy as np

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
from sim.palette import EXACT, outcome_colour, series_colour
from sim.report import (
    answer,
    definitions,
    description_block,
    details,
    fmt_exact,
    fmt_num,
    fmt_pct,
    join,
    legend_outside,
    new_figure,
    save_figure,
    scenario_question,
    section,
    table,
    write_html,
)

#: Japanese ability names of the rule text with their romanised reading and plain English meaning.
TERMS = {"athletics": "運動 (undō)", "information": "情報 (jōhō)", "combat": "戦闘 (sentō)",
         "stamina": "体力 (tairyoku)", "resolve": "自尊 (jison)"}

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
    agg = result.aggregate
    reward = session_reward_dp(s.stars)
    fig, ax = new_figure("DP income per session (R-MDK-21)", "DP earned in the session", "probability")
    seen = np.flatnonzero(agg.dp_counts)
    ax.bar(seen, agg.dp_counts[seen] / agg.runs, width=0.8, alpha=0.6, color=series_colour(0), label="simulated")
    dist = {v: q for v, q in sixes_dp_distribution(s.checks).items() if q >= 1e-5}  # visible mass only
    ax.plot([reward + v for v in dist], list(dist.values()), ".", color=EXACT, label="exact")
    legend_outside(ax)
    save_figure(fig, out_dir / "dp_income.png")
    return "dp_income.png"


def _skirmish_chart(out_dir: Path, result) -> str:
    agg = result.aggregate
    n = agg.runs
    fig, ax = new_figure("Skirmish: rounds until the end, by outcome", "rounds", "share of runs")
    for code, label, outcome in ((0, "A", "side A wins"), (1, "B", "side B wins"), (2, "draw", "draw")):
        row = agg.winner_rounds[code + 1]
        total = int(row.sum())
        if total:
            seen = np.flatnonzero(row)
            ax.plot(seen, row[seen] / n, marker="o", color=outcome_colour(outcome), label=f"{label} ({total / n:.1%})")
    ax.set_ylim(bottom=0)
    legend_outside(ax, title="winner (share of runs)")
    save_figure(fig, out_dir / "skirmish_rounds.png")
    return "skirmish_rounds.png"


def _answer(scenario, s: dict, exact: dict | None) -> str:
    """The opening answer. Its first line answers what the scenario's setup exercises: the skirmish's winner where
    the skirmish runs (the ambush check next), else the ambush; then the DP of a session."""
    a = scenario.ambush
    skirmish = "skirmish_win_a" in s
    question = scenario_question(scenario.description, "Which side wins the skirmish, and what does a session earn?"
                                 if skirmish else "How often does the ambush succeed, and what does a session earn?")
    ex = f"; exact {fmt_exact(exact['ambush_win'])}" if exact and exact.get("ambush_win") is not None else ""
    ambush = [f"The ambush succeeds in {fmt_pct(s['ambush_win'], s['ambush_win_ci'])} of tries{ex}."]
    ex2 = f"; exact {fmt_exact(exact['ambush_win_by_2'])}" if exact and exact.get("ambush_win_by_2") is not None \
        else ""
    ambush.append(f"It wins by 2 or more in {fmt_pct(s['ambush_win_by_2'], s['ambush_win_by_2_ci'])}{ex2} "
                  f"(athletics {a.ambusher_athletics}, {a.powered_armor} powered armor, against information "
                  f"{a.defender_information}, {a.super_perception} super-perception).")
    ex3 = f"; exact {exact['dp_per_session']:.4g}" if exact and exact.get("dp_per_session") is not None else ""
    dp = [f"A session earns {fmt_num(s['dp_per_session'], s['dp_per_session_ci'])} DP on average{ex3}."]
    if not skirmish:
        return answer(question, [*ambush, *dp])
    fight = [f"Skirmish: side A wins {fmt_pct(s['skirmish_win_a'], s['skirmish_win_a_ci'])}, side B "
             f"{fmt_pct(s['skirmish_win_b'], s['skirmish_win_b_ci'])}, draws "
             f"{fmt_pct(s['skirmish_draw'], s['skirmish_draw_ci'])} (95% intervals in brackets)."]
    return answer(question, [*fight, *ambush, *dp])


def reading_text(scenario) -> str:
    """The rule readings the skirmish used (R-MDK-5, R-MDK-6, R-MDK-11), in words."""
    pol = scenario.policy
    types = ("every physical attacker has melee and ranged (R-MDK-6, rules.attack_types = \"both\", the seed)"
             if scenario.rules.attack_types == "both" else
             "each unit has only its listed types (R-MDK-6, rules.attack_types = \"listed\", the earlier reading)")
    move = {"best": "units move freely to the area of their best attack or grapple attempt (R-MDK-11, "
                    "policy.movement = \"best\", the seed)",
            "best_attack": "units move freely to the area of their best attack (R-MDK-11, policy.movement = "
                           "\"best_attack\", the first round of the 2026-12 revision)",
            "fixed": "units keep their areas (R-MDK-11, policy.movement = \"fixed\", the earlier reading)",
            }[pol.movement]
    grapple = ("inside a grapple the -2 adds to the attack type's area penalty (R-MDK-10, rules.grapple_penalty = "
               "\"area\", the seed)" if scenario.rules.grapple_penalty == "area" else
               "inside a grapple only the -2 (R-MDK-10, rules.grapple_penalty = \"grapple_only\", the earlier reading)")
    recall = ("withdrawn slaves are never called back" if pol.recall_above is None else
              f"a withdrawn slave above {pol.recall_above:.0%} of its hp is called back (R-MDK-5)")
    dismiss = ("summons are never dismissed" if pol.dismiss_below is None else
               f"a summon below {pol.dismiss_below:.0%} of its hp is dismissed when another waits (R-MDK-5)")
    return f"{types}; {move}; {grapple}; {recall}; {dismiss}"


def _inputs(scenario) -> str:
    a, sess, sk = scenario.ambush, scenario.session, scenario.skirmish
    pairs = [("ambush", f"side {a.side}: athletics {TERMS['athletics']} {a.ambusher_athletics}, powered armor "
                        f"{a.powered_armor}, party size {a.party_size}; defender information "
                        f"{TERMS['information']} {a.defender_information}, super-perception {a.super_perception}"),
             ("session", f"{sess.checks} checks; stars " + (", ".join(map(str, sess.stars)) or "none")),
             ("skirmish", "off" if not sk.enabled else
              f"up to {sk.max_rounds} rounds, order {sk.order}, damage {sk.damage_model} (min {sk.min_damage}), "
              f"ambush {'on' if sk.ambush else 'off'}"),
             ("target choice", scenario.policy.name),
             ("reading", reading_text(scenario))]
    rows = [[u.name, u.side, u.area, u.attack, str(u.combat), str(u.evade), str(u.damage), str(u.hp), str(u.stars),
             ", ".join(f for f, on in (("troop", u.troop), ("summoned", u.summoned),
                                        ("super-perception", u.super_perception)) if on)
             + (f" grapple {u.grapple}" if u.grapple != "none" else "") or "–"]
            for u in scenario.units]
    parts = [definitions(pairs)]
    if rows:
        parts.append(section("Units", table(["unit", "side", "area", "attack", f"combat {TERMS['combat']}", "evade",
                                             "damage", "hp", "stars", "other"], rows), level=3))
    return join(*parts)


def write_report(result, out_dir, exact_summary=None) -> Path:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    scenario = result.scenario
    s = result.summary
    rows = []
    for key, label in (("ambush_win", "ambush succeeds"), ("ambush_win_by_2", "ambush wins by 2 or more"),
                       ("dp_per_session", "DP per session")):
        ci = s.get(key + "_ci")
        value = fmt_pct(s[key], ci) if key != "dp_per_session" else fmt_num(s[key], ci)
        ex = exact_summary.get(key) if exact_summary else None
        ex_text = "–" if ex is None else (fmt_exact(ex) if key != "dp_per_session" else f"{ex:.4g}")
        rows.append([label, value, ex_text])
    sections = [_answer(scenario, s, exact_summary), description_block(scenario.description),
                section("Inputs that decide it", _inputs(scenario)),
                section("Summary", table(["quantity", "simulated (95% interval)", "exact"], rows))]
    sections.append(section("Ambush probability (R-MDK-12, R-MDK-20)", image=_heatmap(out_dir, scenario),
                            alt="Heat maps: exact probability the ambush wins (and wins by 2) by ability "
                                "difference and modifier count",
                            note="Exact over the 36 × 36 dark-dice outcomes; the red square is this scenario."))
    tt = targeting_table(scenario)
    if len(tt):
        rows = [[r.attacker, r.attacker_side, r.attacker_area, r.attack, r.target, r.target_area,
                 "yes" if r.contact else "no", str(r.penalty), str(r.reason), fmt_exact(r.hit_probability, digits=3)]
                for r in tt.itertuples()]
        sections.append(section("Targeting table (R-MDK-6 .. R-MDK-9, R-MDK-14)",
                                details("Table: every attacker against every target",
                                        table(["attacker", "side", "area", "attack", "target", "target area",
                                               "contact", "penalty", "reason", "P(hit), exact"], rows)),
                                note=f"Starting formation; hit probability is exact: combat {TERMS['combat']} + "
                                     "penalty against evade, opposed 2DR, ties to the defender (R-MDK-2)."))
    sections.append(section("DP income per session (R-MDK-3, R-MDK-21)", image=_dp_chart(out_dir, result),
                            alt="Bar chart: distribution of DP earned per session, simulated and exact"))
    if "skirmish_win_a" in s:
        out_rows = [["side A wins", fmt_pct(s["skirmish_win_a"], s["skirmish_win_a_ci"])],
                    ["side B wins", fmt_pct(s["skirmish_win_b"], s["skirmish_win_b_ci"])],
                    ["draw (round limit)", fmt_pct(s["skirmish_draw"], s["skirmish_draw_ci"])]]
        extra = definitions([("mean rounds", f"{s['skirmish_mean_rounds']:.2f}"),
                             ("mean survivors", f"side A {s['skirmish_mean_survivors_a']:.2f}, side B "
                                                f"{s['skirmish_mean_survivors_b']:.2f}"),
                             ("mean enslavement DP for side A", f"{s['enslave_dp_mean']:.2f}")])
        sections.append(section("Skirmish outcomes (R-MDK-14)",
                                join(table(["outcome", "share of runs (95% interval)"], out_rows), extra),
                                image=_skirmish_chart(out_dir, result),
                                alt="Line chart: share of runs ending in each round, by winner"))
    seed = s.get("seed") if s.get("seed") is not None else 1
    effects = switch_effects(scenario, seed=seed)
    effect_rows = [[r["switch"], r["rule"], r["today"], r["seed"], r["measure"], fmt_num(r["value today"]),
                    fmt_num(r["value seed"])] for r in effects.to_dict(orient="records")]
    sections.append(section("The seed's readings (R-MDK-3, R-MDK-5, R-MDK-6, R-MDK-11, R-MDK-21)",
                            table(["switch", "rule", "reading before", "seed's reading", "measure", "before",
                                   "with the seed's reading"], effect_rows),
                            note="Each row changes one switch from the reading before (choice by smallest penalty, "
                                 "one attack type, fixed areas, no withdrawal); 2,000 runs each on this report's seed "
                                 "(common random numbers)."))
    title = f"Formation: {scenario.name or scenario.slug}"
    return write_html(out_dir / "report.html", title, sections, summary=s)
