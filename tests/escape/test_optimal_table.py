"""Optimal play on the compiled engine as arrays (issue 35 item 3, sim/escape/optimal_fast.py), against the
reference-driven solver (sim/escape/optimal.py, the independent check: it replays the scalar reference round and
asks the legal-action source on every state):

- the legal joint choices asked once per legality projection are, on every solved state, the list a direct call
  of :func:`sim.escape.actions.joint_actions` gives (R-ESC-6: one source of legal actions);
- every (state, round) of the reference-driven solver has the same value to 1e-12 in the compiled table and the
  same set of equal-valued best choices (ties reported as ties);
- :func:`sim.escape.optimal_fast.row_of` (a reference state as the compiled row) is the compiled encoding, so the
  decision table of ``run --policy optimal`` finds every state Monte Carlo reaches, and Monte Carlo of the table
  agrees with its exact value within 4 standard errors (slow)."""

from __future__ import annotations

import pytest
from escape_helpers import character, scenario
from exact_cases import POLICIES, small_parties
from test_exact_compiled import OPTIMAL_CASES, probes, shorter

import sim
from sim.escape.actions import describe, joint_actions
from sim.escape.exact import _at_round
from sim.escape.optimal import TIE, solve, with_policy
from sim.escape.optimal_fast import DecisionTable, row_of
from sim.escape.params import compile_params
from sim.stats import standard_error

CASES = {**{name: (build, rounds) for name, (build, rounds) in OPTIMAL_CASES.items()},
         "search_items": (lambda: probes()["search_items"], 3)}  # held release items (R-ESC-10)


def case(name: str):
    build, rounds = CASES[name]
    return shorter(build(), rounds)


def dazed(st) -> tuple[bool, ...]:
    return tuple(c.dazed_left > 0 for c in st.chars)


def words(p, joint) -> tuple[str, ...]:
    return tuple(describe(p, i, a) for i, a in enumerate(joint))  # a release item by its kind, not its place


@pytest.mark.parametrize("name", sorted(CASES))
def test_legal_choices_asked_once_per_projection_equal_a_direct_call_on_every_state(name):
    """R-ESC-6: the choices of every solved state are the one legal-action source's own list for that state."""
    sol = solve(case(name), engine="compiled")
    p = sol.params
    assert sol.engine == "compiled" and len(sol.choices) == sol.states
    assert len(sol.fwd.opts) < sol.states or sol.states == 1  # the memo is used
    for sid, opts in sol.choices.items():
        st = sol.reps[sid]
        assert opts == joint_actions(p, st, None, dazed(st)), (name, sid)


