"""Sensitivity: which parameters are moved, each row against independent evaluations, ranking, files."""

from __future__ import annotations

import pandas as pd
import pytest
from examples import ROOT

import sim
from sim.designer.params import with_values
from sim.designer.sensitivity import sensitivity, sensitivity_parameters

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
    ex_base = sim.exact(s)["escape_rate"]
    for _, row in df.iterrows():
        step = 2 if ".scores." in row["parameter"] else 1  # ability scores step by 2 (modifier plateaus)
        assert row["step"] == step
        up_s = with_values(s, {row["parameter"]: row["value"] + step})
        down_s = with_values(s, {row["parameter"]: row["value"] - step})
        up, down = sim.simulate(up_s, runs=1500, seed=4).summary, sim.simulate(down_s, runs=1500, seed=4).summary
        assert row["metric_base"] == base
        assert row["metric_up"] == up["escape_rate"] and row["metric_down"] == down["escape_rate"]
        changes = [down["escape_rate"] - base, up["escape_rate"] - base]
        assert row["effect"] == pytest.approx(max(changes, key=abs), abs=1e-12)  # the larger of the two
        ex = [sim.exact(down_s)["escape_rate"] - ex_base, sim.exact(up_s)["escape_rate"] - ex_base]
        assert row["exact_effect"] == pytest.approx(max(ex, key=abs), abs=1e-12)
    assert list(df["rank"]) == [1, 2, 3]
    assert list(df["exact_effect"].abs()) == sorted(df["exact_effect"].abs(), reverse=True)
    assert df.loc[df["parameter"] == "party.0.scores.cha", "exact_effect"].item() == 0  # cha plays no part
    assert df.loc[df["parameter"] == "rules.tiers.heavy.dc", "exact_effect"].item() < 0
    assert df.loc[df["parameter"] == "party.0.scores.dex", "label"].item() == "Mei: scores.dex"  # named


def test_a_score_on_a_modifier_plateau_is_ranked_by_its_step_down():
    """The modifier is floor((score - 10) / 2): dex 16 and 17 are both +3, so a +1 step from 16 shows no
    effect at all. A step of 2 (14: +2, 18: +4) changes the modifier both ways."""
    s = with_values(sim.load_scenario(ROGUE), {"party.0.scores.dex": 16})
    df = sensitivity(s, runs=2000, seed=4, exact=True, parameters=["party.0.scores.dex", "party.0.scores.cha"])
    dex = df[df["parameter"] == "party.0.scores.dex"].iloc[0]
    assert dex["rank"] == 1 and dex["exact_down"] < dex["exact_base"] < dex["exact_up"]
    plateau = sim.exact(with_values(s, {"party.0.scores.dex": 17}))["escape_rate"]
    assert plateau == pytest.approx(sim.exact(s)["escape_rate"], abs=1e-12)  # what a +1 step would show


def test_effects_within_noise_are_marked():
    s = sim.load_scenario(ROGUE)
    df = sensitivity(s, runs=400, seed=2, exact=False, parameters=["party.0.scores.cha", "party.0.scores.dex"])
    cha = df[df["parameter"] == "party.0.scores.cha"].iloc[0]
    assert cha["effect"] == 0 and bool(cha["within_noise"])  # cha plays no part: no effect, within noise
    row = df[df["parameter"] == "party.0.scores.dex"].iloc[0]
    assert bool(row["within_noise"]) == (abs(row["effect"]) <= 1.96 * row["effect_se"])


def test_invalid_neighbour_uses_the_other_step():
    s = sim.load_scenario(ROGUE)
    s30 = with_values(s, {"party.0.scores.dex": 30})  # 32 is invalid
    df = sensitivity(s30, runs=500, seed=1, exact=False, parameters=["party.0.scores.dex"])
    row = df.iloc[0]
    assert pd.isna(row["metric_up"]) and row["effect"] == row["metric_down"] - row["metric_base"]


def test_cli_writes_table_csv_and_tornado(tmp_path, cli):
    out = tmp_path / "sens"
    r = cli("sensitivity", FLANK, "--runs", 800, "--seed", 1, "--out", out, "--quiet")
    assert r.code == 0 and "target.scores.dex" in r.out
    df = pd.read_csv(out / "sensitivity.csv")
    assert len(df) == 12 and df.iloc[0]["parameter"] == "target.scores.dex"
    assert (out / "tornado.png").stat().st_size > 1000 and "tornado.png" in (out / "report.html").read_text()


def test_cli_unknown_param_exits_2(tmp_path, cli):
    r = cli("sensitivity", ROGUE, "--param", "party.0.scores.luck", "--out", tmp_path / "x")
    assert r.code == 2 and "party.0.scores.luck" in r.err and not (tmp_path / "x").exists()
