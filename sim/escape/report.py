"""The escape report: the scenario's question and its answer first, then the inputs that decide it (the
party and its restraints, the tier ladder in effect, attention and what drew it), then the charts
(escape-by-round curve with its interval band, outcome shares, the per-tier bottleneck, rounds to escape)
and reference tables (per character, per tier, balance) below."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from markupsafe import Markup

from sim.escape.aggregate import balance_from_aggregate
from sim.escape.model import DEFAULT_BECOMES, DEFAULT_DC, SLOTS, TIER_IDS
from sim.escape.state import ACTION_INDEX, ACTION_KINDS, action_kinds
from sim.labels import fixed
from sim.pages import balance_block
from sim.palette import BASELINE, EXACT, SERIES, outcome_colour, series_colour
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
    paragraph,
    save_figure,
    scenario_question,
    section,
    table,
    tag,
    write_html,
)
from sim.result import SimulationResult
from sim.stats import wilson_interval


def tier_table(result: SimulationResult) -> pd.DataFrame:
    """Per tier: checks made, success rate (with interval), character-rounds spent with it as the
    character's highest goal tier, and each tier's share of those rounds."""
    agg = result.aggregate
    checks = agg.checks_at_tier.sum(axis=0)
    succ = agg.successes_at_tier.sum(axis=0)
    rounds = agg.rounds_at_tier.sum(axis=0)
    n = agg.runs
    rows = []
    for t in range(1, 9):
        if checks[t] == 0 and rounds[t] == 0:
            continue
        lo, hi = wilson_interval(int(succ[t]), int(checks[t])) if checks[t] else (np.nan, np.nan)
        rows.append({
            "tier": TIER_IDS[t],
            "checks per run": checks[t] / n,
            "success rate": succ[t] / checks[t] if checks[t] else np.nan,
            "95% interval": f"[{lo:.3f}, {hi:.3f}]" if checks[t] else "–",
            "rounds spent per run": rounds[t] / n,
            "share of rounds": rounds[t] / rounds.sum() if rounds.sum() else np.nan,
        })
    df = pd.DataFrame(rows)
    if len(df):
        df["bottleneck"] = np.where(df["rounds spent per run"] == df["rounds spent per run"].max(), "◀", "")
    return df


def balance_metrics(result: SimulationResult) -> dict:
    """Balance metrics of an escape result from its aggregate (run-length spread, timeout share, first-check
    advantage, failure tier): sim/escape/designer.py, which sim.designer.balance asks through sim/kinds.py."""
    return balance_from_aggregate(result.aggregate)


ATTENTION_ACTIONS = (("assist", "assist"), ("guide", "guide"), ("search", "search"))


def _action_totals(result: SimulationResult) -> dict[str, float] | None:
    """Mean actions per run (party total) by action kind, when the engine counted them."""
    agg = result.aggregate
    acts = getattr(agg, "actions", None)
    if acts is None:
        return None
    totals = np.asarray(acts).sum(axis=0)
    shown = action_kinds(result.params)  # R-ESC-14b class actions only in the reading that has them
    return {kind: float(totals[k] / agg.runs) for k, kind in enumerate(ACTION_KINDS) if kind in shown}


def _party_block(scen) -> str:
    rows = []
    goal = set(scen.goal.slots)
    for c in scen.party:
        restraints = [f"{slot} {tier} (DC {dc_in_effect(scen, tier)})" for slot in SLOTS
                      if (tier := getattr(c.restraints, slot)) is not None]
        scores = ", ".join(f"{k} {v}" for k, v in c.scores.as_dict().items())
        rows.append([c.name, c.class_, str(c.level), scores, "; ".join(restraints) or "none",
                     "yes" if c.perception else "no"])
    body = table(["character", "class", "level", "scores", "restraints (tier, DC)", "perception"], rows)
    not_goal = [s for s in SLOTS if s not in goal]
    note = ("Goal: every character free of " + ", ".join(scen.goal.slots) + "."
            + (f" Restraints on {', '.join(not_goal)} do not count towards escaping." if not_goal else ""))
    return join(body, paragraph(note))


def _reading_text(scen) -> str:
    """The rule switches in effect (R-ESC-14a, R-ESC-10b), as the scenario would write them."""
    r = scen.rules
    return (f"volume1_features = {str(r.volume1_features).lower()}, self_untie = \"{r.self_untie}\""
            + (" (the seed's reading)" if r.volume1_features and r.self_untie == "arms_free" else
               " (the reading before 2026-12)" if not r.volume1_features and r.self_untie == "hands_free" else ""))


def dc_in_effect(scen, tier: str) -> int:
    t = TIER_IDS.index(tier)
    o = scen.rules.tiers.get(tier)
    return o.dc if o is not None and o.dc is not None else DEFAULT_DC[t]


def tier_ladder(scen) -> str:
    """The tier ladder in effect (DC and what a success makes of each tier, overrides marked) as a table."""
    return _tier_ladder(scen)


def _tier_ladder(scen) -> str:
    """The tier ladder in effect (R-ESC-2): DC and what a success makes of it; overrides highlighted."""
    used = {getattr(c.restraints, s) for c in scen.party for s in SLOTS} - {None}
    rows, classes = [], []
    for t, tier in enumerate(TIER_IDS[1:], start=1):
        o = scen.rules.tiers.get(tier)
        dc_over = o is not None and o.dc is not None
        becomes_over = o is not None and o.becomes is not None
        dc = o.dc if dc_over else DEFAULT_DC[t]
        becomes = o.becomes if becomes_over else TIER_IDS[DEFAULT_BECOMES[t]]
        dc_text = "no check" if tier == "utter" else str(dc)
        rows.append([
            tier,
            join(dc_text, " ", tag("override", "override") if dc_over else tag("default")),
            join(becomes, " ", tag("override", "override") if becomes_over else tag("default")),
            "yes" if tier in used else "–",
        ])
        classes.append("override" if dc_over or becomes_over else ("" if tier in used else "unused"))
    return table(["tier", "DC", "a success makes it", "worn by the party at the start"], rows, classes)


def legs_may_draw(scen) -> bool:
    """Whether moving actions with bound legs can draw ``attention.legs`` in this scenario (R-ESC-10c): the switch
    on, ``attention.legs`` above 0 and someone starting with its legs bound below ``complete``."""
    if not scen.rules.legs_hinder or scen.attention.legs <= 0:
        return False
    return any(ch.restraints.legs is not None and 0 < TIER_IDS.index(ch.restraints.legs) < TIER_IDS.index("complete")
               for ch in scen.party)


def attention_sources(scen, agg, acts: dict[str, float], runs_sum_rounds: float, runs: int,
                      attention_sum: float) -> list[tuple[str, float | None, str, float]]:
    """What drew the watch, per run: (source, count per run or None, attention each, attention drawn per run).

    R-ESC-9a: every round adds ``per_round``; every assist and untie of a teammate adds ``assist`` (an item used on
    a teammate too, a decision), every guide ``guide``, every search ``search``. The engine counts actions by kind
    but not whom an untie or an item was for, so the attention of unties and items given to teammates is what the
    recorded attention total leaves after the other sources; their count is that attention over ``assist``. Where
    bound legs may draw ``attention.legs`` (R-ESC-10c) that extra is in the same remainder, and no count is given."""
    a = scen.attention
    per_round = a.per_round * runs_sum_rounds / runs
    direct = {"assist": acts["assist"] * a.assist, "guide": acts["guide"] * a.guide,
              "search": acts["search"] * a.search,
              "inspire": acts.get("inspire", 0.0) * a.guide}  # R-ESC-14b: an inspiration draws attention.guide
    total = attention_sum / runs
    teammate = max(0.0, total - per_round - sum(direct.values()))
    if abs(teammate) < 1e-9:
        teammate = 0.0
    helped = teammate / a.assist if a.assist else None
    label = "untie of a teammate" if acts.get("use_item", 0) == 0 else "untie of a teammate or item used on one"
    if legs_may_draw(scen):  # R-ESC-10c: the extra of moving actions with bound legs is in the same remainder
        label, helped = label + ", or bound legs' extra (R-ESC-10c)", None
    return [
        ("assist", acts["assist"], str(a.assist), direct["assist"]),
        (label, helped, str(a.assist), teammate),
        ("guide", acts["guide"], str(a.guide), direct["guide"]),
        *([("inspire", acts["inspire"], str(a.guide), direct["inspire"])] if "inspire" in acts else []),
        ("search", acts["search"], str(a.search), direct["search"]),
        ("each round played", runs_sum_rounds / runs, str(a.per_round), per_round),
        ("total", None, "", total),
    ]


def _attention_block(scen, result: SimulationResult) -> str:
    a = scen.attention
    pairs = [
        ("limit", "none: the party cannot be caught" if a.limit is None else f"{a.limit} (caught when the total "
                                                                             "reaches it)"),
        ("per round", str(a.per_round)),
        ("per assist / untie of a teammate / item used on a teammate", str(a.assist)),
        ("more per search, assist (not mage hand) or untie of a teammate with bound legs",
         str(a.legs) if scen.rules.legs_hinder else "0 (rules.legs_hinder = false)"),
        ("per guide", str(a.guide)),
        ("per search", str(a.search)),
    ]
    acts = _action_totals(result)
    if acts is None:
        return join(definitions(pairs), paragraph("The engine that ran this scenario did not count actions."))
    agg = result.aggregate
    rounds_sum = float((np.arange(len(agg.rounds_all)) * agg.rounds_all).sum())
    sources = attention_sources(scen, agg, acts, rounds_sum, agg.runs, agg.attention_sum)
    rows = [[name, "" if count is None else f"{count:.2f}", each, f"{drawn:.2f}"]
            for name, count, each, drawn in sources]
    classes = ["" for _ in sources[:-1]] + ["total"]
    drawn_rows = table(["what drew it", "per run (party total)", "attention each", "attention drawn per run"],
                       rows, classes)
    others = [[kind.replace("_", " "), f"{acts[kind]:.2f}"] for kind in ("struggle", "rest", "untie", "use_item",
                                                                        "bless") if acts.get(kind, 0) > 0]
    unused = [k.replace("_", " ") for k, v in acts.items() if v == 0]
    notes = []
    if "search" in unused and scen.search is not None:
        notes.append(f"The {result.summary.get('policy', 'chosen')} policy never searched, so the search DC "
                     f"({scen.search.dc}) and the items had no effect on these results.")
    if unused:
        notes.append("Never used: " + ", ".join(unused) + ".")
    main = [name for name, _c, _e, drawn in sources[:-1] if drawn > 0]
    if main:
        top = max(sources[:-1], key=lambda r: r[3])
        notes.insert(0, f"Most of the watch's attention comes from {top[0]} ({top[3]:.2f} of "
                        f"{sources[-1][3]:.2f} per run).")
    return join(definitions(pairs), drawn_rows,
                details("All actions per run (party total), attention or not",
                        table(["action", "per run"], others)) if others else "",
                *(paragraph(n) for n in notes))


def _caught_chart(result: SimulationResult, out: Path) -> Path | None:
    """Attention over the rounds of caught runs: by the round a run was caught, the mean attention those runs drew
    from each source (stacked), with how many runs were caught then. None when no run was caught."""
    scen, agg = result.scenario, result.aggregate
    if scen.attention.limit is None or agg.caught_actions is None:
        return None
    a = scen.attention
    size = len(agg.caught_attention)
    act = agg.caught_actions
    n_caught_by_round = np.asarray(agg.caught_at)
    fig, ax = new_figure("What drew the watch in caught runs, by the round they were caught", "round caught",
                         "mean attention drawn per caught run")
    if n_caught_by_round.sum() == 0:
        ax.text(0.5, 0.5, "no run was caught", transform=ax.transAxes, ha="center")
        return save_figure(fig, out / "attention_caught.png")
    rounds = [r for r in range(1, size) if n_caught_by_round[r] > 0]
    n = n_caught_by_round[rounds]
    parts = {
        "each round played": a.per_round * np.asarray(rounds, dtype=float),
        "assists": act[rounds, ACTION_INDEX["assist"]] * a.assist / n,
        "guides": act[rounds, ACTION_INDEX["guide"]] * a.guide / n,
        "searches": act[rounds, ACTION_INDEX["search"]] * a.search / n,
    }
    total = agg.caught_attention[rounds] / n
    parts["unties of / items for teammates"] = np.clip(total - sum(parts.values()), 0, None)
    bottom = np.zeros(len(rounds))
    colors = [BASELINE, *SERIES[:4]]  # attention sources are not outcomes: no outcome colour among them
    for (label, values), color in zip(parts.items(), colors, strict=True):
        if np.any(values > 0):
            ax.bar(rounds, values, bottom=bottom, label=label, color=color)
            bottom = bottom + values
    for x, v, c in zip(rounds, bottom, n, strict=True):
        ax.text(x, v, f"{int(c):,} runs", ha="center", va="bottom", fontsize=8)
    ax.axhline(a.limit, color=EXACT, linestyle="--", linewidth=1, label=f"limit ({a.limit})")
    ax.set_xticks(rounds)
    legend_outside(ax)
    return save_figure(fig, out / "attention_caught.png")


def _answer(result: SimulationResult, exact_summary: dict | None) -> str:
    s = result.summary
    scen = result.scenario
    p = result.params
    question = scenario_question(scen.description, "How often does the party escape, and how many rounds "
                                                    "does it take?")
    ex = f"; exact {fmt_exact(exact_summary['escape_rate'])}" if exact_summary else ""
    lines = [f"The party escapes in {fmt_pct(s['escape_rate'], s['escape_rate_ci'])} of runs{ex}."]
    if not exact_summary and s.get("exact_note"):
        lines.append(s["exact_note"])  # exact was asked for and refused on its budget
    own = _own_policy_row(exact_summary, s["policy"])
    if own is not None:  # issue 25: how much of the difficulty is the policy
        lines.append(f"Optimal play escapes in {fmt_exact(exact_summary['optimal']['optimal_value'])}: the "
                     f"{s['policy']} policy leaves {fixed(own['gap_points'])} points on the table.")
    caught = fmt_pct(s["caught_rate"], s["caught_rate_ci"])
    timeout = fmt_pct(s["timeout_rate"], s["timeout_rate_ci"])
    if scen.attention.limit is None:  # R-ESC-9a: no limit, no watch: a run ends escaped or at the round limit
        lines.append(f"There is no watch (the scenario sets no attention limit), so the party cannot be caught; "
                     f"{timeout} of runs reach the limit of {p.max_rounds} rounds (95% interval in brackets).")
    else:
        lines.append(f"The watch catches it in {caught}; {timeout} of runs reach the limit of {p.max_rounds} "
                     "rounds (95% intervals in brackets).")
    if s.get("mean_rounds") is not None:
        ex = (f"; exact {exact_summary['mean_rounds']:.3g}" if exact_summary and exact_summary.get("mean_rounds")
              else "")
        lines.append(f"Escaped runs take {fmt_num(s['mean_rounds'], se=s.get('mean_rounds_se'))} rounds on "
                     f"average{ex}.")
    tiers = tier_table(result)
    if len(tiers):
        top = tiers.loc[tiers["rounds spent per run"].idxmax()]
        lines.append(f"The tier that holds the party longest: {top['tier']} "
                     f"({top['rounds spent per run']:.1f} character-rounds per run).")
    return answer(question, lines)


def _tier_table_shown(tiers: pd.DataFrame, result: SimulationResult) -> str:
    agg = result.aggregate
    rows = []
    for _, r in tiers.iterrows():
        t = TIER_IDS.index(r["tier"])
        checks = int(agg.checks_at_tier.sum(axis=0)[t])
        succ = int(agg.successes_at_tier.sum(axis=0)[t])
        rate = fmt_pct(succ / checks, wilson_interval(succ, checks)) if checks else "–"
        rows.append([r["tier"], f"{r['checks per run']:.2f}", rate, f"{r['rounds spent per run']:.2f}",
                     fmt_pct(r["share of rounds"], decimals=0), "◀ bottleneck" if r["bottleneck"] else ""])
    return table(["tier", "checks per run", "check success (95% interval)", "character-rounds per run",
                  "share of rounds", ""], rows)


def _character_table_shown(result: SimulationResult) -> str:
    agg = result.aggregate
    n = agg.runs
    rows = []
    for i, name in enumerate(result.params.names):
        freed = int(agg.freed[i])
        rows.append([name, fmt_pct(freed / n, wilson_interval(freed, n)),
                     f"{agg.freed_round_sum[i] / freed:.1f}" if freed else "–",
                     f"{agg.checks[i] / n:.2f}", f"{agg.successes[i] / n:.2f}", f"{agg.overloads[i] / n:.2f}",
                     f"{agg.items_found[i] / n:.2f}"])
    return table(["character", "freed (95% interval)", "mean round freed", "checks per run", "successes per run",
                  "overloads per run", "items found per run"], rows)


def _own_policy_row(exact_summary: dict | None, policy: str) -> dict | None:
    """The scenario's policy row of the optimal comparison (None without one, or for a custom policy)."""
    optimal = (exact_summary or {}).get("optimal")
    if not optimal:
        return None
    rows = [r for r in optimal["policies"] if r["policy"] == policy and r.get("value") is not None]
    return rows[0] if rows else None


