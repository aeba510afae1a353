"""The restraint scenario model (SCENARIOS.md, kind = "restraint"; RULES.md section 2).

One boundary validates everything (STYLE.md practice 5); deeper code trusts the model.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from sim.dice import ABILITIES, parse_dice
from sim.errors import ScenarioError
from sim.scenario import DiceStacking, PolicySettings, RunSettings, ScenarioBase, Scores, Strict

# R-RST-1: the slots, in the tie-break order of R-RST-30.
SLOTS = ("arms", "legs", "fingers", "body", "gag", "blindfold", "earplugs")
LEVEL_NAMES = ("none", "light", "moderate", "heavy", "complete", "despair")
MAX_ROUNDS = 1000
MAX_PARTY = 16

SlotId = Literal["arms", "legs", "fingers", "body", "gag", "blindfold", "earplugs"]
ClassId = Literal[
    "barbarian", "bard", "cleric", "druid", "fighter", "monk", "paladin",
    "ranger", "rogue", "sorcerer", "warlock", "wizard", "artificer",
]
Level = Annotated[int, Field(ge=0, le=5)]
CharLevel = Annotated[int, Field(ge=1, le=20)]


class RestraintRun(RunSettings):
    rounds: int = Field(10, ge=1, le=MAX_ROUNDS)


class RestraintRules(Strict):
    dice_stacking: DiceStacking = "cancel"  # R-GEN-4, R-RST-31



class Binder(Strict):
    """The binding side of the duel (R-RST-10, R-RST-11, R-RST-27, R-RST-28)."""

    level: CharLevel = 1  # R-RST-27: gives the binder nothing; kept for the record
    scores: Scores
    method: Literal["action", "other"] = "action"
    flanking: bool = False
    flank_choice: Literal["penalty", "extra_level"] = "penalty"
    slots: list[SlotId] = Field(default_factory=lambda: ["arms", "legs"], max_length=len(SLOTS))


class Restraints(Strict):
    """Starting levels per slot (R-RST-1)."""

    arms: Level = 0
    legs: Level = 0
    fingers: Level = 0
    body: Level = 0
    gag: Level = 0
    blindfold: Level = 0
    earplugs: Level = 0

    def as_tuple(self) -> tuple[int, ...]:
        return tuple(getattr(self, s) for s in SLOTS)


class Target(Strict):
    class_: ClassId = Field(..., alias="class")
    level: CharLevel = 1
    scores: Scores
    condition: Literal["incapacitated", "grappled", "restrained", "prone", "none"] = "grappled"
    favoured_terrain: bool = False
    initiative: Literal["binder", "target"] = "binder"
    composure_ability: Literal["con", "wis", "cha"] | None = None
    composure: int | None = Field(None, ge=1, le=100_000)
    restraints: Restraints = Field(default_factory=Restraints)


class EffectTable(Strict):
    """R-RST-14: the attack bonus and armour classes of the combat effect table."""

    attack_bonus: int = Field(5, ge=-20, le=40)
    ac: list[Annotated[int, Field(ge=1, le=40)]] = Field(
        default_factory=lambda: [12, 14, 16, 18], min_length=1, max_length=20
    )


class PartyMember(Strict):
    """A character whose composure pool is tabulated next to the target's (R-RST-24)."""

    name: str = Field(..., min_length=1, max_length=100)
    class_: ClassId = Field(..., alias="class")
    level: CharLevel = 1
    scores: Scores
    composure_ability: Literal["con", "wis", "cha"] | None = None
    composure: int | None = Field(None, ge=1, le=100_000)


def _stimulus_field(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        expr = parse_dice(value, ABILITIES)
    except ValueError as exc:
        raise ValueError(str(exc)) from None
    if expr.n_dice > 20:
        raise ValueError(f"at most 20 dice in a stimulus, got {expr.n_dice} in {value!r}")
    return value


class Composure(Strict):
    """R-RST-20 … R-RST-24: the stimulus per round and the pools it wears down."""

    stimulus: str | None = None
    kind: Literal["damage", "craving"] = "damage"  # R-RST-22
    rounds: int | None = Field(None, ge=1, le=MAX_ROUNDS)  # default: run.rounds
    party: list[PartyMember] = Field(default_factory=list, max_length=MAX_PARTY)

    _v = field_validator("stimulus")(_stimulus_field)


class RestraintPolicy(PolicySettings):
    name: Literal["greedy"] = "greedy"  # R-RST-30 is the only target policy


class Scenario(ScenarioBase):
    """kind = "restraint" (RULES.md section 2)."""

    kind: Literal["restraint"]
    run: RestraintRun = Field(default_factory=RestraintRun)
    rules: RestraintRules = Field(default_factory=RestraintRules)
    binder: Binder | None = None
    target: Target
    table: EffectTable = Field(default_factory=EffectTable)
    composure: Composure = Field(default_factory=Composure)
    policy: RestraintPolicy = Field(default_factory=RestraintPolicy)


def check_scenario(s: Scenario) -> None:
    """Cross-field checks, each naming the dotted key of the offending value."""
    if s.binder is not None:
        slots = s.binder.slots
        for i, slot in enumerate(slots):
            if slot in slots[:i]:
                raise ScenarioError(f"expected each slot at most once; given {slot!r} twice", key=f"binder.slots.{i}")
    if s.target.favoured_terrain and s.target.class_ != "ranger":
        raise ScenarioError(
            f"favoured terrain is a ranger feature (R-RST-12); the target is a {s.target.class_}",
            key="target.favoured_terrain",
        )
    names = [m.name for m in s.composure.party]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ScenarioError(f"expected unique names; given {name!r} twice", key=f"composure.party.{i}.name")
