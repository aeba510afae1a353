"""Sensitivity: which parameters are moved, each row against independent evaluations, ranking, files."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import sim
from sim.cli import main
from sim.designer.params import with_values
from sim.designer.sensitivity import sensitivity, sensitivity_parameters

ROOT = Path(__file__).resolve().parents[2]
ROGUE = ROOT / "scenarios/escape/lone_rogue.toml"
WATCH = ROOT / "scenarios/escape/party_under_watch.toml"
FLANK = ROOT / "scenarios/restraint/flank_penalty.toml"


def test_escape_parameters_follow_the_tier_ladder():
    keys = dict(sensitivity_parameters(sim.load_scenario(ROGUE)))
    # heavy arms and moderate legs: heavy -> light, moderate -> simple (R-ESC-2 defaults)
    tiers = {k for k in keys if k.startswith("rules.tiers.")}
    assert tiers == {"rules.tiers.heavy.dc", "rules.tiers.light.dc", "rules.tiers.moderate.dc",
                     "rules.tiers.simple.dc"}
    assert keys["rules.tiers.heavy.dc"] == 18 and keys["rules.tiers.simple.dc"] == 10
    assert {f"party.0.scores.{a}" for a in ("str", "dex", "con", "int", "wis", "cha")} <= set(keys)
    watch = dict(sensitivity_parameters(sim.load_scenario(WATCH)))
    assert "attention.limit" in watch and sum(k.startswith("party.") for k in watch) == 24


def test_restraint_parameters_are_binder_and_target_scores():
    keys = [k for k, _ in sensitivity_parameters(sim.load_scenario(FLANK))]
    assert sorted(keys) == sorted([f"{who}.scores.{a}" for who in ("binder", "target")
                                   for a in ("str", "dex", "con", "int", "wis", "cha")])


def test_rows_equal_independent_evaluations_and_are_ranked():
    s = sim.load_scenario(ROGUE)
    df = sensitivity(s, runs=1500, seed=4, parameters=["rules.tiers.heavy.dc", "party.0.scores.dex",
                                                      "party.0.scores.cha"])
    base = sim.simulate(s, runs=1500, seed=4).summary["escape_rate"]
    for _, row in df.iterrows():
        up = sim.simulate(with_values(s, {row["parameter"]: row["value"] + 1}), runs=1500, seed=4).summary
        down = sim.simulate(with_values(s, {row["parameter"]: row["value"] - 1}), runs=1500, seed=4).summary
        assert row["metric_base"] == base
        assert row["metric_plus_1"] == up["escape_rate"] and row["metric_minus_1"] == down["escape_rate"]
        assert row["per_plus_one"] == pytest.approx(up["escape_rate"] - base, abs=1e-12)
        ex_up = sim.exact(with_values(s, {row["parameter"]: row["value"] + 1}))["escape_rate"]
        assert row["exact_per_plus_one"] == pytest.approx(ex_up - sim.exact(s)["escape_rate"], abs=1e-12)
    assert list(df["rank"]) == [1, 2, 3]
    assert list(df["exact_per_plus_one"].abs()) == sorted(df["exact_per_plus_one"].abs(), reverse=True)
    assert df.loc[df["parameter"] == "party.0.scores.cha", "exact_per_plus_one"].item() == 0  # cha plays no part
    assert df.loc[df["parameter"] == "rules.tiers.heavy.dc", "exact_per_plus_one"].item() < 0


def test_invalid_neighbour_falls_back_to_the_backward_difference():
    s = sim.load_scenario(ROGUE)
    s30 = with_values(s, {"party.0.scores.dex": 30})  # 31 is invalid
    df = sensitivity(s30, runs=500, seed=1, exact=False, parameters=["party.0.scores.dex"])
    row = df.iloc[0]
    assert pd.isna(row["metric_plus_1"]) and row["per_plus_one"] == row["metric_base"] - row["metric_minus_1"]


def test_cli_writes_table_csv_and_tornado(tmp_path, capsys):
    out = tmp_path / "sens"
    code = main(["sensitivity", str(FLANK), "--runs", "800", "--seed", "1", "--out", str(out), "--quiet"])
    text = capsys.readouterr().out
    assert code == 0 and "target.scores.dex" in text
    df = pd.read_csv(out / "sensitivity.csv")
    assert len(df) == 12 and df.iloc[0]["parameter"] == "target.scores.dex"
    assert (out / "tornado.png").stat().st_size > 1000 and "tornado.png" in (out / "report.html").read_text()


def test_cli_unknown_param_exits_2(tmp_path, capsys):
    code = main(["sensitivity", str(ROGUE), "--param", "party.0.scores.luck", "--out", str(tmp_path / "x")])
    assert code == 2 and "party.0.scores.luck" in capsys.readouterr().err and not (tmp_path / "x").exists()