def _optimal_block(exact_summary: dict | None, policy: str) -> Markup | str:
    """Optimal play (R-ESC-5/6: the best over every legal choice) beside each built-in policy's exact escape
    rate, and the decisions where the scenario's policy loses most."""
    optimal = (exact_summary or {}).get("optimal")
    if not optimal:
        return ""
    rows = [["optimal", fmt_exact(optimal["optimal_value"]), "0.00"]]
    for r in optimal["policies"]:
        if r.get("value") is None:
            rows.append([r["policy"], "–", "no exact value"])
        else:
            rows.append([r["policy"], fmt_exact(r["value"]), fixed(r["gap_points"])])
    parts = [table(["play", "escape rate (exact)", "points below optimal"], rows),
             paragraph("Optimal first actions: " + "; ".join(optimal["first_actions"]) + ".")]
    own = _own_policy_row(exact_summary, policy)
    if own is not None and own.get("losses"):
        loss_rows = [[str(x["round"]), f"{100 * x['reach']:.1f}%", x["state"], x["policy_action"],
                      x["optimal_action"], f"{100 * x['lost']:.2f}"] for x in own["losses"]]
        parts.append(details(f"Where {policy} loses most against optimal play",
                             table(["round", "reached", "state", f"{policy} does", "optimal does",
                                    "points lost there"], loss_rows), open=True))
    return join(*parts)


