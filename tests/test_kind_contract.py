"""One contract, every kind, every example (sim/kinds.py; the pattern of pgx's api_test.py).

A kind ships only if it passes this suite: both engines play every example to its end and agree run for run;
the per-run columns have fixed shapes and numeric dtypes; the results are identical for ``n_jobs`` 1 and 2 and
for streamed and kept runs; the summary has every key of the output contract with its provenance; and bad input
through ``load_scenario`` gives the one error format (file, dotted key, what was expected)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from examples import ROOT, example_scenarios

import sim
from sim import kinds
from sim.errors import ScenarioError

RUNS, SEED = 120, 7
EXAMPLES = example_scenarios()

#: the summary keys of the output contract (SCENARIOS.md), per kind, beside those every kind has
CONTRACT_KEYS = {
    "escape": ["escape_rate", "escape_rate_ci", "caught_rate", "timeout_rate", "mean_rounds", "escape_by_round"],
    "restraint": ["incapacitated_by_round", "arms_complete_by_round", "mean_escape_checks", "composure_max"],
    "campus": ["clear_rate", "party_clear_rate", "game_over_rate", "capture_by_turn", "escape_success_by_turn"],
    "formation": ["ambush_win", "ambush_win_by_2", "dp_per_session"],
}
EVERY_KIND = ["kind", "name", "runs", "seed"]
PROVENANCE = ["scenario_hash", "sim_version", "numpy_version", "reading"]  # reading: the rule switches in effect


def _id(path) -> str:
    return path.relative_to(ROOT / "scenarios").as_posix()


@pytest.fixture(scope="module", params=EXAMPLES, ids=_id)
def example(request):
    return sim.load_scenario(request.param)


def test_every_kind_is_registered_and_provides_the_contract():
    assert set(kinds.NAMES) == {"escape", "restraint", "campus", "formation"}
    for name in kinds.NAMES:
        kind = kinds.get(name)
        assert kinds.missing(kind.module) == []
        assert kind.scenario_model.model_fields["kind"] is not None
        assert len(kind.engines) == 2


def test_every_kind_has_an_example():
    assert {sim.load_scenario(p).kind for p in EXAMPLES} == set(kinds.NAMES)


def test_a_package_without_the_contract_is_refused():
    import types

    bare = types.ModuleType("sim.bare")
    bare.simulate = lambda *a, **k: None
    assert set(kinds.missing(bare)) == set(kinds.REQUIRED) - {"simulate"}


def test_both_engines_play_every_example_and_agree_run_for_run(example):
    reference, batch = kinds.get(example.kind).engines
    a = sim.simulate(example, runs=RUNS, seed=SEED, engine=reference)
    b = sim.simulate(example, runs=RUNS, seed=SEED, engine=batch)
    pd.testing.assert_frame_equal(a.runs, b.runs)
    assert a.summary == b.summary


def test_per_run_columns_have_one_row_per_run_and_numeric_dtypes(example):
    frame = sim.simulate(example, runs=RUNS, seed=SEED).runs
    assert len(frame) == RUNS
    assert frame.index.is_unique
    for name, dtype in frame.dtypes.items():
        assert not pd.api.types.is_object_dtype(dtype), f"{name} is an object column"
        numeric = pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)
        assert numeric or isinstance(dtype, pd.CategoricalDtype), f"{name}: {dtype}"


def test_identical_for_one_and_two_jobs_and_for_streamed_runs(example):
    one = sim.simulate(example, runs=RUNS, seed=SEED, n_jobs=1)
    two = sim.simulate(example, runs=RUNS, seed=SEED, n_jobs=2)
    pd.testing.assert_frame_equal(one.runs, two.runs)
    assert one.summary == two.summary
    if kinds.get(example.kind).streams:
        streamed = sim.simulate(example, runs=RUNS, seed=SEED, keep_runs=False)
        assert streamed.summary == one.summary


def _is_probability(x) -> bool:
    return isinstance(x, float) and 0.0 <= x <= 1.0 or x is None or (isinstance(x, float) and math.isnan(x))


def test_summary_has_every_contract_key_with_provenance(example):
    summary = sim.simulate(example, runs=RUNS, seed=SEED).summary
    for key in EVERY_KIND + CONTRACT_KEYS[example.kind] + PROVENANCE:
        assert key in summary, key
    assert (summary["kind"], summary["runs"], summary["seed"]) == (example.kind, RUNS, SEED)
    assert summary["scenario_hash"] == example.scenario_hash
    for key in ("escape_rate", "caught_rate", "timeout_rate", "clear_rate", "party_clear_rate", "ambush_win"):
        if key in summary:
            assert _is_probability(summary[key]), (key, summary[key])
    if "escape_rate_ci" in summary:
        lo, hi = summary["escape_rate_ci"]
        assert lo <= summary["escape_rate"] <= hi
    curve = kinds.KINDS[example.kind].studio_curve  # the studio draws it: one share per round or turn
    if curve is not None:
        values = [v for v in summary[curve[0]] if v is not None]
        assert values and all(0.0 <= v <= 1.0 for v in values), (curve, values)


def test_bad_input_gives_the_one_error_format(tmp_path, example):
    """An unknown key, and a value of the wrong type for ``name``: one message naming the file and the key."""
    text = open(example.source, encoding="utf-8").read()
    bad = tmp_path / "bad.toml"
    bad.write_text("unknown_setting = 3\n" + text, encoding="utf-8")
    with pytest.raises(ScenarioError) as err:
        sim.load_scenario(bad)
    assert str(bad) in str(err.value) and "unknown_setting" in str(err.value)
    assert "\n" not in str(err.value)


def test_optional_exports_are_the_declared_ones_and_callable():
    """A kind's designer hooks (sim/<kind>/designer.py) are reached only through the contract's OPTIONAL names."""
    for name in kinds.NAMES:
        kind = kinds.get(name)
        for hook in ("balance_metrics", "sensitivity_parameters", "one_character"):
            fn = getattr(kind, hook)
            assert fn is None or callable(fn), (name, hook)
        assert set(kind.keyed_tables) <= {"rules.tiers"}
    # which kinds answer which hook (the class matrix covers the kinds with one character)
    assert [n for n in kinds.NAMES if kinds.get(n).one_character is not None] == ["escape", "restraint"]
    assert [n for n in kinds.NAMES if kinds.get(n).balance_metrics is not None] == ["escape", "restraint", "campus"]


def test_escape_rule_default_is_the_tier_ladder_dc():
    """R-ESC-2: heavy DC 18, despair 26 when the scenario leaves [rules.tiers] out; other keys and kinds: None."""
    escape = kinds.get("escape")
    assert escape.rule_default("rules.tiers.heavy.dc") == 18
    assert escape.rule_default("rules.tiers.despair.dc") == 26
    assert escape.rule_default("rules.tiers.heavy.becomes") is None
    assert escape.rule_default("rules.tiers.nonsense.dc") is None
    assert kinds.get("restraint").rule_default("rules.tiers.heavy.dc") is None


def test_a_kind_without_a_rules_table_or_exact_answer_gets_none():
    formation = kinds.get("formation")
    scenario = sim.load_scenario(ROOT / "scenarios" / "formation" / "dp_income.toml")
    assert formation.rules_table(scenario) is None
    assert formation.exact_answer(scenario, {}) == []
    title, body, note = kinds.get("escape").rules_table(sim.load_scenario(ROOT / "scenarios/escape/lone_rogue.toml"))
    assert title == "Tier ladder in effect" and "R-ESC-2" in note and "<table" in body


def test_escape_tier_ladder_is_the_rules_table_and_other_kinds_have_none():
    """R-ESC-2's table, read from RULES.md: each tier's accumulation mark (R-ESC-3) and what a success makes of
    it; free and utter (no check) carry no mark. The studio's ladder table asks this hook (issue 23)."""
    ladder = kinds.get("escape").tier_ladder()
    assert list(ladder) == ["free", "simple", "light", "moderate", "heavy", "severe", "complete", "despair", "utter"]
    assert ladder["simple"] == ("*", "free") and ladder["light"] == ("*", "free")
    assert ladder["moderate"] == ("+", "simple") and ladder["heavy"] == ("+", "light")
    assert ladder["severe"] == ("#", "heavy") and ladder["complete"] == ("#", "severe")
    assert ladder["despair"] == ("x", "complete")
    assert ladder["free"][0] == "" and ladder["utter"][0] == ""
    assert [n for n in kinds.NAMES if kinds.get(n).tier_ladder() is not None] == ["escape"]


def test_every_example_lists_its_audit_options_once(example):
    """The balance audit's hook (issue 36): each option once, each either forbidden to optimal play (escape) or
    restricted in a validated copy of the scenario (the other kinds) that differs from the scenario."""
    from sim.designer.audit import AuditOption

    kind = kinds.get(example.kind)
    options = kind.audit_options(example)
    assert all(isinstance(o, AuditOption) for o in options)
    assert len({o.label for o in options}) == len(options)
    for o in options:
        assert bool(o.forbid) != (o.restrict is not None), o.label
        if o.restrict is not None:
            copy = o.restrict(example)
            assert copy.kind == example.kind and copy != example, o.label
    if kind.audit_evaluator is not None:  # exact restricted play: every option is a forbidden set
        assert all(o.forbid for o in options)


def test_audit_hooks_are_declared_and_callable():
    for name in kinds.NAMES:
        kind = kinds.get(name)
        assert kind.audit_evaluator is None or callable(kind.audit_evaluator)
    assert [n for n in kinds.NAMES if kinds.get(n).audit_evaluator is not None] == ["escape"]
