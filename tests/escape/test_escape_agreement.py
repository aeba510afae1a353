"""Reference = kernel on the same pre-drawn random numbers (STYLE.md practice 6), and
reproducibility for any n_jobs (R-GEN-7)."""

from __future__ import annotations

import numpy as np
import pytest
from escape_helpers import character, scenario
from examples import ROOT

import sim
from sim.escape.params import compile_params
from sim.escape.simulate import kernel_chunk, reference_chunk
from sim.scenario import parse_scenario

EXAMPLES = sorted((ROOT / "scenarios" / "escape").glob("*.toml")) + [ROOT / "bench" / "escape_party.toml"]


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def _same_runs(a, b) -> None:
    assert list(a.columns) == list(b.columns)
    assert a.equals(b)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_reference_equals_kernel_on_example_scenarios(path):
    p = compile_params(sim.load_scenario(path))
    for seed in (1, 2):
        _same(kernel_chunk(p, 400, np.random.default_rng(seed)), reference_chunk(p, 400, np.random.default_rng(seed)))


FEATURE_SCENARIOS = {
    "pool_stacking_mask_fingers": scenario(
        character("A", restraints={"arms": "heavy", "fingers": "light", "mask": "simple"}, dex=16),
        character("B", restraints={"legs": "severe", "fingers": "moderate"}, str=15),
        rules={"dice_stacking": "pool"}),
    "tuned_tiers_goal": scenario(
        character("A", cls="rogue", level=7, restraints={"arms": "complete", "legs": "despair", "gag": "utter"}),
        character("B", cls="wizard", level=5, int=18, restraints={"arms": "light", "body": "moderate"}),
        rules={"tiers": {"heavy": {"dc": 14}, "complete": {"becomes": "heavy"}, "despair": {"dc": 20}}},
        goal={"slots": ["arms", "legs", "body"]}, run={"max_rounds": 15}),
    "cleric_paladin_guides": scenario(
        character("C", cls="cleric", restraints={"fingers": "light"}),
        character("P", cls="paladin", cha=18, restraints={"arms": "severe", "earplugs": "light"}),
        character("G", cls="bard", int=16, restraints={"arms": "light", "legs": "heavy"}),
        dict(character("M", cls="monk", level=5, wis=16, restraints={"arms": "complete", "harness": "moderate"}),
             composure=6),
        stimulus={"damage": "1d3", "kind": "craving"}, overload={"dazed_rounds": 2}, run={"max_rounds": 20}),
    "items_and_search": scenario(
        dict(character("S", level=5, wis=16, restraints={"arms": "heavy", "legs": "light"}), perception=True),
        character("T", restraints={"arms": "complete", "fingers": "simple"}),
        dict(character("F", wis=14, restraints={"fingers": "simple", "gag": "light"}), perception=True),
        goal={"slots": ["arms", "legs"]},
        search={"dc": 10, "items": [
            {"name": "key", "kind": "release", "max_tier": "complete", "count": 1, "weight": 2},
            {"name": "shard", "kind": "release", "max_tier": "light", "weight": 1.5},
            {"name": "nail", "value": 3, "count": 2}]},
        attention={"limit": 25, "search": 1, "per_round": 1}, run={"max_rounds": 20}),
    # R-ESC-14a / R-ESC-14b: rage, favoured terrain, druid, rogue, inspiration dice, channel and meditate
    "volume1_features": scenario(
        dict(character("B", cls="barbarian", level=3, str=16, restraints={"arms": "heavy", "legs": "severe",
                                                                          "harness": "light"}), composure=8),
        character("D", cls="bard", level=5, cha=16, restraints={"arms": "complete", "blindfold": "light"}),
        dict(character("R", cls="ranger", level=5, dex=14, restraints={"arms": "severe", "fingers": "moderate"}),
             favoured_terrain=True),
        dict(character("U", cls="druid", level=2, wis=16, restraints={"legs": "complete", "gag": "light"}),
             composure=5),
        goal={"slots": ["legs", "fingers", "gag"]},
        stimulus={"damage": "1d3"}, run={"max_rounds": 14}),
    "volume1_monk_cleric": scenario(
        dict(character("K", cls="monk", level=4, wis=14, restraints={"arms": "complete", "harness": "moderate"}),
             composure=6),
        dict(character("C", cls="cleric", level=6, restraints={"arms": "light", "mask": "simple", "legs": "heavy"}),
             composure=5),
        dict(character("G", cls="rogue", level=20, str=12, restraints={"body": "severe"}), composure=9),
        dict(character("H", cls="barbarian", level=20, str=14, restraints={"legs": "despair", "mask": "light"}),
             composure=9),
        stimulus={"damage": "1d4", "kind": "craving"}, rules={"dice_stacking": "pool"}, run={"max_rounds": 16}),
    "focus_and_dazed_zero": scenario(
        dict(character("W", cls="sorcerer", level=3, cha=16, restraints={"arms": "heavy", "harness": "light"}),
             composure=4),
        stimulus={"damage": "1d4+1"}, overload={"dazed_rounds": 0}, rest={"recovery": "1d4+con"}),
}


@pytest.mark.parametrize("name", sorted(FEATURE_SCENARIOS))
def test_reference_equals_kernel_on_feature_scenarios(name):
    p = compile_params(FEATURE_SCENARIOS[name])
    _same(kernel_chunk(p, 300, np.random.default_rng(7)), reference_chunk(p, 300, np.random.default_rng(7)))