def write_report(result: SimulationResult, out_dir: Path, exact_summary: dict | None = None) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    s = result.summary
    n = s["runs"]
    k = np.arange(1, result.params.max_rounds + 1)
    curve = np.array(s["escape_by_round"])
    band = np.array([wilson_interval(v * n, n) for v in curve])  # Wilson band of the escape-by-round curve
    written = [_escape_by_round_chart(k, curve, band, n, exact_summary, out), _outcomes_chart(result, out)]
    tiers = tier_table(result)
    if len(tiers):
        written.append(_tiers_chart(tiers, out))
    written.append(_rounds_hist_chart(result, k, out))
    caught_chart = _caught_chart(result, out)
    if caught_chart is not None:
        written.append(caught_chart)
    sections = _sections(result, exact_summary, _by_round_table(k, curve, band, exact_summary), tiers,
                         caught_chart is not None)
    scen = result.scenario
    title = f"Escape challenge — {scen.name or scen.slug} (policy {s['policy']})"
    written.append(write_html(out / "report.html", title, sections, s))
    return written


def _escape_by_round_chart(k, curve, band, n: int, exact_summary: dict | None, out: Path) -> Path:
    """The escape-by-round curve with its Wilson band (and the exact curve where known)."""
    fig, ax = new_figure("Escape by round", "round", "P(escaped by the end of the round)")
    escaped_colour = outcome_colour("escaped")
    ax.fill_between(k, band[:, 0], band[:, 1], alpha=0.25, color=escaped_colour, label="95% interval")
    ax.plot(k, curve, marker="o", color=escaped_colour, label=f"simulated ({n:,} runs)")
    if exact_summary:
        ax.plot(k, exact_summary["escape_by_round"], "--", color=EXACT, label="exact")
    ax.set_ylim(0, 1.02)
    legend_outside(ax)
    return save_figure(fig, out / "escape_by_round.png")


