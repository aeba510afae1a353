"""Deferred dice in the exact engine (issue 25): a roll answered with every face at once gives the same
round as the same roll played face by face. The face-by-face rounds (``defer=False``) are the branching
source as before: every outcome of every random event played once, its probability the product along the
path. Expected values are therefore the face-by-face answers themselves, state by state."""

from __future__ import annotations

import importlib

import pytest
from escape_helpers import character, scenario
from exact_cases import small_parties
from examples import ROOT

import sim
from sim.escape.exact_sym import Deferred, Fork
from sim.escape.params import compile_params
from sim.escape.policy import load_policy
from sim.escape.state import initial_state

ex = importlib.import_module("sim.escape.exact")

CASES = {
    **{k: v for k, v in small_parties().items() if k in ("duo_stimulus", "focus_wizard", "trio_stimulus_short")},
    # R-ESC-13 craving: the stimulus lowers the maximum; faces of unequal probability (2d2)
    "craving": scenario(dict(character("A", "fighter", 2, {"arms": "severe", "legs": "heavy"}, str=13), composure=5),
                        dict(character("B", "monk", 2, {"arms": "heavy"}, wis=14, dex=14), composure=4),
                        stimulus={"damage": "2d2", "kind": "craving"}, run={"max_rounds": 6}),
    # R-ESC-11 harness damage, R-ESC-12 overload with dazed rounds, R-ESC-10 searches: the issue's watch party
    "watch": sim.load_scenario(ROOT / "scenarios/escape/party_under_watch.toml"),
}


def states_reached(p, policy, rounds: int, most: int):
    """Up to ``most`` states of each of the first ``rounds`` rounds (face by face)."""
    layer = {ex.state_key(initial_state(p)): initial_state(p)}
    out = []
    for rnd in range(rounds):
        out += [(rnd, st) for st in list(layer.values())[:most]]
        nxt = {}
        for st in list(layer.values())[:most]:
            succ, _, _ = ex.transitions(p, ex._at_round(st, rnd), policy, {}, defer=False)
            for k, s2, _ in succ:
                nxt.setdefault(k, s2)
        layer = nxt
    return out


def as_dist(succ):
    out = {}
    for k, _, q in succ:
        out[k] = out.get(k, 0.0) + q
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_deferred_round_equals_face_by_face(name):
    s = CASES[name]
    p = compile_params(s)
    policy = load_policy(s.policy.name)
    rounds, most = (2, 6) if name == "watch" else (4, 40)
    seen_fork = False
    for rnd, st in states_reached(p, policy, rounds, most):
        st = ex._at_round(st, rnd)
        plain = ex.transitions(p, st, policy, {}, defer=False)
        counter = [0, float("inf"), 0]
        deferred = ex.transitions(ex.fast_params(p), st, policy, {}, counter, defer=True)
        a, b = as_dist(plain[0]), as_dist(deferred[0])
        assert a.keys() == b.keys(), (name, rnd)
        for k in a:
            assert b[k] == pytest.approx(a[k], abs=1e-13), (name, rnd)
        assert deferred[1] == pytest.approx(plain[1], abs=1e-13) and deferred[2] == pytest.approx(plain[2], abs=1e-13)
        for _, s2, _ in deferred[0]:  # the states handed on hold plain numbers
            built = ex.realize(s2)
            assert not any(type(v) is Deferred for c in built.chars for v in c.__dict__.values())
        seen_fork |= counter[2] > 1
    assert seen_fork or name == "watch"  # the cases do reach decisions the faces disagree on


def test_deferred_values_decide_only_where_every_face_agrees():
    d = Deferred.roll(3, [1, 2])  # a 1d2 at path position 3
    assert (10 - d > 0) is True and (d <= 0) is False
    with pytest.raises(Fork) as info:
        _ = d > 1
    assert info.value.pos == 3
    m = max(0, 5 - d)  # the round's max(0, composure - damage): faces 4 and 3
    assert type(m) is Deferred and m.vals == {(0,): 4, (1,): 3}
    both = d + Deferred.roll(1, [0, 10])  # two rolls: every combination, positions in order
    assert both.vars == (1, 3) and both.vals == {(0, 0): 1, (0, 1): 2, (1, 0): 11, (1, 1): 12}
    with pytest.raises(Fork):
        {d: 1}  # noqa: B018  (a deferred value cannot be a key: it would pick one face)
    with pytest.raises(Fork):
        [0, 1, 2][d]  # noqa: B018


def test_issue_trio_and_watch_speed_within_budget():
    """Issue 25: the trio (12 rounds, a stimulus every round) solves within the default budget, and
    the four-person watch is refused on its projection after round 1, quickly."""
    from exact_cases import issue_trio

    e = sim.exact(issue_trio(), engine="reference")
    assert e["exact_engine"]["replays"] < e["exact_engine"]["branches"]
    with pytest.raises(ex.ExactBudgetExceeded) as info:
        sim.exact(CASES["watch"], engine="reference")
    assert info.value.round == 2 and info.value.seconds < 5
