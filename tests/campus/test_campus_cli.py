"""End to end: ``python -m sim run|validate|exact`` on campus scenarios (SCENARIOS.md output contract)."""

import json

import pandas as pd
import pytest
from examples import ROOT

from sim.stats import wilson_interval

SCEN = ROOT / "scenarios" / "campus"


def test_cli_run_writes_summary_runs_report(tmp_path, cli):
    out = tmp_path / "out"
    assert cli("run", SCEN / "seed_trio_vs_hounds.toml", "--runs", 2000, "--out", out, "--quiet").code == 0
    summary = json.loads((out / "summary.json").read_text())
    for key in ("kind", "name", "runs", "seed", "clear_rate", "clear_rate_ci", "party_clear_rate",
                "game_over_rate", "capture_by_turn", "escape_success_by_turn", "scenario_hash"):
        assert key in summary
    assert summary["kind"] == "campus" and summary["runs"] == 2000 and summary["seed"] == 3
    assert len(summary["capture_by_turn"]) == 12 and len(summary["escape_success_by_turn"]) == 12
    assert summary["escape_success_by_turn"][0] is None  # R-CAM-59: nobody checks in turn 1
    runs = pd.read_parquet(out / "runs.parquet")
    # the summary is the per-run file's: clear rate = cleared PCs / (runs x 3 PCs); its interval is
    # the 95% Wilson interval with the run as the unit (n = runs), party clear rate likewise
    rate = runs["cleared"].sum() / (2000 * 3)
    assert summary["clear_rate"] == pytest.approx(rate, abs=1e-12)
    assert summary["clear_rate_ci"] == pytest.approx(wilson_interval(rate * 2000, 2000), abs=1e-12)
    party = runs["party_cleared"].mean()
    assert summary["party_clear_rate_ci"] == pytest.approx(wilson_interval(party * 2000, 2000), abs=1e-12)
    assert len(runs) == 2000 and {"cleared", "captures", "rescues_tried", "rescues_won", "pc0_t12"} <= set(runs)
    assert (out / "report.html").read_text().count("<img") >= 6
    assert len(list(out.glob("*.png"))) >= 6


def test_cli_validate_and_invalid_input(tmp_path, cli):
    assert cli("validate", *sorted(SCEN.glob("*.toml"))).code == 0
    bad = tmp_path / "bad.toml"
    bad.write_text('kind = "campus"\n[[locations]]\nid = "a"\ncapture_room = true\n[[locations]]\nid = "b"\n'
                   '[[party]]\nname = "A"\nabilities = { fight = 1, flee = 1, hide = 1 }\n'
                   '[[spawns]]\nadversary = "ghost"\n')
    refused = cli("run", bad, "--out", tmp_path / "x")
    assert refused.code == 2
    assert "spawns.0.adversary" in refused.err and "bad.toml" in refused.err
    assert not (tmp_path / "x").exists()
    assert cli("exact", SCEN / "seed_trio_vs_hounds.toml").code == 2
