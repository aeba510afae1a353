"""Command line: ``python -m sim run|exact|validate|compare`` and the designer tools
``sweep|tune|sensitivity`` (docs/designer.md).

Every command ends with a result (exit 0), a clean one-line refusal naming the file and what the
command supports (exit 2, nothing written), or, for ``tune``, exit 1 when the target is not bracketed.
Results are printed as a short table (rich on a terminal, plain text otherwise); ``--json`` prints the
machine summary instead. Each command that writes a folder records its files there
(:class:`sim.batch.OwnedOutputs`) and replaces only those on the next run.

A new subcommand: a ``_add_NAME_parser(sub)`` step in ``build_parser`` and a ``_cmd_NAME(args) -> int`` in
:data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import sim
from sim import kinds, pipeline
from sim.batch import JOBS_HELP, check_scheduler
from sim.designer import commands
from sim.designer.audit_report import add_parser as add_audit_parser  # `audit` (issue 36)
from sim.designer.audit_report import cmd_audit
from sim.designer.commands import add_parsers
from sim.designer.metrics import (
    format_estimate,
    is_proportion,
    main_metric,
    metric_interval,
    metric_label,
    metric_value,
    parse_metric,
)
from sim.designer.params import parse_axis, parse_value, with_values
from sim.designer.policy_comparison import compare_policies, write_policy_report
from sim.designer.scenario_comparison import headline_metrics, output_folders, scenario_files, write_index
from sim.designer.sensitivity import format_table, sensitivity, write_sensitivity
from sim.designer.sweep import sweep, write_sweep
from sim.designer.tune import tune
from sim.docs_gen import add_schema_command, cmd_schema  # `schema KIND [--markdown]` (docs/scenario-format/)
from sim.errors import OPT_IN_HINT, ScenarioError, SimError, one_line, shown
from sim.exact_report import write_exact_report
from sim.limits import bounded_folder_name, bounded_int, check_jobs, check_max_states, check_runs
from sim.pipeline import owned_folder, supports_exact
from sim.report import atomic_write_text, summary_json
from sim.report_folder import default_folder, note_source, replaced_notes
from sim.studio import add_parser as add_studio_parser
from sim.studio import cmd_studio

EXIT_INVALID = 2


class _Parser(argparse.ArgumentParser):
    def parse_known_args(self, args=None, namespace=None):
        self._given = list(sys.argv[1:] if args is None else args)  # for the did-you-mean of an unknown flag
        return super().parse_known_args(args, namespace)

    def error(self, message):  # argparse's own usage errors: exit 2, one line
        self.exit(EXIT_INVALID, f"{self.prog}: error: {message}{self._suggestion(message)}\n")

    def _suggestion(self, message: str) -> str:
        """"; did you mean --seed?" for an unknown flag close to one of the command's own flags (``--sead``)."""
        if not message.startswith("unrecognized arguments: "):
            return ""
        import difflib

        given = getattr(self, "_given", [])
        parser = self
        for action in self._actions:  # the subcommand's own parser, where one was named
            if isinstance(action, argparse._SubParsersAction):
                name = next((a for a in given if a in action.choices), None)
                parser = action.choices.get(name, self)
        flags = sorted({o for a in parser._actions for o in a.option_strings if o.startswith("--")})
        hints = []
        for word in message.partition(": ")[2].split():
            flag = word.partition("=")[0]
            near = difflib.get_close_matches(flag, flags, n=1, cutoff=0.6) if flag.startswith("--") else []
            if near:
                hints.append(f"{flag}: did you mean {near[0]}?")
        return f" ({'; '.join(hints)})" if hints else ""


def _checked(parse, unparsed: str, valid, invalid: str):
    """An argparse ``type``: ``parse(text)`` ("expected <unparsed>" when it raises ValueError), then
    ``valid(value)`` ("expected <invalid>" when false); both messages quote the text given."""

    def convert(text: str):
        try:
            value = parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {unparsed}, got {text!r}") from None
        if not valid(value):
            raise argparse.ArgumentTypeError(f"expected {invalid}, got {text!r}")
        return value

    return convert


def _int(text: str) -> int:
    """An integer argument bounded at :data:`sim.limits.MAX_ARGUMENT_INT` (a 400-digit number: one line)."""

    try:
        return bounded_int(text)
    except ValueError as exc:
        if "2^63" in str(exc):
            raise argparse.ArgumentTypeError(str(exc)) from None
        raise


_positive_int = _checked(_int, "an integer", lambda v: v >= 1, "an integer >= 1")
_seed = _checked(_int, "an integer seed", lambda v: v >= 0, "a seed >= 0")
_positive_float = _checked(float, "a number", lambda v: math.isfinite(v) and v > 0, "a number > 0")
_finite_float = _checked(float, "a number", math.isfinite, "a finite number")
_jobs = _checked(int, "an integer", lambda v: v == -1 or v >= 1, "-1 or an integer >= 1")