@pytest.mark.parametrize("name", ["cleric_paladin_guides", "volume1_features", "volume1_monk_cleric"])
def test_reference_equals_kernel_arms_first(name):
    data = FEATURE_SCENARIOS[name].model_dump(by_alias=True, exclude_none=True)
    data["policy"] = {"name": "arms_first"}
    p = compile_params(parse_scenario(data))
    _same(kernel_chunk(p, 300, np.random.default_rng(3), "arms_first"),
          reference_chunk(p, 300, np.random.default_rng(3), "arms_first"))


def test_feature_scenarios_exercise_the_rules():
    """The agreement tests mean something only if the features happen: count them."""
    res = sim.simulate(FEATURE_SCENARIOS["items_and_search"], runs=2000, seed=1)
    assert res.runs["F.items_found"].sum() > 500
    assert (res.runs["T.freed_round"].notna()).mean() > 0.2
    res = sim.simulate(FEATURE_SCENARIOS["cleric_paladin_guides"], runs=2000, seed=1)
    assert res.runs["M.overloads"].sum() > 50
    res = sim.simulate(FEATURE_SCENARIOS["focus_and_dazed_zero"], runs=2000, seed=1)
    assert res.runs["W.overloads"].sum() > 10
    for name in ("volume1_features", "volume1_monk_cleric"):  # R-ESC-14b class actions happen
        res = sim.simulate(FEATURE_SCENARIOS[name], runs=2000, seed=1)
        used = {k: int(res.runs[f"actions_{k}"].sum()) for k in ("channel", "inspire", "meditate")}
        assert (used["inspire"] > 200) if name == "volume1_features" else (used["channel"] > 200
                                                                            and used["meditate"] > 200), used


def test_R_GEN_7_same_results_for_any_n_jobs_and_task_size():
    s = sim.load_scenario(ROOT / "scenarios" / "escape" / "party_under_watch.toml")
    a = sim.simulate(s, runs=25_000, seed=3, n_jobs=1)
    b = sim.simulate(s, runs=25_000, seed=3, n_jobs=2)
    c = sim.simulate(s, runs=25_000, seed=3, n_jobs=2, chunks_per_task=2)
    assert a.runs.equals(b.runs) and a.runs.equals(c.runs)
    assert a.summary == b.summary


def test_R_GEN_7_engines_agree_through_simulate():
    s = FEATURE_SCENARIOS["tuned_tiers_goal"]
    a = sim.simulate(s, runs=600, seed=9, engine="kernel")
    b = sim.simulate(s, runs=600, seed=9, engine="reference")
    _same_runs(a.runs, b.runs)


@pytest.mark.parametrize("name", ["cleric_paladin_guides", "items_and_search", "pool_stacking_mask_fingers",
                                  "volume1_features", "volume1_monk_cleric"])
def test_reference_equals_kernel_team_policy(name):
    """R-ESC-21 / R-ESC-37: the vectorized `team` plan equals the scalar one on the same draws. The scenarios
    written before 2026-12 play in their reading (volume-1 features off, untying oneself with free hands)."""
    data = FEATURE_SCENARIOS[name].model_dump(by_alias=True, exclude_none=True)
    data["policy"] = {"name": "team"}
    if not name.startswith("volume1"):
        data.setdefault("rules", {}).update({"volume1_features": False, "self_untie": "hands_free"})
    data.setdefault("attention", {}).update({"limit": 40, "per_round": 1})
    p = compile_params(parse_scenario(data))
    a = kernel_chunk(p, 400, np.random.default_rng(21), "team")
    b = reference_chunk(p, 400, np.random.default_rng(21), "team")
    _same(a, b)
    counts = a["action_counts"].sum(axis=(0, 1))
    if name in ("cleric_paladin_guides", "items_and_search"):  # elsewhere bound fingers and gags leave no help
        assert counts[1] + counts[2] > 0  # assists or guides happen under team


def test_reference_equals_kernel_team_on_the_teamwork_scenario():
    p = compile_params(sim.load_scenario(ROOT / "scenarios" / "escape" / "teamwork.toml"))
    _same(kernel_chunk(p, 500, np.random.default_rng(4), "team"),
          reference_chunk(p, 500, np.random.default_rng(4), "team"))


def test_random_layout_uniforms_are_the_same_in_both_engines():
    """The layout's number k of character i in round r of run j is one function of the chunk key, computed
    by the engine (compiled) and the reference (Python integers) alike."""
    from sim.escape import kernel as K
    from sim.escape.reference import uniform_at

    key = K.chunk_key(np.random.default_rng(5))
    cases = [(0, 1, 0, 0), (9_999, 1000, 15, 300), (17, 3, 2, 1), (17, 3, 2, 2), (17, 4, 2, 1)]
    got = [K.uniform_at(key, *c) for c in cases]
    assert got == [uniform_at((int(key[0]), int(key[1])), *c) for c in cases]
    assert len(set(got)) == len(got) and all(0.0 <= x < 1.0 for x in got)


def test_R_GEN_7_a_run_reads_the_same_numbers_whatever_the_other_runs_do():
    """Run j's numbers depend only on the chunk key and j (not on how many runs came before or what they
    drew): the first 100 runs of a 400-run chunk equal a 100-run chunk of the same Generator."""
    p = compile_params(sim.load_scenario(ROOT / "bench" / "escape_party.toml"))
    a = kernel_chunk(p, 400, np.random.default_rng(8))
    b = kernel_chunk(p, 100, np.random.default_rng(8))
    for k in b:
        np.testing.assert_array_equal(a[k][:100], b[k], err_msg=k)
