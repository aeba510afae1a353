"""The campus scenario model (kind = "campus"; docs/scenario-format/campus.md, docs/rules/campus.md).

Every field is declared with its type and range here; cross-field checks (unknown ids, duplicate
names, a team given twice) live in :func:`check_scenario`, which names the dotted key.
"""

from __future__ import annotations

import difflib
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from sim.errors import ScenarioError
from sim.scenario import RunSettings, ScenarioBase, Strict

STANCES = ("fight", "flee", "hide")  # R-CAM-1, index order = tie order fight, flee, hide
Stance = Literal["fight", "flee", "hide"]
MAX_TURNS = 1000
MAX_PARTY = 32
MAX_LOCATIONS = 200
MAX_SPAWN_SLOTS = 200
BIG = 1_000_000


class CampusRules(Strict):
    """[rules] (R-CAM-5, R-CAM-9, R-CAM-11, R-CAM-15, R-CAM-50)."""

    turns: int = Field(12, ge=1, le=MAX_TURNS, description="Turns of the game (R-CAM-5).")
    team_max: int = Field(3, ge=2, le=MAX_PARTY, description="Most members of one team in a team battle (R-CAM-9).")
    vitality: int = Field(3, ge=1, le=BIG, description="Starting vitality of a PC that does not set its own.")
    escape_offset: int = Field(0, ge=-BIG, le=BIG, description=(
        "Added to the turn number to give a captive's escape target (R-CAM-11)."))
    miso_bomb: bool = Field(False, description="A PC put out of the game returns as an adversary (R-CAM-15).")
    options: Literal["all"] | int = Field("all", description=(
        "Movement options each turn: \"all\" locations, or an integer k: k locations drawn for the party."))
    # R-CAM-6: "until_cleared" (the seed: repeat until no adversary or no free PC is left at the location) or
    # "once" (each PC at most once a turn, the reading before the revision, kept for comparison)
    fights: Literal["until_cleared", "once"] = Field("until_cleared", description=(
        "How often PCs fight at a location in a turn (R-CAM-6): until_cleared (until no adversary or no free PC is "
        "left) or once (each PC at most once a turn, teams first)."))
    # R-CAM-25a / R-CAM-57: true (the seed, revised 2026-12) or false (the reading before: miso bombs take no
    # part in missions, kept for comparison)
    miso_in_missions: bool = Field(True, description=(
        "A miso bomb at a mission's location takes part, when some miso bomb in play holds early ears, and lowers "
        "the mission's total by its value (R-CAM-25a); false: miso bombs take no part in missions (the reading "
        "before the revision)."))

    @model_validator(mode="after")
    def _options_positive(self):
        if isinstance(self.options, int) and self.options < 1:
            raise ValueError(f"options: expected \"all\" or an integer >= 1; given {self.options}")
        return self


class Location(Strict):
    """A place on the campus."""

    id: str = Field(..., min_length=1, max_length=100, description="Unique id, used by spawns and missions.")
    exit: bool = Field(False, description="A PC still free here after its confrontations leaves and clears (R-CAM-26).")
    opens_on: int = Field(1, ge=1, le=MAX_TURNS, description="The first turn an exit works.")
    capture_room: bool = Field(False, description="Captured PCs are held here (R-CAM-8); at least one is needed.")
    escape_offset: int | None = Field(None, ge=-BIG, le=BIG, description=(
        "A capture room's own escape offset, replacing rules.escape_offset."))


class Abilities(Strict):
    """R-CAM-1: three non-negative abilities (required for PCs)."""

    fight: int = Field(..., ge=0, le=BIG, description="Base ability in the fight stance.")
    flee: int = Field(..., ge=0, le=BIG, description="Base ability in the flee stance.")
    hide: int = Field(..., ge=0, le=BIG, description="Base ability in the hide stance.")

    def as_tuple(self) -> tuple[int, int, int]:
        return (self.fight, self.flee, self.hide)


class AdversaryAbilities(Strict):
    """An adversary's three abilities (R-CAM-1)."""

    fight: int = Field(0, ge=0, le=BIG, description="Ability in the fight stance.")
    flee: int = Field(0, ge=0, le=BIG, description="Ability in the flee stance.")
    hide: int = Field(0, ge=0, le=BIG, description="Ability in the hide stance.")

    def as_tuple(self) -> tuple[int, int, int]:
        return (self.fight, self.flee, self.hide)


