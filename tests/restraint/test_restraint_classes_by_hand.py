"""Every class by hand: composure dice, save proficiencies and maxima (R-RST-20, R-RST-25).

The expected numbers below are worked from RULES.md, not read from the code: the class die of
R-RST-20, the save proficiencies of R-RST-25, R-GEN-2 modifiers and the formula
max(1, die + mod) at level 1 plus max(1, die / 2 + mod) for each later level. The score sets are
chosen so that every class's die and every save proficiency changes at least one number: a wrong
die moves the level-1 maximum, a wrong save moves the chosen ability under one of three score sets.
"""

from __future__ import annotations

import pytest

from sim.composure import CLASS_DIE, SAVE_PROFICIENCIES, composure_maximum, default_composure_ability
from sim.escape.params import compile_params
from sim.restraint.tables import class_features_table, composure_table
from sim.scenario import parse_scenario

# R-RST-20 class dice and R-RST-25 save proficiencies, transcribed from RULES.md.
RULES_DIE = {
    "wizard": 4, "artificer": 4, "sorcerer": 4, "druid": 6, "cleric": 6, "warlock": 6, "bard": 6,
    "ranger": 8, "barbarian": 8, "rogue": 8, "monk": 10, "paladin": 10, "fighter": 10,
}
RULES_SAVES = {
    "barbarian": {"str", "con"}, "bard": {"dex", "cha"}, "cleric": {"wis", "cha"}, "druid": {"int", "wis"},
    "fighter": {"str", "con"}, "monk": {"str", "dex"}, "paladin": {"wis", "cha"}, "ranger": {"str", "dex"},
    "rogue": {"dex", "int"}, "sorcerer": {"con", "cha"}, "warlock": {"wis", "cha"}, "wizard": {"int", "wis"},
    "artificer": {"con", "int"},
}

BASE = {"str": 10, "dex": 10, "int": 10}
CON_HIGH = {**BASE, "con": 16, "wis": 14, "cha": 12}  # con > wis > cha
WIS_HIGH = {**BASE, "con": 12, "wis": 16, "cha": 14}  # wis > cha > con
CHA_HIGH = {**BASE, "con": 14, "wis": 12, "cha": 16}  # cha > con > wis

# Default composure ability under (CON_HIGH, WIS_HIGH, CHA_HIGH): the highest of the class's
# con/wis/cha saves; a class with none of them takes the highest of all three.
ABILITY = {
    "barbarian": ("con", "con", "con"),  # saves str con -> con only
    "bard": ("cha", "cha", "cha"),  # dex cha -> cha only
    "cleric": ("wis", "wis", "cha"),  # wis cha: wis 14 > cha 12; wis 16 > cha 14; cha 16 > wis 12
    "druid": ("wis", "wis", "wis"),  # int wis -> wis only
    "fighter": ("con", "con", "con"),  # str con -> con only
    "monk": ("con", "wis", "cha"),  # str dex -> none: highest of all three
    "paladin": ("wis", "wis", "cha"),  # wis cha, as cleric
    "ranger": ("con", "wis", "cha"),  # str dex -> none
    "rogue": ("con", "wis", "cha"),  # dex int -> none
    "sorcerer": ("con", "cha", "cha"),  # con cha: con 16 > cha 12; cha 14 > con 12; cha 16 > con 14
    "warlock": ("wis", "wis", "cha"),  # wis cha, as cleric
    "wizard": ("wis", "wis", "wis"),  # int wis -> wis only
    "artificer": ("con", "con", "con"),  # con int -> con only
}

