"""Scenario validation (SCENARIOS.md, kind = "campus"): defaults, ranges, cross-field keys."""


import pytest
from campus_helpers import scenario_data
from examples import ROOT

import sim
from sim.scenario import parse_scenario

SCENARIOS = sorted((ROOT / "scenarios" / "campus").glob("*.toml"))


def test_example_scenarios_load_with_name_and_description():
    assert len(SCENARIOS) >= 3
    for path in SCENARIOS:
        s = sim.load_scenario(path)
        assert s.kind == "campus" and s.name and s.description.strip()


def test_defaults_of_scenarios_md():
    """SCENARIOS.md campus defaults (R-CAM-5, R-CAM-9, R-CAM-11, R-CAM-15, R-CAM-50, R-CAM-40)."""
    d = scenario_data(adversaries=[{"name": "h"}], spawns=[{"adversary": "h"}],
                      missions=[{"location": "hall", "stance": "hide", "target": 3}])
    del d["policy"]
    del d["rules"]
    s = parse_scenario(d)
    r = s.rules
    assert (r.turns, r.team_max, r.vitality, r.escape_offset, r.miso_bomb, r.options) == (12, 3, 3, 0, False, "all")
    a = s.adversaries[0]
    assert a.bonus.as_tuple() == (0, 0, 0) and a.multiplier.as_tuple() == (1, 1, 1)
    assert a.stance is None and a.reward == 0 and a.boss is False
    sp = s.spawns[0]
    assert (sp.count, sp.chance, sp.locations, sp.turns) == (1, 1.0, "any", None)
    m = s.missions[0]
    assert (m.chance, m.mode, m.reward, m.penalty) == (1.0, "sum", 0, None)
    pol = s.policy
    assert (pol.move, pol.stance, pol.growth, pol.rescue, pol.stance_value) == ("random", "best", "none", False, "hide")


def test_chance_int_or_float_and_team_as_skill():
    d = scenario_data(adversaries=[{"name": "h"}],
                      spawns=[{"adversary": "h", "chance": 1}, {"adversary": "h", "chance": 0.5}],
                      party=[{"name": "A", "abilities": {"fight": 1, "flee": 1, "hide": 1},
                              "skills": [{"kind": "team", "name": "T"}]},
                             {"name": "B", "abilities": {"fight": 1, "flee": 1, "hide": 1}, "team": "T"}])
    s = parse_scenario(d)
    from sim.campus.params import compile_params

    p = compile_params(s)
    assert p.pc_team.tolist() == [0, 0] and p.has_teams


@pytest.mark.parametrize("over,key", [
    ({"spawns": [{"adversary": "hund"}], "adversaries": [{"name": "hound"}]}, "spawns.0.adversary"),
    ({"spawns": [{"adversary": "hound", "locations": ["hal"]}], "adversaries": [{"name": "hound"}]},
     "spawns.0.locations.0"),
    ({"adversaries": [{"name": "hound", "capture_room": "hall"}]}, "adversaries.0.capture_room"),
    ({"missions": [{"location": "nowhere", "stance": "hide", "target": 1}]}, "missions.0.location"),
    ({"missions": [{"location": "hall", "stance": "hide", "target": 1, "penalty": {"vitality": 1, "amount": 2}}]},
     "missions.0.penalty"),
    ({"rules": {"team_max": 1}}, "rules.team_max"),
    ({"rules": {"options": 0}}, "rules"),
    ({"rules": {"turnz": 3}}, "rules.turnz"),
    ({"party": [{"name": "A", "abilities": {"fight": -1, "flee": 0, "hide": 0}}]}, "party.0.abilities.fight"),
    ({"party": [{"name": "A", "abilities": {"fight": 1, "flee": 0}}]}, "party.0.abilities.hide"),
    ({"party": [{"name": "A", "abilities": {"fight": 1, "flee": 0, "hide": 0}, "skills": [{"kind": "bonus"}]}]},
     "party.0.skills.0"),
    ({"party": [{"name": "A", "abilities": {"fight": 1, "flee": 0, "hide": 0}, "exclude": ["Z"]}]},
     "party.0.exclude.0"),
    ({"party": [{"name": "A", "abilities": {"fight": 1, "flee": 0, "hide": 0}},
                {"name": "A", "abilities": {"fight": 1, "flee": 0, "hide": 0}}]}, "party.1.name"),
    ({"locations": [{"id": "hall"}]}, "locations"),
    ({"locations": [{"id": "hall", "exit": True, "capture_room": True}, {"id": "c", "capture_room": True}]},
     "locations.0.exit"),
    ({"policy": {"stance": "smart"}}, "policy.stance"),
    ({"spawns": [{"adversary": "hound", "turns": [5, 2]}], "adversaries": [{"name": "hound"}]}, "spawns.0.turns"),
    ({"adversaries": [{"name": "hound", "stance": {"fight": 0}}]}, "adversaries.0.stance"),
])
def test_bad_input_names_the_key(over, key):
    with pytest.raises(sim.ScenarioError) as exc:
        parse_scenario(scenario_data(**over), "bad.toml")
    assert exc.value.key is not None and exc.value.key.startswith(key), str(exc.value)
    assert "bad.toml" in str(exc.value)


def test_unknown_adversary_suggests_nearest():
    with pytest.raises(sim.ScenarioError, match="did you mean 'hound'"):
        parse_scenario(scenario_data(adversaries=[{"name": "hound"}], spawns=[{"adversary": "hund"}]))


def test_exact_unsupported_for_a_party():
    """Exact analysis takes one PC (issue 37); the seed trio is refused (sim.campus.exact)."""
    s = sim.load_scenario(ROOT / "scenarios" / "campus" / "seed_trio_vs_hounds.toml")
    from sim import campus

    assert campus.supports_exact(s) is False
    with pytest.raises(sim.ExactUnsupported):
        sim.exact(s)
    assert campus.supports_exact(sim.load_scenario(ROOT / "scenarios" / "campus" / "solo_pc_small_map.toml"))