@pytest.mark.parametrize("objective", ["escape_rate", "not_caught"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_every_state_and_round_has_the_reference_value_and_tie_set(name, objective):
    """Backward induction on the arrays equals the reference-driven solver's on every (state, round) it solves: the
    value to 1e-12 and the set of choices worth the best to TIE (the same first choice: ties to the earlier)."""
    s = case(name)
    ref = solve(s, objective, engine="reference")
    fast = solve(s, objective, engine="compiled")
    p, table = ref.params, DecisionTable(fast)
    assert fast.value[(0, 1)] == pytest.approx(ref.value[(0, 1)], abs=1e-12, rel=0)
    assert fast.first_choice() == ref.first_choice()
    for (sid, rnd), v in ref.value.items():
        st = _at_round(ref.reps[sid], rnd - 1)
        cid = table.state_number(st, rnd - 1)
        assert cid is not None, (sid, rnd)
        assert fast.value[(cid, rnd)] == pytest.approx(v, abs=1e-12, rel=0), (sid, rnd)
        ties_ref = {words(p, ref.choices[sid][k]) for k in range(len(ref.choices[sid]))
                    if ref.q(sid, rnd, k) >= v - TIE}
        ties_fast = {words(p, fast.choices[cid][k]) for k in range(len(fast.choices[cid]))
                     if fast.q(cid, rnd, k) >= v - TIE}
        assert ties_fast == ties_ref, (sid, rnd)
        assert words(p, fast.choices[cid][fast.best[(cid, rnd)]]) == words(p, ref.choices[sid][ref.best[(sid, rnd)]])


def test_ties_are_reported_as_ties_by_both_engines():
    """str 14 and dex 14 on light arms (R-ESC-4: the same modifier, the same DC): struggling with either is worth
    the same, named once with both abilities; the compiled engine names it as the reference-driven one."""
    s = scenario(character("A", "rogue", 1, {"arms": "light"}, str=14, dex=14), run={"max_rounds": 1})
    fast = sim.exact(s, policy="optimal", engine="compiled")["optimal"]["first_actions"]
    ref = sim.exact(s, policy="optimal", engine="reference")["optimal"]["first_actions"]
    assert fast == ref == ["A struggles arms (str or dex, equal)"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_row_of_is_the_compiled_encoding_of_every_solved_state(name):
    sol = solve(case(name), engine="compiled")
    f = sol.fwd
    for sid in range(f.n_rows):
        played = int(f.first_round[sid]) - 1 if f.first_round[sid] else len(f.layers) - 2
        assert row_of(sol.params, sol.reps[sid], played) == f.rows[sid].tobytes(), sid


@pytest.mark.parametrize("name", ["search_items", "focus_wizard", "duo_untie", "rage_inspire"])
def test_the_decision_table_finds_every_state_monte_carlo_reaches(name, monkeypatch):
    """Monte Carlo of ``run --policy optimal`` on the scalar reference: every state it meets within the horizon
    is in the compiled table (none rests for want of a row)."""
    calls, missed = [0], []
    decide = DecisionTable.decide

    def counted(self, st, rnd):
        calls[0] += 1
        joint = decide(self, st, rnd)
        if joint is None:
            missed.append((rnd, st))
        return joint

    monkeypatch.setattr(DecisionTable, "decide", counted)
    s = with_policy(case(name), "optimal")
    sim.simulate(s, runs=400, seed=7, n_jobs=1)
    assert calls[0] > 400 and not missed


def test_optimal_is_at_least_every_built_in_policy_on_the_small_parties():
    for name, rounds in (("single_rogue_stimulus", 8), ("duo_untie", 4), ("focus_wizard", 8), ("duo_stimulus", 2)):
        s = shorter(small_parties()[name], rounds)
        best = sim.exact(s, policy="optimal")
        assert best["exact_engine"]["engine"] == "compiled"
        for policy in POLICIES:
            assert best["optimal"]["value"] >= sim.exact(with_policy(s, policy))["escape_rate"] - 1e-12, (name, policy)


FOUR = {"arms": "severe", "legs": "heavy", "fingers": "moderate", "gag": "light"}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["rogue", "wizard"])
def test_monte_carlo_of_the_solved_table_agrees_with_its_exact_value(name):
    """Issue 35's cases (bench/escape_exact.py): a rogue in four restraints over 20 rounds with a 1d2 stimulus, a
    wizard with absolute focus, a 1d4 stimulus and dazed 2 over 14 rounds. ``run --policy optimal`` plays the
    compiled table on the scalar reference (every declaration checked, R-ESC-6): within 4 SE of its exact value."""
    if name == "rogue":
        s = scenario(dict(character("Mei", "rogue", 5, FOUR, dex=17, con=12, int=14, wis=12), perception=True),
                     run={"max_rounds": 20}, stimulus={"damage": "1d2"})
    else:
        s = scenario(character("Wren", "wizard", 5, FOUR, int=16, dex=14), run={"max_rounds": 14},
                     stimulus={"damage": "1d4"}, overload={"dazed_rounds": 2})
    want = sim.exact(s, policy="optimal")
    assert want["exact_engine"]["engine"] == "compiled"
    n = 20_000
    got = sim.simulate(with_policy(s, "optimal"), runs=n, seed=35).summary
    for key in ("escape_rate", "caught_rate"):
        se = max(standard_error(want[key], n), 1 / n)
        assert abs(got[key] - want[key]) <= 4 * se, (key, got[key], want[key])
    assert compile_params(s).n_chars == 1
