"""Test helpers for the restraint kind (the shape every tests/<kind>/<kind>_helpers.py has): ``EXAMPLES`` and
``example(name)`` for the shipped scenarios, ``scenario_data(**over)`` and ``make(**over)`` for small scenarios
(BASE with nested overrides)."""

from __future__ import annotations

import copy

from examples import ROOT

from sim.scenario import parse_scenario

EXAMPLES = ROOT / "scenarios" / "restraint"

BASE = {
    "kind": "restraint",
    "name": "test duel",
    "run": {"rounds": 6, "runs": 1000, "seed": 1},
    "binder": {
        "scores": {"str": 16, "dex": 10, "con": 10, "int": 10, "wis": 10, "cha": 10},
        "method": "action",
        "slots": ["arms"],
    },
    "target": {
        "class": "fighter",
        "level": 1,
        "scores": {"str": 12, "dex": 12, "con": 10, "int": 10, "wis": 10, "cha": 10},
        "condition": "grappled",
    },
}


# Duel variants shared by the engine and exact tests (one per feature worth exercising).
CASES = {
    "plain": {},
    # R-RST-11 flanking, both choices
    "flank_penalty": {"binder": {"flanking": True, "flank_choice": "penalty", "slots": ["arms", "legs"]}},
    "flank_extra": {"binder": {"flanking": True, "flank_choice": "extra_level", "slots": ["fingers", "arms"]}},
    # R-RST-12 barbarian rage, R-RST-31 pool stacking with arms and fingers heavy
    "barbarian_pool": {
        "rules": {"dice_stacking": "pool"},
        "binder": {"slots": ["arms", "fingers", "body"]},
        "target": {"class": "barbarian", "level": 3, "scores": {"str": 20},
                   "restraints": {"arms": 3, "fingers": 3, "legs": 1}},
    },
    "fighter_pool": {  # pool: str with arms heavy and fingers heavy keeps the lowest of three d20
        "rules": {"dice_stacking": "pool"},
        "target": {"scores": {"str": 20, "dex": 8, "int": 6}, "restraints": {"arms": 3, "fingers": 3, "legs": 1}},
    },
    "barbarian_cancel": {
        "binder": {"slots": ["legs", "body", "arms"]},
        "target": {"class": "barbarian", "level": 17, "scores": {"str": 20}, "initiative": "target"},
    },
    # R-RST-12 ranger in favoured terrain, rogue, druid with a negative wis mod
    "ranger": {"target": {"class": "ranger", "level": 9, "favoured_terrain": True,
                          "restraints": {"arms": 1, "legs": 4, "fingers": 2}}},
    "rogue_other_method": {"binder": {"method": "other", "slots": ["gag", "arms", "blindfold"]},
                           "target": {"class": "rogue", "level": 13}},
    "druid": {"target": {"class": "druid", "scores": {"wis": 6}, "restraints": {"body": 2, "earplugs": 1}}},
    "druid_wise": {"target": {"class": "druid", "scores": {"wis": 16}, "restraints": {"arms": 2, "gag": 1}}},
    # R-RST-9 / R-RST-28: condition none, bindable only while body >= 1
    "body_only": {"target": {"condition": "none", "restraints": {"body": 1, "fingers": 4}},
                  "binder": {"slots": ["body", "arms"]}},
    "composure": {
        "composure": {
            "stimulus": "2d4-2+con",
            "rounds": 9,
            "kind": "craving",
            "party": [{"name": "W", "class": "wizard", "level": 3,
                       "scores": {"str": 8, "dex": 14, "con": 8, "int": 17, "wis": 12, "cha": 10}}],
        }
    },
    # R-RST-32 recoveries (channel divinity, ki, absolute focus) and R-RST-33 overload in the duel
    "recoveries": {
        "run": {"rounds": 7},
        "overload": {"dazed_rounds": 2},
        "binder": {"slots": ["arms", "legs"]},
        "target": {"class": "paladin", "level": 3, "composure": 7},
        "composure": {
            "stimulus": "1d4",
            "rounds": 8,
            "party": [
                {"name": "C", "class": "cleric", "level": 6, "composure": 9,
                 "scores": {"str": 10, "dex": 10, "con": 10, "int": 10, "wis": 16, "cha": 10}},
                {"name": "M", "class": "monk", "level": 3, "composure": 8,
                 "scores": {"str": 10, "dex": 10, "con": 10, "int": 10, "wis": 10, "cha": 10}},
                {"name": "S", "class": "sorcerer", "level": 2, "composure": 5,
                 "scores": {"str": 10, "dex": 10, "con": 10, "int": 10, "wis": 10, "cha": 16}},
            ],
        },
    },
    "craving_duel": {
        "run": {"rounds": 6},
        "overload": {"dazed_rounds": 0},
        "target": {"class": "wizard", "level": 1, "composure": 6,
                   "scores": {"str": 10, "dex": 12, "con": 10, "int": 16, "wis": 10, "cha": 10}},
        "composure": {"stimulus": "1d3", "kind": "craving", "rounds": 5},
    },
}


def merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def scenario_data(**over) -> dict:
    return merge(BASE, over)


def example(name: str):
    """The shipped example ``scenarios/restraint/<name>.toml``."""
    return EXAMPLES / f"{name}.toml"


def make(**over):
    """A validated restraint scenario: BASE with nested overrides."""
    return parse_scenario(scenario_data(**over))
