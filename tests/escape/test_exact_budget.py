"""Budgets that say what binds (issue 25): the exact engine projects the work of each round before
spending it and refuses at once, naming the binding limit (states or branches), the flag that raises it
and the projected time; callers that asked for exact fall back to Monte Carlo and say so."""

from __future__ import annotations

import subprocess
import sys

import pytest
from exact_cases import small_parties
from examples import ROOT

import sim
from sim.escape.exact import ExactBudgetExceeded

WATCH = ROOT / "scenarios/escape/party_under_watch.toml"


def test_party_under_watch_is_refused_on_the_projection_before_the_work_is_spent():
    """Four characters with harness, stimulus, saves and searches: round 1 alone has thousands of branches
    (2 outcomes per check, 4 per harness die, 3 per stimulus die, ...), and round 2 has hundreds of states
    that each cost as much. The refusal comes from the projection (not the hard stop at the budget):
    fewer branches played than the budget allows, and sooner than the projected time of the round."""
    with pytest.raises(ExactBudgetExceeded) as info:
        sim.exact(sim.load_scenario(WATCH), engine="reference")
    exc = info.value
    assert exc.projected and exc.binds == "branches" and exc.flag == "--max-branches"
    assert exc.played < exc.max_branches < exc.branches
    assert exc.projected_seconds is not None and exc.seconds < exc.projected_seconds
    msg = str(exc)
    assert "branch budget binds" in msg and "--max-branches 500,000" in msg and "Monte Carlo" in msg
    assert "at least" in msg and "\n" not in msg


def test_state_budget_binds_with_the_exact_count_of_the_next_round():
    """The states of the next round are known once a round is played: a budget of the total states minus
    one refuses (naming --max-states), the total itself solves."""
    s = small_parties()["trio_cleric"]
    total = sim.exact(s, engine="reference")["exact_engine"]["states"]
    assert sim.exact(s, max_states=total, engine="reference")["exact_engine"]["states"] == total
    with pytest.raises(ExactBudgetExceeded) as info:
        sim.exact(s, max_states=total - 1, engine="reference")
    exc = info.value
    assert exc.binds == "states" and exc.flag == "--max-states" and exc.states == total
    assert "state budget binds" in str(exc) and f"--max-states {total - 1:,}" in str(exc)


def test_branch_budget_is_its_own_limit():
    s = small_parties()["trio_cleric"]
    e = sim.exact(s, engine="reference")["exact_engine"]
    assert e["max_branches"] == 25 * e["max_states"]
    assert sim.exact(s, max_branches=e["branches"], engine="reference")["exact_engine"]["branches"] == e["branches"]
    with pytest.raises(ExactBudgetExceeded) as info:
        sim.exact(s, max_branches=e["branches"] // 2, engine="reference")
    assert info.value.binds == "branches" and info.value.played <= e["branches"] // 2


def test_cli_names_the_flag_and_exits_2(tmp_path):
    out = subprocess.run([sys.executable, "-m", "sim", "exact", str(WATCH), "--max-branches", "2000"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2 and out.stdout == ""
    line, = out.stderr.strip().splitlines()
    assert "party_under_watch.toml" in line and "--max-branches 2,000" in line and "Traceback" not in line


def test_report_says_exact_was_refused_and_the_figures_are_monte_carlo(tmp_path, cli):
    out = tmp_path / "rep"
    assert cli("run", WATCH, "--runs", 400, "--seed", 3, "--out", out, "--quiet", "--no-runs").code == 0
    html = (out / "report.html").read_text()
    assert "Exact analysis was tried and refused" in html and "the figures are Monte Carlo" in html


def test_designer_path_falls_back_with_a_note():
    from sim.designer.evaluate import exact_summary

    notes: list[str] = []
    assert exact_summary(sim.load_scenario(WATCH), notes) is None
    assert len(notes) == 1 and "budget binds" in notes[0] and "Monte Carlo" in notes[0]
    notes = []
    assert exact_summary(small_parties()["duo_untie"], notes) is not None and notes == []
