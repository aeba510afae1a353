"""`python -m sim run|exact` end to end on an escape scenario."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest
from examples import ROOT

from sim.stats import wilson_interval


def test_run_writes_summary_runs_report_and_charts(tmp_path):
    out = tmp_path / "rogue"
    proc = subprocess.run(
        [sys.executable, "-m", "sim", "run", str(ROOT / "scenarios/escape/lone_rogue.toml"), "--runs", "3000",
         "--seed", "4", "--out", str(out), "--jobs", "2"],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    for key in ("kind", "name", "runs", "seed", "escape_rate", "escape_rate_ci", "caught_rate", "timeout_rate",
                "mean_rounds", "escape_by_round", "scenario_hash", "sim_version", "numpy_version"):
        assert key in summary
    assert summary["runs"] == 3000 and summary["seed"] == 4 and len(summary["escape_by_round"]) == 8
    runs = pd.read_parquet(out / "runs.parquet")
    assert len(runs) == 3000 and set(runs["outcome"].unique()) <= {"escaped", "caught", "timeout"}
    # the summary is the per-run file's: rate = escapes / runs, 95% Wilson interval of that count
    k = int((runs["outcome"] == "escaped").sum())
    assert summary["escape_rate"] == pytest.approx(k / 3000, abs=1e-12)
    assert summary["escape_rate_ci"] == pytest.approx(wilson_interval(k, 3000), abs=1e-12)
    html = (out / "report.html").read_text()
    for png in ("escape_by_round.png", "outcomes.png", "tiers.png", "rounds_hist.png"):
        assert (out / png).stat().st_size > 1000 and png in html
    assert "bottleneck" in html and "exact" in html  # a single character: exact curve overlaid


def test_exact_command_prints_json(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "sim", "exact", "--json",
                           str(ROOT / "scenarios/escape/monk_body_wrap.toml"), "--out", str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    e = json.loads(proc.stdout)
    assert 0 < e["escape_rate"] <= 1 and e == json.loads((tmp_path / "exact.json").read_text())
