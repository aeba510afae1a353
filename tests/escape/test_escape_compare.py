"""Policy comparison with common random numbers (issue 8), the code gate for `module:callable`
policies (R-ESC-6 custom policies), and the example policies of docs/policies.md."""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pytest
from escape_helpers import character, scenario
from examples import ROOT

import sim
from sim.cli import add_compare_arguments
from sim.errors import PolicyError, ScenarioError
from sim.escape import examples
from sim.escape.policy import load_policy
from sim.escape.policy_comparison import (
    compare,
    main_compare,
    parse_policies,
    with_policy,
    write_compare_report,
)
from sim.stats import Z95

TEAMWORK = ROOT / "scenarios" / "escape" / "teamwork.toml"
WATCH = ROOT / "scenarios" / "escape" / "party_under_watch.toml"
RUNS, SEED = 300, 5


@pytest.fixture(scope="module")
def teamwork_comparison():
    return compare(sim.load_scenario(TEAMWORK), ["greedy", "arms_first", "team"], runs=RUNS, seed=SEED)


def test_compare_uses_common_random_numbers_run_for_run():
    """A lone character with only its arms bound: greedy and arms_first make the same choice every
    round, so with common random numbers (run k of every policy reads the same dice) every run has
    the same outcome and length under both, and the paired difference is exactly 0. Separate
    streams per policy would differ in about half of the runs."""
    s = scenario(character("A", str=14, restraints={"arms": "severe"}), run={"max_rounds": 6})
    res = compare(s, ["greedy", "arms_first"], runs=400, seed=11)
    a, b = (res.results[name].runs for name in ("greedy", "arms_first"))
    assert 0.05 < (a["outcome"] == "escaped").mean() < 0.95  # both outcomes occur: the check can fail
    assert (a["outcome"] == b["outcome"]).all() and (a["rounds"] == b["rounds"]).all()
    d = res.differences["arms_first"]["escape_rate"]
    assert d["difference"] == 0 and d["ci"] == [0, 0]


def test_compare_paired_differences_from_the_per_run_differences(teamwork_comparison):
    res = teamwork_comparison
    runs = {name: r.runs for name, r in res.results.items()}
    for name in ("arms_first", "team"):
        for rate, outcome in (("escape_rate", "escaped"), ("caught_rate", "caught"), ("timeout_rate", "timeout")):
            d = ((runs[name]["outcome"] == outcome).to_numpy(float)
                 - (runs["greedy"]["outcome"] == outcome).to_numpy(float))
            got = res.differences[name][rate]
            assert got["difference"] == pytest.approx(res.summaries[name][rate] - res.summaries["greedy"][rate],
                                                      abs=1e-12)
            se = d.std(ddof=1) / math.sqrt(len(d))
            assert got["ci"] == pytest.approx([d.mean() - Z95 * se, d.mean() + Z95 * se], abs=1e-12)
        mr = res.differences[name]["mean_rounds"]
        assert mr["difference"] == pytest.approx(res.summaries[name]["mean_rounds"]
                                                 - res.summaries["greedy"]["mean_rounds"], abs=1e-12)
        assert mr["ci"][0] < mr["difference"] < mr["ci"][1]


def test_compare_common_random_numbers_make_the_paired_interval_narrower(teamwork_comparison):
    """Run k of every policy reads the same dice, so the paired interval of the difference is
    narrower than the interval two independent estimates would give."""
    d = teamwork_comparison.differences["team"]["escape_rate"]
    s0, s1 = (teamwork_comparison.summaries[n]["escape_rate"] for n in ("greedy", "team"))
    unpaired = Z95 * math.sqrt((s0 * (1 - s0) + s1 * (1 - s1)) / RUNS)
    assert d["ci"][1] - d["difference"] < unpaired


def test_R_ESC_21_compare_shows_assists_and_guides_under_team(teamwork_comparison):
    acts = teamwork_comparison.actions
    assert acts["team"]["per_run"]["assist"] > 1 and acts["team"]["per_run"]["guide"] > 2
    assert acts["greedy"]["per_run"]["assist"] + acts["greedy"]["per_run"]["guide"] < 0.5
    assert sum(acts["team"]["share"].values()) == pytest.approx(1.0)
    assert acts["team"]["by_character"]["Vesna"]["guide"] > 1  # the blindfolded guide guides once she can see
    assert teamwork_comparison.engine == "kernel"  # every built-in policy runs on the kernel (one engine for all)


def test_compare_report_files(teamwork_comparison, tmp_path):
    written = write_compare_report(teamwork_comparison, tmp_path)
    assert {p.name for p in written} >= {"compare.html", "compare.json", "escape_by_round_by_policy.png"}
    assert (tmp_path / "escape_by_round_by_policy.png").stat().st_size > 1000
    data = json.loads((tmp_path / "compare.json").read_text())
    assert data["policies"] == ["greedy", "arms_first", "team"] and data["baseline"] == "greedy"
    assert data["runs"] == RUNS and data["seed"] == SEED and "scenario_hash" in data
    assert set(data["differences"]) == {"arms_first", "team"}
    assert set(data["differences"]["team"]) == {"escape_rate", "caught_rate", "timeout_rate", "mean_rounds"}
    html = (tmp_path / "compare.html").read_text()
    assert "escape_by_round_by_policy.png" in html and "assist" in html and "Paired difference" in html


