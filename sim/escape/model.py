"""The escape scenario model (SCENARIOS.md, kind = "escape") and its compiled parameters."""

from __future__ import annotations

import difflib
import re
from typing import Literal

from pydantic import Field, field_validator

from sim.dice import parse_dice
from sim.errors import ScenarioError
from sim.scenario import DiceStacking, PolicySettings, RunSettings, ScenarioBase, Scores, Strict

# R-ESC-1, R-ESC-30: the slots in tie-break order.
SLOTS = ("arms", "fingers", "body", "legs", "harness", "mask", "gag", "blindfold", "earplugs")
# R-ESC-2: the tier ladder (index = tier number; 0 is free).
TIER_IDS = ("free", "simple", "light", "moderate", "heavy", "severe", "complete", "despair", "utter")
DEFAULT_DC = (0, 10, 12, 15, 18, 21, 24, 26, 0)
DEFAULT_BECOMES = (0, 0, 0, 1, 2, 4, 5, 6, 8)
# accumulation marks (R-ESC-3): "*", "+", "#", "x"; utter has none.
MARKS = ("", "*", "*", "+", "+", "#", "#", "x", "")
CLASSES = (
    "barbarian", "bard", "cleric", "druid", "fighter", "monk", "paladin",
    "ranger", "rogue", "sorcerer", "warlock", "wizard", "artificer",
)
MAX_PARTY = 16
BUILTIN_POLICIES = ("greedy", "arms_first", "team")
MAX_ROUNDS = 1000

TierId = Literal["simple", "light", "moderate", "heavy", "severe", "complete", "despair", "utter"]
BecomesId = Literal["free", "simple", "light", "moderate", "heavy", "severe", "complete", "despair", "utter"]
SlotId = Literal["arms", "fingers", "body", "legs", "harness", "mask", "gag", "blindfold", "earplugs"]
ClassId = Literal[
    "barbarian", "bard", "cleric", "druid", "fighter", "monk", "paladin",
    "ranger", "rogue", "sorcerer", "warlock", "wizard", "artificer",
]
SCORE_NAMES = ("str", "dex", "con", "int", "wis", "cha")


def _dice_field(value: str, names: tuple[str, ...] = SCORE_NAMES) -> str:
    try:
        parse_dice(value, names)
    except ValueError as exc:
        raise ValueError(str(exc)) from None
    return value


class EscapeRun(RunSettings):
    max_rounds: int = Field(12, ge=1, le=MAX_ROUNDS)


class TierOverride(Strict):
    dc: int | None = Field(None, ge=-100, le=200)
    becomes: BecomesId | None = None


class EscapeRules(Strict):
    dice_stacking: DiceStacking = "cancel"
    tiers: dict[TierId, TierOverride] = Field(default_factory=dict)


class Goal(Strict):
    slots: list[SlotId] = Field(default_factory=lambda: list(SLOTS))


class Attention(Strict):
    limit: int | None = Field(None, ge=1, le=1_000_000)
    assist: int = Field(2, ge=0, le=10_000)
    guide: int = Field(1, ge=0, le=10_000)
    search: int = Field(0, ge=0, le=10_000)
    per_round: int = Field(0, ge=0, le=10_000)


class Item(Strict):
    name: str = Field(..., min_length=1, max_length=100)
    kind: Literal["bonus", "release"] = "bonus"
    value: int = Field(1, ge=-100, le=100)
    weight: float = Field(1.0, gt=0, le=1e9)
    max_tier: TierId = "severe"
    count: int | None = Field(None, ge=0, le=1_000_000)


class Search(Strict):
    dc: int = Field(14, ge=-100, le=200)
    items: list[Item] = Field(default_factory=list)


class Rest(Strict):
    recovery: str = "1d6"
    _v = field_validator("recovery")(_dice_field)


class Harness(Strict):
    damage: str = "1d4"
    _v = field_validator("damage")(_dice_field)


class Stimulus(Strict):
    damage: str = "1d4"
    kind: Literal["damage", "craving"] = "damage"
    _v = field_validator("damage")(_dice_field)


class Overload(Strict):
    dazed_rounds: int = Field(1, ge=0, le=MAX_ROUNDS)





class Restraints(Strict):
    arms: TierId | None = None
    fingers: TierId | None = None
    body: TierId | None = None
    legs: TierId | None = None
    harness: TierId | None = None
    mask: TierId | None = None
    gag: TierId | None = None
    blindfold: TierId | None = None
    earplugs: TierId | None = None


class Character(Strict):
    name: str = Field(..., min_length=1, max_length=100)
    class_: ClassId = Field(..., alias="class")
    level: int = Field(1, ge=1, le=20)
    scores: Scores
    perception: bool = False
    composure_ability: Literal["con", "wis", "cha"] | None = None
    composure: int | None = Field(None, ge=1, le=100_000)
    restraints: Restraints = Field(default_factory=Restraints)


class EscapePolicy(PolicySettings):
    pass


class Scenario(ScenarioBase):
    """kind = "escape" (RULES.md section 1)."""

    kind: Literal["escape"]
    run: EscapeRun = Field(default_factory=EscapeRun)
    rules: EscapeRules = Field(default_factory=EscapeRules)
    goal: Goal = Field(default_factory=Goal)
    attention: Attention = Field(default_factory=Attention)
    search: Search | None = None
    rest: Rest = Field(default_factory=Rest)
    harness: Harness = Field(default_factory=Harness)
    stimulus: Stimulus | None = None
    overload: Overload = Field(default_factory=Overload)
    party: list[Character] = Field(..., min_length=1, max_length=MAX_PARTY)
    policy: EscapePolicy = Field(default_factory=EscapePolicy)


def check(s: Scenario) -> None:
    """Cross-field checks with the dotted key of the offending value."""
    names = [c.name for c in s.party]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ScenarioError(f"expected unique character names; given {name!r} twice", key=f"party.{i}.name")
    for tier, override in s.rules.tiers.items():
        if tier == "utter" and (override.dc is not None or override.becomes is not None):
            raise ScenarioError("the utter tier takes no dc or becomes override (R-ESC-33)", key="rules.tiers.utter")
    name = s.policy.name
    if name not in BUILTIN_POLICIES and not re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", name):
        near = difflib.get_close_matches(name, BUILTIN_POLICIES, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise ScenarioError(f"expected a built-in policy ({', '.join(BUILTIN_POLICIES)}) or "
                            f"'package.module:callable'; given {name!r}{hint}", key="policy.name")
    if len(set(s.goal.slots)) != len(s.goal.slots):
        raise ScenarioError("expected each slot at most once", key="goal.slots")
    if s.search is not None:
        names = [it.name for it in s.search.items]
        for i, name in enumerate(names):
            if name in names[:i]:
                raise ScenarioError(f"expected unique item names; given {name!r} twice", key=f"search.items.{i}.name")