class StanceBonus(Strict):
    """Additive bonuses per stance, added before multipliers (R-CAM-3)."""

    fight: int = Field(0, ge=-BIG, le=BIG, description="Added to the fight value.")
    flee: int = Field(0, ge=-BIG, le=BIG, description="Added to the flee value.")
    hide: int = Field(0, ge=-BIG, le=BIG, description="Added to the hide value.")

    def as_tuple(self) -> tuple[int, int, int]:
        return (self.fight, self.flee, self.hide)


class StanceMultiplier(Strict):
    """Multipliers per stance, applied after additions; the product is floored once (R-CAM-3)."""

    fight: float = Field(1.0, gt=0, le=1000, description="Multiplies the fight value.")
    flee: float = Field(1.0, gt=0, le=1000, description="Multiplies the flee value.")
    hide: float = Field(1.0, gt=0, le=1000, description="Multiplies the hide value.")

    def as_tuple(self) -> tuple[float, float, float]:
        return (self.fight, self.flee, self.hide)


class StanceWeights(Strict):
    """R-CAM-21: stance weights (a missing stance has weight 0)."""

    fight: float = Field(0.0, ge=0, le=1e9, description="Relative weight of drawing fight.")
    flee: float = Field(0.0, ge=0, le=1e9, description="Relative weight of drawing flee.")
    hide: float = Field(0.0, ge=0, le=1e9, description="Relative weight of drawing hide.")

    @model_validator(mode="after")
    def _positive_total(self):
        if self.fight + self.flee + self.hide <= 0:
            raise ValueError("stance weights must not all be 0")
        return self

    def as_tuple(self) -> tuple[float, float, float]:
        return (self.fight, self.flee, self.hide)


class Adversary(Strict):
    """R-CAM-20 adversary template."""

    name: str = Field(..., min_length=1, max_length=100, description="Unique name, used by spawns.")
    abilities: AdversaryAbilities = Field(default_factory=AdversaryAbilities, description="fight, flee, hide.")
    bonus: StanceBonus = Field(default_factory=StanceBonus, description="Additive bonus per stance.")
    multiplier: StanceMultiplier = Field(default_factory=StanceMultiplier, description="Multiplier per stance.")
    stance: StanceWeights | Stance | None = Field(None, description=(  # None: uniform
        "Stance weights drawn each confrontation (R-CAM-21), or one fixed stance name; left out: uniform."))
    reward: int = Field(0, ge=-BIG, le=BIG, description="gp a PC gains for beating it (R-CAM-8).")
    boss: bool = Field(False, description="A boss stays after a confrontation; each group fights it once a turn.")
    capture_room: str | None = Field(None, description=(
        "Id of the capture room its captives go to; left out: the only capture room, or one at random."))


class Spawn(Strict):
    """R-CAM-20 / R-CAM-50 spawn schedule entry."""

    adversary: str = Field(..., description="Name of the adversary template placed.")
    turns: list[int] | None = Field(None, min_length=2, max_length=2, description=(  # None: every turn
        "Inclusive range [first, last] of turns; left out: every turn."))
    locations: Literal["any"] | list[str] = Field("any", description=(
        "Candidate location ids, or \"any\" (every location that is not a capture room)."))
    count: int = Field(1, ge=0, le=MAX_SPAWN_SLOTS, description=(
        "How many adversaries the entry places, each independently (R-CAM-50)."))
    chance: float = Field(1.0, ge=0, le=1, description="Probability that each of them is placed in a turn.")


class Penalty(Strict):
    """R-CAM-25: { vitality = n } or { ability = "hide", amount = n }."""

    vitality: int | None = Field(None, ge=0, le=BIG, description="Vitality lost by every participant.")
    ability: Stance | None = Field(None, description="The ability lowered (give amount too).")
    amount: int | None = Field(None, ge=0, le=BIG, description="How much the ability is lowered.")

    @model_validator(mode="after")
    def _one_form(self):
        if self.vitality is not None:
            if self.ability is not None or self.amount is not None:
                raise ValueError("expected either { vitality = n } or { ability = ..., amount = n }, not both")
        elif self.ability is None or self.amount is None:
            raise ValueError("expected { vitality = n } or { ability = \"fight|flee|hide\", amount = n }")
        return self


