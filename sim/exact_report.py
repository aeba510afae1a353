"""``exact.html``: the exact analysis of a scenario as a page (``python -m sim exact SCENARIO --out DIR``).

The question and its exact answer first, then every exact scalar with its plain-language name (key in small
type), then each by-round list as a chart and a folded table. Built through :mod:`sim.report` like every
other page (escaped, no script)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from sim import kinds
from sim.designer.metrics import META_KEYS, metric_value
from sim.labels import metric_label, metric_unit
from sim.palette import outcome_colour, series_colour
from sim.report import (
    answer,
    chart_text,
    description_block,
    details,
    fmt_exact,
    key_label,
    legend_outside,
    new_figure,
    save_figure,
    scenario_question,
    section,
    table,
    write_html,
)


def _value_text(key: str, v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return "–" if v is None else str(v)
    if isinstance(v, int | float):
        return fmt_exact(v) if metric_unit(key) == "probability" else f"{v:.6g}"
    return str(v)


def write_exact_report(scenario, exact: dict[str, Any], out_dir: Path) -> Path:
    """Write ``exact.html`` (and one PNG per by-round list) into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    contract = kinds.get(scenario.kind)
    main = contract.main_metric
    lines = []
    if main:
        try:
            v = metric_value(exact, main)
            lines.append(f"Exactly {fmt_exact(v) if metric_unit(main) == 'probability' else f'{v:.6g}'}: "
                         f"{metric_label(main)}.")
        except Exception:  # noqa: BLE001 - a kind whose exact summary lacks its main metric: no headline
            pass
    lines += contract.exact_answer(scenario, exact)  # the kind's own question (escape: which tier holds back)
    lines.append("Exact analysis: no sampling error, so no interval.")
    blocks = [answer(scenario_question(scenario.description, contract.default_question), lines),
              description_block(scenario.description)]
    rules = contract.rules_table(scenario)
    if rules is not None:  # the rules in effect (escape: the tier ladder)
        title, body, note = rules
        blocks.append(section(title, body, note=note))
    scalars = [(k, v) for k, v in exact.items() if k not in META_KEYS and not k.endswith(("_ci", "_se"))
               and isinstance(v, int | float) and not isinstance(v, bool)]
    blocks.append(section("Exact values", table(["quantity", "value"],
                                                [[key_label(metric_label(k), k), _value_text(k, v)]
                                                 for k, v in scalars])))
    series = [(k, v) for k, v in exact.items() if isinstance(v, list) and v and not k.endswith("_ci")
              and all(isinstance(x, int | float) and not isinstance(x, bool) for x in v)]
    for i, (key, values) in enumerate(series):
        x = np.arange(1, len(values) + 1)
        fig, ax = new_figure(chart_text(metric_label(key), 70), "round", chart_text(metric_unit(key) or "value"))
        ax.plot(x, values, marker="o", color=outcome_colour(key, default=series_colour(i)), label="exact")
        if metric_unit(key) == "probability":
            ax.set_ylim(-0.02, 1.02)
        legend_outside(ax)
        name = f"exact_{''.join(ch if ch.isalnum() else '_' for ch in key)}.png"
        save_figure(fig, out / name)
        rows = [[str(r), _value_text(key, v)] for r, v in zip(x, values, strict=True)]
        blocks.append(section(metric_label(key), details("Table: by round", table(["round", "value"], rows)),
                              image=name, key=key, alt=f"Line chart: {metric_label(key)}, exact, by round"))
    title = f"Exact analysis — {scenario.name or scenario.slug}"
    return write_html(out / "exact.html", title, blocks, {"kind": scenario.kind, **{k: exact.get(k) for k in
                                                                             ("scenario_hash", "sim_version")}})


__all__ = ["write_exact_report"]
