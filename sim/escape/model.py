"""The escape scenario model (kind = "escape"; docs/scenario-format/escape.md) and its compiled parameters."""

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
#: the solved policy: optimal play for escape_rate (sim.escape.optimal), simulated on the reference engine
OPTIMAL_POLICY = "optimal"
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
    """Run defaults; --runs and --seed override runs and seed."""

    max_rounds: int = Field(12, ge=1, le=MAX_ROUNDS, description=(
        "Rounds before the challenge ends in a timeout (R-ESC-5)."))


class TierOverride(Strict):
    """A change to one tier of the ladder (R-ESC-2); a key left out keeps the default."""

    dc: int | None = Field(None, ge=-100, le=200, description=(
        "The tier's DC (defaults: simple 10, light 12, moderate 15, heavy 18, severe 21, complete 24, "
        "despair 26); not allowed for utter."))
    becomes: BecomesId | None = Field(None, description=(
        "What a successful check turns the restraint into (defaults: simple, light -> free; moderate -> simple; "
        "heavy -> light; severe -> heavy; complete -> severe; despair -> complete); not allowed for utter."))


class EscapeRules(Strict):
    """Rule settings of the escape challenge."""

    dice_stacking: DiceStacking = Field("cancel", description=(
        "How several bonus and penalty dice combine (R-GEN-4): cancel (any of both give a plain roll, several of "
        "one kind count as one) or pool (each extra die adds a d20; the net count decides)."))
    tiers: dict[TierId, TierOverride] = Field(default_factory=dict, description=(
        "Overrides of the tier ladder, keyed by tier id: [rules.tiers.heavy] dc = 17 (R-ESC-2)."))
    volume1_features: bool = Field(True, description=(
        "The volume-1 class features act in the challenge (R-ESC-14a: rogue, druid, ranger in favoured terrain, "
        "barbarian rage; R-ESC-14b: channel, inspire and meditate as class actions). false: the reading before "
        "2026-12, without them."))
    self_untie: Literal["arms_free", "hands_free"] = Field("arms_free", description=(
        "Who may untie itself (R-ESC-10b): arms_free (arms and body at 0; bound fingers do not stop it, the seed's "
        "reading) or hands_free (arms, fingers and body at 0, the reading before 2026-12)."))
    legs_hinder: bool = Field(True, description=(
        "Bound legs hinder search and stealth (R-ESC-10c): a character with legs at tier t searches against "
        "search.dc + t x search.legs_dc, never finds an item marked needs_free_legs, and draws attention.legs more "
        "with each action that needs it to move (a search, an assist without mage hand, an untie of another). "
        "false: the reading before the second round of 2026-12, without it."))


class Goal(Strict):
    """What counts as escaped (R-ESC-5)."""

    slots: list[SlotId] = Field(default_factory=lambda: list(SLOTS), description=(
        "The slots every character must have free for the party to escape; each slot at most once."))


class Attention(Strict):
    """The watch (R-ESC-9a): actions draw attention; reaching the limit means caught."""

    limit: int | None = Field(None, ge=1, le=1_000_000, description=(
        "Attention at which the party is caught; left out: no limit."))
    assist: int = Field(2, ge=0, le=10_000, description="Attention drawn by each assist and each untie of another.")
    guide: int = Field(1, ge=0, le=10_000, description="Attention drawn by each guide.")
    search: int = Field(0, ge=0, le=10_000, description="Attention drawn by each search.")
    per_round: int = Field(0, ge=0, le=10_000, description="Attention added every round, from round 1.")
    legs: int = Field(1, ge=0, le=10_000, description=(
        "Attention drawn in addition by each search, assist without mage hand and untie of another made with the "
        "legs bound (R-ESC-10c; rules.legs_hinder)."))


