"""The formation scenario model (kind = "formation", docs/scenario-format/formation.md) and its compiled
parameters.

The original tables ``[ambush]``, ``[[units]]``, ``[session]`` and ``[run]`` keep their names
and meanings; the extra fields (unit armor, troop size, grapples, summoners, the ``[skirmish]``
table and the target ``[policy]``) are this package's and are documented in
``docs/decisions.md (Formation)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Literal

import numpy as np
from pydantic import Field

from sim.errors import ScenarioError
from sim.formation.rules import ambush_bases, enslaved_reward_dp, session_reward_dp
from sim.scenario import RunSettings, ScenarioBase, Strict

MAX_UNITS = 32
MAX_ROUNDS = 1000
MAX_CHECKS = 10_000
ABILITY_MIN, ABILITY_MAX = -100, 200

# Encodings shared by the reference and the kernel.
SIDES = ("A", "B")
AREAS = ("front", "back")  # 0 front, 1 back (R-MDK-6)
ATTACKS = ("melee", "ranged", "magic")  # R-MDK-6
GRAPPLES = ("none", "assault", "training", "service")  # R-MDK-10
FRONT, BACK = 0, 1
MELEE, RANGED, MAGIC = 0, 1, 2
G_NONE, G_ASSAULT, G_TRAINING, G_SERVICE = 0, 1, 2, 3

class Ambush(Strict):
    """R-MDK-12 / R-MDK-20: the opposed ambush check."""

    ambusher_athletics: int = Field(7, ge=ABILITY_MIN, le=ABILITY_MAX, description=(  # 運動
        "Athletics (undou) of the ambushing party's representative."))
    powered_armor: int = Field(0, ge=0, le=1000, description=(
        "Ambushers in powered armor: -2 each; all of the party: no ambush possible."))
    party_size: int = Field(4, ge=1, le=1000, description="Members of the ambushing party.")
    defender_information: int = Field(7, ge=ABILITY_MIN, le=ABILITY_MAX, description=(  # 情報
        "Information (jouhou) of the defending party's representative."))
    super_perception: int = Field(0, ge=0, le=1000, description=(
        "Super-perception monsters among the defenders: +2 each."))
    side: Literal["A", "B"] = Field("A", description=(  # which [[units]] side ambushes in the skirmish
        "Which side of [[units]] ambushes in the skirmish."))


class Unit(Strict):
    """One unit of the formation (R-MDK-4 .. R-MDK-11)."""

    side: Literal["A", "B"] = Field("A", description="The unit's side.")
    name: str = Field(..., min_length=1, max_length=100, description="Unique name, used in reports.")
    area: Literal["front", "back"] = Field("front", description="Starting area (R-MDK-6).")
    attack: Literal["melee", "ranged", "magic"] = Field("melee", description=(
        "The unit's attack: melee, ranged, or magic (any area without penalty)."))
    # R-MDK-6: the attack types the unit has; the default is the single ``attack``
    attacks: list[Literal["melee", "ranged", "magic"]] | None = Field(None, min_length=1, max_length=3, description=(
        "The attack types the unit has; it picks one before each attack (R-MDK-6); left out: [attack]."))
    combat: int = Field(7, ge=ABILITY_MIN, le=ABILITY_MAX, description=(  # 戦闘
        "Combat (sentou), the attack roll's ability."))
    evade: int = Field(5, ge=ABILITY_MIN, le=ABILITY_MAX, description="The defender's ability against attacks.")
    damage: int = Field(3, ge=0, le=10_000, description="Damage of a hit before armor.")
    hp: int = Field(10, ge=1, le=100_000, description="Hit points; at 0 the unit is out.")
    stars: int = Field(1, ge=0, le=50, description="Rank in stars: armor 3 per star for monsters, DP rewards.")
    troop: bool = Field(False, description="A troop-sized unit (R-MDK-8).")
    summoned: bool = Field(False, description="A summoned monster: no armor (R-MDK-4).")
    # additions (docs/decisions.md (Formation))
    monster: bool = Field(True, description="A monster: armor 3 per star unless summoned (R-MDK-4).")
    armor: int | None = Field(None, ge=0, le=10_000, description=(  # explicit armor replaces ★×3
        "Explicit armor, replacing 3 per star."))
    armor_stripped: bool = Field(False, description=(  # R-MDK-4 armor-stripping magic: halved, round up
        "Armor-stripping magic: armor halved, rounded up."))
    troop_size: int = Field(1, ge=1, le=1000, description=(  # R-MDK-8, only read when troop = true
        "Size of a troop (compared with the enemy front's troops); read only when troop = true."))
    super_perception: bool = Field(False, description=(  # R-MDK-12: acts in the ambushed round
        "A super-perception monster: acts normally in an ambushed round."))
    grapple: Literal["none", "assault", "training", "service"] = Field("none", description=(  # R-MDK-10
        "The contact action the unit uses instead of attacking: none, assault, training or service (R-MDK-10)."))
    stamina: int = Field(5, ge=ABILITY_MIN, le=ABILITY_MAX, description=(  # 体力, leaving an assault grapple
        "Stamina (tairyoku), to leave an assault grapple."))
    resolve: int = Field(5, ge=ABILITY_MIN, le=ABILITY_MAX, description=(  # 自尊, leaving a training grapple
        "Self-respect (jison), to leave a training grapple."))
    summoner: str = Field("", max_length=100, description=(  # R-MDK-5: enters when this unit calls it
        "Name of the unit that calls this one (R-MDK-5); empty: on the field from the start."))
    slave: bool = Field(False, description=(  # R-MDK-5
        "A slave monster: may withdraw to the dark prison (R-MDK-5, policy.withdraw_below)."))


class Session(Strict):
    """R-MDK-3 / R-MDK-21: one session's DP income."""

    checks: int = Field(40, ge=0, le=MAX_CHECKS, description="Dark-dice checks rolled in a session (each six: DP).")
    stars: list[Annotated[int, Field(ge=0, le=50)]] = Field(
        default_factory=lambda: [1, 1, 1, 1], max_length=100,
        description="The PCs' stars: a successful session gives each 3 DP per star (R-MDK-3).")
    # R-MDK-3 / R-MDK-21: the stars of the opponents enslaved in the session (★ × 3 DP each)
    enslaved_stars: list[Annotated[int, Field(ge=0, le=50)]] = Field(default_factory=list, max_length=100, description=(
        "Stars of the opponents enslaved in a session: 3 DP per star each (R-MDK-3)."))