def _number(text: str) -> int | float:

    try:
        value = parse_value(text)
    except SimError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}")
    return value


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value == 0 or value < -1:
        raise argparse.ArgumentTypeError(f"expected -1 or an integer >= 1, got {text!r}")
    return value


def _add_run_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runs", type=_positive_int, help="runs per evaluation (default: the scenario's run.runs)")
    p.add_argument("--seed", type=_seed, help="seed shared by every evaluation (default: the scenario's run.seed)")
    p.add_argument("--jobs", type=_jobs, default=1, help=JOBS_HELP)


def add_compare_arguments(parser) -> None:
    """The arguments of ``python -m sim compare`` (every kind: escape's own comparison reads the same)."""
    parser.add_argument("scenario")
    parser.add_argument("--policies",
                        help="comma-separated policies; the first is the baseline (escape built-in: greedy, "
                             "arms_first, team (the default), or package.module:callable; other kinds: the "
                             "[policy] settings, e.g. counter,best or rescue=true)")
    parser.add_argument("--runs", type=int, help="runs per policy (default: the scenario's run.runs)")
    parser.add_argument("--seed", type=int, help="seed shared by every policy (default: the scenario's run.seed)")
    parser.add_argument("--jobs", type=int, default=1, help=JOBS_HELP)
    parser.add_argument("--out", help="output folder (default reports/<scenario name>/compare/)")
    parser.add_argument("--allow-code", action="store_true",
                        help="allow the scenario file's own module:callable policy (policies listed in "
                             "--policies are allowed as given)")
    parser.add_argument("--quiet", action="store_true")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m sim", description="Balance simulator for tabletop-RPG house rules.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _add_run_parser(sub)
    _add_exact_parser(sub)
    cmp_ = sub.add_parser("compare", help="policies side by side on common random numbers (escape: greedy, "
                                          "arms_first, team; campus: stances, rescue...; formation: target choice)")
    add_compare_arguments(cmp_)
    _add_optimal_parser(sub)
    val = sub.add_parser("validate", help="check scenario files")
    val.add_argument("scenarios", nargs="+")
    _add_sweep_parser(sub)
    _add_tune_parser(sub)
    _add_sensitivity_parser(sub)

    add_parsers(sub, _add_run_flags)

    add_audit_parser(sub, _add_run_flags)
    add_studio_parser(sub)
    add_schema_command(sub)
    return parser


def _add_run_parser(sub) -> None:
    """``run``: simulate one scenario, or several into a comparison index."""
    run = sub.add_parser("run", help="simulate scenarios and write summary, runs and report (several: an index)")
    run.add_argument("scenarios", nargs="+", metavar="SCENARIO",
                     help="a scenario file; several files or a folder run each and write a comparison index")
    run.add_argument("--runs", type=_positive_int)
    run.add_argument("--seed", type=_seed)
    run.add_argument("--jobs", type=int, default=1, help=JOBS_HELP)
    run.add_argument("--out", help="output folder (default reports/<scenario name>/; several: reports/compare/)")
    run.add_argument("--no-runs", action="store_true", help="do not write runs.parquet")
    run.add_argument("--quiet", action="store_true")
    run.add_argument("--json", action="store_true",
                     help="print the headline numbers as one JSON line instead of a table")
    run.add_argument("--target-error", type=_positive_float, metavar="E",
                     help="add runs until the main metric's 95%% interval half-width is <= E")
    run.add_argument("--max-runs", type=_positive_int, help="cap for --target-error (default 2,000,000)")
    run.add_argument("--metric", help="the metric --target-error applies to (default: the kind's main metric)")
    run.add_argument("--policy", help="run with this policy instead of the scenario's (escape; built-in or "
                                      "package.module:callable, which counts as opting in to run that code; "
                                      "escape and campus: optimal, the solved table of optimal play)")
    run.add_argument("--allow-code", action="store_true",
                     help="allow a module:callable policy named by the scenario file (importing it runs code)")
    run.add_argument("--backend", choices=("local", "dask"), default="local",
                     help="local processes (default) or a Dask distributed cluster")
    run.add_argument("--scheduler", help="Dask scheduler address for --backend dask (tcp://HOST:PORT)")


def _add_exact_parser(sub) -> None:
    """``exact``: exact analysis (escape: within a state and branch budget)."""
    ex = sub.add_parser("exact", help="exact analysis of a scenario (kinds that support it)")
    ex.add_argument("scenario")
    ex.add_argument("--out", help="folder for exact.json and exact.html (default reports/<scenario name>/)")
    ex.add_argument("--json", action="store_true", help="print the exact summary as JSON instead of a table")
    ex.add_argument("--max-states", type=_positive_int, metavar="N",
                    help="escape, campus: state budget; when the projected work exceeds it, exit 2 at once and "
                         "suggest Monte Carlo (default 20,000; campus 200,000)")
    ex.add_argument("--max-branches", type=_positive_int, metavar="N",
                    help="escape: branch budget (rounds played on the branching source; default 25 x --max-states)")
    _add_param_override(ex)


def _add_optimal_parser(sub) -> None:
    """``optimal``: optimal play beside each built-in policy (the kinds with ``supports_optimal``)."""
    opt = sub.add_parser("optimal", help="escape, campus: optimal play (the best value over every legal choice) "
                                         "beside each built-in policy's exact value")
    opt.add_argument("scenario")
    opt.add_argument("--objective", default=None,
                     help="escape: escape_rate (default), escape_by_round@K (escaped by the end of round K) or "
                          "not_caught; campus: clear_rate (the only one)")
    opt.add_argument("--adversary", choices=("random", "best"), default="random",
                     help="campus: best also solves the robust value, the adversaries choosing their stances to "
                          "minimise the clear rate (random: drawn from their weights, the rules)")
    opt.add_argument("--out", help="also write optimal.json and optimal.html into this folder")
    opt.add_argument("--json", action="store_true", help="print the comparison as JSON")
    opt.add_argument("--max-states", type=_positive_int, metavar="N", help="state budget (default 20,000)")
    opt.add_argument("--max-branches", type=_positive_int, metavar="N",
                     help="branch budget (default 50 x --max-states: every choice of every state counts)")
    _add_param_override(opt)


def _add_param_override(p: argparse.ArgumentParser) -> None:
    """``--param KEY=VALUE`` for ``exact`` and ``optimal``: one value per key (see :func:`_with_params`)."""
    p.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="answer for this value instead of the file's (dotted key as in sweep, e.g. "
                        "rules.tiers.heavy.dc=30; one value per key; repeat for several keys); the file is not "
                        "changed")


