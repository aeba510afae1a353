"""The designer tables of RST by hand: every cell of the combat effect table (R-RST-14, from
R-RST-2, R-RST-5, R-RST-6, R-RST-7) and the class resources of R-RST-12 / R-RST-23.

Each expectation is written from the rule text below, not from the table's output.
"""

from __future__ import annotations

import pandas as pd
import pytest

from sim.restraint.tables import attack_probability, bardic_die, channel_divinity_uses, class_features_table
from sim.restraint.tables import combat_effect_table as effect_table

LEVELS = ("1 light", "2 moderate", "3 heavy", "4 complete", "5 despair")
SLOTS = ("arms", "legs", "fingers", "body", "gag", "blindfold", "earplugs")

# attack +5 against AC 14: a d20 of 9..20 hits, 12/20 (natural 1 misses, natural 20 hits)
PLAIN, PENALTY, ADVANTAGE = 0.6, 0.6**2, 1 - 0.4**2

# R-RST-5 arms: (str, dex) penalties by level 1..5 (despair as complete)
ARMS_PEN = [(2, 0), (4, 2), (6, 4), (8, 6), (8, 6)]
# R-RST-6 legs: (str, dex) penalties
LEGS_PEN = [(0, 2), (0, 4), (2, 6), (4, 8), (4, 8)]


def expected_row(slot: str, level: int) -> dict:
    """One cell of the R-RST-14 table from the rule text (level 1..5)."""
    row = {
        # R-RST-2: DC 10 + 4 x level; body counts as heavy (22) whatever its level (R-RST-29); despair none
        "escape_dc": None if level == 5 else (22 if slot == "body" else 10 + 4 * level),
        "str_penalty": 0, "dex_penalty": 0, "hit_ac14": PLAIN, "fighter_hit_ac14": PLAIN,
        "hit_against_ac14": PLAIN, "somatic": 1.0, "verbal": 1.0, "speed": "normal",
        "checks": "", "conditions": "",
    }
    if slot == "arms":  # R-RST-5
        row["str_penalty"], row["dex_penalty"] = ARMS_PEN[level - 1]
        row["somatic"] = (1.0, 0.75, 0.5, 0.0, 0.0)[level - 1]  # 25% / 50% failure, none at complete
        if level in (2, 3):
            row["hit_ac14"] = PENALTY  # penalty die on weapon attacks
        if level >= 4:
            row["hit_ac14"] = row["fighter_hit_ac14"] = 0.0  # no weapon attacks
        row["checks"] = {3: "str checks: penalty die", 4: "str checks fail", 5: "str checks fail"}.get(level, "")
    elif slot == "legs":  # R-RST-6
        row["str_penalty"], row["dex_penalty"] = LEGS_PEN[level - 1]
        row["speed"] = ("normal", "half", "5 ft", "0", "0")[level - 1]
        if level >= 2:
            row["hit_against_ac14"] = ADVANTAGE  # attackers have advantage
        row["checks"] = {3: "dex checks: penalty die", 4: "dex checks fail", 5: "dex checks fail"}.get(level, "")
    elif slot == "fingers":  # R-RST-2, R-RST-3
        row["checks"] = {1: "+4 DC on other escapes", 2: "+4 DC on other escapes",
                         3: "escape checks: penalty die"}.get(level, "no escape from other slots")
    elif slot == "body":  # R-RST-7 incapacitated: no actions (attacks, spells); R-RST-2 +8 DC on others
        row.update(hit_ac14=0.0, fighter_hit_ac14=0.0, somatic=0.0, verbal=0.0, conditions="incapacitated",
                   checks="+8 DC on other escapes")
    elif slot == "gag":  # R-RST-7 no verbal spells
        row.update(verbal=0.0, conditions="no verbal spells")
    elif slot == "blindfold":  # R-RST-7 blinded (5e: own attacks at disadvantage, attackers at advantage)
        row.update(hit_ac14=PENALTY, hit_against_ac14=ADVANTAGE, conditions="blinded")
    elif slot == "earplugs":  # R-RST-7 deafened
        row["conditions"] = "deafened"
    return row


def effects():
    # built in each test (not a shared fixture), so that mutmut maps the table code to every test using it
    return effect_table(5, [14]).set_index(["slot", "level"])


def test_r_rst_14_every_slot_and_level_is_listed():
    table = effects()
    assert list(table.index) == [(s, lv) for s in SLOTS for lv in LEVELS]


