"""The ``audit`` subcommand (registered by :mod:`sim.cli`), its console table and its page (docs/designer.md,
Balance audit). The page goes through the project's one page path (:func:`sim.report.write_html`), which
escapes every text."""

from __future__ import annotations

import sys
from pathlib import Path

from sim.designer.audit import DEAD, MUST_PICK, SPREAD, Audit, audit, check_thresholds
from sim.designer.params import parse_axis, with_values
from sim.errors import ScenarioError
from sim.labels import fixed
from sim.pipeline import owned_folder
from sim.report import (
    answer,
    atomic_write_text,
    chart_text,
    items,
    new_figure,
    save_figure,
    section,
    summary_json,
    table,
    write_html,
)
from sim.scenario import load_scenario


def add_parser(sub, add_run_flags) -> None:
    au = sub.add_parser("audit", help="balance audit: each option of play forbidden in turn (dead, dominated, "
                                      "must-pick options), the class spread and what decided the outcome")
    au.add_argument("scenario")
    au.add_argument("--objective", help="the metric audited (escape: escape_rate, escape_by_round@K or not_caught; "
                                        "other kinds: a summary metric; default: the kind's main metric)")
    au.add_argument("--param", action="append", metavar="KEY=VALUE", help="set a scenario value first (repeatable)")
    au.add_argument("--option", action="append", metavar="NAME",
                    help="audit only these options (repeatable): the party's NAME, or 'CHARACTER: NAME'")
    au.add_argument("--dead", type=float, default=DEAD, help="dead below this gain (default 0.005: half a point)")
    au.add_argument("--must-pick", type=float, default=MUST_PICK, help="must-pick above this gain (default 0.15)")
    au.add_argument("--spread", type=float, default=SPREAD,
                    help="a class further than this from the median class is named (default 0.10)")
    au.add_argument("--no-classes", action="store_true", help="skip the class spread")
    au.add_argument("--max-states", type=int, help="escape: the state budget of optimal play")
    add_run_flags(au)
    au.add_argument("--out", help="output folder (default reports/<scenario name>/audit/)")
    au.add_argument("--json", action="store_true", help="print the audit as JSON instead of the table")
    au.add_argument("--quiet", action="store_true")


def with_params(scenario, specs: list[str] | None):
    """The scenario with each ``KEY=VALUE`` set (the sweep's parser: one value per key)."""
    values = {}
    for spec in specs or []:
        axis = parse_axis(spec)
        if len(axis.values) != 1:
            raise ScenarioError(f"expected one value (KEY=VALUE); given {spec!r}", key="--param")
        values[axis.key] = axis.values[0]
    return with_values(scenario, values) if values else scenario


def cmd_audit(args) -> int:
    check_thresholds(args.dead, args.must_pick, args.spread)
    scenario = with_params(load_scenario(args.scenario), args.param)
    result = audit(scenario, objective=args.objective, options=args.option, dead=args.dead,
                   must_pick=args.must_pick, spread=args.spread, runs=args.runs, seed=args.seed, n_jobs=args.jobs,
                   max_states=args.max_states, classes=not args.no_classes)
    out = Path(args.out) if args.out else Path("reports") / scenario.slug / "audit"
    with owned_folder(out, "audit"):
        write_audit(result, out)
    if args.json:
        sys.stdout.write(summary_json(result.as_json()))
    elif not args.quiet:
        print(format_table(result))
    if not args.quiet:
        print(f"wrote {out}/report.html and {out}/audit.json", file=sys.stderr)
    return 0


# -- words, console and page ------------------------------------------------------------------------------------


def _pts(v: float | None, signed: bool = True) -> str:
    return "–" if v is None else fixed(100 * v, 2, signed)


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.2f}%"


def method_note(a: Audit) -> str:
    if a.method == "exact":
        return f"Exact: {a.engine}. Each delta is the value lost when the option is forbidden."
    return (f"Monte Carlo of the built-in policy with each option removed: {a.runs:,} runs, seed {a.seed}, common "
            "random numbers (run j of every variant reads the same dice); se is the paired standard error. A delta "
            "is flagged only beyond 3 se of its threshold.")


def option_rows(a: Audit) -> list[list[str]]:
    return [[r["option"], r["scope"], _pct(r["value_without"]), _pts(r["delta"]),
             "exact" if a.method == "exact" and r["se"] == 0 else _pts(r["se"], False), r["flag"] or "",
             r["replaced_by"] or ""] for r in a.options]


OPTION_HEAD = ["option", "scope", "without it", "delta (points)", "se (points)", "flag", "replaced by"]