def _with_params(args, scenario):
    """The scenario with the ``--param KEY=VALUE`` overrides of ``exact``/``optimal`` applied: sweep's parser and
    key check (:mod:`sim.designer.params`), exactly one value per key; a bad key or value is one line, exit 2."""
    specs = getattr(args, "param", None)
    if not specs:
        return scenario
    values: dict = {}
    try:
        for spec in specs:
            if "=" not in spec:
                raise ScenarioError(f"expected --param KEY=VALUE, e.g. rules.tiers.heavy.dc=30; given {spec!r}")
            axis = parse_axis(spec)
            if len(axis.values) != 1:
                raise ScenarioError(f"--param takes one value per key here (a grid of values is what sweep "
                                    f"does); given {spec!r}", key=axis.key)
            if axis.key in values:
                raise ScenarioError("--param gives this key twice", key=axis.key)
            values[axis.key] = axis.values[0]
        return with_values(scenario, values)
    except SimError as exc:
        raise _with_file(exc, scenario.source) from None


def _param_note(args) -> str:
    """`` with KEY=VALUE, ...`` for a console title when ``--param`` overrides were given, else ""."""
    specs = getattr(args, "param", None)
    return f" with {', '.join(s.strip() for s in specs)}" if specs else ""


def _add_sweep_parser(sub) -> None:
    """``sweep``: a grid over scenario values."""
    sw = sub.add_parser("sweep", help="a grid over scenario values with common random numbers")
    sw.add_argument("scenario")
    sw.add_argument("--param", action="append", required=True, metavar="KEY=START:STOP:STEP",
                    help="dotted key and values (STOP included; also KEY=a,b,c); repeat for a grid")
    _add_run_flags(sw)
    sw.add_argument("--metric", help="the metric the charts lead with (default: the kind's main metric)")
    sw.add_argument("--no-exact", action="store_true", help="skip exact analysis")
    sw.add_argument("--out", help="output folder (default reports/<scenario name>/sweep/)")
    sw.add_argument("--quiet", action="store_true")


def _add_tune_parser(sub) -> None:
    """``tune``: the parameter value whose metric is closest to a target."""
    tu = sub.add_parser("tune", help="the parameter value whose metric is closest to a target")
    tu.add_argument("scenario")
    tu.add_argument("--param", required=True, metavar="KEY")
    tu.add_argument("--metric", help="summary metric, e.g. escape_rate or escape_by_round.7 (default: main)")
    tu.add_argument("--target", required=True, type=_finite_float)
    tu.add_argument("--lo", type=_number)
    tu.add_argument("--hi", type=_number)
    tu.add_argument("--tol", type=_positive_float, help="bracket width at which a float bisection stops")
    _add_run_flags(tu)
    tu.add_argument("--no-exact", action="store_true", help="bisect on simulation even where exact is supported")
    tu.add_argument("--out", help="also write the JSON here (a .json file, or a folder for tune.json)")
    tu.add_argument("--json", action="store_true", help="print the result as JSON instead of a table")
    tu.add_argument("--policy", help="tune under this policy instead of the scenario's (escape; as in run)")
    tu.add_argument("--allow-code", action="store_true",
                    help="allow a module:callable policy named by the scenario file (importing it runs code)")