class Item(Strict):
    """An item a successful search can find (R-ESC-10)."""

    name: str = Field(..., min_length=1, max_length=100, description="Unique name of the item.")
    kind: Literal["bonus", "release"] = Field("bonus", description=(
        "bonus: +value to the finder's escape checks for the rest of the challenge; release: frees one "
        "restraint of tier <= max_tier when used (consumed)."))
    value: int = Field(1, ge=-100, le=100, description="The bonus of a bonus item.")
    weight: float = Field(1.0, gt=0, le=1e9, description="Relative chance of being drawn from the pool.")
    max_tier: TierId = Field("severe", description="The highest tier a release item frees.")
    count: int | None = Field(None, ge=0, le=1_000_000, description=(
        "How many exist (the item runs out); left out: unlimited."))
    needs_free_legs: bool = Field(False, description=(
        "Never found by a character whose legs are bound (R-ESC-10c; rules.legs_hinder): it draws only among the "
        "items it can find, and this one stays in the pool."))


class Search(Strict):
    """Searching the cell (R-ESC-10); without this table nobody searches."""

    dc: int = Field(14, ge=-100, le=200, description=(
        "DC of the search check (d20 + wis mod, + proficiency if the character has perception)."))
    legs_dc: int = Field(1, ge=0, le=100, description=(
        "Added to the DC for each tier of the searcher's bound legs (R-ESC-10c; rules.legs_hinder)."))
    items: list[Item] = Field(default_factory=list, description=(
        "The weighted pool a successful search draws one item from; an empty pool finds nothing."))


class Rest(Strict):
    """Resting (R-ESC-10a)."""

    recovery: str = Field("1d6", description=(
        "Composure a rest restores, a dice expression such as \"1d6\" or \"1d4+con\" (R-GEN-5)."))
    _v = field_validator("recovery")(_dice_field)


class Harness(Strict):
    """The harness slot (R-ESC-11)."""

    damage: str = Field("1d4", description=(
        "Composure damage the wearer of a harness takes in each round it struggles (dice expression)."))
    _v = field_validator("damage")(_dice_field)


class Stimulus(Strict):
    """A stimulus that hits every character every round (R-ESC-12, R-ESC-13); without this table, none."""

    damage: str = Field("1d4", description="Composure damage per character per round (dice expression).")
    kind: Literal["damage", "craving"] = Field("damage", description=(
        "damage, or craving: the damage also lowers the composure maximum by the same amount for the rest "
        "of the challenge."))
    _v = field_validator("damage")(_dice_field)


class Overload(Strict):
    """What happens when composure reaches 0 (R-ESC-12)."""

    dazed_rounds: int = Field(1, ge=0, le=MAX_ROUNDS, description=(
        "Rounds a character is dazed after an overload (no action, streaks break)."))





_SLOT_TEXT = "The tier of the restraint on this slot at the start; left out: free."


class Restraints(Strict):
    """The restraints a character starts with: slot = tier id (R-ESC-1, R-ESC-2)."""

    arms: TierId | None = Field(None, description=_SLOT_TEXT)
    fingers: TierId | None = Field(None, description=_SLOT_TEXT + " Blocks assists and unties; penalises dex.")
    body: TierId | None = Field(None, description=_SLOT_TEXT + " A full-body wrap: only the body, only with str.")
    legs: TierId | None = Field(None, description=_SLOT_TEXT)
    harness: TierId | None = Field(None, description=_SLOT_TEXT + " A rope net: composure damage when struggling.")
    mask: TierId | None = Field(None, description=_SLOT_TEXT + " Breath-restricting: penalty die on str checks.")
    gag: TierId | None = Field(None, description=_SLOT_TEXT + " No guide, blessing or mage-hand bonus.")
    blindfold: TierId | None = Field(None, description=_SLOT_TEXT + " No search, no guide.")
    earplugs: TierId | None = Field(None, description=_SLOT_TEXT + " Cannot be guided.")