def _outcomes_chart(result: SimulationResult, out: Path) -> Path:
    """Outcome shares (escaped, caught, timeout: R-ESC-5) with their 95% interval whiskers."""
    s = result.summary
    shares = [s["escape_rate"], s["caught_rate"], s["timeout_rate"]]
    cis = [s["escape_rate_ci"], s["caught_rate_ci"], s["timeout_rate_ci"]]
    fig, ax = new_figure("Outcome shares (95% interval whiskers)", "outcome", "share of runs")
    err = np.clip(np.array([[v - c[0] for v, c in zip(shares, cis, strict=True)],
                            [c[1] - v for v, c in zip(shares, cis, strict=True)]]), 0, None)
    ax.bar(["escaped", "caught", f"timeout ({result.params.max_rounds} rounds)"], shares, yerr=err, capsize=6,
           color=[outcome_colour(o) for o in ("escaped", "caught", "timeout")])
    for x, v in enumerate(shares):
        ax.text(x, min(v + 0.03, 0.97), f"{100 * v:.1f}%", ha="center", va="bottom", fontsize=9)
    ax.set_ylim(0, 1.05)
    return save_figure(fig, out / "outcomes.png")


def _tiers_chart(tiers, out: Path) -> Path:
    """Tiers: bars = character-rounds, line = check success rate (own axis), both in the legend."""
    fig, ax = new_figure("Rounds spent and check success by tier", "tier (highest goal restraint)",
                         "character-rounds per run (bars)")
    bars = ax.bar(tiers["tier"], tiers["rounds spent per run"], color=series_colour(0),
                  label="character-rounds per run")
    ax2 = ax.twinx()
    (line,) = ax2.plot(tiers["tier"], tiers["success rate"], "ko-", label="check success rate (right axis)")
    ax2.set_ylabel("check success rate (line)")
    ax2.set_ylim(0, 1.02)
    ax.legend(handles=[bars, line], loc="upper left", bbox_to_anchor=(1.12, 1.0), fontsize="small")
    return save_figure(fig, out / "tiers.png")