def _add_sensitivity_parser(sub) -> None:
    """``sensitivity``: the change of a metric per step of every DC and ability."""
    se = sub.add_parser("sensitivity", help="change of the main metric per step down and up of every DC and "
                                             "ability (ability scores by 2)")
    se.add_argument("scenario")
    se.add_argument("--metric", help="the metric (default: the kind's main metric)")
    se.add_argument("--param", action="append", metavar="KEY", help="only these keys (repeatable)")
    _add_run_flags(se)
    se.add_argument("--no-exact", action="store_true")
    se.add_argument("--out", help="output folder (default reports/<scenario name>/sensitivity/)")
    se.add_argument("--quiet", action="store_true")


def _progress(args, label: str):
    if getattr(args, "quiet", False):
        return None

    def report(i, total, what):
        print(shown(f"{label} {i}/{total}: {what}"), file=sys.stderr)

    return report


# --------------------------------------------------------------------------------------------
# loading, output folders, console tables


def _load(path: str, command: str):
    """The scenario at ``path``; a folder is refused with what the command takes (run/validate take folders)."""

    if Path(path).is_dir():
        raise SimError(f"{path}: is a folder; {command} takes one scenario file (run and validate accept folders)")
    return sim.load_scenario(path)


def _owned(folder: Path | None, command: str):
    """:func:`sim.pipeline.owned_folder`: lock ``folder``, replace only what ``command`` wrote there before."""

    return owned_folder(folder, command)


def _report_folder(args, scenario, sub: str = "") -> Path:
    """``--out``, else ``reports/<scenario name>/[sub]`` unless that holds another file's report
    (:mod:`sim.report_folder`; the console says where the report went instead)."""

    folder, notes = default_folder(scenario, getattr(args, "out", None), sub)
    for line in notes:
        print(line, file=sys.stderr)
    return folder


def _replaced(folder: Path, scenario, page: str) -> list[str]:

    return replaced_notes(folder, scenario, page)


def _note_source(folder: Path, scenario) -> None:

    note_source(folder, scenario)


def _rows_table(title: str | None, header: list[str], rows: list[list[str]], footer: list[str] = ()) -> None:
    """A small table on stdout: rich on a terminal, aligned plain text otherwise (pipes, files, tests). Every cell
    is shown with control characters escaped (names and paths come from file names)."""
    title = None if title is None else shown(title)
    rows = [[shown(c) for c in r] for r in rows]
    footer = [shown(line) for line in footer]
    try:  # rich is optional (the package alone installs no rich): plain text without it
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        Console = None
    if Console is not None and sys.stdout.isatty():
        table = Table(title=title, title_justify="left")
        for i, h in enumerate(header):
            table.add_column(h, justify="left" if i == 0 else "right")
        for row in rows:
            table.add_row(*row)
        console = Console()
        console.print(table)
        for line in footer:
            console.print(line, highlight=False, markup=False)
        return
    if title:
        print(title)
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        print("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths,
                                                                                                    strict=True))))
    for line in footer:
        print(line)


def _headline_rows(summary: dict, exact: dict | None = None) -> tuple[list[str], list[list[str]]]:
    """One row per headline metric: plain name (key), estimate with its 95% interval, exact value if known."""

    rows = []
    for m in headline_metrics(summary):
        value = metric_value(summary, m)
        lo, hi = metric_interval(summary, m)
        row = [f"{metric_label(m, short=True)} ({m})", format_estimate(value, lo, hi, percent=is_proportion(m))]
        if exact is not None:
            try:
                row.append(format_estimate(metric_value(exact, m), percent=is_proportion(m)))
            except SimError:
                row.append("–")
        rows.append(row)
    header = ["metric", "estimate [95% interval]"] + (["exact"] if exact is not None else [])
    return header, rows


def _cmd_run(args) -> int:

    if args.jobs == 0 or args.jobs < -1:
        raise SimError(f"--jobs: expected -1 or an integer >= 1, got {args.jobs}")
    single = len(args.scenarios) == 1 and not Path(args.scenarios[0]).is_dir()
    if not single:
        return _cmd_run_batch(args)
    scenario = _with_policy(args, sim.load_scenario(args.scenarios[0]))
    _check_metric(args, scenario)
    _check_backend(args)
    out = _report_folder(args, scenario)
    notes = _replaced(out, scenario, "report.html")
    with _owned(out, "run"):
        result = pipeline.run(scenario, out, **_pipeline_options(args))
        _note_source(out, scenario)
    for line in notes:
        print(line, file=sys.stderr)
    s = result.summary
    if args.json:
        print(json.dumps({k: s[k] for k in _headline_keys(s) if k in s}))
    elif not args.quiet:
        header, rows = _headline_rows(s, result.exact)
        _rows_table(f"{scenario.name or scenario.slug} ({scenario.kind}, {s['runs']:,} runs, seed {s['seed']})",
                    header, rows, [f"report: {out}/report.html"])
    if not args.quiet:
        _print_precision(s)
    for note in result.notes:  # why the exact column is missing (a budget refused it), one line each
        print(f"note: {shown(note)}", file=sys.stderr)
    return 0