class Mission(Strict):
    """R-CAM-25 / R-CAM-56."""

    location: str = Field(..., description="Id of the location where the mission happens.")
    turns: list[int] | None = Field(None, min_length=2, max_length=2, description=(
        "Inclusive range [first, last] of turns; left out: every turn."))
    chance: float = Field(1.0, ge=0, le=1, description="Probability the mission happens, rolled each turn.")
    stance: Stance = Field(..., description="The stance whose values are tested.")
    mode: Literal["sum", "each"] = Field("sum", description=(
        "sum: the present free PCs' values together reach target; each: every one of them does."))
    target: int = Field(..., ge=-BIG, le=BIG, description="The value to reach.")
    reward: int = Field(0, ge=-BIG, le=BIG, description="gp every participant gains on success.")
    penalty: Penalty | None = Field(None, description=(
        "On failure: { vitality = n } or { ability = \"hide\", amount = n }; left out: none."))
    # R-CAM-25a: a mission found by early ears occurs only while a PC with early ears is in the game
    found_by: Literal["early_ears"] | None = Field(None, description=(
        "\"early_ears\": the mission occurs in a turn only if a PC with early ears is in the game at the "
        "preview (R-CAM-25a); left out: it occurs as scheduled."))


SkillKind = Literal["bonus", "multiplier", "team", "early_ears", "nursing", "gp_per_turn"]


class Skill(Strict):
    """R-CAM-30 skills, one flat table per skill (the `kind` decides which keys apply)."""

    kind: SkillKind = Field(..., description=(
        "bonus, multiplier, team, early_ears, nursing or gp_per_turn; decides which other keys apply."))
    stances: list[Stance] | None = Field(None, description=(
        "bonus, multiplier: the stances it applies to; left out: all three."))
    value: int | float | None = Field(None, description=(
        "bonus: +n (integer); multiplier: xk (default 2); gp_per_turn: gp change each turn (integer)."))
    when: Literal["always", "advantage"] | None = Field(None, description=(
        "multiplier: always (default) or advantage (only when the stance beats the opponent's)."))
    name: str | None = Field(None, min_length=1, max_length=100, description="team: the team's name.")

    @model_validator(mode="after")
    def _keys_for_kind(self):
        allowed = {
            "bonus": {"stances", "value"},
            "multiplier": {"stances", "value", "when"},
            "team": {"name"},
            "early_ears": set(),
            "nursing": set(),
            "gp_per_turn": {"value"},
        }[self.kind]
        for key in ("stances", "value", "when", "name"):
            if getattr(self, key) is not None and key not in allowed:
                raise ValueError(f"a {self.kind} skill takes no {key!r}")
        if self.kind == "bonus":
            if not isinstance(self.value, int):
                raise ValueError("a bonus skill needs an integer value")
            if abs(self.value) > BIG:
                raise ValueError(f"bonus value out of range: {self.value}")
        if self.kind == "gp_per_turn" and (not isinstance(self.value, int) or abs(self.value) > BIG):
            raise ValueError("a gp_per_turn skill needs an integer value")
        if self.kind == "multiplier" and self.value is not None and not 0 < self.value <= 1000:
            raise ValueError(f"a multiplier value must be in (0, 1000]; given {self.value}")
        if self.kind == "team" and self.name is None:
            raise ValueError("a team skill needs a name")
        if self.stances is not None and len(set(self.stances)) != len(self.stances):
            raise ValueError("each stance at most once")
        return self


MAX_PURCHASABLE = 50
PurchasableKind = Literal["bonus", "multiplier", "early_ears", "nursing", "gp_per_turn"]


class PurchasableSkill(Strict):
    """R-CAM-9a: a skill PCs may buy with gp (any R-CAM-30 skill but a team: teams are bought with
    ``growth.costs.team``)."""

    name: str = Field(..., min_length=1, max_length=100, description=(
        "The purchase's name, used in policy.buy (no colon)."))
    cost: int = Field(..., ge=0, le=BIG, description="Its price in gp.")
    kind: PurchasableKind = Field(..., description=(
        "bonus, multiplier, early_ears, nursing or gp_per_turn (R-CAM-30); decides which other keys apply."))
    stances: list[Stance] | None = Field(None, description=(
        "bonus, multiplier: the stances it applies to; left out: all three."))
    value: int | float | None = Field(None, description=(
        "bonus: +n (integer); multiplier: xk (default 2); gp_per_turn: gp change each turn (integer)."))
    when: Literal["always", "advantage"] | None = Field(None, description=(
        "multiplier: always (default) or advantage (only when the stance beats the opponent's)."))

    @model_validator(mode="after")
    def _as_skill(self):
        if ":" in self.name:
            raise ValueError("a purchasable skill name without a colon (\"team:NAME\" buys a team)")
        try:  # R-CAM-30's checks of a party skill
            self.as_skill()
        except ValidationError as exc:
            raise ValueError(str(exc.errors()[0]["msg"]).removeprefix("Value error, ")) from None
        return self

    def as_skill(self) -> Skill:
        return Skill(kind=self.kind, stances=self.stances, value=self.value, when=self.when)


