"""One contract, every kind, every example (sim/kinds.py; the pattern of pgx's api_test.py).

A kind ships only if it passes this suite: both engines play every example to its end and agree run for run;
the per-run columns have fixed shapes and numeric dtypes; the results are identical for ``n_jobs`` 1 and 2 and
for streamed and kept runs; the summary has every key of the output contract with its provenance; and bad input
through ``load_scenario`` gives the one error format (file, dotted key, what was expected).

What to check of a kind is read from its object (its facts and :meth:`sim.kinds.Kind.capabilities`, as
scikit-learn's estimator tags), never from a list of kind names here: the fifth kind of tests/fifth_kind, registered
for this module, goes through the same suite as the built-in four."""

from __future__ import annotations

import dataclasses
import math
from types import ModuleType

import pandas as pd
import pytest
from examples import ROOT, example_scenarios
from fifth_kind.kind import KIND as FIFTH

import sim
from sim import kinds
from sim.designer.metrics import metric_value
from sim.errors import ScenarioError

RUNS, SEED = 120, 7
EXAMPLES = [*example_scenarios(), ROOT / "tests" / "fifth_kind" / "race.toml"]

EVERY_KIND = ["kind", "name", "runs", "seed"]
PROVENANCE = ["scenario_hash", "sim_version", "numpy_version", "reading"]  # reading: the rule switches in effect


@pytest.fixture(autouse=True, scope="module")
def fifth_kind():
    kinds.register(FIFTH)
    yield FIFTH
    kinds.unregister(FIFTH.name)


def _id(path) -> str:
    return path.relative_to(ROOT).as_posix().removeprefix("scenarios/")


@pytest.fixture(scope="module", params=EXAMPLES, ids=_id)
def example(request):
    return sim.load_scenario(request.param)


def test_every_kind_is_registered_and_provides_the_contract():
    assert kinds.names()[:4] == ("escape", "restraint", "campus", "formation")  # sim.kinds.PACKAGES, in order
    for kind in kinds.all_kinds():
        assert kinds.get(kind.name) is kind
        assert kinds.missing(kind) == []
        assert kind.scenario_model.model_fields["kind"] is not None
        assert len(kind.engines) == 2
        assert kind.main_metric and kind.main_metric.split(".")[0] in kind.metrics, kind.name  # named, in words
        assert kind.main_metric in kind.headline or not kind.headline
        assert set(kind.run_proportions) <= set(kind.metrics), kind.name


def test_every_kind_has_an_example():
    assert {sim.load_scenario(p).kind for p in EXAMPLES} == set(kinds.NAMES)


def test_a_kind_without_the_contract_is_refused():
    with pytest.raises(TypeError):
        kinds.register(object())
    bare = dataclasses.replace(FIFTH, name="bare", simulate=kinds.lazy("fifth_kind.engine:no_such_function"),
                               write_report=kinds.lazy("fifth_kind.no_such_module:write_report"))
    assert kinds.missing(bare) == ["simulate", "write_report"]
    with pytest.raises(ValueError):
        kinds.register(dataclasses.replace(FIFTH))  # another object under a registered name


def test_reading_a_fact_imports_no_engine():
    """The declarations are cheap: a capability or a fact is read without importing the hook it names."""
    escape = kinds.get("escape")
    assert type(escape.declared("simulate")) is kinds.Ref and escape.declared("simulate").target.startswith("sim.")
    assert {"optimal", "compare", "with_policy"} <= escape.capabilities()


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
    kind = kinds.get(example.kind)
    summary = sim.simulate(example, runs=RUNS, seed=SEED).summary
    for key in EVERY_KIND + list(kind.summary_keys) + PROVENANCE:
        assert key in summary, key
    assert (summary["kind"], summary["runs"], summary["seed"]) == (example.kind, RUNS, SEED)
    assert summary["scenario_hash"] == example.scenario_hash
    assert math.isfinite(metric_value(summary, kind.main_metric))  # the designer tools' default metric is there
    for key, value in summary.items():  # every share the kind declares is a probability
        if kind.metrics.get(key, ("", ""))[1] == "probability" and not isinstance(value, list):
            assert _is_probability(value), (key, value)
    for key in kind.run_proportions & set(summary):  # shares of all runs, one per round (or one)
        values = summary[key] if isinstance(summary[key], list) else [summary[key]]
        assert all(v is None or 0.0 <= v <= 1.0 for v in values), key
    if "escape_rate_ci" in summary:
        lo, hi = summary["escape_rate_ci"]
        assert lo <= summary["escape_rate"] <= hi
    if kind.studio_curve is not None:  # the studio draws it: one share per round or turn
        values = [v for v in summary[kind.studio_curve[0]] if v is not None]
        assert values and all(0.0 <= v <= 1.0 for v in values), (kind.studio_curve, values)