class Skirmish(Strict):
    """The skirmish (R-MDK-14); every choice the rules leave open is a field here."""

    enabled: bool = Field(True, description="Simulate the skirmish (needs a unit of each side on the field).")
    max_rounds: int = Field(10, ge=1, le=MAX_ROUNDS, description="Rounds before the skirmish ends undecided.")
    order: Literal["listed", "combat"] = Field("listed", description=(
        "Acting order: as listed, or by combat (highest first, ties as listed)."))
    damage_model: Literal["flat", "margin"] = Field("flat", description=(
        "flat: a hit deals damage - armor; margin: damage + success margin - armor."))
    min_damage: int = Field(1, ge=0, le=10_000, description="Least damage a hit deals.")
    ambush: bool = Field(True, description=(  # start with the R-MDK-12 ambush check of [ambush]
        "Start with the ambush check of [ambush]."))
    focus_target: int = Field(5, ge=ABILITY_MIN, le=ABILITY_MAX, description=(  # leaving a training grapple
        "Target number of the focus check that ends a training grapple."))


class FormationRules(Strict):
    """Rule switches of the formation kind (docs/rules/formation.md)."""

    attack_types: Literal["both", "listed"] = Field("both", description=(  # R-MDK-6 (revised 2026-12)
        "both: every physical attacker without an `attacks` list has melee and ranged and chooses before each "
        "attack (the seed); listed: a unit has exactly its `attacks`, or its single `attack` (the earlier reading)."))
    grapple_penalty: Literal["area", "grapple_only"] = Field("area", description=(  # R-MDK-10 (second round)
        "area: inside a grapple the -2 adds to the R-MDK-6 penalty of the attack type used at the partner, and a "
        "held unit picks its best type at the partner (the seed); grapple_only: -2 only, with the unit's first "
        "type (the earlier reading)."))


