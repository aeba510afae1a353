"""Composure maxima by class and level (R-RST-20, R-RST-25), shared by ESC and RST."""

from __future__ import annotations

from sim.dice import ability_modifier

# R-RST-20 class dice
CLASS_DIE = {
    "wizard": 4, "artificer": 4, "sorcerer": 4,
    "druid": 6, "cleric": 6, "warlock": 6, "bard": 6,
    "ranger": 8, "barbarian": 8, "rogue": 8,
    "monk": 10, "paladin": 10, "fighter": 10,
}
# R-RST-25 saving-throw proficiencies (5e)
SAVE_PROFICIENCIES = {
    "barbarian": ("str", "con"), "bard": ("dex", "cha"), "cleric": ("wis", "cha"),
    "druid": ("int", "wis"), "fighter": ("str", "con"), "monk": ("str", "dex"),
    "paladin": ("wis", "cha"), "ranger": ("str", "dex"), "rogue": ("dex", "int"),
    "sorcerer": ("con", "cha"), "warlock": ("wis", "cha"), "wizard": ("int", "wis"),
    "artificer": ("con", "int"),
}
COMPOSURE_ABILITIES = ("con", "wis", "cha")


def default_composure_ability(cls: str, scores: dict[str, int]) -> str:
    """R-RST-25: the highest of con/wis/cha among the class's save proficiencies, else of all three
    (ties in the order con, wis, cha)."""
    candidates = [a for a in COMPOSURE_ABILITIES if a in SAVE_PROFICIENCIES[cls]] or list(COMPOSURE_ABILITIES)
    return max(candidates, key=lambda a: (scores[a], -COMPOSURE_ABILITIES.index(a)))


def composure_maximum(cls: str, level: int, scores: dict[str, int], ability: str | None = None) -> int:
    """R-RST-20 / R-RST-25: max(1, die + mod) at level 1, + max(1, die / 2 + mod) per later level."""
    die = CLASS_DIE[cls]
    mod = ability_modifier(scores[ability or default_composure_ability(cls, scores)])
    return max(1, die + mod) + (int(level) - 1) * max(1, die // 2 + mod)
