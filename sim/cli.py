"""Command line: ``python -m sim run|exact|validate`` (SCENARIOS.md).

Invalid input ends with exit status 2 and one line on stderr, before anything is written.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sim.errors import SimError

EXIT_INVALID = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own usage errors: exit 2, one line
        self.exit(EXIT_INVALID, f"{self.prog}: error: {message}\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer seed, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a seed >= 0, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m sim", description="Balance simulator for tabletop-RPG house rules.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = sub.add_parser("run", help="simulate a scenario and write summary, runs and report")
    run.add_argument("scenario")
    run.add_argument("--runs", type=_positive_int)
    run.add_argument("--seed", type=_seed)
    run.add_argument("--jobs", type=int, default=1, help="parallel processes (-1: all cores)")
    run.add_argument("--out", help="output folder (default reports/<scenario name>/)")
    run.add_argument("--no-runs", action="store_true", help="do not write runs.parquet")
    run.add_argument("--quiet", action="store_true")

    ex = sub.add_parser("exact", help="exact analysis of a scenario (kinds that support it)")
    ex.add_argument("scenario")
    ex.add_argument("--out", help="also write exact.json into this folder")

    val = sub.add_parser("validate", help="check scenario files")
    val.add_argument("scenarios", nargs="+")
    return parser


def _cmd_run(args) -> int:
    import sim
    from sim.report import atomic_write_bytes, atomic_write_text, summary_json

    scenario = sim.load_scenario(args.scenario)
    if args.jobs == 0 or args.jobs < -1:
        raise SimError(f"--jobs: expected -1 or an integer >= 1, got {args.jobs}")
    result = sim.simulate(scenario, runs=args.runs, seed=args.seed, n_jobs=args.jobs)
    exact_summary = None
    module = sim.kind_module(scenario.kind)
    if getattr(module, "supports_exact", lambda s: False)(scenario):
        exact_summary = sim.exact(scenario)
    out = Path(args.out) if args.out else Path("reports") / scenario.slug
    out.mkdir(parents=True, exist_ok=True)
    if not args.no_runs:
        import io

        buf = io.BytesIO()
        result.runs.to_parquet(buf, index=False)
        atomic_write_bytes(out / "runs.parquet", buf.getvalue())
    module.write_report(result, out, exact_summary=exact_summary)
    atomic_write_text(out / "summary.json", summary_json(result.summary))
    if not args.quiet:
        s = result.summary
        headline = {k: s[k] for k in _headline_keys(s) if k in s}
        print(json.dumps(headline), file=sys.stderr)
        print(f"wrote {out}/report.html", file=sys.stderr)
    return 0


def _headline_keys(summary: dict) -> list[str]:
    return [k for k, v in summary.items() if isinstance(v, float | int) and not isinstance(v, bool)][:8]


def _cmd_exact(args) -> int:
    import sim
    from sim.report import atomic_write_text, summary_json

    scenario = sim.load_scenario(args.scenario)
    result = sim.exact(scenario)
    text = summary_json(result)
    if args.out:
        atomic_write_text(Path(args.out) / "exact.json", text)
    sys.stdout.write(text)
    return 0


def _cmd_validate(args) -> int:
    import sim

    for path in args.scenarios:
        scenario = sim.load_scenario(path)
        print(f"{path}: ok ({scenario.kind}, {scenario.name or scenario.slug})")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return {"run": _cmd_run, "exact": _cmd_exact, "validate": _cmd_validate}[args.command](args)
    except SimError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