def _kind_info(scenario):
    """What the CLI asks of the scenario's kind (its object, sim/kinds.py): reading a fact imports no engine."""

    return kinds.get(scenario.kind)


def _kinds_with(fact: str) -> str:
    """The kinds for which the fact ``fact`` of the kind object is true, for a refusal ("escape", "a and b")."""

    names = [kind.name for kind in kinds.all_kinds() if getattr(kind, fact)]
    return " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]


def _with_policy(args, scenario):
    """``--policy NAME`` replaces the scenario's policy; naming code on the command line is the opt-in."""
    if not getattr(args, "policy", None):
        return scenario
    info = _kind_info(scenario)
    table = args.policy == "optimal" and info.supports_optimal  # the solved table of the kind's optimal play
    if not info.named_policies and not table:
        raise SimError(f"{scenario.source}: --policy applies to {_kinds_with('named_policies')} scenarios; this one "
                       f"is {scenario.kind!r} (its [policy] table holds its settings; `compare` compares them; "
                       f"--policy optimal, the solved table, applies to {_kinds_with('supports_optimal')})")
    args.allow_code = True if ":" in args.policy else args.allow_code
    with_policy = info.with_policy if info.named_policies else info.optimal.with_policy
    return with_policy(scenario, args.policy)


def _check_backend(args) -> None:
    """``--backend dask``: the address parsed and the scheduler greeted (one deadline) before anything is written."""
    if getattr(args, "backend", "local") == "dask" and not args.scheduler:
        raise SimError("--backend dask needs --scheduler ADDRESS (e.g. tcp://127.0.0.1:8786)")
    if getattr(args, "backend", "local") == "dask":

        args.scheduler = check_scheduler(args.scheduler)


def _pipeline_options(args) -> dict:
    """The keyword arguments of :func:`sim.pipeline.run` that ``run``'s flags give."""
    return {"runs": args.runs, "seed": args.seed, "n_jobs": args.jobs, "write_runs": not args.no_runs,
            "target_error": args.target_error, "max_runs": args.max_runs, "metric": args.metric,
            "progress": _precision_progress(args), "backend": getattr(args, "backend", "local"),
            "scheduler": getattr(args, "scheduler", None), "allow_code": getattr(args, "allow_code", False),
            "show_progress": not getattr(args, "quiet", False)}


def _check_metric(args, scenario) -> None:

    if args.metric is not None:
        parse_metric(args.metric)
    if args.target_error is not None and not (args.metric or main_metric(scenario.kind)):
        raise SimError(f"{scenario.source}: --target-error needs --metric for kind {scenario.kind!r}")


def _precision_progress(args):
    if args.quiet or args.target_error is None:
        return None

    def report(n, width):
        print(f"{n:,} runs: half-width {width:.5f} (target {args.target_error})", file=sys.stderr)

    return report


def _print_precision(summary: dict) -> None:
    info = summary.get("target_error")
    if info:
        state = "met" if info["met"] else f"NOT met (cap {info['max_runs']:,} runs)"
        print(f"target error {info['target']} on {info['metric']}: {state} with {info['runs']:,} runs "
              f"(half-width {info['half_width']:.5f})", file=sys.stderr)


def _cmd_run_batch(args) -> int:

    files = scenario_files(args.scenarios)
    scenarios = [_with_policy(args, sim.load_scenario(f)) for f in files]  # all validated before any writing
    _check_backend(args)
    for s in scenarios:
        _check_metric(args, s)
    if args.out:
        base = Path(args.out)
    elif len(args.scenarios) == 1:

        base = Path("reports") / bounded_folder_name(f"compare_{Path(args.scenarios[0]).resolve().name}")
    else:
        base = Path("reports") / "compare"
    entries = []
    with _owned(base, "run"):
        for scenario, folder in zip(scenarios, output_folders(scenarios, base), strict=True):
            result = pipeline.run(scenario, folder, **_pipeline_options(args))
            entries.append({"name": scenario.name or scenario.slug, "file": scenario.source,
                            "report": f"{folder.name}/report.html", "summary": result.summary,
                            "exact": result.exact})
            if not args.quiet:
                print(shown(f"{scenario.source}: wrote {folder}/report.html"), file=sys.stderr)
                _print_precision(result.summary)
        write_index(entries, base)
    if args.json:
        print(json.dumps([{"file": e["file"], **{k: e["summary"][k] for k in _headline_keys(e["summary"])}}
                          for e in entries]))
    elif not args.quiet:
        rows = []
        for e in entries:
            header, metric_rows = _headline_rows(e["summary"])
            rows += [[e["name"], *r[:2]] for r in metric_rows]
        _rows_table(f"{len(entries)} scenarios", ["scenario", "metric", "estimate [95% interval]"], rows,
                    [f"index: {base}/index.html"])
    return 0


def _headline_keys(summary: dict) -> list[str]:
    return [k for k, v in summary.items() if isinstance(v, float | int) and not isinstance(v, bool)][:8]