def _rounds_hist_chart(result: SimulationResult, k, out: Path) -> Path:
    """Rounds to escape over the escaped runs."""
    agg = result.aggregate
    escaped = int(agg.escaped_at[1:].sum())
    fig, ax = new_figure("Round of escape (escaped runs only)", "round of escape", "share of escaped runs")
    if escaped:
        ax.bar(k, agg.escaped_at[1:] / escaped, color=outcome_colour("escaped"))
    else:
        ax.text(0.5, 0.5, "no run escaped", transform=ax.transAxes, ha="center")
    return save_figure(fig, out / "rounds_hist.png")


def _by_round_table(k, curve, band, exact_summary: dict | None) -> str:
    rows = []
    for i, r in enumerate(k):
        row = [str(r), fmt_pct(curve[i], band[i])]
        if exact_summary:
            row.append(fmt_exact(exact_summary["escape_by_round"][i]))
        rows.append(row)
    return table(["round", "escaped by its end (95% interval)"] + (["exact"] if exact_summary else []), rows)


def _other_settings(result: SimulationResult) -> list[tuple[str, str]]:
    """Policy, round limit, rule reading, dice stacking, harness, stimulus and search of the scenario."""
    scen = result.scenario
    return [("policy", result.summary.get("policy", scen.policy.name)),
            ("round limit", str(result.params.max_rounds)),
            ("rule reading", _reading_text(scen)),
            ("dice stacking", scen.rules.dice_stacking),
            ("harness damage", scen.harness.damage),
            ("stimulus", f"{scen.stimulus.damage} {scen.stimulus.kind} per round" if scen.stimulus else "none"),
            ("search", "not configured" if scen.search is None else
             f"DC {scen.search.dc}; items: " + (", ".join(
                 f"{it.name} ({it.kind}, {it.value:+d}, weight {it.weight:g}"
                 + (f", {it.count} available" if it.count is not None else "") + ")"
                 for it in scen.search.items) or "none"))]


