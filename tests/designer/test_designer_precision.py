"""--target-error: the bound is met, the result is the plain run of that many runs, the cap holds."""

from __future__ import annotations

import json
import math

import pytest
from examples import ROOT

import sim
from sim.batch import CHUNK_RUNS
from sim.cli import main
from sim.designer.metrics import half_width
from sim.designer.precision import simulate_to_error
from sim.stats import Z95

ROGUE = ROOT / "scenarios/escape/lone_rogue.toml"
FLANK = ROOT / "scenarios/restraint/flank_penalty.toml"


@pytest.mark.parametrize("target", [0.006, 0.0035])
def test_bound_is_met_with_whole_chunks(target, tmp_path, cli):
    out = tmp_path / "r"
    assert cli("run", ROGUE, "--target-error", target, "--out", out, "--no-runs", "--quiet").code == 0
    s = json.loads((out / "summary.json").read_text())
    info = s["target_error"]
    lo, hi = s["escape_rate_ci"]
    p, n = s["escape_rate"], s["runs"]
    assert info["met"] and info["runs"] == n and n % CHUNK_RUNS == 0
    assert (hi - lo) / 2 <= target and max(p - lo, hi - p) <= target
    assert Z95 * math.sqrt(p * (1 - p) / n) <= target
    # not wasteful: one chunk fewer would not have met the bound (normal approximation, 2% slack)
    if n > CHUNK_RUNS:
        assert Z95 * math.sqrt(p * (1 - p) / (n - CHUNK_RUNS)) > target * 0.9 or n <= 2 * CHUNK_RUNS


def test_result_is_the_plain_simulation_of_that_many_runs():
    s = sim.load_scenario(ROGUE)
    result, info = simulate_to_error(s, 0.005, seed=9)
    plain = sim.simulate(s, runs=info.runs, seed=9)
    assert result.summary["escape_rate"] == plain.summary["escape_rate"]
    assert (result.runs["rounds"].to_numpy() == plain.runs["rounds"].to_numpy()).all()
    assert half_width(result.summary, "escape_rate") == info.half_width <= 0.005


def test_list_metric_of_restraint():
    s = sim.load_scenario(FLANK)
    result, info = simulate_to_error(s, 0.008, seed=1)
    assert info.metric == "incapacitated_or_arms_complete_by_round.last" and info.met
    assert info.half_width <= 0.008 and result.summary["runs"] == info.runs


def test_cap_is_honoured_and_reported(tmp_path, cli):
    out = tmp_path / "r"
    r = cli("run", ROGUE, "--target-error", 0.0005, "--max-runs", 20000, "--out", out, "--no-runs")
    assert r.code == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["runs"] == 20000 and not s["target_error"]["met"] and s["target_error"]["half_width"] > 0.0005
    assert "NOT met" in r.err


@pytest.mark.parametrize("argv, expected", [
    (["--target-error", "0"], "expected a number > 0"),
    (["--target-error", "-1"], "expected a number > 0"),
    (["--target-error", "nan"], "expected a number > 0"),
    (["--target-error", "0.01", "--metric", "mean_checks"], "has no interval"),
])
def test_bad_target_error_exits_2(argv, expected, tmp_path, capsys):
    out = tmp_path / "r"
    try:
        code = main(["run", str(ROGUE), *argv, "--out", str(out)])
    except SystemExit as exc:  # argparse's own check of the flag
        code = exc.code
    assert code == 2 and expected in capsys.readouterr().err and not out.exists()