def test_main_compare_cli_entry(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    add_compare_arguments(parser)
    args = parser.parse_args([str(WATCH), "--policies", "greedy,sim.escape.examples:cautious", "--runs", "150",
                              "--seed", "2", "--out", str(tmp_path)])
    assert main_compare(args) == 0
    data = json.loads((tmp_path / "compare.json").read_text())
    assert data["policies"] == ["greedy", "sim.escape.examples:cautious"]
    assert "wrote" in capsys.readouterr().err


def test_parse_policies_and_duplicates():
    assert parse_policies(" greedy, team ,pkg.mod:fn") == ["greedy", "team", "pkg.mod:fn"]
    with pytest.raises(ScenarioError, match="comma-separated"):
        parse_policies("greedy,,team")
    with pytest.raises(ScenarioError, match="twice"):
        compare(sim.load_scenario(WATCH), ["team", "team"], runs=10, seed=0)
    with pytest.raises(ScenarioError, match="did you mean 'greedy'"):
        compare(sim.load_scenario(WATCH), ["greedy", "grredy"], runs=10, seed=0)


# --- the code gate ---------------------------------------------------------------------------------

CODE = "sim.escape.examples:cautious"


def _code_scenario():
    return scenario(character("A", restraints={"arms": "light"}), character("B", restraints={"arms": "simple"}),
                    policy={"name": CODE})


def test_R_ESC_6_scenario_naming_code_is_refused_without_opt_in():
    with pytest.raises(ScenarioError, match=r"policy\.name: 'sim\.escape\.examples:cautious' names Python code; "
                                            r"pass --allow-code \(or --policy sim\.escape\.examples:cautious\)"):
        sim.simulate(_code_scenario(), runs=10, seed=0)


def test_R_ESC_6_scenario_naming_code_runs_with_allow_code():
    res = sim.simulate(_code_scenario(), runs=50, seed=0, allow_code=True)
    assert res.summary["policy"] == CODE and res.extra["engine"] == "reference"


def test_builtin_policies_need_no_opt_in():
    for name in ("greedy", "arms_first", "team"):
        s = with_policy(_code_scenario(), name)
        assert sim.simulate(s, runs=20, seed=0).summary["runs"] == 20


def test_missing_policy_module_is_reported_before_the_gate():
    s = with_policy(_code_scenario(), "no_such_module_xyz:fn")
    with pytest.raises(ScenarioError, match="cannot import policy module 'no_such_module_xyz'"):
        sim.simulate(s, runs=10, seed=0)


def test_compare_gate_for_the_scenario_s_own_policy():
    """policies=None compares the built-ins plus the scenario's own policy: code needs allow_code.
    Policies the caller names (the CLI's --policies) are the user's own choice."""
    s = _code_scenario()
    with pytest.raises(ScenarioError, match="names Python code"):
        compare(s, None, runs=20, seed=0)
    res = compare(s, None, runs=20, seed=0, allow_code=True)
    assert res.policies == ["greedy", "arms_first", "team", CODE]
    assert compare(s, ["greedy", CODE], runs=20, seed=0).policies == ["greedy", CODE]


# --- example policies (docs/policies.md) --------------------------------------------------------------


def test_example_policy_loads_by_module_callable():
    assert load_policy("sim.escape.examples:cautious") is examples.cautious
    assert load_policy("sim.escape.examples:stubborn") is examples.stubborn


def test_example_cautious_is_never_caught_and_its_actions_are_legal():
    """Run with validation (R-ESC-6): every action is checked; cautious never reaches the limit."""
    s = with_policy(sim.load_scenario(WATCH), CODE)
    res = sim.simulate(s, runs=300, seed=4, allow_code=True)
    assert res.summary["caught_rate"] == 0.0
    greedy = sim.simulate(with_policy(s, "greedy"), runs=300, seed=4)
    assert greedy.summary["caught_rate"] > 0  # the example makes a difference here


def test_example_stubborn_is_legal_everywhere():
    s = with_policy(sim.load_scenario(TEAMWORK), "sim.escape.examples:stubborn")
    res = sim.simulate(s, runs=100, seed=1, allow_code=True)
    assert np.isclose(res.runs["actions_assist"].sum() + res.runs["actions_guide"].sum(), 0)


def test_R_ESC_6_illegal_custom_action_is_a_policy_error(tmp_path, monkeypatch):
    mod = tmp_path / "my_bad_policy.py"
    mod.write_text("from sim.escape.state import Action\n"
                   "def jump(view):\n    return [Action('assist', target=0) for _ in view.state.chars]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    s = with_policy(_code_scenario(), "my_bad_policy:jump")
    with pytest.raises(PolicyError, match=r"'A' in round 1.*R-ESC-8"):
        sim.simulate(s, runs=5, seed=0, allow_code=True)
