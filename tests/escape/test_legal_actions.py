"""R-ESC-6: one source of legal actions (sim.escape.actions) for optimal play, the built-in policies and the
custom-policy check (issue 41).

- every kind of action and every field of ``Action`` is enumerated (a new one cannot be left out);
- over random mid-challenge states of every class at levels 1, 2, 3, 6 and 20, with the volume-1 features on
  and off, every built-in policy's choice is one of the legal actions the solver enumerates;
- on small single-character scenarios of every class and level, optimal play is worth at least every built-in
  policy's exact value;
- the probe shapes of the issue (cleric 2, paladin 3, monk 3, barbarian 3, ranger 3) solve with optimal >= greedy.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from escape_helpers import character, scenario
from test_escape_random_states import random_batch, to_party

from sim.errors import PolicyError
from sim.escape.actions import FIELDS, canonical, check_action, is_legal, legal_actions
from sim.escape.model import CLASSES
from sim.escape.optimal import compare, solve
from sim.escape.params import ARMS, LEGS, STR, compile_params
from sim.escape.policy import PolicyView, load_policy
from sim.escape.state import ACTION_KINDS, Action, initial_state

LEVELS = (1, 2, 3, 6, 20)
POLICIES = ("greedy", "arms_first", "team")


def test_R_ESC_6_every_kind_and_every_field_is_enumerated():
    """FIELDS lists every kind of ACTION_KINDS and every field of Action (the module refuses to import
    otherwise): the enumeration reads the kinds and fields from there."""
    assert set(FIELDS) == set(ACTION_KINDS)
    listed = {f for choices, spends in FIELDS.values() for f in choices + spends}
    assert listed == {f.name for f in dataclasses.fields(Action)} - {"kind"}


def _pair(cls: str, level: int, volume1: bool):
    """``cls`` at ``level`` with a level-3 cleric teammate, both bound on several slots (help, guide, inspire,
    bless, untie, items all have a chance), search with release items, a stimulus, an attention limit."""
    me = dict(character("X", cls, level, {"arms": "heavy", "legs": "moderate", "fingers": "simple",
                                          "gag": "simple", "mask": "light"}, str=14, dex=13, int=12, wis=14, cha=14),
              favoured_terrain=cls == "ranger")
    mate = character("Y", "cleric", 3, {"arms": "moderate", "earplugs": "simple", "harness": "light"})
    return compile_params(scenario(
        me, mate, search={"dc": 12, "items": [{"name": "key", "kind": "release", "max_tier": "heavy", "count": 1},
                                              {"name": "nail", "value": 1}]},
        stimulus={"damage": "1d3"}, attention={"limit": 20, "per_round": 1},
        rules={"volume1_features": volume1}))


@pytest.mark.parametrize("volume1", [True, False], ids=["volume1", "earlier"])
@pytest.mark.parametrize("cls", CLASSES)
def test_R_ESC_6_every_builtin_choice_is_a_legal_action(cls, volume1):
    """In random mid-challenge states, every built-in policy's declaration is in canonical form and one of
    legal_actions (what optimal play enumerates); every enumerated action passes the R-ESC-6 check once."""
    kinds = set()
    for level in LEVELS:
        p = _pair(cls, level, volume1)
        st = random_batch(p, 80, np.random.default_rng(level))
        for j in range(80):
            party = to_party(p, st, j)
            dazed = tuple(c.dazed_left > 0 for c in party.chars)
            legal = {i: legal_actions(p, party, i) for i in range(p.n_chars)}
            for i, acts in legal.items():
                assert len(set(acts)) == len(acts)
                for a in acts:
                    check_action(p, party, i, a, 1)  # raises on an illegal one
                    assert canonical(a) == a
            for name in POLICIES:
                for i, a in enumerate(load_policy(name)(PolicyView(p, party, 1, dazed))):
                    if dazed[i]:
                        continue
                    assert canonical(a) == a, (name, i, a)
                    assert a in legal[i], (cls, level, name, i, a, party.chars[i])
                    kinds.add(a.kind)
    assert "struggle" in kinds and len(kinds) >= 3, kinds


def test_R_ESC_6_class_actions_and_spends_are_enumerated():
    """The declarations issue 41 found missing from optimal play are listed: a barbarian's rage on str (not
    on dex), a ranger's favoured terrain, a monk's breath and meditation, a cleric's channel; with the
    features off none of the R-ESC-14b actions exists."""
    def acts(cls, level, volume1=True, **extra):
        p = compile_params(scenario(dict(character("X", cls, level, {"arms": "heavy"}), **extra),
                                    rules={"volume1_features": volume1}))
        return p, legal_actions(p, initial_state(p), 0)

    _, barb = acts("barbarian", 3)
    assert Action("struggle", slot=ARMS, ability=STR, rage=True) in barb
    assert not any(a.rage and a.ability != STR for a in barb)
    _, ranger = acts("ranger", 3, favoured_terrain=True)
    assert any(a.terrain for a in ranger)
    _, monk = acts("monk", 3)
    assert Action("meditate") in monk and any(a.breath for a in monk)
    _, cleric = acts("cleric", 2)
    assert Action("channel") in cleric and Action("bless") in cleric
    p, cleric_off = acts("cleric", 2, volume1=False)
    assert Action("channel") not in cleric_off and not is_legal(p, initial_state(p), 0, Action("channel"))
    with pytest.raises(PolicyError, match="R-ESC-5"):
        check_action(p, initial_state(p), 0, Action("channel"), 1)


def _small(cls: str, level: int, volume1: bool):
    """A small single-character challenge: arms moderate and legs simple, composure 3 under a 1d2 stimulus,
    3 rounds (every R-ESC-14a/14b resource of the class comes into play, and the solver is fast)."""
    return scenario(dict(character("X", cls, level, {"arms": "moderate", "legs": "simple"}, str=14, dex=12,
                                   wis=14, cha=14), composure=3, favoured_terrain=cls == "ranger"),
                    stimulus={"damage": "1d2"}, run={"max_rounds": 3}, rules={"volume1_features": volume1})


@pytest.mark.parametrize("volume1", [True, False], ids=["volume1", "earlier"])
@pytest.mark.parametrize("cls", CLASSES)
def test_optimal_is_at_least_every_builtin_on_every_class_and_level(cls, volume1):
    for level in LEVELS:
        res = compare(_small(cls, level, volume1))
        for row in res["policies"]:
            assert row["value"] is not None
            assert res["optimal_value"] >= row["value"] - 1e-12, (level, row["policy"])


def _probe(cls: str, level: int):
    """The issue's probe: heavy arms, moderate legs, composure 6, a 1d4 stimulus, dazed 2, 10 rounds."""
    return scenario(dict(character("P", cls, level, {"arms": "heavy", "legs": "moderate"}, str=14, dex=12,
                                   wis=14, cha=14), composure=6, favoured_terrain=cls == "ranger"),
                    stimulus={"damage": "1d4"}, overload={"dazed_rounds": 2}, run={"max_rounds": 10})


@pytest.mark.slow
@pytest.mark.parametrize("cls,level", [("cleric", 2), ("paladin", 3), ("monk", 3), ("barbarian", 3),
                                       ("ranger", 3)])
def test_issue_41_probe_shapes_solve_and_beat_greedy(cls, level):
    res = compare(_probe(cls, level))
    for row in res["policies"]:
        assert res["optimal_value"] >= row["value"] - 1e-12, row["policy"]


def test_issue_41_cleric_probe_first_round():
    """The cleric-2 probe round by round: the solver's first choices include channel divinity."""
    sol = solve(_probe("cleric", 2), "escape_by_round@1")
    assert (Action("channel"),) in sol.choices[0]
    assert Action("struggle", slot=LEGS, ability=STR) in [c[0] for c in sol.choices[0]]
