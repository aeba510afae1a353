"""The restraint scenario model (kind = "restraint"; docs/scenario-format/restraint.md, docs/rules/restraint.md).

One boundary validates everything (STYLE.md practice 5); deeper code trusts the model.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from sim.dice import ABILITIES, field_problem, parse_dice
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
    """Run defaults; --runs and --seed override runs and seed."""

    rounds: int = Field(10, ge=1, le=MAX_ROUNDS, description="Rounds of the duel (R-RST-13).")


class RestraintRules(Strict):
    """Rule settings of the restraint kind."""

    dice_stacking: DiceStacking = Field("cancel", description=(  # R-GEN-4, R-RST-31
        "How several bonus and penalty dice combine (R-GEN-4): cancel or pool."))
    recoveries: bool = Field(True, description=(  # R-RST-32 (revised 2026-12)
        "Class recoveries in the composure race: absolute focus, channel divinity, ki (R-RST-32, the seed); "
        "false: none (the earlier tables)."))
    overload_in_duel: bool = Field(True, description=(  # R-RST-33 (revised 2026-12)
        "With a composure.stimulus the target's composure runs alongside the duel and an overload dazes it "
        "(R-RST-33, the seed); false: the duel ignores composure (the earlier reading)."))


class Overload(Strict):
    """R-RST-33: what an overload in the duel does."""

    dazed_rounds: int = Field(1, ge=0, le=MAX_ROUNDS, description=(
        "Rounds the target is dazed after an overload in the duel (no escape attempt), then its composure "
        "resets to the maximum minus craving (R-RST-33)."))


class Binder(Strict):
    """The binding side of the duel (R-RST-10, R-RST-11, R-RST-27, R-RST-28)."""

    level: CharLevel = Field(1, description=(  # R-RST-27: gives the binder nothing; kept for the record
        "The binder's level: recorded in the report, it changes nothing (R-RST-27)."))
    scores: Scores = Field(..., description="The binder's six scores (the contest uses max(str, dex) mod).")
    method: Literal["action", "other"] = Field("action", description=(
        "action: a won binding of a free slot starts at moderate (0 -> 2); other: one level at a time."))
    flanking: bool = Field(False, description="The binder flanks the target (R-RST-11).")
    flank_choice: Literal["penalty", "extra_level"] = Field("penalty", description=(
        "What flanking gives: penalty (a penalty die on the target's contest roll) or extra_level (a win "
        "raises one level more)."))
    slots: list[SlotId] = Field(default_factory=lambda: ["arms", "legs"], max_length=len(SLOTS), description=(
        "Binding order: each round the binder tries the first slot of this list below despair."))


class Restraints(Strict):
    """Starting levels per slot (R-RST-1)."""

    arms: Level = Field(0, description="Level 0 none, 1 light, 2 moderate, 3 heavy, 4 complete, 5 despair.")
    legs: Level = Field(0, description="Level of the legs restraint (0..5).")
    fingers: Level = Field(0, description="Level of the fingers restraint (0..5); raises other slots' DCs.")
    body: Level = Field(0, description="Level of the body restraint (0..5); incapacitates, +8 to other DCs.")
    gag: Level = Field(0, description="Level of the gag (0..5).")
    blindfold: Level = Field(0, description="Level of the blindfold (0..5).")
    earplugs: Level = Field(0, description="Level of the earplugs (0..5).")

    def as_tuple(self) -> tuple[int, ...]:
        return tuple(getattr(self, s) for s in SLOTS)


class Target(Strict):
    """The character being bound, who tries to escape (R-RST-3, R-RST-4, R-RST-30)."""

    class_: ClassId = Field(..., alias="class", description=(
        "The target's class: class features in combat (R-RST-12) and the composure die (R-RST-20)."))
    level: CharLevel = Field(1, description="The target's level (proficiency bonus, rages, composure).")
    scores: Scores = Field(..., description="The target's six scores before restraint penalties.")
    condition: Literal["incapacitated", "grappled", "restrained", "prone", "none"] = Field("grappled", description=(
        "The target's condition for the whole duel; none: it can be bound only while body >= 1 (R-RST-9)."))
    favoured_terrain: bool = Field(False, description="A ranger target fights in its favoured terrain (R-RST-12).")
    initiative: Literal["binder", "target"] = Field("binder", description="Who acts first each round.")
    composure_ability: Literal["con", "wis", "cha"] | None = Field(None, description=(
        "The ability of the composure maximum; left out: the default of R-RST-25."))
    composure: int | None = Field(None, ge=1, le=100_000, description=(
        "Composure maximum, replacing the one computed from class and level."))
    restraints: Restraints = Field(default_factory=Restraints, description="Starting levels per slot.")


class EffectTable(Strict):
    """R-RST-14: the attack bonus and armour classes of the combat effect table."""

    attack_bonus: int = Field(5, ge=-20, le=40, description="Attack bonus of the weapon-attack columns.")
    ac: list[Annotated[int, Field(ge=1, le=40)]] = Field(
        default_factory=lambda: [12, 14, 16, 18], min_length=1, max_length=20,
        description="Armour classes: one hit-probability column each.",
    )


class PartyMember(Strict):
    """A character whose composure pool is tabulated next to the target's (R-RST-24)."""

    name: str = Field(..., min_length=1, max_length=100, description="Unique name, used in the report.")
    class_: ClassId = Field(..., alias="class", description="The class (decides the composure die).")
    level: CharLevel = Field(1, description="Character level.")
    scores: Scores = Field(..., description="The six ability scores.")
    composure_ability: Literal["con", "wis", "cha"] | None = Field(None, description=(
        "The ability of the composure maximum; left out: the default of R-RST-25."))
    composure: int | None = Field(None, ge=1, le=100_000, description="Composure maximum, replacing the computed one.")