def _sections(result: SimulationResult, exact_summary: dict | None, by_round: str, tiers,
              caught_chart: bool) -> list:
    scen = result.scenario
    return [
        _answer(result, exact_summary),
        description_block(scen.description),
        section("The party and its restraints", _party_block(scen)),
        section("Tier ladder in effect", _tier_ladder(scen),
                note="DCs and what a successful escape check makes of each tier (R-ESC-2). Rows with an override "
                     "from the scenario's [rules.tiers] are highlighted; tiers no one wears at the start are grey."),
        _attention_section(result, caught_chart),
        _optimal_section(exact_summary, result.summary["policy"]),
        section("Other settings", definitions(_other_settings(result))),
        section("Escape by round", details("Table: escaped by the end of each round", by_round),
                image="escape_by_round.png",
                alt="Line chart: share of runs escaped by the end of each round, with its 95% interval band"),
        section("Outcome shares", image="outcomes.png", alt="Bar chart: shares of escaped, caught and timed-out runs"),
        section("Tiers: where the runs get stuck", _tier_table_shown(tiers, result) if len(tiers) else "",
                image="tiers.png" if len(tiers) else None,
                alt="Bars: character-rounds per run by tier; line: check success rate by tier",
                note="Character-rounds counts each round a character starts with that tier as its highest goal "
                     "restraint; the bottleneck is the tier holding characters longest."),
        section("Characters", _character_table_shown(result)),
        section("Round of escape", image="rounds_hist.png",
                alt="Bar chart: distribution of the round of escape over escaped runs"),
        section("Balance", balance_block(balance_metrics(result)),
                note="Run-length spread over all runs (and escaped runs), share of timeouts, the first-check "
                     "advantage (escape rate after a round-1 success minus after only failed round-1 checks) and "
                     "the tier that held the party longest in the runs that did not escape.", folded=True),
    ]


