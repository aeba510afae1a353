"""The ``fit`` and ``matrix`` subcommands (registered by :mod:`sim.cli`; docs/designer.md).

This module does not import :mod:`sim.cli` (which imports it to register the subcommands): the output folder
handling both use is :func:`sim.pipeline.owned_folder`."""

from __future__ import annotations

import sys
from pathlib import Path

from sim.errors import ScenarioError, shown
from sim.pipeline import owned_folder as _owned
from sim.report import summary_json
from sim.scenario import load_scenario


def add_parsers(sub, add_run_flags) -> None:
    fi = sub.add_parser("fit", help="fit several integer parameters (a DC ladder) to targets on several scenarios")
    fi.add_argument("fit_file", metavar="FIT.toml")
    fi.add_argument("--out", help="output folder (default reports/fit/<fit file name>/)")
    add_run_flags(fi)
    fi.add_argument("--json", action="store_true", help="print fit.json instead of the table")
    fi.add_argument("--quiet", action="store_true")

    ma = sub.add_parser("matrix", help="class-balance matrix: every class (x variants) on a one-character scenario")
    ma.add_argument("scenario")
    ma.add_argument("--classes", help="all (default) or a comma-separated list of classes")
    ma.add_argument("--vary", action="append", metavar="KEY=v1,v2,...",
                    help="a dotted key and its values (repeat to cross several)")
    ma.add_argument("--level", type=int, help="character level (default: the scenario's)")
    ma.add_argument("--scores", help="str=..,dex=..,con=..,int=..,wis=..,cha=.. for every class "
                                     "(default: each class's standard-array preset)")
    ma.add_argument("--threshold", type=float, default=0.10,
                    help="outlier threshold, as a share (default 0.10 = 10 points)")
    add_run_flags(ma)
    ma.add_argument("--out", help="output folder (default reports/<scenario name>/matrix/)")
    ma.add_argument("--quiet", action="store_true")


def cmd_fit(args) -> int:
    from sim.designer import fit as fitting  # lazy: CLI start-up (the parser is built from this module)

    spec = fitting.load_fit(args.fit_file)
    result = fitting.fit(spec, runs=args.runs, seed=args.seed, n_jobs=args.jobs)
    out = Path(args.out) if args.out else Path("reports") / "fit" / Path(args.fit_file).stem
    with _owned(out, "fit"):  # replaces only what an earlier fit wrote there
        fitting.write_fit(result, out)
    if args.json:
        sys.stdout.write(summary_json(result.as_dict()))
    else:
        print(fitting.format_table(result))
    if not args.quiet:
        print(shown(f"wrote {out}/report.html, fit.json and the fitted scenarios"), file=sys.stderr)
    return 0


def cmd_matrix(args) -> int:
    import math

    from sim.designer import matrix as class_matrix  # lazy: CLI start-up (the parser is built from this module)

    scenario = load_scenario(args.scenario)
    if not (0 < args.threshold < 1) or math.isnan(args.threshold):
        raise ScenarioError(f"expected a share between 0 and 1; given {args.threshold}", key="--threshold")
    if args.level is not None and not 1 <= args.level <= 20:
        raise ScenarioError(f"expected a level from 1 to 20; given {args.level}", key="--level")
    m = class_matrix.matrix(scenario, classes=class_matrix.parse_classes(args.classes), vary=args.vary,
                            level=args.level, scores=class_matrix.parse_scores(args.scores), runs=args.runs,
                            seed=args.seed, n_jobs=args.jobs, threshold=args.threshold)
    out = Path(args.out) if args.out else Path("reports") / scenario.slug / "matrix"
    with _owned(out, "matrix"):
        class_matrix.write_matrix(m, out)
    print(class_matrix.format_table(m))
    if not args.quiet:
        print(shown(f"wrote {out}/report.html and {out}/matrix.csv"), file=sys.stderr)
    return 0
