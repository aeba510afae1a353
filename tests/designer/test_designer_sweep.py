"""Sweeps: every grid point equals an independent simulation with the same seed and runs (common random
numbers) and, where supported, the independent exact analysis; files and clean errors."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from examples import ROOT

import sim
from sim.designer.params import with_values
from sim.designer.sweep import sweep

ROGUE = ROOT / "scenarios/escape/lone_rogue.toml"
FLANK = ROOT / "scenarios/restraint/flank_penalty.toml"


def _close(a, b):
    return (a is None or (isinstance(a, float) and math.isnan(a))) and (b is None or math.isnan(b)) or a == \
        pytest.approx(b, rel=1e-12, abs=1e-12)


def test_escape_sweep_matches_independent_simulation_and_exact():
    s = sim.load_scenario(ROGUE)
    df = sweep(s, ["rules.tiers.heavy.dc=16:24:4"], runs=2000, seed=5)
    assert list(df["rules.tiers.heavy.dc"]) == [16, 20, 24]
    for _, row in df.iterrows():
        variant = with_values(s, {"rules.tiers.heavy.dc": int(row["rules.tiers.heavy.dc"])})
        ind = sim.simulate(variant, runs=2000, seed=5).summary
        ex = sim.exact(variant)
        for key in ("escape_rate", "caught_rate", "timeout_rate", "mean_rounds"):
            assert _close(row[key], ind[key]), key
            assert _close(row[f"{key}_exact"], ex[key]), key
        assert [row["escape_rate_lo"], row["escape_rate_hi"]] == pytest.approx(ind["escape_rate_ci"], abs=1e-15)
        assert row["runs"] == 2000 and row["seed"] == 5
    # the exact value lies within 4 binomial SE of the simulated one at each point
    se = (df["escape_rate"] * (1 - df["escape_rate"]) / 2000) ** 0.5
    assert ((df["escape_rate"] - df["escape_rate_exact"]).abs() <= 4 * se + 1e-3).all()


def test_restraint_two_parameter_sweep_and_list_metric(tmp_path, cli):
    out = tmp_path / "sw"
    code = cli("sweep", FLANK, "--param", "target.scores.dex=14:18:2", "--param", "binder.scores.str=12:18:6",
               "--runs", 1500, "--seed", 2, "--out", out, "--quiet").code
    assert code == 0
    df = pd.read_csv(out / "sweep.csv")
    assert len(df) == 6 and list(df.columns[:2]) == ["target.scores.dex", "binder.scores.str"]
    metric = "incapacitated_or_arms_complete_by_round.last"
    s = sim.load_scenario(FLANK)
    for _, row in df.iterrows():
        variant = with_values(s, {"target.scores.dex": int(row.iloc[0]), "binder.scores.str": int(row.iloc[1])})
        ind = sim.simulate(variant, runs=1500, seed=2).summary
        assert row[metric] == pytest.approx(ind["incapacitated_or_arms_complete_by_round"][-1], abs=1e-12)
        assert row["mean_escape_checks"] == pytest.approx(ind["mean_escape_checks"], abs=1e-12)
        assert row[f"{metric}_exact"] == pytest.approx(sim.exact(variant)[
            "incapacitated_or_arms_complete_by_round"][-1], abs=1e-12)
    for name in ("report.html", "heatmap_incapacitated_or_arms_complete_by_round_last.png"):
        assert (out / name).stat().st_size > 500


@pytest.mark.parametrize("param, expected", [
    ("rules.tiers.heavy.dc=10:300:10", "rules.tiers.heavy.dc: expected less than or equal to 200"),
    ("rules.tiers.hevy.dc=10:12", "rules.tiers.hevy"),
    ("party.2.scores.dex=10:12", "list index 2 out of range"),
    ("rules.tiers.heavy.dc=12:10", "expected START <= STOP"),
    ("nokey", "expected KEY=START:STOP:STEP"),
])
def test_invalid_sweeps_exit_2_with_one_line_and_write_nothing(param, expected, tmp_path, cli):
    out = tmp_path / "out"
    r = cli("sweep", ROGUE, "--param", param, "--runs", 100, "--out", out)
    err = r.err
    assert r.code == 2 and expected in err and str(ROGUE) in err, err
    assert len(err.strip().splitlines()) == 1 and not out.exists()


def test_unknown_metric_exits_2_and_writes_nothing(tmp_path, cli):
    out = tmp_path / "out"
    r = cli("sweep", ROGUE, "--param", "rules.tiers.heavy.dc=16:18", "--metric", "escape_by_round.20", "--runs", 100,
            "--out", out, "--quiet")
    assert r.code == 2 and "out of range" in r.err and not out.exists()
