"""``exact.html``: the exact analysis of a scenario as a page (``python -m sim exact SCENARIO --out DIR``).

The question and its exact answer first, then every exact scalar with its plain-language name (key in small
type), then each by-round list as a chart and a folded table. Built through :mod:`sim.report` like every
other page (escaped, no script)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from sim.designer.metrics import MAIN_METRIC, META_KEYS, metric_value
from sim.labels import metric_kind, metric_label
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

DEFAULT_QUESTIONS = {
    "escape": "How often does the party escape?",
    "restraint": "How likely is the target taken out (incapacitated or its arms complete) by the end?",
    "formation": "How often does the ambush succeed, and what does a session earn?",
}


def _value_text(key: str, v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return "–" if v is None else str(v)
    if isinstance(v, int | float):
        return fmt_exact(v) if metric_kind(key) == "probability" else f"{v:.6g}"
    return str(v)


MAX_TIER_SECONDS = 2.0  # the tier question is answered when the scenario's own exact analysis took less


def tiers_on_the_way(scenario) -> list[str]:
    """The tiers the party must get through (R-ESC-2): each goal restraint worn at the start, then what a success
    makes of it, down to free."""
    from sim.escape.model import DEFAULT_BECOMES, TIER_IDS

    out: list[str] = []
    for c in scenario.party:
        for slot in scenario.goal.slots:
            tier = getattr(c.restraints, slot, None)
            seen = 0
            while tier and tier != "free" and tier != "utter" and seen < len(TIER_IDS):
                if tier not in out:
                    out.append(tier)
                o = scenario.rules.tiers.get(tier)
                tier = o.becomes if o is not None and o.becomes is not None else TIER_IDS[
                    DEFAULT_BECOMES[TIER_IDS.index(tier)]]
                seen += 1
    return [t for t in TIER_IDS if t in out]


def tier_answer(scenario, exact: dict[str, Any]) -> list[str]:
    """Which tier holds the party back most, exactly: for each tier on the way, the exact escape rate if that
    tier's checks always succeeded (its DC at the lowest allowed, -100); the largest gain names it."""
    import sim
    from sim.designer.params import with_values
    from sim.errors import SimError
    from sim.escape.report import _dc_in_effect

    engine = exact.get("exact_engine") or {}
    tiers = tiers_on_the_way(scenario)
    if not tiers or engine.get("seconds", 0.0) > MAX_TIER_SECONDS:
        return []
    base = exact["escape_rate"]
    gains = []
    for tier in tiers:
        try:
            v = sim.exact(with_values(scenario, {f"rules.tiers.{tier}.dc": -100}))["escape_rate"]
        except SimError:
            return []
        gains.append((v - base, tier, v))
    gain, tier, v = max(gains)
    if len(tiers) == 1:
        return [f"One tier stands in the way: {tier} (DC {_dc_in_effect(scenario, tier)})."]
    others = ", ".join(f"{t} {100 * g:+.1f}" for g, t, _ in sorted(gains, reverse=True)[1:])
    return [f"The tier that holds the party back most: {tier} (DC {_dc_in_effect(scenario, tier)}). If its checks "
            f"always succeeded the party would escape in {fmt_exact(v)} of runs instead of {fmt_exact(base)} "
            f"({100 * gain:+.1f} points; the other tiers on the way: {others} points)."]


def write_exact_report(scenario, exact: dict[str, Any], out_dir: Path) -> Path:
    """Write ``exact.html`` (and one PNG per by-round list) into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    kind = scenario.kind
    main = MAIN_METRIC.get(kind, "")
    lines = []
    if main:
        try:
            v = metric_value(exact, main)
            lines.append(f"Exactly {fmt_exact(v) if metric_kind(main) == 'probability' else f'{v:.6g}'}: "
                         f"{metric_label(main)}.")
        except Exception:  # noqa: BLE001 - a kind whose exact summary lacks its main metric: no headline
            pass
    if kind == "escape" and "escape_rate" in exact:
        lines += tier_answer(scenario, exact)
    lines.append("Exact analysis: no sampling error, so no interval.")
    blocks = [answer(scenario_question(scenario.description, DEFAULT_QUESTIONS.get(kind, "What is the exact "
                                                                                         "answer?")), lines),
              description_block(scenario.description)]
    if kind == "escape":
        from sim.escape.report import tier_ladder

        blocks.append(section("Tier ladder in effect", tier_ladder(scenario),
                              note="DCs and what a successful escape check makes of each tier (R-ESC-2); overrides "
                                   "from the scenario's [rules.tiers] are highlighted."))
    scalars = [(k, v) for k, v in exact.items() if k not in META_KEYS and not k.endswith(("_ci", "_se"))
               and isinstance(v, int | float) and not isinstance(v, bool)]
    blocks.append(section("Exact values", table(["quantity", "value"],
                                                [[key_label(metric_label(k), k), _value_text(k, v)]
                                                 for k, v in scalars])))
    series = [(k, v) for k, v in exact.items() if isinstance(v, list) and v and k not in ("escape_rate_ci",)
              and all(isinstance(x, int | float) and not isinstance(x, bool) for x in v)]
    for i, (key, values) in enumerate(series):
        x = np.arange(1, len(values) + 1)
        fig, ax = new_figure(chart_text(metric_label(key), 70), "round", chart_text(metric_kind(key) or "value"))
        ax.plot(x, values, marker="o", color=outcome_colour(key, default=series_colour(i)), label="exact")
        if metric_kind(key) == "probability":
            ax.set_ylim(-0.02, 1.02)
        legend_outside(ax)
        name = f"exact_{''.join(ch if ch.isalnum() else '_' for ch in key)}.png"
        save_figure(fig, out / name)
        rows = [[str(r), _value_text(key, v)] for r, v in zip(x, values, strict=True)]
        blocks.append(section(metric_label(key), details("Table: by round", table(["round", "value"], rows)),
                              image=name, key=key, alt=f"Line chart: {metric_label(key)}, exact, by round"))
    title = f"Exact analysis — {scenario.name or scenario.slug}"
    return write_html(out / "exact.html", title, blocks, {"kind": kind, **{k: exact.get(k) for k in
                                                                             ("scenario_hash", "sim_version")}})


__all__ = ["write_exact_report"]
