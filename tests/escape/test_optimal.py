"""Optimal play (issue 25): the best value over every legal choice (R-ESC-5, R-ESC-6), by backward
induction over the reachable states (sim/escape/optimal.py).

The brute forces below share only the round itself with the solver (the scalar reference driven by the
exact engine's branching source): they list the legal choices from the legality helpers of state.py as
RULES.md states them, not through sim/escape/actions.py, merge no states and memoize nothing."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import numpy as np
import pytest
from escape_helpers import character, scenario
from exact_cases import small_parties
from examples import ROOT

import sim
from sim.escape.exact import BranchSource
from sim.escape.optimal import compare, solve, table_policy
from sim.escape.params import N_SLOTS, compile_params
from sim.escape.policy import check_action
from sim.escape.reference import play_round
from sim.escape.simulate import reference_chunk
from sim.escape.state import (
    REST,
    Action,
    allowed_abilities,
    can_assist,
    can_be_guided,
    can_guide,
    can_untie_other,
    can_untie_self,
    initial_state,
    may_struggle,
)
from sim.stats import standard_error

LONE_ROGUE = ROOT / "scenarios/escape/lone_rogue.toml"

# tiny cases for the brute forces
ONE_RESTRAINT = scenario(character("A", "fighter", 1, {"arms": "moderate"}, str=14, dex=12, int=8),
                         run={"max_rounds": 2})
TWO_RESTRAINTS = scenario(character("A", "fighter", 1, {"fingers": "moderate", "arms": "light"}, str=14, dex=12),
                          run={"max_rounds": 3})
# A may guide B (gag and blindfold 0, R-ESC-9) and, once its fingers are free, untie B (R-ESC-10b)
TWO_CHARACTERS = scenario(character("A", "fighter", 1, {"fingers": "light"}),
                          character("B", "rogue", 1, {"arms": "moderate"}, dex=12),
                          run={"max_rounds": 2})


def legal(p, st, i):
    """Choices of character i from state.py's legality helpers (R-ESC-7, -9, -10a, -10b, -11); no search
    (none configured), no items, no cleric, no monk in these cases."""
    c = st.chars[i]
    if c.dazed_left:
        return [None]
    out = [Action("struggle", slot=s, ability=a) for s in range(N_SLOTS) if may_struggle(c, s)
           for a in allowed_abilities(c, s)]
    for j in range(p.n_chars):
        if j == i:
            continue
        if can_assist(p, i, c):
            out.append(Action("assist", target=j))
        if can_guide(c) and can_be_guided(st.chars[j]):
            out.append(Action("guide", target=j))
    for j in range(p.n_chars):
        if can_untie_self(p, c) and (j == i or can_untie_other(p, c)):
            out += [Action("untie", slot=s, target=j) for s in range(N_SLOTS) if st.chars[j].tiers[s] > 0]
    return out + [REST]


def outcomes(p, st, joint):
    """[(probability, next state)] of one round from ``st`` with the fixed joint choice."""
    out, stack = [], [()]
    while stack:
        src = BranchSource(p, stack.pop())
        s2 = st.copy()
        play_round(p, s2, lambda view: list(joint), src)
        stack.extend(src.pending)
        out.append((src.prob, s2))
    return out


def expectimax(p, st):
    """The best P(escape by the last round) over every deterministic history-dependent policy: the value
    of a policy tree is its root choice's expectation over the subtrees, so the best tree takes the best
    choice at every history (no states merged)."""
    if st.outcome:
        return 1.0 if st.outcome == "escaped" else 0.0
    best = 0.0
    for joint in itertools.product(*(legal(p, st, i) for i in range(p.n_chars))):
        best = max(best, sum(q * expectimax(p, s2) for q, s2 in outcomes(p, st, joint)))
    return best


def test_one_restraint_two_rounds_every_markov_policy():
    """Every deterministic policy of (round, state) -> choice, enumerated and evaluated one by one.

    By hand (R-ESC-2: moderate DC 15 becomes simple on a success, simple DC 10 becomes free; R-ESC-4:
    d20 + str mod 2, the best ability): escaping in two rounds takes two successes: 8/20 * 13/20 = 0.26."""
    p = compile_params(ONE_RESTRAINT)
    start = initial_state(p)
    layer1 = [start]
    layer2 = {}
    for joint in itertools.product(*(legal(p, start, i) for i in range(p.n_chars))):
        for _, s2 in outcomes(p, start, joint):
            if not s2.outcome:
                layer2[s2.key()] = s2
    best = 0.0
    count = 0
    for first in itertools.product(*(legal(p, start, 0) for _ in layer1)):
        for second in itertools.product(*(legal(p, s, 0) for s in layer2.values())):
            table = dict(zip(layer2, second, strict=True))
            value = 0.0
            for q, s2 in outcomes(p, start, first):
                if s2.outcome == "escaped":
                    value += q
                elif not s2.outcome:
                    value += q * sum(r for r, s3 in outcomes(p, s2, (table[s2.key()],)) if s3.outcome == "escaped")
            best = max(best, value)
            count += 1
    assert count >= 16  # 4 choices in round 1 and at least 4 in each state of round 2
    sol = solve(ONE_RESTRAINT)
    assert sol.value[(0, 1)] == pytest.approx(best, abs=1e-12)
    assert best == pytest.approx(0.26, abs=1e-12)


@pytest.mark.parametrize("case", ["two_restraints", "two_characters"])
def test_equals_brute_force_over_policy_trees(case):
    s = TWO_RESTRAINTS if case == "two_restraints" else TWO_CHARACTERS
    p = compile_params(s)
    want = expectimax(p, initial_state(p))
    assert solve(s).value[(0, 1)] == pytest.approx(want, abs=1e-12)


CASES = {"lone_rogue": sim.load_scenario(LONE_ROGUE), "focus_wizard": small_parties()["focus_wizard"],
         "one_restraint": ONE_RESTRAINT, "two_restraints": TWO_RESTRAINTS, "two_characters": TWO_CHARACTERS}


@pytest.mark.parametrize("name", sorted(CASES))
def test_optimal_is_at_least_every_builtin_policy(name):
    res = compare(CASES[name])
    assert len(res["policies"]) == 3
    for row in res["policies"]:
        assert row["value"] is not None
        assert res["optimal_value"] >= row["value"] - 1e-12, row["policy"]
        assert row["gap_points"] == pytest.approx(100 * (res["optimal_value"] - row["value"]), abs=1e-9)
        for loss in row["losses"]:
            assert loss["lost"] > 0 and loss["policy_action"] != loss["optimal_action"]


def test_lone_rogue_greedy_leaves_points_and_the_optimal_first_action():
    """greedy struggles the legs first (R-ESC-20 ties by probability: the moderate legs are easier); optimal
    play starts on the heavy arms, as arms_first does, and greedy's losses are those leg struggles."""
    res = compare(CASES["lone_rogue"])
    rows = {r["policy"]: r for r in res["policies"]}
    assert rows["greedy"]["gap_points"] > 1 and rows["arms_first"]["gap_points"] == pytest.approx(0, abs=1e-9)
    assert res["first_actions"] == ["Mei struggles arms (dex)"]
    assert all("struggles legs" in x["policy_action"] for x in rows["greedy"]["losses"])


