"""Composure maxima (R-RST-20, R-RST-25), the composure table (R-RST-24), class recoveries
(R-RST-23) and the combat effect table (R-RST-14), checked against hand computations."""

from __future__ import annotations

import pandas as pd
import pytest
from restraint_helpers import make

import sim
from sim.composure import composure_maximum, default_composure_ability
from sim.restraint.tables import (
    attack_probability,
    class_features_table,
    combat_effect_table,
    composure_table,
    rounds_to_overload_table,
)

SCORES = {"str": 10, "dex": 14, "con": 14, "int": 16, "wis": 12, "cha": 8}


@pytest.mark.parametrize(
    "cls, level, scores, expected",
    [
        # wizard: d4, saves int/wis -> wis 12 (+1): 4 + 1, then 2 + 1 a level
        ("wizard", 1, SCORES, 5),
        ("wizard", 3, SCORES, 11),
        # fighter: d10, saves str/con -> con 14 (+2): 12, then 5 + 2 a level
        ("fighter", 1, SCORES, 12),
        ("fighter", 4, SCORES, 33),
        # rogue: d8, saves dex/int -> none of con/wis/cha: best of all three, con 14 (+2): 10, then 6
        ("rogue", 2, SCORES, 16),
        # cleric: d6, saves wis/cha -> wis 12 (+1) beats cha 8: 7, then 3 + 1
        ("cleric", 5, SCORES, 23),
        # sorcerer: d4, saves con/cha -> con (+2): 6, then 4 a level
        ("sorcerer", 20, SCORES, 82),
        # monk: d10, saves str/dex -> best of all three, con (+2)
        ("monk", 2, SCORES, 19),
        # minimum 1 at level 1 and 1 a level: wizard with wis 1 (-5)
        ("wizard", 5, {**SCORES, "wis": 1}, 5),
        # paladin d10, wis/cha: wis 3 (-4): level 1 max(1, 6) = 6, then max(1, 5 - 4) = 1
        ("paladin", 3, {**SCORES, "wis": 3, "cha": 3}, 8),
    ],
)
def test_r_rst_20_r_rst_25_composure_maximum_by_hand(cls, level, scores, expected):
    """R-RST-20 / R-RST-25: max(1, die + mod) at level 1, + max(1, die / 2 + mod) a later level."""
    assert composure_maximum(cls, level, scores) == expected


def test_r_rst_25_default_ability_and_overrides():
    """R-RST-25: default ability among the class's con/wis/cha save proficiencies, else all three;
    a scenario's composure_ability or composure overrides."""
    assert default_composure_ability("barbarian", {**SCORES, "wis": 20}) == "con"  # wis is not a save
    assert default_composure_ability("bard", {**SCORES, "con": 20}) == "cha"  # bard saves dex/cha
    assert default_composure_ability("ranger", {**SCORES, "wis": 18}) == "wis"  # none: best of three
    assert default_composure_ability("sorcerer", {**SCORES, "con": 12, "cha": 12}) == "con"  # tie: con first
    s = make(target={"class": "fighter", "level": 1, "scores": SCORES, "composure_ability": "cha"})
    assert sim.exact(s)["composure_max"] == 9  # 10 + (-1)
    s = make(target={"class": "fighter", "composure": 50})
    assert sim.exact(s)["composure_max"] == 50
    assert sim.simulate(s, runs=10, seed=0).summary["composure_max"] == 50


def test_r_rst_24_composure_table_hand_checked():
    """R-RST-24: the class x level table: one row per class, levels 1-20, each cell hand-checkable."""
    table = composure_table(SCORES)
    assert table.shape == (13, 20)
    assert list(table.columns) == list(range(1, 21))
    assert table.loc["wizard", 1] == 5 and table.loc["wizard", 20] == 5 + 19 * 3
    assert table.loc["fighter", 20] == 12 + 19 * 7
    assert table.loc["barbarian", 10] == 10 + 9 * 6  # d8, con (+2)
    assert table.loc["druid", 2] == 7 + 4  # d6, int/wis -> wis (+1)
    for cls in table.index:  # monotone in level
        assert all(table.loc[cls].diff().dropna() >= 1)


def test_r_rst_24_summary_has_the_table_and_party():
    """R-RST-24: the summary carries the table (the target's scores) and the party's maxima."""
    s = make(
        target={"class": "wizard", "level": 5, "scores": SCORES},
        composure={"stimulus": "1d6", "party": [{"name": "F", "class": "fighter", "level": 4, "scores": SCORES}]},
    )
    summary = sim.simulate(s, runs=200, seed=1).summary
    assert summary["composure_max"] == 17
    assert summary["composure_table"]["fighter"][3] == 33
    assert summary["party_composure"] == [{"name": "F", "class": "fighter", "level": 4, "composure_max": 33}]
    assert set(summary["party_overload_by_round"]) == {"F"}