class GrowthCosts(Strict):
    """[growth.costs] (R-CAM-9a): the gp price of each purchase; no prices, no purchases."""

    team: int | None = Field(None, ge=0, le=BIG, description=(
        "gp to join a named team (at most rules.team_max members in the game, one team per PC); left out: "
        "team membership cannot be bought."))
    skills: list[PurchasableSkill] = Field(default_factory=list, max_length=MAX_PURCHASABLE, description=(
        "Purchasable skills: { name, cost, kind, ... } with the keys of a party skill (R-CAM-30)."))


class Growth(Strict):
    """[growth] (R-CAM-9a): what gp can buy besides abilities."""

    costs: GrowthCosts = Field(default_factory=GrowthCosts, description=(
        "Prices of skills and team membership in gp (R-CAM-9a)."))


class PartyMember(Strict):
    """A player character, in party order."""

    name: str = Field(..., min_length=1, max_length=100, description="Unique name, used in reports.")
    abilities: Abilities = Field(..., description="Base fight, flee and hide (all three required).")
    vitality: int | None = Field(None, ge=1, le=BIG, description="Starting vitality; left out: rules.vitality.")
    team: str | None = Field(None, min_length=1, max_length=100, description=(
        "Team name: PCs of one team at one location fight together (R-CAM-9)."))
    skills: list[Skill] = Field(default_factory=list, max_length=100, description="Skills (R-CAM-30).")
    # project extension of R-CAM-12: captives this PC never supports (names)
    exclude: list[str] = Field(default_factory=list, max_length=MAX_PARTY, description=(
        "Names of captives this PC never supports as a rescuer (R-CAM-12)."))


#: ``policy.name``: the built-in policies (the settings of [policy]) or the solved table of optimal play
OPTIMAL = "optimal"
POLICY_NAMES = ("builtin", OPTIMAL)


class CampusPolicy(Strict):
    """R-CAM-40 built-in policies."""

    name: str = Field("builtin", max_length=200, description=(
        "builtin (the move/stance/growth/rescue settings below, R-CAM-40) or optimal (the solved table of optimal "
        "play for the clear rate: one PC, within the exact budget; Monte Carlo on the reference engine)."))
    move: Literal["random", "avoid"] = Field("random", description=(
        "Destination: random (uniform among the options) or avoid (no adversary seen, no capture room)."))
    # `equilibrium` (issue 7, docs/decisions.md (Campus)): the PC's exact maximin mix of the stance game against
    # the adversaries seen at its destination (early ears), else against the templates the schedule can place
    # this turn; one uniform draw per PC per turn (sim.campus.stances)
    stance: Literal["fixed", "random", "best", "counter", "equilibrium"] = Field("best", description=(
        "Stance choice: fixed (stance_value), random, best (highest own value), counter (best win chance "
        "against the adversaries seen), equilibrium (maximin mix)."))
    stance_value: Stance = Field("hide", description="The stance of the fixed policy.")
    # the balance audit's restricted play (issue 36; docs/decisions.md "Forbidden stances"): the policy takes the
    # next best stance it may declare by its own ordering; the adversaries' stances (miso bombs too) are untouched
    forbid: list[Stance] = Field(default_factory=list, max_length=2, description=(
        "Stances the PCs may not declare (the balance audit's restricted play): each stance policy then picks "
        "its next best allowed stance by its own ordering (ties fight, flee, hide)."))
    growth: Literal["none", "lowest", "best"] = Field("none", description=(
        "Growth spending: none, lowest (each gp to the lowest ability) or best (all to the best stance's)."))
    rescue: bool = Field(False, description="Free PCs go to capture rooms to rescue captives they can free.")
    # R-CAM-9a: bought in order as soon as affordable, before the rest is spent by the growth rule
    buy: list[str] = Field(default_factory=list, max_length=MAX_PURCHASABLE + 1, description=(
        "What every free PC buys in growth spending, in order, as soon as it can afford it, before spending the "
        "rest by `growth` (R-CAM-9a): names of growth.costs.skills, or \"team:NAME\" to join team NAME."))
    # project option (docs/decisions.md (Campus)): R-CAM-9a spends the rest by the growth rule every turn
    save_for_buy: bool = Field(False, description=(
        "true: a PC that cannot yet afford the next item of `buy` keeps its gp for it instead of spending them "
        "by `growth` (a project option; R-CAM-9a as written spends the rest every turn)."))