# Maxima at levels 1, 2 and 5 with CHA_HIGH (mods: con +2, wis +1, cha +3).
# level 1 = die + mod; each later level + die / 2 + mod (no minimum binds here).
MAXIMA = {
    "barbarian": (10, 16, 34),  # d8, con +2: 8 + 2; + (4 + 2) a level
    "bard": (9, 15, 33),  # d6, cha +3: 6 + 3; + (3 + 3)
    "cleric": (9, 15, 33),  # d6, cha +3
    "druid": (7, 11, 23),  # d6, wis +1: 6 + 1; + (3 + 1)
    "fighter": (12, 19, 40),  # d10, con +2: 10 + 2; + (5 + 2)
    "monk": (13, 21, 45),  # d10, cha +3 (no con/wis/cha save): 10 + 3; + (5 + 3)
    "paladin": (13, 21, 45),  # d10, cha +3
    "ranger": (11, 18, 39),  # d8, cha +3 (no con/wis/cha save): 8 + 3; + (4 + 3)
    "rogue": (11, 18, 39),  # d8, cha +3 (no con/wis/cha save)
    "sorcerer": (7, 12, 27),  # d4, cha +3: 4 + 3; + (2 + 3)
    "warlock": (9, 15, 33),  # d6, cha +3
    "wizard": (5, 8, 17),  # d4, wis +1: 4 + 1; + (2 + 1)
    "artificer": (6, 10, 22),  # d4, con +2: 4 + 2; + (2 + 2)
}


def test_r_rst_20_r_rst_25_tables_match_the_rules_text():
    """The shared tables equal the RULES.md transcription. The str/dex/int saves change no number
    today (only con/wis/cha pick the composure ability), so this is what guards them."""
    assert set(ABILITY) == set(MAXIMA) == set(RULES_DIE) == set(RULES_SAVES)
    assert len(RULES_DIE) == 13
    assert CLASS_DIE == RULES_DIE
    assert {cls: set(saves) for cls, saves in SAVE_PROFICIENCIES.items()} == RULES_SAVES
    assert all(len(saves) == 2 for saves in SAVE_PROFICIENCIES.values())


@pytest.mark.parametrize("cls", sorted(ABILITY))
def test_r_rst_25_default_composure_ability_every_class(cls):
    """R-RST-25: the best of the class's con/wis/cha saves, else the best of all three."""
    got = tuple(default_composure_ability(cls, s) for s in (CON_HIGH, WIS_HIGH, CHA_HIGH))
    assert got == ABILITY[cls]


@pytest.mark.parametrize("cls", sorted(MAXIMA))
def test_r_rst_20_composure_maximum_every_class(cls):
    """R-RST-20 / R-RST-25: the class die and the default ability give the maximum."""
    got = tuple(composure_maximum(cls, lv, CHA_HIGH) for lv in (1, 2, 5))
    assert got == MAXIMA[cls]
    assert all(type(m) is int for m in got)  # whole points (R-GEN-6 floors die / 2): 17, never 17.0


@pytest.mark.parametrize("cls", sorted(MAXIMA))
def test_r_rst_25_explicit_ability_isolates_the_die(cls):
    """With the ability named, only the die matters: level 1 = die + 0 (score 10), each later
    level die / 2 (R-RST-25), so a wrong die shows whatever the saves."""
    scores = {**BASE, "con": 10, "wis": 10, "cha": 10}
    die = RULES_DIE[cls]
    assert composure_maximum(cls, 1, scores, "con") == die
    assert composure_maximum(cls, 3, scores, "wis") == die + 2 * (die // 2)


def test_r_rst_24_composure_table_every_class():
    """R-RST-24: the table designers read has the hand maxima for all 13 classes."""
    table = composure_table(CHA_HIGH, range(1, 6))
    assert set(table.index) == set(MAXIMA)
    for cls, (l1, l2, l5) in MAXIMA.items():
        assert (table.loc[cls, 1], table.loc[cls, 2], table.loc[cls, 5]) == (l1, l2, l5), cls


def test_r_rst_20_class_features_table_names_the_die_and_ability():
    table = class_features_table(1, CHA_HIGH).set_index("class")
    for cls in MAXIMA:
        assert table.loc[cls, "composure_die"] == f"d{RULES_DIE[cls]}"
        assert table.loc[cls, "composure_ability"] == ABILITY[cls][2]


@pytest.mark.parametrize("cls", sorted(MAXIMA))
def test_r_esc_35_escape_uses_the_same_maximum(cls):
    """R-ESC-12 / R-ESC-35: the escape challenge's composure maximum is R-RST-20's."""
    data = {"kind": "escape", "name": "t", "party": [{"name": "A", "class": cls, "level": 5, "scores": CHA_HIGH}]}
    p = compile_params(parse_scenario(data, "t.toml"))
    assert int(p.comp_max[0]) == MAXIMA[cls][2]