@pytest.mark.parametrize("slot", SLOTS)
def test_r_rst_14_combat_effect_table_every_cell(slot):
    table = effects()
    for level, name in enumerate(LEVELS, start=1):
        got = table.loc[(slot, name)]
        for key, want in expected_row(slot, level).items():
            if want is None:
                assert got[key] is pd.NA, (slot, name, key)
            elif isinstance(want, float):
                assert got[key] == pytest.approx(want), (slot, name, key)
            else:
                assert got[key] == want, (slot, name, key)


def test_r_rst_14_attack_probability_with_dice():
    # +5 vs AC 14: 12 of 20 faces; a bonus die 1 - (8/20)^2, a penalty die (12/20)^2
    assert attack_probability(5, 14, 0) == pytest.approx(0.6)
    assert attack_probability(5, 14, 1) == pytest.approx(0.84)
    assert attack_probability(5, 14, -1) == pytest.approx(0.36)
    # natural 1 always misses (+30 vs AC 2: 19 of 20); natural 20 always hits (-30: 1 of 20)
    assert attack_probability(30, 2, 0) == pytest.approx(0.95)
    assert attack_probability(0, 2, 0) == pytest.approx(0.95)  # faces 2..20 hit, the 1 misses
    assert attack_probability(-30, 10, 0) == pytest.approx(0.05)
    assert attack_probability(-30, 10, 1) == pytest.approx(1 - 0.95**2)


@pytest.mark.parametrize(("cls", "levels"), [
    # 5e channel divinity: cleric 1 use from level 2, 2 from 6, 3 from 18; paladin 1 from level 3
    ("cleric", {1: 0, 2: 1, 5: 1, 6: 2, 17: 2, 18: 3, 20: 3}),
    ("paladin", {1: 0, 2: 0, 3: 1, 20: 1}),
    ("bard", {1: 0, 20: 0}),
])
def test_r_rst_23_channel_divinity_uses(cls, levels):
    assert {lv: channel_divinity_uses(cls, lv) for lv in levels} == levels


def test_r_rst_23_bardic_inspiration_die():
    # 5e: d6, d8 at level 5, d10 at 10, d12 at 15
    want = {1: 6, 4: 6, 5: 8, 9: 8, 10: 10, 14: 10, 15: 12, 20: 12}
    assert {lv: bardic_die(lv) for lv in want} == want


def test_r_rst_12_r_rst_23_class_features_by_hand():
    # level 5: proficiency 3; wis 12 (+1), cha 8 (-1) -> bardic uses max(1, -1) = 1
    scores = {"str": 10, "dex": 10, "con": 10, "int": 10, "wis": 12, "cha": 8}
    f = class_features_table(5, scores).set_index("class")
    assert "+3 (proficiency)" in f.loc["rogue", "escape_feature"]
    assert "+1 (wis mod, only when positive" in f.loc["druid", "escape_feature"]  # R-RST-31: wis 12 -> +1
    assert "+6 on a check, 3 uses" in f.loc["ranger", "escape_feature"]  # 2 x proficiency, proficiency uses
    assert "3 weapon attacks" in f.loc["fighter", "escape_feature"]
    assert "3 rages" in f.loc["barbarian", "escape_feature"]  # 2, 3 at level 3, 4 at 6
    assert "1d6 composure, 1 uses" in f.loc["cleric", "recovery"]
    assert "1d6 composure, 1 uses" in f.loc["paladin", "recovery"]
    assert "d8" in f.loc["bard", "recovery"] and "1 uses" in f.loc["bard", "recovery"]
    assert "5 ki" in f.loc["monk", "recovery"]
    per_rest = f["expected_recovery_per_rest"]
    # cleric, paladin 1 x 3.5; bard 1 x 4.5 (d8); monk 5 ki x 3.5; the others recover nothing
    assert per_rest.to_dict() == pytest.approx({**dict.fromkeys(f.index, 0.0), "cleric": 3.5, "paladin": 3.5,
                                               "bard": 4.5, "monk": 17.5})
    for cls in ("wizard", "sorcerer", "artificer"):
        assert "absolute focus" in f.loc[cls, "recovery"]
    for cls in ("warlock", "wizard", "cleric", "monk", "paladin", "bard", "sorcerer", "artificer"):
        assert (f.loc[cls, "escape_feature"] == "") == (cls != "warlock")