def _attention_section(result: SimulationResult, caught_chart: bool):
    if result.scenario.attention.limit is None:  # no watch: nothing to draw its attention, no table of zeros
        return section("Attention: no watch", paragraph(
            "This scenario sets no attention limit ([attention] limit), so there is no watch: the party cannot be "
            "caught and what its actions would draw does not matter. Set a limit to add one (R-ESC-9a)."))
    return section(
        "Attention: settings and what drew it", _attention_block(result.scenario, result),
        image="attention_caught.png" if caught_chart else None,
        alt="Stacked bars: by the round a run was caught, the mean attention caught runs drew from each "
            "source, with the limit as a dashed line",
        note="Attention drawn by each source (R-ESC-9a); the party is caught when the total reaches the "
             "limit. The engine records each run's attention total and its actions by kind, not whom an "
             "untie was for: the attention of unties of teammates is the total less the other sources."
             + (" The chart: runs caught in each round and what their attention came from." if caught_chart else ""))


def _optimal_section(exact_summary: dict | None, policy: str):
    optimal_block = _optimal_block(exact_summary, policy)
    if not optimal_block:
        return ""
    return section("Optimal play (exact)", optimal_block,
                   note="The best escape rate over every legal choice of every round (struggle slot and ability, "
                        "assist, guide, search, rest, untie, items, class actions), solved exactly, beside each "
                        "built-in policy: how much of this scenario's difficulty is the policy.")