def _cmd_exact(args) -> int:

    scenario = _with_params(args, _load(args.scenario, "exact"))
    options = {}
    for flag, name in (("--max-states", "max_states"), ("--max-branches", "max_branches")):
        if getattr(args, name) is not None:
            if not _kind_info(scenario).exact_budget:
                raise SimError(f"{scenario.source}: {flag} applies to {_kinds_with('exact_budget')} scenarios; "
                               f"this one is {scenario.kind!r}")
            options[name] = getattr(args, name)
    try:
        result = sim.exact(scenario, **options)
    except sim.ExactUnsupported as exc:
        raise sim.ExactUnsupported(f"{scenario.source}: {exc}") from None
    text = summary_json(result)

    out = _report_folder(args, scenario)  # as run does
    for line in _replaced(out, scenario, "exact.html"):
        print(line, file=sys.stderr)
    with _owned(out, "exact"):
        atomic_write_text(out / "exact.json", text)
        write_exact_report(scenario, result, out)  # exact.html beside exact.json
        _note_source(out, scenario)
    engine = result.get("exact_engine")
    if engine:  # escape: the work done (states, time, budget), on stderr so that stdout stays clean
        which = f" ({engine['engine']} engine)" if engine.get("engine") else ""
        print(f"exact{which}: {engine['states']:,} states (largest {_kind_info(scenario).time_unit} "
              f"{engine['peak_states']:,}; budget "
              f"{engine['max_states']:,}), {engine['branches']:,} branches (budget {engine['max_branches']:,}) "
              f"in {engine['seconds']:.2f} s", file=sys.stderr)
    if args.json:
        sys.stdout.write(text)
        return 0
    header, rows = _headline_rows(result)
    _rows_table(f"{scenario.name or scenario.slug} ({scenario.kind}){_param_note(args)}: exact", ["metric", "exact"],
                [r[:2] for r in rows], [f"report: {out}/exact.html (the full exact summary: {out}/exact.json)"])
    return 0


def _cmd_optimal(args) -> int:
    scenario = _with_params(args, _load(args.scenario, "optimal"))
    kind = _kind_info(scenario)
    if not kind.supports_optimal:
        raise SimError(f"{scenario.source}: optimal play applies to {_kinds_with('supports_optimal')} scenarios; "
                       f"this one is {scenario.kind!r}")
    opt = kind.optimal  # the kind's optimal play (its kind object, sim/kinds.py)
    try:
        opt.parse_objective(args.objective, kind.round_limit(scenario))
        robust = {} if args.adversary == "random" else {"adversary": args.adversary}
        if robust and args.adversary not in getattr(opt, "ADVERSARIES", ()):
            raise SimError(f"{scenario.source}: --adversary {args.adversary}: this kind's optimal play has no "
                           "robust mode")
        result = opt.compare(scenario, args.objective, args.max_states, args.max_branches, **robust)
    except sim.ScenarioError as exc:
        raise SimError(f"{scenario.source}: --objective: {exc.detail}") from None
    except sim.ExactUnsupported as exc:
        raise sim.ExactUnsupported(f"{scenario.source}: {exc}") from None
    if args.out:
        with _owned(Path(args.out), "optimal"):
            opt.write_optimal_report(scenario, result, Path(args.out))
    if args.json:
        sys.stdout.write(summary_json(result))
        return 0
    lines = opt.console_lines(result)
    print("\n".join([lines[0] + _param_note(args), *lines[1:]]))
    if args.out:
        print(shown(f"wrote {args.out}/optimal.json and optimal.html"))
    return 0


def _cmd_validate(args) -> int:

    for path in scenario_files(args.scenarios):
        scenario = sim.load_scenario(path)
        print(shown(f"{path}: ok ({scenario.kind}, {scenario.name or scenario.slug})"))
    return 0


def _cmd_sweep(args) -> int:

    scenario = _load(args.scenario, "sweep")
    try:
        axes = [parse_axis(spec) for spec in args.param]
    except SimError as exc:
        raise _with_file(exc, scenario.source) from None
    df = sweep(scenario, axes, runs=args.runs, seed=args.seed, n_jobs=args.jobs, exact=not args.no_exact,
               metric=args.metric, progress=_progress(args, "grid point"))
    out = _report_folder(args, scenario, "sweep")
    with _owned(out, "sweep"):
        write_sweep(df, out, scenario)
    if not args.quiet:
        _print_sweep(df, scenario)
        print(shown(f"wrote {out}/sweep.csv and {out}/report.html"), file=sys.stderr)
    return 0


