"""Issue 26, what drew the watch: the escape report shows every source's attention drawn per run (unties of
teammates included, R-ESC-9a / R-ESC-10b) and, when the party can be caught, a chart of caught runs' attention by
the round they were caught."""

from __future__ import annotations

import re

import numpy as np
from examples import ROOT

import sim
from sim.designer.params import with_values
from sim.escape.aggregate import EscapeAggregate
from sim.escape.params import compile_params
from sim.escape.policy import load_policy
from sim.escape.report import attention_sources, write_report
from sim.escape.simulate import reference_chunk
from sim.escape.state import ACTION_KINDS

WATCH = ROOT / "scenarios" / "escape" / "party_under_watch.toml"


def test_attention_sources_match_unties_of_teammates_counted_by_hand():
    """Replay runs with the scalar reference and count, from the declared plans, every untie whose target is not the
    untier (R-ESC-10b: each draws attention.assist). The report's derived count must be that count. With bound legs
    drawing attention.legs (R-ESC-10c, Aster's moderate legs) no count is derived: the switch is off here."""
    scen = with_values(sim.load_scenario(WATCH), {"rules.legs_hinder": False})
    p = compile_params(scen)
    greedy = load_policy(p.policy)
    teammate_unties = [0]

    def counting(view):
        actions = greedy(view)
        for i, a in enumerate(actions):
            if a is not None and not view.dazed[i] and a.kind == "untie" and a.target != i:
                teammate_unties[0] += 1
        return actions

    n = 300
    cols = reference_chunk(p, n, np.random.default_rng(5), counting)
    agg = EscapeAggregate.empty(p).add(cols)
    acts = {k: float(agg.actions.sum(axis=0)[j] / n) for j, k in enumerate(ACTION_KINDS)}
    rounds_sum = float(cols["rounds"].sum())
    rows = {r[0]: r for r in attention_sources(scen, agg, acts, rounds_sum, n, agg.attention_sum)}
    assert teammate_unties[0] > 0  # the scenario's greedy party unties teammates
    untie = rows["untie of a teammate"]
    assert abs(untie[1] - teammate_unties[0] / n) < 1e-9, (untie, teammate_unties[0] / n)
    assert abs(untie[3] - scen.attention.assist * teammate_unties[0] / n) < 1e-9
    # the total is the runs' recorded attention (R-ESC-9a: the sum of every source)
    assert abs(rows["total"][3] - cols["attention"].mean()) < 1e-9
    # caught runs by round: the runs whose outcome is caught, by their last round
    caught = cols["outcome"] == 2
    assert agg.caught_at.sum() == caught.sum()
    assert agg.caught_attention.sum() == cols["attention"][caught].sum()


def test_the_remainder_names_bound_legs_when_they_may_draw():
    """R-ESC-10c: the scenario as shipped (legs_hinder on, Aster's legs bound): the remainder row names the legs'
    extra and gives no count (it cannot be told from the unties)."""
    scen = sim.load_scenario(WATCH)
    result = sim.simulate(scen, runs=500, seed=3)
    agg = result.aggregate
    acts = {k: float(agg.actions.sum(axis=0)[j] / agg.runs) for j, k in enumerate(ACTION_KINDS)}
    rounds_sum = float((np.arange(len(agg.rounds_all)) * agg.rounds_all).sum())
    rows = attention_sources(scen, agg, acts, rounds_sum, agg.runs, agg.attention_sum)
    legs = [r for r in rows if "bound legs" in r[0]]
    assert len(legs) == 1 and legs[0][1] is None


def test_the_report_shows_every_sources_attention_and_the_caught_chart(tmp_path):
    result = sim.simulate(with_values(sim.load_scenario(WATCH), {"rules.legs_hinder": False}), runs=4000, seed=3)
    assert result.summary["caught_rate"] > 0
    write_report(result, tmp_path)
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    block = html[html.index("Attention: settings"):html.index("Other settings")]
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", block))
    m = re.search(r"untie of a teammate (\d+\.\d\d) 2 (\d+\.\d\d)", text)
    assert m and float(m.group(1)) > 0 and abs(float(m.group(2)) - 2 * float(m.group(1))) < 0.011, text[:800]
    m = re.search(r"total (\d+\.\d\d)", text)
    assert m and abs(float(m.group(1)) - result.runs["attention"].mean()) < 0.006
    assert "–" not in text.split("All actions")[0]  # every source has its attention
    assert (tmp_path / "attention_caught.png").is_file() and 'src="attention_caught.png"' in html


def test_no_chart_when_the_party_cannot_be_caught(tmp_path):
    result = sim.simulate(sim.load_scenario(ROOT / "scenarios" / "escape" / "lone_rogue.toml"), runs=500, seed=1)
    write_report(result, tmp_path)
    assert not (tmp_path / "attention_caught.png").exists()