class Scenario(ScenarioBase):
    """kind = "campus" (docs/rules/campus.md)."""

    kind: Literal["campus"] = Field(..., description="The rule system: the campus game.")
    run: RunSettings = Field(default_factory=RunSettings, description="Runs (games) and seed.")
    rules: CampusRules = Field(default_factory=CampusRules, description="Turns, teams, vitality, escape, options.")
    locations: list[Location] = Field(..., min_length=1, max_length=MAX_LOCATIONS, description=(
        "The campus: at least one capture room and one location that is not."))
    adversaries: list[Adversary] = Field(default_factory=list, max_length=100, description="Adversary templates.")
    spawns: list[Spawn] = Field(default_factory=list, max_length=MAX_SPAWN_SLOTS, description=(
        "The schedule placing adversaries each turn (R-CAM-20)."))
    missions: list[Mission] = Field(default_factory=list, max_length=200, description="Missions (R-CAM-25).")
    party: list[PartyMember] = Field(..., min_length=1, max_length=MAX_PARTY, description="The player characters.")
    policy: CampusPolicy = Field(default_factory=CampusPolicy, description="The built-in policies (R-CAM-40).")
    growth: Growth = Field(default_factory=Growth, description=(
        "What growth points buy besides abilities: [growth.costs] (R-CAM-9a)."))


def _unknown(kind: str, given: str, valid: list[str], key: str) -> ScenarioError:
    near = difflib.get_close_matches(given, valid, n=1, cutoff=0.5)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    listing = ", ".join(repr(v) for v in valid) or "none"
    return ScenarioError(f"unknown {kind} {given!r}{hint} (valid: {listing})", key=key)


def _check_range(turns: list[int] | None, key: str) -> None:
    if turns is None:
        return
    a, b = turns
    if not 1 <= a <= b <= MAX_TURNS:
        raise ScenarioError(f"expected an inclusive range [first, last] with 1 <= first <= last; given {turns}",
                            key=key)


def _unique(values: list[str], key: str, what: str) -> None:
    for i, v in enumerate(values):
        if v in values[:i]:
            raise ScenarioError(f"expected unique {what}; given {v!r} twice", key=key.format(i=i))


def _team_names(s: Scenario) -> list[str]:
    """The teams the party names (party.team or a team skill), in party order."""
    out: list[str] = []
    for p in s.party:
        for t in [p.team] + [sk.name for sk in p.skills if sk.kind == "team"]:
            if t is not None and t not in out:
                out.append(t)
    return out


def check_scenario(s: Scenario) -> None:
    """Cross-field checks (unknown ids with the nearest valid one, duplicates, teams)."""
    _check_locations(s)
    _check_spawns_and_missions(s)
    _check_party(s)
    _check_purchases(s)
    if ":" in s.policy.name:
        raise ScenarioError("custom policies are not supported for campus; use the built-in "
                            "move/stance/growth/rescue keys (R-CAM-40)", key="policy.name")
    _unique(list(s.policy.forbid), "policy.forbid.{i}", "forbidden stances")
    if s.policy.name not in POLICY_NAMES:
        raise ScenarioError(f"expected policy.name one of {', '.join(repr(n) for n in POLICY_NAMES)}; given "
                            f"{s.policy.name!r}", key="policy.name")