def test_bad_input_gives_the_one_error_format(tmp_path, example):
    """An unknown key, and a value of the wrong type for ``name``: one message naming the file and the key."""
    text = open(example.source, encoding="utf-8").read()
    bad = tmp_path / "bad.toml"
    bad.write_text("unknown_setting = 3\n" + text, encoding="utf-8")
    with pytest.raises(ScenarioError) as err:
        sim.load_scenario(bad)
    assert str(bad) in str(err.value) and "unknown_setting" in str(err.value)
    assert "\n" not in str(err.value)


def test_every_capability_resolves_and_every_other_hook_is_its_default():
    """A kind's optional hooks (its tags, :meth:`Kind.capabilities`): each one it declares resolves to what the
    shared modules call; each one it does not is the default that answers "none"."""
    defaults = {f.name: f.default for f in dataclasses.fields(kinds.Kind)}
    for kind in kinds.all_kinds():
        caps = kind.capabilities()
        for hook in kinds.OPTIONAL_HOOKS:
            value = getattr(kind, hook)
            if hook not in caps:
                assert value is defaults[hook] or value in (None, ()), (kind.name, hook)
            elif hook == "optimal":
                assert isinstance(value, ModuleType) and callable(value.compare) and callable(value.parse_objective)
            elif hook == "builtin_policies":
                assert value and all(isinstance(p, str) for p in value)
            else:
                assert callable(value), (kind.name, hook)
        assert kind.named_policies == ("with_policy" in caps) == bool(kind.builtin_policies), kind.name
        assert not kind.own_compare or "compare" in caps
        for pattern in kind.keyed_tables:
            assert pattern.count(".") >= 1


def test_each_kind_hook_answers_its_examples(example):
    """What the class matrix, the sensitivity and the rules table ask, asked of every example whose kind declares
    the hook (the class matrix covers the kinds with one_character, the rest are refused by name)."""
    kind = kinds.get(example.kind)
    caps = kind.capabilities()
    if "one_character" in caps:
        try:
            key = kind.one_character(example)
        except ScenarioError:
            pass  # a scenario without exactly one character: refused with one line
        else:
            assert key and isinstance(key, str)
    if "sensitivity_parameters" in caps:
        from sim.designer.params import scenario_data

        pairs = kind.sensitivity_parameters(example, scenario_data(example))
        assert pairs and all(isinstance(k, str) and isinstance(v, int) for k, v in pairs)
    rules = kind.rules_table(example)
    assert rules is None or (len(rules) == 3 and "<table" in rules[1])
    assert ("rules_table" in caps) or rules is None
    ladder = kind.tier_ladder()
    assert (ladder is not None) == ("tier_ladder" in caps)
    limit = kind.round_limit(example)
    assert limit is None or (isinstance(limit, int) and limit >= 1)


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


def test_escape_tier_ladder_is_the_rules_table():
    """R-ESC-2's table, read from RULES.md: each tier's accumulation mark (R-ESC-3) and what a success makes of
    it; free and utter (no check) carry no mark. The studio's ladder table asks this hook (issue 23)."""
    ladder = kinds.get("escape").tier_ladder()
    assert list(ladder) == ["free", "simple", "light", "moderate", "heavy", "severe", "complete", "despair", "utter"]
    assert ladder["simple"] == ("*", "free") and ladder["light"] == ("*", "free")
    assert ladder["moderate"] == ("+", "simple") and ladder["heavy"] == ("+", "light")
    assert ladder["severe"] == ("#", "heavy") and ladder["complete"] == ("#", "severe")
    assert ladder["despair"] == ("x", "complete")
    assert ladder["free"][0] == "" and ladder["utter"][0] == ""


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