class FormationPolicy(Strict):
    """The skirmish policy (docs/decisions.md (Formation)).

    ``choice``: how a unit picks attack type and target (R-MDK-6): the best expected damage after
    penalties (``expected_damage``) or the smallest penalty (``min_penalty``, the reading before
    issue 18); ``name`` breaks ties among the best targets. ``movement`` (R-MDK-11): ``fixed`` units
    keep their areas, ``best`` units move to the area where their best action (an attack or a grapple
    attempt) is best, ``best_attack`` weighs attacks only.
    ``dismiss_below`` (R-MDK-5): a summon below this fraction of its hp is dismissed when its master has
    another summon waiting (off when absent).
    ``withdraw_below`` (R-MDK-5): a slave monster below this fraction of its hp withdraws to the
    dark prison with its own action (off when absent); ``recall_above`` (R-MDK-5): its master calls a withdrawn
    slave back (the master's action) when its hp is above this fraction of its hp (off when absent)."""

    name: Literal["greedy", "first", "random"] = Field("greedy", description=(
        "Tie-break among the targets with the least penalty: greedy, first or random."))
    choice: Literal["expected_damage", "min_penalty"] = Field("expected_damage", description=(
        "How a unit picks attack type and target (R-MDK-6): expected_damage or min_penalty."))
    movement: Literal["fixed", "best", "best_attack"] = Field("best", description=(  # R-MDK-11 (revised 2026-12)
        "best: units move (no action) to the area where their best action (an attack, or a grapple attempt for a "
        "grappler) does best (R-MDK-11, the seed); best_attack: the same weighing attacks only (the first round of "
        "the 2026-12 revision); fixed: units keep their areas (the earlier reading)."))
    withdraw_below: float | None = Field(None, gt=0, le=1, description=(
        "A slave monster below this fraction of its hp withdraws to the dark prison (R-MDK-5); left out: never."))
    recall_above: float | None = Field(None, ge=0, lt=1, description=(  # R-MDK-5 (revised 2026-12)
        "A withdrawn slave whose hp is above this fraction of its hp is called back by its master (the master's "
        "action, R-MDK-5); left out: never called back."))
    dismiss_below: float | None = Field(None, gt=0, le=1, description=(  # R-MDK-5 (second round)
        "A summon in combat below this fraction of its hp is dismissed (no action) when its master has another "
        "summon waiting; the master may call the next one with its action (R-MDK-5); left out: never."))


class Scenario(ScenarioBase):
    """kind = "formation" (docs/rules/formation.md)."""

    kind: Literal["formation"] = Field(..., description="The rule system: ambush, formation and DP.")
    run: RunSettings = Field(default_factory=RunSettings, description="Runs and seed.")
    ambush: Ambush = Field(default_factory=Ambush, description="The opposed ambush check (R-MDK-12, R-MDK-20).")
    units: list[Unit] = Field(default_factory=list, max_length=MAX_UNITS, description=(
        "The units of both sides, in acting order when skirmish.order = listed."))
    session: Session = Field(default_factory=Session, description="DP income of one session (R-MDK-21).")
    skirmish: Skirmish = Field(default_factory=Skirmish, description="The skirmish and its damage model.")
    policy: FormationPolicy = Field(default_factory=FormationPolicy, description="Target choice in the skirmish.")
    rules: FormationRules = Field(default_factory=FormationRules, description="Rule switches (R-MDK-6, R-MDK-10).")


def check_scenario(s: Scenario) -> None:
    """Cross-field checks, each naming the dotted key of the offending value."""
    names = [u.name for u in s.units]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ScenarioError(f"expected unique unit names; given {name!r} twice", key=f"units.{i}.name")
    by_name = {u.name: u for u in s.units}
    for i, u in enumerate(s.units):
        if not u.summoner:
            continue
        master = by_name.get(u.summoner)
        if master is None:
            raise ScenarioError(f"expected the name of a unit; given {u.summoner!r}", key=f"units.{i}.summoner")
        if master.side != u.side:
            raise ScenarioError("expected a summoner on the unit's own side", key=f"units.{i}.summoner")
        if master.summoner:
            raise ScenarioError("a summoner must itself be on the field at the start (no chains)",
                                key=f"units.{i}.summoner")
    pol = s.policy
    if pol.recall_above is not None:
        if pol.withdraw_below is None:
            raise ScenarioError("recall_above needs policy.withdraw_below (only a withdrawn slave is called back)",
                                key="policy.recall_above")
        if pol.recall_above >= pol.withdraw_below:
            raise ScenarioError(f"expected recall_above below withdraw_below ({pol.withdraw_below}); given "
                                f"{pol.recall_above} (a withdrawn slave's hp is below withdraw_below)",
                                key="policy.recall_above")
    _check_masterless_slaves(s)
    for i, u in enumerate(s.units):
        if u.attacks is not None and len(set(u.attacks)) != len(u.attacks):
            raise ScenarioError(f"expected each attack type once; given {u.attacks!r}", key=f"units.{i}.attacks")