def _check_locations(s: Scenario) -> None:
    """Unique location ids; at least one capture room (R-CAM-8) and one location that is not."""
    loc_ids = [loc.id for loc in s.locations]
    _unique(loc_ids, "locations.{i}.id", "location ids")
    rooms = [loc.id for loc in s.locations if loc.capture_room]
    plain = [loc.id for loc in s.locations if not loc.capture_room]
    for i, loc in enumerate(s.locations):
        if loc.exit and loc.capture_room:
            raise ScenarioError("a location cannot be both an exit and a capture room", key=f"locations.{i}.exit")
        if loc.escape_offset is not None and not loc.capture_room:
            raise ScenarioError("escape_offset applies to capture rooms only", key=f"locations.{i}.escape_offset")
    if not rooms:
        raise ScenarioError("expected at least one location with capture_room = true (R-CAM-8)", key="locations")
    if not plain:
        raise ScenarioError("expected at least one location that is not a capture room", key="locations")


def _check_spawns_and_missions(s: Scenario) -> None:
    """Adversaries (unique names, known capture rooms), spawns and missions (known ids, turn ranges)."""
    loc_ids = [loc.id for loc in s.locations]
    rooms = [loc.id for loc in s.locations if loc.capture_room]
    adv_names = [a.name for a in s.adversaries]
    _unique(adv_names, "adversaries.{i}.name", "adversary names")
    for i, a in enumerate(s.adversaries):
        if a.capture_room is not None and a.capture_room not in rooms:
            raise _unknown("capture room", a.capture_room, rooms, f"adversaries.{i}.capture_room")
    for i, sp in enumerate(s.spawns):
        if sp.adversary not in adv_names:
            raise _unknown("adversary", sp.adversary, adv_names, f"spawns.{i}.adversary")
        _check_range(sp.turns, f"spawns.{i}.turns")
        if sp.locations != "any":
            if not sp.locations:
                raise ScenarioError("expected \"any\" or a non-empty list of location ids", key=f"spawns.{i}.locations")
            for j, lid in enumerate(sp.locations):
                if lid not in loc_ids:
                    raise _unknown("location", lid, loc_ids, f"spawns.{i}.locations.{j}")
            _unique(sp.locations, f"spawns.{i}.locations.{{i}}", "location ids in a spawn")  # issue 28
    if sum(sp.count for sp in s.spawns) > MAX_SPAWN_SLOTS:
        raise ScenarioError(f"at most {MAX_SPAWN_SLOTS} adversaries in all spawn entries together", key="spawns")
    for i, m in enumerate(s.missions):
        if m.location not in loc_ids:
            raise _unknown("location", m.location, loc_ids, f"missions.{i}.location")
        _check_range(m.turns, f"missions.{i}.turns")


def _check_party(s: Scenario) -> None:
    """Unique names; at most one team per PC; exclusions name another PC."""
    names = [p.name for p in s.party]
    _unique(names, "party.{i}.name", "character names")
    for i, p in enumerate(s.party):
        teams = [sk.name for sk in p.skills if sk.kind == "team"]
        if p.team is not None:
            teams.append(p.team)
        if len(set(teams)) > 1:
            raise ScenarioError(f"a PC belongs to at most one team; given {sorted(set(teams))}", key=f"party.{i}.team")
        for j, ex in enumerate(p.exclude):
            if ex not in names:
                raise _unknown("character", ex, names, f"party.{i}.exclude.{j}")
            if ex == p.name:
                raise ScenarioError("a PC cannot exclude itself", key=f"party.{i}.exclude.{j}")


def _check_purchases(s: Scenario) -> None:
    """policy.buy: known skills or priced team memberships (R-CAM-9a), each at most once."""
    costs = s.growth.costs
    skill_names = [sk.name for sk in costs.skills]
    _unique(skill_names, "growth.costs.skills.{i}.name", "purchasable skill names")
    valid_buys = skill_names + ([f"team:{t}" for t in _team_names(s)] if costs.team is not None else [])
    for j, item in enumerate(s.policy.buy):
        key = f"policy.buy.{j}"
        if item.startswith("team:"):
            if costs.team is None:
                raise ScenarioError("team membership has no price: set growth.costs.team (R-CAM-9a)", key=key)
            if not item[5:] or len(item) > 105:
                raise ScenarioError(f"expected \"team:NAME\" with a team name of 1-100 characters; given {item!r}",
                                    key=key)
        elif item not in skill_names:
            raise _unknown("purchase", item, valid_buys, key)
        if item in s.policy.buy[:j]:
            raise ScenarioError(f"expected each purchase at most once; given {item!r} twice", key=key)