class Character(Strict):
    """One member of the party, in party order (the order of every tie)."""

    name: str = Field(..., min_length=1, max_length=100, description="Unique name, used in reports.")
    class_: ClassId = Field(..., alias="class", description=(
        "The character's class: decides class skills (R-ESC-14) and the composure die (R-RST-20)."))
    level: int = Field(1, ge=1, le=20, description="Character level (proficiency bonus, composure, breath points).")
    scores: Scores = Field(..., description="The six ability scores.")
    perception: bool = Field(False, description="Proficient in perception: adds proficiency to search checks.")
    composure_ability: Literal["con", "wis", "cha"] | None = Field(None, description=(
        "The ability whose modifier feeds the composure maximum; left out: the default of R-RST-25."))
    composure: int | None = Field(None, ge=1, le=100_000, description=(
        "Composure maximum, replacing the one computed from class and level."))
    favoured_terrain: bool = Field(False, description=(
        "A ranger in its favoured terrain: proficiency-bonus times per challenge it adds twice its proficiency "
        "bonus to one escape check (R-ESC-14a); rangers only."))
    restraints: Restraints = Field(default_factory=Restraints, description="Starting restraints, slot = tier id.")


class EscapePolicy(PolicySettings):
    """Who does what each round (R-ESC-20, R-ESC-21, docs/policies.md)."""

    name: str = Field("greedy", description=(
        "greedy (the reference, R-ESC-20), arms_first, team (R-ESC-21), optimal (the solved best play for the "
        "escape rate, docs/exact.md), or \"package.module:callable\" for your own policy (see docs/policies.md)."))


class Scenario(ScenarioBase):
    """kind = "escape" (docs/rules/escape.md)."""

    kind: Literal["escape"] = Field(..., description="The rule system: a party escaping restraints in a cell.")
    run: EscapeRun = Field(default_factory=EscapeRun, description="Runs, seed and the round limit.")
    rules: EscapeRules = Field(default_factory=EscapeRules, description=(
        "Dice stacking, the tier ladder and the rule switches."))
    goal: Goal = Field(default_factory=Goal, description="The slots that must be free to escape.")
    attention: Attention = Field(default_factory=Attention, description="The watch and its limit.")
    search: Search | None = Field(None, description="Search DC and item pool; left out: nobody searches.")
    rest: Rest = Field(default_factory=Rest, description="Composure recovered by resting.")
    harness: Harness = Field(default_factory=Harness, description="Damage of the harness slot.")
    stimulus: Stimulus | None = Field(None, description="Composure damage every round; left out: none.")
    overload: Overload = Field(default_factory=Overload, description="Rounds dazed after an overload.")
    party: list[Character] = Field(..., min_length=1, max_length=MAX_PARTY, description=(
        "The characters, one [[party]] table each, in party order."))
    policy: EscapePolicy = Field(default_factory=EscapePolicy, description="The policy choosing every action.")


def check(s: Scenario) -> None:
    """Cross-field checks with the dotted key of the offending value."""
    names = [c.name for c in s.party]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ScenarioError(f"expected unique character names; given {name!r} twice", key=f"party.{i}.name")
    for i, c in enumerate(s.party):
        if c.favoured_terrain and c.class_ != "ranger":
            raise ScenarioError(f"favoured terrain is a ranger feature (R-ESC-14a); {c.name!r} is a {c.class_}",
                                key=f"party.{i}.favoured_terrain")
    for tier, override in s.rules.tiers.items():
        if tier == "utter" and (override.dc is not None or override.becomes is not None):
            raise ScenarioError("the utter tier takes no dc or becomes override (R-ESC-33)", key="rules.tiers.utter")
    name = s.policy.name
    known = (*BUILTIN_POLICIES, OPTIMAL_POLICY)
    if name not in known and not re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", name):
        near = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise ScenarioError(f"expected a built-in policy ({', '.join(BUILTIN_POLICIES)}), {OPTIMAL_POLICY!r} or "
                            f"'package.module:callable'; given {name!r}{hint}", key="policy.name")
    if len(set(s.goal.slots)) != len(s.goal.slots):
        raise ScenarioError("expected each slot at most once", key="goal.slots")
    if s.search is not None:
        names = [it.name for it in s.search.items]
        for i, name in enumerate(names):
            if name in names[:i]:
                raise ScenarioError(f"expected unique item names; given {name!r} twice", key=f"search.items.{i}.name")