def _print_sweep(df, scenario) -> None:
    """The sweep's result table on stdout: one row per grid point, the metric with its 95% interval (and the
    exact value where the kind solves the variant exactly)."""

    metric, params = df.attrs["metric"], df.attrs["params"]
    col = metric if metric in df else f"{metric}.last"
    percent = is_proportion(metric)
    has_exact = f"{col}_exact" in df and df[f"{col}_exact"].notna().any()
    header = [*params, f"{metric_label(metric, short=True)} [95% interval]"] + (["exact"] if has_exact else [])
    rows = []
    for i in range(len(df)):
        r = {c: df[c].iloc[i] for c in df.columns}  # per column: integers stay integers
        row = [str(r[p]) for p in params] + [format_estimate(r[col], r[f"{col}_lo"], r[f"{col}_hi"], percent=percent)]
        if has_exact:
            row.append(format_estimate(r[f"{col}_exact"], percent=percent) if r[f"{col}_exact"] == r[f"{col}_exact"]
                       else "–")
        rows.append(row)
    _rows_table(f"{scenario.name or scenario.slug}: sweep of {', '.join(params)} ({df.attrs['runs']:,} runs, seed "
                f"{df.attrs['seed']})", header, rows)


def _cmd_tune(args) -> int:

    scenario = _with_policy(args, _load(args.scenario, "tune"))
    res = tune(scenario, args.param, args.target, metric=args.metric, lo=args.lo, hi=args.hi, runs=args.runs,
               seed=args.seed, n_jobs=args.jobs, exact=not args.no_exact, tol=args.tol,
               **({"allow_code": True} if args.allow_code else {}))
    data = res.as_dict()
    text = summary_json(data)
    if args.out:
        out = Path(args.out)
        atomic_write_text(out if out.suffix == ".json" else out / "tune.json", text)
    if args.json:
        sys.stdout.write(text)
    else:
        _print_tune(data, scenario)
    if not data.get("bracketed", True):
        print(shown(f"warning: {scenario.source}: {data['metric']} does not reach {args.target} for {args.param} in "
              f"[{data.get('lo')}, {data.get('hi')}] (it spans {_span(data)}; open ends were widened as far as "
              "the key's valid range allows); the value printed is the closest. Give other --lo/--hi or choose "
              "another parameter."), file=sys.stderr)
        return 1
    return 0


def _span(data: dict) -> str:
    vals = [e.get("metric") for e in data.get("evaluations", []) if isinstance(e.get("metric"), float | int)]
    return f"{min(vals):.4g} to {max(vals):.4g}" if vals else "no values"


def _print_tune(data: dict, scenario=None) -> None:
    """The tune result as a table; the method (exact, or Monte Carlo with its 95% interval) in the table and in
    the answer line below it; then the next step: the ``optimal``/``exact`` command at the value found."""

    ci = data.get("ci") or [math.nan, math.nan]
    lo, hi = (math.nan, math.nan) if ci[0] is None else ci
    percent = is_proportion(data["metric"])
    achieved = format_estimate(data["achieved"], lo, hi, percent=percent)
    exact = data.get("method") == "exact"
    runs = f"{data.get('runs') or 0:,} runs, seed {data.get('seed')}"
    interval = achieved.partition(" [")[2]
    method = "exact" if exact else f"Monte Carlo, {runs}, 95% interval [{interval}" if interval else runs
    rows = [["parameter", str(data["param"])], ["value", str(data["value"])],
            ["metric", str(data["metric"])], ["target", str(data["target"])], ["achieved", achieved],
            ["method", "exact" if exact else f"Monte Carlo ({runs})"],
            ["bracketed", "yes" if data.get("bracketed") else "NO"]]
    answer = (f"answer: {data['param']} = {data['value']} gives {data['metric']} "
              f"{achieved.partition(' [')[0]} ({method})")
    _rows_table(None, ["tune", "result"], rows, [answer, *_tune_next_step(data, scenario)])


def _tune_next_step(data: dict, scenario) -> list[str]:
    """``next step: python -m sim optimal FILE --param KEY=VALUE`` (escape; ``exact`` for other kinds that solve
    exactly, ``run`` otherwise): the command that answers more at the value found, without editing the file."""
    if scenario is None or not data.get("bracketed", True):
        return []
    import shlex

    info = _kind_info(scenario)
    optimal = info.supports_optimal and supports_exact(scenario)  # the kind's optimal play answers this scenario
    command = "optimal" if optimal else "exact" if data.get("method") == "exact" else "run"
    if command == "run":
        return []  # run takes no --param: the value goes into the file (or a sweep around it)
    what = {"optimal": "best play", "exact": "every exact metric"}[command]
    objective = ""
    if command == "optimal" and data["metric"] != info.main_metric:
        try:  # optimal play for the metric tuned where optimal supports it as an objective
            info.optimal.parse_objective(data["metric"], info.round_limit(scenario))
            objective = f" --objective {data['metric']}"
        except SimError:
            pass
    return [f"next step ({what} at this value): python -m sim {command} {shlex.quote(str(scenario.source))} "
            f"--param {data['param']}={data['value']}{objective}"]


