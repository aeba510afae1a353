"""Scenario validation (STYLE.md practice 5), the example scenarios and the command line."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from examples import ROOT
from restraint_helpers import scenario_data

import sim
from sim.errors import ScenarioError
from sim.scenario import parse_scenario

SCENARIO_DIR = ROOT / "scenarios" / "restraint"


@pytest.mark.parametrize(
    "over, key",
    [
        ({"target": {"restraints": {"arms": 6}}}, "target.restraints.arms"),  # R-RST-1 levels 0..5
        ({"target": {"restraints": {"harness": 1}}}, "target.restraints.harness"),  # not an RST slot
        ({"target": {"class": "necromancer"}}, "target.class"),
        ({"target": {"level": 21}}, "target.level"),
        ({"target": {"scores": {"str": 0}}}, "target.scores.str"),
        ({"target": {"condition": "asleep"}}, "target.condition"),
        ({"target": {"initiative": "first"}}, "target.initiative"),
        ({"binder": {"method": "spell"}}, "binder.method"),
        ({"binder": {"flank_choice": "both"}}, "binder.flank_choice"),
        ({"binder": {"slots": ["arms", "mask"]}}, "binder.slots.1"),
        ({"binder": {"slots": ["arms", "legs", "arms"]}}, "binder.slots.2"),
        ({"binder": {"flanking": "yes"}}, "binder.flanking"),
        ({"run": {"rounds": 0}}, "run.rounds"),
        ({"rules": {"dice_stacking": "sum"}}, "rules.dice_stacking"),
        ({"composure": {"stimulus": "1d6+luck"}}, "composure.stimulus"),
        ({"composure": {"stimulus": "1d6++2"}}, "composure.stimulus"),
        ({"composure": {"kind": "tickle"}}, "composure.kind"),
        ({"composure": {"party": [{"name": "A", "class": "bard", "scores": scenario_data()["target"]["scores"]},
                                  {"name": "A", "class": "monk", "scores": scenario_data()["target"]["scores"]}]}},
         "composure.party.1.name"),
        ({"table": {"ac": []}}, "table.ac"),
        ({"table": {"attack_bonus": 99}}, "table.attack_bonus"),
        ({"target": {"favoured_terrain": True}}, "target.favoured_terrain"),  # fighter: a ranger feature
        ({"target": {"composure": 0}}, "target.composure"),
        ({"binder": {"scorez": {}}}, "binder.scorez"),
        ({"policy": {"name": "team"}}, "policy.name"),
    ],
)
def test_bad_input_names_the_key(over, key):
    """Every bad value raises ScenarioError naming its dotted key."""
    with pytest.raises(ScenarioError) as info:
        parse_scenario(scenario_data(**over), "bad.toml")
    assert info.value.key == key, str(info.value)
    assert str(info.value).startswith(f"bad.toml: {key}: ")


def test_missing_target_is_an_error():
    data = scenario_data()
    del data["target"]
    with pytest.raises(ScenarioError) as info:
        parse_scenario(data, "bad.toml")
    assert info.value.key == "target"


def test_unknown_key_suggests_the_nearest():
    with pytest.raises(ScenarioError, match="did you mean 'flanking'"):
        parse_scenario(scenario_data(binder={"flankng": True}), "bad.toml")


def test_defaults_and_optional_binder():
    """SCENARIOS.md defaults: rounds 10, binder optional (no binding), condition grappled."""
    data = {"kind": "restraint", "target": scenario_data()["target"]}
    s = parse_scenario(data)
    assert s.run.rounds == 10 and s.binder is None and s.target.condition == "grappled"
    assert s.table.ac == [12, 14, 16, 18] and s.table.attack_bonus == 5
    assert sim.exact(s)["mean_escape_checks"] == 0.0


@pytest.mark.parametrize("path", sorted(SCENARIO_DIR.glob("*.toml")), ids=lambda q: q.stem)
def test_example_scenarios_are_designer_questions(path):
    """Every example scenario loads and has a name and a description."""
    s = sim.load_scenario(path)
    assert s.kind == "restraint" and s.name and s.description.strip()


def test_summary_contract_and_provenance():
    """SCENARIOS.md: the restraint keys, probabilities in [0, 1], provenance (STYLE 12)."""
    s = sim.load_scenario(SCENARIO_DIR / "raging_barbarian.toml")
    r = sim.simulate(s, runs=500, seed=4)
    summary = r.summary
    assert summary["kind"] == "restraint" and summary["runs"] == 500 and summary["seed"] == 4
    assert summary["name"] == s.name
    for key in ("incapacitated_by_round", "arms_complete_by_round"):
        assert len(summary[key]) == s.run.rounds
        assert all(0.0 <= x <= 1.0 for x in summary[key])
    assert summary["composure_max"] == 34  # barbarian 5, con 15 (+2): 10 + 4 x 6
    assert summary["mean_escape_checks"] == pytest.approx(r.runs["escape_checks"].mean())
    for key in ("scenario_hash", "sim_version", "numpy_version"):
        assert summary[key]
    json.dumps(summary)  # JSON-serialisable as is
    assert len(r.runs) == 500


def test_cli_run_end_to_end(tmp_path, cli):
    """`python -m sim run SCENARIO --runs 2000 --out DIR` writes summary, runs, report and charts."""
    out = tmp_path / "out"
    assert cli("run", SCENARIO_DIR / "raging_barbarian.toml", "--runs", 2000, "--out", out, "--quiet").code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["runs"] == 2000 and summary["kind"] == "restraint"
    assert len(pd.read_parquet(out / "runs.parquet")) == 2000
    html = (out / "report.html").read_text()
    for png in ("levels_by_round.png", "bound_by_round.png", "effect_heat.png", "composure_heat.png",
                "overload_heat.png", "overload_by_round.png"):
        assert (out / png).stat().st_size > 1000
        assert png in html
    assert "Combat effect table" in html and "(exact)" in html


def test_cli_exact_and_invalid_input(tmp_path, cli, scratch, examples):
    """`exact` prints the exact summary; an invalid file exits 2 with one line and writes nothing. (In the scratch
    folder: exact also writes its page to reports/<name>/.)"""
    printed = cli("exact", "--json", examples["flank_penalty"])
    assert printed.code == 0
    exact = json.loads(printed.out)
    assert exact["runs"] is None and len(exact["arms_complete_by_round"]) == 8
    bad = tmp_path / "bad.toml"
    bad.write_text('kind = "restraint"\n[target]\nclass = "rogue"\nscores = { str = 10, dex = 10, con = 10, '
                   'int = 10, wis = 10, cha = 10 }\n[target.restraints]\narms = 9\n')
    out = tmp_path / "out"
    refused = cli("run", bad, "--out", out)
    assert refused.code == 2
    err = refused.err
    assert "target.restraints.arms" in err and "Traceback" not in err
    assert not out.exists()