def _check_masterless_slaves(s: Scenario) -> None:
    """R-MDK-5 (second round): a slave with no master in the scenario belongs to its side, and only one slave is
    in the combat (「戦闘に参加できるのは一体のみ」): a side with two or more such slaves is refused."""
    seen: dict[str, str] = {}
    for i, u in enumerate(s.units):
        if not (u.slave and not u.summoner):
            continue
        if u.side in seen:
            raise ScenarioError(f"expected at most one slave without a summoner on side {u.side} (R-MDK-5: one "
                                f"slave in the combat); given {seen[u.side]!r} and {u.name!r}", key=f"units.{i}.slave")
        seen[u.side] = u.name


# --------------------------------------------------------------------------------------------
# compiled parameters


def unit_armor(u: Unit) -> int:
    """R-MDK-4: a monster has armor ★×3, a summoned monster none; stripping halves it, round up."""
    if u.armor is not None:
        base = u.armor
    elif u.monster and not u.summoned:
        base = 3 * u.stars
    else:
        base = 0
    if u.armor_stripped:
        base = -(-base // 2)  # round up (R-MDK-4 overrides R-GEN-6 flooring)
    return base


@dataclass(frozen=True)
class Params:
    """The validated scenario as flat arrays (index = unit in file order)."""

    names: tuple[str, ...]
    side: np.ndarray  # int8 0 = A, 1 = B
    area: np.ndarray  # int8 FRONT / BACK
    attack: np.ndarray  # int8 MELEE / RANGED / MAGIC: the first listed attack type
    attacks: np.ndarray  # int8 bit mask of the attack types (1 melee, 2 ranged, 4 magic), R-MDK-6
    combat: np.ndarray  # int32
    evade: np.ndarray
    damage: np.ndarray
    hp: np.ndarray
    armor: np.ndarray
    stars: np.ndarray
    troop: np.ndarray  # bool
    troop_size: np.ndarray
    super_perception: np.ndarray  # bool
    grapple: np.ndarray  # int8 G_*
    stamina: np.ndarray
    resolve: np.ndarray
    master: np.ndarray  # int16, -1 = on the field at the start
    slave: np.ndarray  # bool, R-MDK-5
    withdraw_hp: np.ndarray  # int32: a slave with hp below this withdraws (0 = never), R-MDK-5
    recall_hp: np.ndarray  # int32: a withdrawn slave with hp at least this is called back (0 = never), R-MDK-5
    dismiss_hp: np.ndarray  # int32: a summon with hp below this is dismissed (0 = never), R-MDK-5
    companions: tuple[tuple[int, ...], ...]  # per unit, the units it calls, in file order
    order: tuple[int, ...]  # acting order
    # ambush and session
    ambusher_base: int
    defender_base: int
    ambush_possible: bool
    ambush_side: int
    use_ambush: bool
    checks: int
    reward_dp: int
    # skirmish
    skirmish: bool
    max_rounds: int
    margin_damage: bool
    min_damage: int
    focus_target: int
    policy: str
    choice: str  # "expected_damage" | "min_penalty"
    movement: str  # "fixed" | "best" | "best_attack"
    grapple_area: bool  # R-MDK-10: the area penalty of the attack type at the partner adds to the -2

    @property
    def n_units(self) -> int:
        return len(self.names)


def compile_params(s: Scenario) -> Params:
    """The validated scenario as flat arrays: the units' columns, who calls whom and the acting order, then the
    ambush, session and skirmish settings."""
    units = s.units
    columns = _unit_columns(s)
    master = columns["master"]
    companions = tuple(tuple(k for k in range(len(units)) if master[k] == j) for j in range(len(units)))
    if s.skirmish.order == "combat":
        order = tuple(sorted(range(len(units)), key=lambda i: (-units[i].combat, i)))
    else:
        order = tuple(range(len(units)))
    a_base, d_base, possible = ambush_bases(s.ambush)
    return Params(
        names=tuple(u.name for u in units),
        **columns,
        companions=companions,
        order=order,
        ambusher_base=a_base,
        defender_base=d_base,
        ambush_possible=possible,
        ambush_side=SIDES.index(s.ambush.side),
        use_ambush=bool(s.skirmish.ambush),
        checks=s.session.checks,
        reward_dp=session_reward_dp(s.session.stars) + enslaved_reward_dp(s.session.enslaved_stars),
        # the skirmish needs a unit of each side on the field at the start
        skirmish=bool(s.skirmish.enabled and all(any(u.side == side and not u.summoner for u in units)
                                                 for side in SIDES)),
        max_rounds=s.skirmish.max_rounds,
        margin_damage=s.skirmish.damage_model == "margin",
        min_damage=s.skirmish.min_damage,
        focus_target=s.skirmish.focus_target,
        policy=s.policy.name,
        choice=s.policy.choice,
        movement=s.policy.movement,
        grapple_area=s.rules.grapple_penalty == "area",
    )


def _unit_columns(s: Scenario) -> dict[str, np.ndarray]:
    """One array per unit field, in file order (the encodings above)."""
    units = s.units
    idx = {u.name: i for i, u in enumerate(units)}

    def arr(values, dtype):
        return np.array(list(values), dtype=dtype)

    types = [_attack_types(u, s.rules.attack_types) for u in units]
    frac, recall, dismiss = s.policy.withdraw_below, s.policy.recall_above, s.policy.dismiss_below
    return dict(
        side=arr((SIDES.index(u.side) for u in units), np.int8),
        area=arr((AREAS.index(u.area) for u in units), np.int8),
        attack=arr((ATTACKS.index(t[0]) for t in types), np.int8),
        attacks=arr((sum(1 << ATTACKS.index(x) for x in t) for t in types), np.int8),
        combat=arr((u.combat for u in units), np.int32),
        evade=arr((u.evade for u in units), np.int32),
        damage=arr((u.damage for u in units), np.int32),
        hp=arr((u.hp for u in units), np.int32),
        armor=arr((unit_armor(u) for u in units), np.int32),
        stars=arr((u.stars for u in units), np.int32),
        troop=arr((u.troop for u in units), bool),
        troop_size=arr((u.troop_size for u in units), np.int32),
        super_perception=arr((u.super_perception for u in units), bool),
        grapple=arr((GRAPPLES.index(u.grapple) for u in units), np.int8),
        stamina=arr((u.stamina for u in units), np.int32),
        resolve=arr((u.resolve for u in units), np.int32),
        master=arr((idx[u.summoner] if u.summoner else -1 for u in units), np.int16),
        slave=arr((u.slave for u in units), bool),
        withdraw_hp=arr((_withdraw_hp(u, frac) for u in units), np.int32),
        recall_hp=arr((_recall_hp(u, recall) for u in units), np.int32),
        dismiss_hp=arr((_dismiss_hp(u, dismiss) for u in units), np.int32),
    )


def _attack_types(u: Unit, rule: str) -> list[str]:
    """R-MDK-6 (revised 2026-12): every physical attacker has melee and ranged unless it lists its types
    (``rules.attack_types = "both"``); the first is the unit's own attack."""
    if u.attacks is not None:
        return list(u.attacks)
    if rule == "both" and u.attack != "magic":
        return [u.attack] + [t for t in ("melee", "ranged") if t != u.attack]
    return [u.attack]


def _withdraw_hp(u: Unit, frac) -> int:
    """R-MDK-5: a slave withdraws below this hp (0: never). hp < frac x max hp <=> hp < ceil(frac x max hp)
    for integer hp."""
    return math.ceil(frac * u.hp) if (frac is not None and u.slave) else 0


def _recall_hp(u: Unit, recall) -> int:
    """R-MDK-5: a withdrawn slave is called back from this hp (0: never). hp > frac x max hp <=>
    hp >= floor(frac x max hp) + 1 for integer hp."""
    return math.floor(recall * u.hp) + 1 if (recall is not None and u.slave) else 0


def _dismiss_hp(u: Unit, frac) -> int:
    """R-MDK-5 dismissal: a summon (a called unit that is not a slave) is dismissed below this hp (0: never);
    hp < frac x max hp <=> hp < ceil(frac x max hp) for integer hp."""
    return math.ceil(frac * u.hp) if (frac is not None and u.summoner and not u.slave) else 0
