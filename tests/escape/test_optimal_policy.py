"""`optimal` as a policy name (issue 25): ``python -m sim run SCENARIO --policy optimal`` simulates the solved
decision table of :mod:`sim.escape.optimal` (objective ``escape_rate``) on the scalar reference, every
declaration checked against R-ESC-6; ``sim.exact`` answers a scenario whose policy is ``optimal`` with optimal
play. The expected values are the solver's exact value (backward induction, checked against a brute force over
policy trees in tests/escape/test_optimal.py), with Monte Carlo within 4 standard errors of it."""

from __future__ import annotations

import pytest
from escape_helpers import character, scenario
from test_optimal import CASES

import sim
from sim.errors import ScenarioError
from sim.escape.optimal import solve, with_policy
from sim.scenario import parse_scenario
from sim.stats import standard_error

DUO = scenario(character("A", "fighter", 1, {"arms": "heavy", "legs": "light"}, str=13),
               character("B", "rogue", 1, {"arms": "moderate"}, dex=14),
               attention={"limit": 6, "assist": 2, "per_round": 1}, run={"max_rounds": 4})


@pytest.mark.parametrize("name", ["lone_rogue", "duo"])
def test_run_policy_optimal_agrees_with_its_exact_value(name):
    base = DUO if name == "duo" else CASES["lone_rogue"]
    s = with_policy(base, "optimal")
    want = solve(base).value[(0, 1)]
    n = 4000
    r = sim.simulate(s, runs=n, seed=12).summary  # R-ESC-6: every declaration checked (an illegal one raises)
    assert r["policy"] == "optimal"
    assert abs(r["escape_rate"] - want) <= 4 * max(standard_error(want, n), 1 / n), (r["escape_rate"], want)
    e = sim.exact(s)  # the scenario's own policy name: optimal play's exact summary
    assert e["escape_rate"] == pytest.approx(want, abs=1e-12) and e["policy"] == "optimal"
    assert sim.exact(base, policy="optimal")["escape_rate"] == pytest.approx(want, abs=1e-12)


def test_optimal_differs_from_greedy_where_greedy_leaves_points():
    """lone_rogue: greedy struggles the legs first and loses points (test_optimal.py); the simulated optimal
    policy must not be greedy under another name."""
    s = CASES["lone_rogue"]
    n = 4000
    greedy = sim.exact(s)["escape_rate"]
    opt = sim.simulate(with_policy(s, "optimal"), runs=n, seed=3).summary["escape_rate"]
    assert opt - greedy > 8 * standard_error(greedy, n)


def test_policy_name_optimal_in_a_scenario_file_and_a_near_miss():
    data = {"kind": "escape", "name": "t", "party": [character("A", "rogue", 1, {"arms": "light"}, dex=14)],
            "policy": {"name": "optimal"}}
    assert parse_scenario(data, "t.toml").policy.name == "optimal"
    with pytest.raises(ScenarioError, match="did you mean 'optimal'") as info:
        parse_scenario({**data, "policy": {"name": "optimla"}}, "t.toml")
    assert info.value.key == "policy.name"


def test_cli_run_policy_optimal(tmp_path, cli):
    out = tmp_path / "rep"
    path = tmp_path / "s.toml"
    path.write_text('kind = "escape"\nname = "one"\n[run]\nmax_rounds = 3\n[[party]]\nname = "A"\nclass = "rogue"\n'
                    'level = 1\nscores = { str = 10, dex = 14, con = 10, int = 10, wis = 10, cha = 10 }\n'
                    '[party.restraints]\narms = "light"\n')
    assert cli("run", path, "--policy", "optimal", "--runs", 500, "--seed", 1, "--out", out, "--quiet",
               "--no-runs").code == 0
    assert '"policy": "optimal"' in (out / "summary.json").read_text()


def test_the_studio_offers_optimal_and_answers_it_exactly():
    """Issue 25: the studio accepts ``optimal`` where it accepts a policy. Optimal play is the maximum over every
    legal choice (R-ESC-5/6), so its exact value is at least the scenario's built-in policy's, and it is the
    value ``sim.exact`` gives the same scenario with the policy named optimal."""
    from examples import ROOT

    from sim.studio.model import Studio

    base = sim.load_scenario(ROOT / "scenarios" / "escape" / "lone_rogue.toml")
    studio = Studio(base)
    (control,) = [c for c in studio.controls if c.key == "policy.name"]
    assert "optimal" in control.options
    answer = studio.answer({"policy.name": "optimal"})
    assert answer.exact
    assert answer.value >= studio.baseline.value - 1e-12
    assert abs(answer.value - sim.exact(with_policy(base, "optimal"))["escape_rate"]) < 1e-12


def test_the_escape_report_shows_optimal_play_beside_the_policy(tmp_path):
    """Issue 25: the escape report's exact section gives the optimal value beside the scenario's policy, with the
    gap in points (100 x (optimal - the policy's exact escape rate); optimal >= every built-in policy)."""
    from examples import ROOT

    from sim.pipeline import run

    base = sim.load_scenario(ROOT / "scenarios" / "escape" / "lone_rogue.toml")
    result = run(base, runs=2000, seed=3, out=tmp_path)
    optimal = sim.exact(with_policy(base, "optimal"))["escape_rate"]
    greedy = sim.exact(base)["escape_rate"]
    assert result.exact["optimal"]["optimal_value"] == pytest.approx(optimal, abs=1e-12)
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Optimal play (exact)" in page
    assert f"the greedy policy leaves {100 * (optimal - greedy):.2f} points on the table" in page
    assert optimal >= greedy
