"""The dice race's report: the answer, then every summary number with its name (sim.labels), built through
sim.report like every page."""

from __future__ import annotations

from pathlib import Path

from sim.labels import format_value, metric_label
from sim.report import answer, scenario_question, section, table, write_html


def write_report(result, out_dir, exact_summary=None) -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    s = result.summary
    rows = [[metric_label(k), format_value(k, v)] for k, v in s.items()
            if isinstance(v, int | float) and not isinstance(v, bool) and k not in ("runs", "seed")]
    blocks = [answer(scenario_question(result.scenario.description, "Who wins the race?"),
                     [f"Side A wins {format_value('a_win_rate', s['a_win_rate'])} of {s['runs']:,} races."]),
              section("Summary", table(["quantity", "value"], rows))]
    return write_html(out / "report.html", f"Dice race — {result.scenario.name}", blocks, s)
