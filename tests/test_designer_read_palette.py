"""Issue 26, item 1: one colour per outcome in every chart of every kind.

The designer read a campus report where game over was green in one chart and cleared green in the next. The
expectation here is the designer's, not the program's: escaped, cleared and won are one outcome (the side the
scenario asks about reaches its goal), caught, game over and lost another, a run that ends still held (escape
timeout, a PC captured at the end, a skirmish drawn at the round limit) a third, a campus PC still free a
fourth. Every report chart and the studio's charts are drawn for real; the colours are read off the
matplotlib artists (legend labels, or the category tick under an unlabelled bar)."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest
from matplotlib.colors import to_hex
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

import sim
from sim.cli import main

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = {
    "escape": ROOT / "scenarios" / "escape" / "party_under_watch.toml",
    "campus": ROOT / "scenarios" / "campus" / "seed_trio_vs_hounds.toml",
    "restraint": ROOT / "scenarios" / "restraint" / "raging_barbarian.toml",
    "formation": ROOT / "scenarios" / "formation" / "ambush_powered_armor.toml",
}

WON, LOST, HELD, FREE = "won", "lost", "held", "free"

#: (kind, chart file, label as drawn (a prefix), outcome): what each outcome is, from the brief and RULES.md's
#: endings: escape ends escaped / caught / timeout (R-ESC), campus PCs end cleared / captured / game over
#: (R-CAM-41), restraint asks whether the target is taken out, a formation skirmish is won by side A or B or drawn
REPORT_OUTCOMES = [
    ("escape", "outcomes.png", "escaped", WON),
    ("escape", "outcomes.png", "caught", LOST),
    ("escape", "outcomes.png", "timeout", HELD),
    ("escape", "escape_by_round.png", "simulated", WON),
    ("campus", "outcome_by_pc.png", "cleared", WON),
    ("campus", "outcome_by_pc.png", "game over", LOST),
    ("campus", "outcome_by_pc.png", "captured at the end", HELD),
    ("campus", "status_by_turn.png", "cleared", WON),
    ("campus", "status_by_turn.png", "game over", LOST),
    ("campus", "status_by_turn.png", "captured", HELD),
    ("campus", "status_by_turn.png", "free", FREE),
    ("restraint", "bound_by_round.png", "P(either", WON),
    ("formation", "skirmish_rounds.png", "A (", WON),
    ("formation", "skirmish_rounds.png", "B (", LOST),
]
#: the studio: its curve (escape: escaped by round; restraint: taken out by round; campus: captured by turn)
#: and its Outcomes bars (labels as the studio shows them)
STUDIO_CURVE = {"escape": WON, "restraint": WON, "campus": HELD}
STUDIO_BARS = {"Escape rate": WON, "Caught": LOST, "Timed out": HELD, "Clear rate": WON, "Party clear rate": WON,
               "Game over": LOST, "Ambush won": WON, "Ambush won by 2+": WON,
               "Incapacitated or arms complete": WON}
#: report charts whose series are not outcomes (PCs, policies, attention sources, DP, parameters)
NOT_OUTCOMES = [("campus", "vitality_end.png"), ("campus", "escape_by_turn.png"), ("escape", "attention_caught.png"),
                ("escape", "tiers.png"), ("formation", "dp_income.png"), ("restraint", "overload_by_round.png")]


def drawn_colours(fig) -> dict[str, set[str]]:
    """Label -> colours of the artists drawn under it: labelled lines, bars and areas; an unlabelled bar
    under the category tick it stands on."""
    out: dict[str, set[str]] = defaultdict(set)
    for ax in fig.axes:
        for line in ax.get_lines():
            if not line.get_label().startswith("_"):
                out[line.get_label()].add(to_hex(line.get_color()))
        for coll in ax.collections:
            if not coll.get_label().startswith("_") and len(coll.get_facecolor()):
                out[coll.get_label()].add(to_hex(coll.get_facecolor()[0], keep_alpha=False))
        for cont in ax.containers:
            if not isinstance(cont, BarContainer):
                continue
            if not cont.get_label().startswith("_"):
                out[cont.get_label()].update(to_hex(p.get_facecolor(), keep_alpha=False) for p in cont.patches)
                continue
            vertical = cont.orientation == "vertical"
            ticks = ax.get_xticks() if vertical else ax.get_yticks()
            labels = [t.get_text() for t in (ax.get_xticklabels() if vertical else ax.get_yticklabels())]
            for p in cont.patches:
                centre = p.get_x() + p.get_width() / 2 if vertical else p.get_y() + p.get_height() / 2
                nearest = min(range(len(ticks)), key=lambda i: abs(ticks[i] - centre))
                if abs(ticks[nearest] - centre) < 0.45 and labels[nearest]:
                    out[labels[nearest]].add(to_hex(p.get_facecolor(), keep_alpha=False))
    return dict(out)


@pytest.fixture(scope="module")
def report_figures(tmp_path_factory):
    """(kind, chart file) -> the figure, for one report of every kind (each figure recorded as it is saved)."""
    figures: dict[tuple[str, str], Figure] = {}
    original = Figure.savefig
    current = {}

    def recording(fig, fname, *args, **kwargs):
        name = Path(str(fname)).name
        m = re.fullmatch(r"\.(.+\.png)\..*", name)  # save_figure writes .NAME.png.XXXX.png, then renames
        figures[(current["kind"], m.group(1) if m else name)] = fig
        return original(fig, fname, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Figure, "savefig", recording)
        for kind, path in SCENARIOS.items():
            current["kind"] = kind
            out = tmp_path_factory.mktemp(kind)
            assert main(["run", str(path), "--runs", "2000", "--out", str(out), "--quiet", "--no-runs"]) == 0
    return figures


@pytest.fixture(scope="module")
def studio_figures():
    """kind -> (curve figure or None, Outcomes figure) as the studio draws them for the scenario."""
    pytest.importorskip("panel")
    from sim.studio.app import curve_figure, shares_figure
    from sim.studio.model import Studio

    out = {}
    for kind, path in SCENARIOS.items():
        studio = Studio(sim.load_scenario(path), first_answer_seconds=0.05)
        out[kind] = (curve_figure(studio, studio.baseline), shares_figure(studio, studio.baseline))
    return out


def _observed(report_figures, studio_figures) -> dict[str, dict[str, set[str]]]:
    """outcome -> {where it was drawn: its colours}."""
    seen: dict[str, dict[str, set[str]]] = defaultdict(dict)
    for kind, chart, prefix, outcome in REPORT_OUTCOMES:
        colours = drawn_colours(report_figures[(kind, chart)])
        hits = {label: c for label, c in colours.items() if label.startswith(prefix)}
        assert hits, f"{kind} {chart}: nothing drawn as {prefix!r} (drawn: {sorted(colours)})"
        for label, c in hits.items():
            seen[outcome][f"{kind} report {chart}: {label}"] = c
    for kind, (curve, shares) in studio_figures.items():
        if kind in STUDIO_CURVE:
            seen[STUDIO_CURVE[kind]][f"{kind} studio curve"] = drawn_colours(curve)["variant"]
        for label, c in drawn_colours(shares).items():
            if label in STUDIO_BARS:
                seen[STUDIO_BARS[label]][f"{kind} studio Outcomes: {label}"] = c
    return seen


def test_each_outcome_has_one_colour_in_every_kind_report_and_studio(report_figures, studio_figures):
    """Escaped = cleared = won in one colour, caught = game over = lost in another, timeout = captured at the
    end = draw in a third, free in a fourth: the same in every report chart of every kind and in the studio."""
    seen = _observed(report_figures, studio_figures)
    colour_of = {}
    for outcome, where in seen.items():
        colours = set().union(*where.values())
        assert len(colours) == 1, f"{outcome} is drawn in {len(colours)} colours: " + "; ".join(
            f"{w} {sorted(c)}" for w, c in sorted(where.items()))
        colour_of[outcome] = colours.pop()
    assert set(colour_of) == {WON, LOST, HELD, FREE}
    assert len(set(colour_of.values())) == 4, f"two outcomes share a colour: {colour_of}"


def test_series_that_are_not_outcomes_never_take_an_outcome_colour(report_figures, studio_figures):
    """A PC's bars, an attention source, the DP histogram: none is green, red, amber or cyan like an outcome
    (so a green series always means the goal reached)."""
    seen = _observed(report_figures, studio_figures)
    outcome_colours = set().union(*(c for where in seen.values() for c in where.values()))
    for kind, chart in NOT_OUTCOMES:
        if (kind, chart) not in report_figures:
            continue  # e.g. no run was caught, no composure table: the chart is not drawn
        for label, colours in drawn_colours(report_figures[(kind, chart)]).items():
            assert not colours & outcome_colours, f"{kind} {chart}: {label!r} drawn in an outcome's colour {colours}"