def test_r_rst_24_expected_rounds_table():
    """R-RST-24: expected rounds until overload: a fixed 2 a round on a maximum of 5 takes 3 rounds."""
    table = composure_table(SCORES).iloc[:2, :3]
    rounds = rounds_to_overload_table(table, {2: 1.0})
    assert rounds.loc["wizard", 1] == 3.0  # maximum 5
    assert rounds.loc["wizard", 2] == 4.0  # maximum 8


def test_r_rst_23_class_recoveries():
    """R-RST-23: channel divinity, bardic inspiration and ki recover composure; expected per rest."""
    feats = class_features_table(6, {**SCORES, "cha": 16}).set_index("class")
    assert feats.loc["cleric", "expected_recovery_per_rest"] == pytest.approx(7.0)  # 2 uses x 3.5
    assert feats.loc["paladin", "expected_recovery_per_rest"] == pytest.approx(3.5)
    assert feats.loc["monk", "expected_recovery_per_rest"] == pytest.approx(21.0)  # 6 ki x 3.5
    assert feats.loc["bard", "expected_recovery_per_rest"] == pytest.approx(3 * 4.5)  # cha +3 uses of d8
    assert "absolute focus" in feats.loc["wizard", "recovery"]
    assert "not simulated" in feats.loc["warlock", "escape_feature"]  # R-RST-12 warlock: tabulated
    assert "4 rages" in feats.loc["barbarian", "escape_feature"]


def test_r_rst_14_combat_effect_table():
    """R-RST-14: penalties, P(hit AC x) with the penalty die, somatic chance, speed per slot and level."""
    t = combat_effect_table(5, [14]).set_index(["slot", "level"])
    # +5 vs AC 14: 9..20 hit = 12/20; with a penalty die (12/20)^2
    assert t.loc[("arms", "1 light"), "hit_ac14"] == pytest.approx(0.6)
    assert t.loc[("arms", "2 moderate"), "hit_ac14"] == pytest.approx(0.36)
    assert t.loc[("arms", "3 heavy"), "hit_ac14"] == pytest.approx(0.36)
    assert t.loc[("arms", "4 complete"), "hit_ac14"] == 0.0
    assert t.loc[("arms", "3 heavy"), "fighter_hit_ac14"] == pytest.approx(0.6)  # R-RST-12 fighter
    assert t.loc[("arms", "5 despair"), "fighter_hit_ac14"] == 0.0
    assert t.loc[("legs", "2 moderate"), "hit_against_ac14"] == pytest.approx(1 - 0.4**2)
    assert t.loc[("legs", "1 light"), "hit_against_ac14"] == pytest.approx(0.6)
    assert [t.loc[("arms", lv), "somatic"] for lv in ("1 light", "2 moderate", "3 heavy", "4 complete")] == [
        1.0, 0.75, 0.5, 0.0]
    assert [t.loc[("legs", lv), "speed"] for lv in ("1 light", "2 moderate", "3 heavy", "4 complete", "5 despair")] == [
        "normal", "half", "5 ft", "0", "0"]
    assert (t.loc[("arms", "3 heavy"), "str_penalty"], t.loc[("arms", "3 heavy"), "dex_penalty"]) == (6, 4)
    assert (t.loc[("legs", "4 complete"), "str_penalty"], t.loc[("legs", "4 complete"), "dex_penalty"]) == (4, 8)
    assert t.loc[("gag", "1 light"), "verbal"] == 0.0  # R-RST-7
    assert t.loc[("blindfold", "1 light"), "conditions"] == "blinded"
    assert t.loc[("earplugs", "2 moderate"), "conditions"] == "deafened"
    assert t.loc[("body", "1 light"), "conditions"] == "incapacitated"
    assert t.loc[("body", "2 moderate"), "escape_dc"] == 22
    assert t.loc[("arms", "5 despair"), "escape_dc"] is pd.NA


def test_r_rst_14_attack_probability_natural_rolls():
    """R-RST-14: attack rolls keep 5e's natural 20 (always hits) and natural 1 (always misses)."""
    assert attack_probability(0, 30, 0) == pytest.approx(0.05)
    assert attack_probability(30, 10, 0) == pytest.approx(0.95)
    assert attack_probability(30, 10, -1) == pytest.approx(0.95**2)