def _cmd_sensitivity(args) -> int:

    scenario = _load(args.scenario, "sensitivity")
    df = sensitivity(scenario, metric=args.metric, runs=args.runs, seed=args.seed, n_jobs=args.jobs,
                     exact=not args.no_exact, parameters=args.param, progress=_progress(args, "parameter"))
    out = _report_folder(args, scenario, "sensitivity")
    with _owned(out, "sensitivity"):
        write_sensitivity(df, out, scenario)
    a = df.attrs
    print(f"{a['metric']} = {a['base']:.4f} [{a['base_lo']:.4f}, {a['base_hi']:.4f}]; change per step "
          "(largest of down and up first):")
    print(format_table(df))
    if not args.quiet:
        print(shown(f"wrote {out}/sensitivity.csv and {out}/report.html"), file=sys.stderr)
    return 0


def _with_file(exc: SimError, file: str) -> SimError:
    if isinstance(exc, ScenarioError) and exc.file is None:
        return ScenarioError(exc.detail, file=file, key=exc.key)
    return exc


def _cmd_compare(args) -> int:

    scenario = _load(args.scenario, "compare")
    out = _report_folder(args, scenario, "compare")
    args.out = str(out)
    if args.jobs == 0 or args.jobs < -1:
        raise SimError(f"--jobs: expected -1 or an integer >= 1, got {args.jobs}")
    kind = _kind_info(scenario)
    if kind.own_compare:  # the kind's own comparison (escape: paired differences and action counts per policy)
        with _owned(out, "compare"):
            title, header, rows = kind.compare(args)
        if not args.quiet:
            _rows_table(title, header, rows, [f"report: {out}/compare.html"])
        return 0

    res = compare_policies(scenario, args.policies, runs=args.runs, seed=args.seed, n_jobs=args.jobs)
    with _owned(out, "compare"):
        write_policy_report(res, out)
    if not args.quiet:
        rows = [[label, *[format_estimate(metric_value(res.summaries[label], m),
                                          *metric_interval(res.summaries[label], m), percent=is_proportion(m))
                          for m in res.metrics]] for label in res.labels]
        _rows_table(f"{scenario.name or scenario.slug}: {res.runs:,} runs per policy, seed {res.seed}",
                    ["policy", *res.metrics], rows, [f"report: {out}/compare.html"])
    return 0


COMMANDS = {"run": _cmd_run, "exact": _cmd_exact, "validate": _cmd_validate, "sweep": _cmd_sweep,
            "optimal": _cmd_optimal, "tune": _cmd_tune, "sensitivity": _cmd_sensitivity, "compare": _cmd_compare,
            "fit": lambda args: _designer_command("cmd_fit", args),
            "matrix": lambda args: _designer_command("cmd_matrix", args),
            "studio": lambda args: _studio(args)}


def _designer_command(name: str, args) -> int:

    return getattr(commands, name)(args)


def _studio(args) -> int:

    return cmd_studio(args)


def _cmd_schema(args) -> int:

    return cmd_schema(args)


COMMANDS["schema"] = _cmd_schema


def _cmd_audit(args) -> int:

    return cmd_audit(args)


COMMANDS["audit"] = _cmd_audit


def _check_limits(args) -> None:
    """Flags that bound work, checked before anything runs or is written (sim/limits.py, docs/limits.md)."""

    check_jobs(getattr(args, "jobs", None))
    check_max_states(getattr(args, "max_states", None))
    check_runs(getattr(args, "runs", None))
    check_runs(getattr(args, "max_runs", None), "--max-runs")


def _opt_in_hint(args):
    """A command without ``--allow-code`` refuses a scenario's code policy by saying what it takes instead."""
    import contextlib

    if hasattr(args, "allow_code"):
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def hinted():
        builtin = ", ".join(p for kind in kinds.all_kinds() if kind.named_policies for p in kind.builtin_policies)
        token = OPT_IN_HINT.set(f"{args.command} runs the built-in policies only ({builtin}) "
                                "and takes no --allow-code: name a built-in policy in the file, or use run, tune "
                                "or compare with --allow-code")
        try:
            yield
        finally:
            OPT_IN_HINT.reset(token)

    return hinted()


class _Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is: the command stops where it is, its --jobs workers with it (issue 45)."""


def _sigterm_as_interrupt():
    """While a command runs in the main thread, SIGTERM raises :class:`_Terminated`; the handler before is restored."""
    import contextlib
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return contextlib.nullcontext()

    def stop(signum, frame):
        raise _Terminated

    @contextlib.contextmanager
    def installed():
        before = signal.signal(signal.SIGTERM, stop)
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, before)

    return installed()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        _check_limits(args)
        with _opt_in_hint(args), _sigterm_as_interrupt():
            return COMMANDS[args.command](args)
    except SimError as exc:
        for line in getattr(exc, "lines", None) or [str(exc)]:  # a file's every error, one line each
            print(f"error: {shown(line)}", file=sys.stderr)
        return EXIT_INVALID
    except OSError as exc:  # a file system fault (full disk, permissions, ...): one line, no traceback
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {one_line(where + (exc.strerror or str(exc)))}", file=sys.stderr)
        return EXIT_INVALID
    except _Terminated:
        print("terminated", file=sys.stderr)
        return 143  # 128 + SIGTERM, as the shell reports a command SIGTERM ended
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