def format_table(a: Audit) -> str:
    """The answer, then one aligned row per option (the console's table)."""
    lines = [f"{a.scenario.name or a.scenario.slug}: {a.metric} {_pct(a.baseline)} ({a.method})"]
    lines += [s + "." for s in a.verdicts()]
    lines.append("")
    rows = [OPTION_HEAD, *option_rows(a)]
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(OPTION_HEAD))]
    if a.options:
        lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    else:
        lines.append("no option of play to audit in this scenario")
    if a.never_arises:
        lines.append("never arises (not audited): " + ", ".join(a.never_arises))
    for r in a.decided_by:
        lines.append(f"{r['event']} ({_pct(r['share'])} of runs): {a.metric} {_pct(r['rate_given'])}, otherwise "
                     f"{_pct(r['rate_otherwise'])}")
    outliers = [r for r in a.classes if r["outlier"]]
    if a.classes:
        values = [r["value"] for r in a.classes]
        lines.append(f"class spread {_pts(max(values) - min(values), False)} points; outliers: "
                     + (", ".join(f"{r['class']} {_pts(r['difference'])}" for r in outliers) or "none"))
    for c, why in a.skipped_classes.items():
        lines.append(f"class {c} left out: {why}")
    return "\n".join(lines)


def write_audit(a: Audit, out_dir) -> list[Path]:
    """``audit.json`` (the ``--json`` shape plus the scenario, thresholds, engine and the options that never
    arise) and ``report.html``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = {**a.as_json(), "scenario": a.scenario.name, "kind": a.scenario.kind, "thresholds": a.thresholds,
            "engine": a.engine, "never_arises": a.never_arises, "runs": a.runs if a.method != "exact" else None,
            "seed": a.seed if a.method != "exact" else None}
    atomic_write_text(out / "audit.json", summary_json(data))
    chart = delta_chart(a, out)
    page = write_html(out / "report.html", f"Balance audit — {a.scenario.name or a.scenario.slug}",
                      sections(a, chart.name if chart else None), {"kind": a.scenario.kind})
    return [out / "audit.json", *([chart] if chart else []), page]


def delta_chart(a: Audit, out: Path) -> Path | None:
    """``audit.png``: each option's delta in points (3-SE whiskers where simulated) beside the two thresholds."""
    if not a.options:
        return None

    labels = [chart_text(r["option"] if r["scope"] == "party" else f"{r['scope']}: {r['option']}") for r in a.options]
    fig, ax = new_figure(f"What each option is worth ({chart_text(a.metric)})", "points lost without it", "",
                         size=(7.5, 0.9 + 0.32 * len(labels)))
    y = list(range(len(labels)))[::-1]
    ax.barh(y, [100 * r["delta"] for r in a.options], xerr=[300 * r["se"] for r in a.options], color="#4c78a8")
    ax.set_yticks(y, labels)
    for x, style, name in ((a.thresholds["dead"], ":", "dead"), (a.thresholds["must_pick"], "--", "must pick")):
        ax.axvline(100 * x, color="#555555", linestyle=style, linewidth=1, label=f"{name} ({100 * x:g} points)")
    ax.legend(loc="lower right", fontsize="small")
    return save_figure(fig, out / "audit.png")


def sections(a: Audit, chart: str | None = None) -> list:
    out = [answer(f"Is any option of play dead, dominated or mandatory ({a.metric})?",
                  [*(s + "." for s in a.verdicts()), f"Baseline: {_pct(a.baseline)} with every option. "
                                                     + method_note(a)]),
           section("Each option forbidden in turn",
                   table(OPTION_HEAD, option_rows(a)) if a.options else "No option of play to audit.", image=chart,
                   alt="Bars: the points of the metric lost without each option, with the dead and must-pick "
                       "thresholds",
                   note=f"dead: gains less than {_pts(a.thresholds['dead'], False)} points (and the option arises); "
                        f"must pick: more than {_pts(a.thresholds['must_pick'], False)}; dominated: dead, but worth "
                        "more than the dead threshold once the option named is forbidden too (it replaces every use)")]
    if a.never_arises:
        out.append(section("Options that never arise", items(a.never_arises),
                           note="Not legal in any state play can reach: nothing to audit." if a.method == "exact" else
                           "Never declared by the policy in these runs: it cannot be told from an option that never "
                           "arises."))
    if a.decided_by:
        out.append(section("What decided it", table(
            ["early event", "share of runs", f"{a.metric} given it", "otherwise"],
            [[r["event"], _pct(r["share"]), _pct(r["rate_given"]), _pct(r["rate_otherwise"])] for r in a.decided_by])))
    if a.classes:
        values = [r["value"] for r in a.classes]
        out.append(section("Class spread", table(
            ["class", a.metric, "vs median class (points)", "outlier"],
            [[r["class"], _pct(r["value"]), _pts(r["difference"]), "yes" if r["outlier"] else ""] for r in a.classes]),
            note=f"Spread {_pts(max(values) - min(values), False)} points. Each class at the scenario's level with "
                 "its standard-array scores (as `matrix`), under the same play as the audit."
                 + "".join(f" {c} left out: {why}." for c, why in a.skipped_classes.items())))
    return out