def _stimulus_field(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        expr = parse_dice(value, ABILITIES)
    except ValueError as exc:
        raise ValueError(field_problem(exc)) from None
    if expr.n_dice > 20:
        raise ValueError(f"at most 20 dice in a stimulus, got {expr.n_dice} in {value!r}")
    return value


class Composure(Strict):
    """R-RST-20 … R-RST-24: the stimulus per round and the pools it wears down."""

    stimulus: str | None = Field(None, description=(
        "Composure damage per round, a dice expression of at most 20 dice; left out: no rounds-until-overload table."))
    kind: Literal["damage", "craving"] = Field("damage", description=(  # R-RST-22
        "damage, or craving: the damage also lowers the maximum (R-RST-22)."))
    rounds: int | None = Field(None, ge=1, le=MAX_ROUNDS, description=(  # default: run.rounds
        "Rounds the rounds-until-overload distribution covers; left out: run.rounds."))
    party: list[PartyMember] = Field(default_factory=list, max_length=MAX_PARTY, description=(
        "More characters whose composure pools are tabulated beside the target's."))

    _v = field_validator("stimulus")(_stimulus_field)


class RestraintPolicy(PolicySettings):
    name: Literal["greedy"] = Field("greedy", description=(  # R-RST-30 is the only target policy
        "The target's escape policy; greedy (R-RST-30) is the only one."))
    # the balance audit's restricted play (issue 36; docs/decisions.md "Forbidden class actions"): a barbarian
    # that may not rage makes every check as R-RST-30 would without rages (the best ability, no bonus die)
    forbid: list[Literal["rage"]] = Field(default_factory=list, max_length=1, description=(
        "Class actions the target may not take (the balance audit's restricted play): rage (R-RST-12, "
        "R-RST-31); the policy then picks its best check without it."))


class Scenario(ScenarioBase):
    """kind = "restraint" (docs/rules/restraint.md)."""

    kind: Literal["restraint"] = Field(..., description="The rule system: restraints in combat and composure pools.")
    run: RestraintRun = Field(default_factory=RestraintRun, description="Runs, seed and the duel's rounds.")
    rules: RestraintRules = Field(default_factory=RestraintRules, description=(
        "Dice stacking and the rule switches of R-RST-32 and R-RST-33."))
    binder: Binder | None = Field(None, description="The binding side; left out: nobody binds (escapes only).")
    target: Target = Field(..., description="The character being bound.")
    table: EffectTable = Field(default_factory=EffectTable, description="The combat effect table (R-RST-14).")
    composure: Composure = Field(default_factory=Composure, description="Composure pools and the stimulus (R-RST-24).")
    policy: RestraintPolicy = Field(default_factory=RestraintPolicy, description="The target's escape policy.")
    overload: Overload = Field(default_factory=Overload, description="Overload in the duel (R-RST-33).")


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
