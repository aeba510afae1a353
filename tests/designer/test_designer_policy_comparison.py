"""Policy comparison for kinds other than escape: the settings come from the kind's [policy] model, every
policy runs on common random numbers, and a kind without a choice is refused."""

from __future__ import annotations

import math

import pytest
from examples import ROOT

import sim
from sim.designer.params import with_values
from sim.designer.policy_comparison import compare_policies, parse_variants, policy_choices, write_policy_report

CAMPUS = ROOT / "scenarios/campus/stance_mix_vs_counter.toml"
FORMATION = ROOT / "scenarios/formation/overflow_front.toml"
RESTRAINT = ROOT / "scenarios/restraint/flank_penalty.toml"


def test_choices_are_read_from_the_policy_model():
    # formation's [policy]: the tie-break name, the attack choice (R-MDK-6) and movement (R-MDK-11: "best"
    # weighs attacks and a grapple attempt, "best_attack" the attacks alone, second round of the revision)
    assert policy_choices(sim.load_scenario(FORMATION)) == {"name": ["greedy", "first", "random"],
                                                            "choice": ["expected_damage", "min_penalty"],
                                                            "movement": ["fixed", "best", "best_attack"]}
    campus = policy_choices(sim.load_scenario(CAMPUS))
    assert campus["stance"] == ["fixed", "random", "best", "counter", "equilibrium"]
    assert campus["rescue"] == [False, True] and "name" not in campus  # a free-text name is no choice
    with pytest.raises(sim.SimError, match="compare supports"):
        parse_variants(sim.load_scenario(RESTRAINT), None)


def test_each_policy_equals_its_own_simulation_with_the_same_dice(tmp_path):
    s = sim.load_scenario(CAMPUS)
    res = compare_policies(s, "best,counter,rescue=true", runs=400, seed=5)
    assert res.labels == ["best", "counter", "rescue=true"]
    for label, key, value in (("best", "policy.stance", "best"), ("counter", "policy.stance", "counter"),
                              ("rescue=true", "policy.rescue", True)):
        alone = sim.simulate(with_values(s, {key: value}), runs=400, seed=5).summary
        assert res.summaries[label]["clear_rate"] == alone["clear_rate"]
    d = res.differences["counter"]["clear_rate"]
    assert d["difference"] == pytest.approx(res.summaries["counter"]["clear_rate"]
                                            - res.summaries["best"]["clear_rate"], abs=1e-15)
    assert d["ci"][0] <= d["difference"] <= d["ci"][1]
    assert d["within_noise"] == (d["ci"][0] <= 0 <= d["ci"][1])
    written = write_policy_report(res, tmp_path)
    html = (tmp_path / "compare.html").read_text()
    assert all(p.exists() for p in written) and "rescue=true" in html and "clear_rate by policy" in html


@pytest.mark.parametrize("text, message", [
    ("best,nope", "stance must be one of fixed, random, best, counter, equilibrium; given 'nope'"),
    ("colour=red", "no policy setting 'colour'"),
    ("best,best", "each policy setting once"),
    ("best,,counter", "comma-separated"),
])
def test_bad_policy_lists_name_the_file_and_what_is_allowed(text, message):
    with pytest.raises(sim.ScenarioError, match=message) as info:
        parse_variants(sim.load_scenario(CAMPUS), text)
    assert "stance_mix_vs_counter.toml" in str(info.value)


def test_formation_policies_default_to_every_target_choice():
    res = compare_policies(sim.load_scenario(FORMATION), None, runs=200, seed=1)
    assert res.labels == ["greedy", "first", "random"]
    assert all(not math.isnan(res.summaries[p]["ambush_win"]) for p in res.labels)
