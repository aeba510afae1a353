"""Balance metrics of a result, against direct computation from its runs."""

from __future__ import annotations

import numpy as np
import pytest
from examples import ROOT

import sim
from sim.designer.balance import balance_metrics
from sim.designer.pages import balance_section, balance_table
from sim.designer.params import with_values
from sim.stats import wilson_interval

ROGUE = ROOT / "scenarios/escape/lone_rogue.toml"
WATCH = ROOT / "scenarios/escape/party_under_watch.toml"
FLANK = ROOT / "scenarios/restraint/flank_penalty.toml"


def test_escape_balance_metrics_from_the_runs():
    s = sim.load_scenario(WATCH)
    result = sim.simulate(s, runs=3000, seed=2)
    m = balance_metrics(result)
    rounds = result.runs["rounds"].to_numpy()
    assert m["run_length"]["mean"] == pytest.approx(rounds.mean())
    assert m["run_length"]["p90"] == pytest.approx(np.percentile(rounds, 90))
    n_timeout = int((result.runs["outcome"] == "timeout").sum())
    assert m["timeout_share"] == pytest.approx(result.summary["timeout_rate"])
    assert m["timeout_share_ci"] == wilson_interval(n_timeout, 3000)
    shares = m["failure_tiers"]
    assert sum(shares.values()) == pytest.approx(1.0) and m["failure_tier"] == max(shares, key=shares.get)
    table = balance_table(m)
    assert {"run_length", "timeout_share", "first_check_advantage", "failure_tier"} <= set(table["metric"])
    assert "<table" in balance_section(result, m)


def test_first_check_advantage_reads_round_one_of_the_same_runs():
    s = sim.load_scenario(ROGUE)
    result = sim.simulate(s, runs=4000, seed=8)
    fca = balance_metrics(result)["first_check_advantage"]
    # the one-round replay sees round 1 of the same runs: its checks and successes never exceed the full run's
    first = sim.simulate(with_values(s, {"run.max_rounds": 1}), runs=4000, seed=8).runs
    assert (first["Mei.checks"] <= result.runs["Mei.checks"]).all()
    assert (first["Mei.successes"] <= result.runs["Mei.successes"]).all()
    ok = first["Mei.successes"] > 0
    escaped = result.runs["outcome"] == "escaped"
    assert fca["p_after_success"] == pytest.approx(escaped[ok].mean())
    assert fca["p_after_failure"] == pytest.approx(escaped[~ok].mean())
    assert fca["value"] > 0  # an early success helps a lone rogue
    lo, hi = fca["ci"]
    assert lo < fca["value"] < hi


def test_restraint_first_mover_advantage_and_failure_round():
    s = sim.load_scenario(FLANK)
    result = sim.simulate(s, runs=2000, seed=1)
    m = balance_metrics(result)
    a = sim.simulate(with_values(s, {"target.initiative": "binder"}), runs=2000, seed=1).summary
    b = sim.simulate(with_values(s, {"target.initiative": "target"}), runs=2000, seed=1).summary
    key = "incapacitated_or_arms_complete_by_round"
    assert m["first_mover_advantage"]["value"] == pytest.approx(a[key][-1] - b[key][-1])
    either = np.array(result.summary[key])
    assert m["failure_round"] == int(np.diff(np.concatenate([[0], either])).argmax()) + 1
    runs = result.runs
    first = np.array([min(r for r in (a, b) if r > 0) for a, b in
                      zip(runs["first_incapacitated_round"], runs["first_arms_complete_round"], strict=True)
                      if a > 0 or b > 0])
    assert len(first) == round(either[-1] * 2000)
    assert m["taken_out_round"]["mean"] == pytest.approx(first.mean()) and m["taken_out_round"]["min"] >= 1