def test_every_choice_is_legal_and_monte_carlo_of_the_table_agrees():
    s = CASES["lone_rogue"]
    sol = solve(s)
    p = sol.params
    for sid, opts in sol.choices.items():
        st = sol.reps[sid]
        for joint in opts:
            for i, a in enumerate(joint):
                if a is not None:
                    check_action(p, st, i, a, 1)  # R-ESC-6: raises on an illegal action
    n = 6000
    cols = reference_chunk(p, n, np.random.default_rng(5), table_policy(sol), validate=True)
    from sim.escape import kernel as K

    rate = float((cols["outcome"] == K.ESCAPED).mean())
    want = sol.value[(0, 1)]
    assert abs(rate - want) <= 4 * max(standard_error(want, n), 1 / n), (rate, want)


def test_objectives_by_hand():
    """A lone fighter, arms light (DC 12, becomes free, `*` mark), str 14 (+2), 3 rounds, a search that
    draws 5 attention against a limit of 5 (R-ESC-9a, R-ESC-10).
    escape_by_round@1: one check with the best ability: P(d20 + 2 >= 12) = 11/20.
    not_caught: resting and struggling draw no attention (per_round 0), so the party is never caught: 1.
    escape_rate: a `*` restraint struggled in a second consecutive round is released (R-ESC-3), so
    struggling twice escapes for certain: 1."""
    s = scenario(character("A", "fighter", 1, {"arms": "light"}, str=14),
                 search={"dc": 10, "items": [{"name": "nail", "kind": "bonus", "value": 1}]},
                 attention={"limit": 5, "search": 5}, run={"max_rounds": 3})
    assert solve(s, "escape_by_round@1").value[(0, 1)] == pytest.approx(11 / 20, abs=1e-12)
    assert solve(s, "not_caught").value[(0, 1)] == pytest.approx(1.0, abs=1e-12)
    assert solve(s).value[(0, 1)] == pytest.approx(1.0, abs=1e-12)
    e = sim.exact(s, policy="optimal", objective="escape_by_round@1")
    assert e["escape_by_round"] == [pytest.approx(11 / 20, abs=1e-12)] and e["policy"] == "optimal"
    assert e["optimal"]["value"] == pytest.approx(11 / 20, abs=1e-12)


def test_cli_optimal(tmp_path):
    out = subprocess.run([sys.executable, "-m", "sim", "optimal", str(LONE_ROGUE), "--json", "--out",
                          str(tmp_path / "o")], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert {r["policy"] for r in res["policies"]} == {"greedy", "arms_first", "team"}
    assert (tmp_path / "o" / "optimal.json").exists() and (tmp_path / "o" / "optimal.html").exists()
    text = subprocess.run([sys.executable, "-m", "sim", "optimal", str(LONE_ROGUE)], capture_output=True,
                          text=True, cwd=ROOT).stdout
    assert "leaves" in text and "points on the table" in text
    bad = subprocess.run([sys.executable, "-m", "sim", "optimal", str(LONE_ROGUE), "--objective", "fastest"],
                         capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "objective" in bad.stderr


def test_simulating_the_optimal_policy_agrees_with_its_value():
    """`run --policy sim.escape.optimal:play`: Monte Carlo of the solved table through the ordinary
    simulation path (a module:callable policy, every declaration checked, R-ESC-6)."""
    from sim.escape.optimal import with_policy

    s = with_policy(CASES["lone_rogue"], "sim.escape.optimal:play")
    n = 4000
    r = sim.simulate(s, runs=n, seed=8, allow_code=True).summary
    want = solve(CASES["lone_rogue"]).value[(0, 1)]
    assert abs(r["escape_rate"] - want) <= 4 * max(standard_error(want, n), 1 / n), (r["escape_rate"], want)
