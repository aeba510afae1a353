"""The campus scenario model (SCENARIOS.md, kind = "campus"; RULES.md section 3).

Every field is declared with its type and range here; cross-field checks (unknown ids, duplicate
names, a team given twice) live in :func:`check_scenario`, which names the dotted key.
"""

from __future__ import annotations

import difflib
from typing import Literal

from pydantic import Field, model_validator

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

    turns: int = Field(12, ge=1, le=MAX_TURNS)
    team_max: int = Field(3, ge=2, le=MAX_PARTY)
    vitality: int = Field(3, ge=1, le=BIG)
    escape_offset: int = Field(0, ge=-BIG, le=BIG)
    miso_bomb: bool = False
    options: Literal["all"] | int = "all"
    # R-CAM-6: "until_cleared" (the seed: repeat until no adversary or no free PC is left at the location) or
    # "once" (each PC at most once a turn, the reading before the revision, kept for comparison)
    fights: Literal["until_cleared", "once"] = "until_cleared"

    @model_validator(mode="after")
    def _options_positive(self):
        if isinstance(self.options, int) and self.options < 1:
            raise ValueError(f"options: expected \"all\" or an integer >= 1; given {self.options}")
        return self


class Location(Strict):
    id: str = Field(..., min_length=1, max_length=100)
    exit: bool = False
    opens_on: int = Field(1, ge=1, le=MAX_TURNS)
    capture_room: bool = False
    escape_offset: int | None = Field(None, ge=-BIG, le=BIG)


class Abilities(Strict):
    """R-CAM-1: three non-negative abilities (required for PCs)."""

    fight: int = Field(..., ge=0, le=BIG)
    flee: int = Field(..., ge=0, le=BIG)
    hide: int = Field(..., ge=0, le=BIG)

    def as_tuple(self) -> tuple[int, int, int]:
        return (self.fight, self.flee, self.hide)


class AdversaryAbilities(Strict):
    fight: int = Field(0, ge=0, le=BIG)
    flee: int = Field(0, ge=0, le=BIG)
    hide: int = Field(0, ge=0, le=BIG)

    def as_tuple(self) -> tuple[int, int, int]:
        return (self.fight, self.flee, self.hide)


class StanceBonus(Strict):
    fight: int = Field(0, ge=-BIG, le=BIG)
    flee: int = Field(0, ge=-BIG, le=BIG)
    hide: int = Field(0, ge=-BIG, le=BIG)

    def as_tuple(self) -> tuple[int, int, int]:
        return (self.fight, self.flee, self.hide)


class StanceMultiplier(Strict):
    fight: float = Field(1.0, gt=0, le=1000)
    flee: float = Field(1.0, gt=0, le=1000)
    hide: float = Field(1.0, gt=0, le=1000)

    def as_tuple(self) -> tuple[float, float, float]:
        return (self.fight, self.flee, self.hide)


class StanceWeights(Strict):
    """R-CAM-21: stance weights (a missing stance has weight 0)."""

    fight: float = Field(0.0, ge=0, le=1e9)
    flee: float = Field(0.0, ge=0, le=1e9)
    hide: float = Field(0.0, ge=0, le=1e9)

    @model_validator(mode="after")
    def _positive_total(self):
        if self.fight + self.flee + self.hide <= 0:
            raise ValueError("stance weights must not all be 0")
        return self

    def as_tuple(self) -> tuple[float, float, float]:
        return (self.fight, self.flee, self.hide)


class Adversary(Strict):
    """R-CAM-20 adversary template."""

    name: str = Field(..., min_length=1, max_length=100)
    abilities: AdversaryAbilities = Field(default_factory=AdversaryAbilities)
    bonus: StanceBonus = Field(default_factory=StanceBonus)
    multiplier: StanceMultiplier = Field(default_factory=StanceMultiplier)
    stance: StanceWeights | Stance | None = None  # None: uniform
    reward: int = Field(0, ge=-BIG, le=BIG)
    boss: bool = False
    capture_room: str | None = None


class Spawn(Strict):
    """R-CAM-20 / R-CAM-50 spawn schedule entry."""

    adversary: str
    turns: list[int] | None = Field(None, min_length=2, max_length=2)  # inclusive range; None: every turn
    locations: Literal["any"] | list[str] = "any"
    count: int = Field(1, ge=0, le=MAX_SPAWN_SLOTS)
    chance: float = Field(1.0, ge=0, le=1)


class Penalty(Strict):
    """R-CAM-25: { vitality = n } or { ability = "hide", amount = n }."""

    vitality: int | None = Field(None, ge=0, le=BIG)
    ability: Stance | None = None
    amount: int | None = Field(None, ge=0, le=BIG)

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

    location: str
    turns: list[int] | None = Field(None, min_length=2, max_length=2)
    chance: float = Field(1.0, ge=0, le=1)
    stance: Stance
    mode: Literal["sum", "each"] = "sum"
    target: int = Field(..., ge=-BIG, le=BIG)
    reward: int = Field(0, ge=-BIG, le=BIG)
    penalty: Penalty | None = None


SkillKind = Literal["bonus", "multiplier", "team", "early_ears", "nursing", "gp_per_turn"]


class Skill(Strict):
    """R-CAM-30 skills, one flat table per skill (the `kind` decides which keys apply)."""

    kind: SkillKind
    stances: list[Stance] | None = None
    value: int | float | None = None
    when: Literal["always", "advantage"] | None = None
    name: str | None = Field(None, min_length=1, max_length=100)

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


class PartyMember(Strict):
    name: str = Field(..., min_length=1, max_length=100)
    abilities: Abilities
    vitality: int | None = Field(None, ge=1, le=BIG)
    team: str | None = Field(None, min_length=1, max_length=100)
    skills: list[Skill] = Field(default_factory=list, max_length=100)
    # project extension of R-CAM-12: captives this PC never supports (names)
    exclude: list[str] = Field(default_factory=list, max_length=MAX_PARTY)


class CampusPolicy(Strict):
    """R-CAM-40 built-in policies."""

    name: str = Field("builtin", max_length=200)
    move: Literal["random", "avoid"] = "random"
    # `equilibrium` (issue 7, docs/decisions.md (Campus)): the PC's exact maximin mix of the stance game against
    # the adversaries seen at its destination (early ears), else against the templates the schedule can place
    # this turn; one uniform draw per PC per turn (sim.campus.stances)
    stance: Literal["fixed", "random", "best", "counter", "equilibrium"] = "best"
    stance_value: Stance = "hide"
    growth: Literal["none", "lowest", "best"] = "none"
    rescue: bool = False


class Scenario(ScenarioBase):
    """kind = "campus" (RULES.md section 3)."""

    kind: Literal["campus"]
    run: RunSettings = Field(default_factory=RunSettings)
    rules: CampusRules = Field(default_factory=CampusRules)
    locations: list[Location] = Field(..., min_length=1, max_length=MAX_LOCATIONS)
    adversaries: list[Adversary] = Field(default_factory=list, max_length=100)
    spawns: list[Spawn] = Field(default_factory=list, max_length=MAX_SPAWN_SLOTS)
    missions: list[Mission] = Field(default_factory=list, max_length=200)
    party: list[PartyMember] = Field(..., min_length=1, max_length=MAX_PARTY)
    policy: CampusPolicy = Field(default_factory=CampusPolicy)


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


def check_scenario(s: Scenario) -> None:
    """Cross-field checks (unknown ids with the nearest valid one, duplicates, teams)."""
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
    if sum(sp.count for sp in s.spawns) > MAX_SPAWN_SLOTS:
        raise ScenarioError(f"at most {MAX_SPAWN_SLOTS} adversaries in all spawn entries together", key="spawns")
    for i, m in enumerate(s.missions):
        if m.location not in loc_ids:
            raise _unknown("location", m.location, loc_ids, f"missions.{i}.location")
        _check_range(m.turns, f"missions.{i}.turns")
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
    if ":" in s.policy.name:
        raise ScenarioError("custom policies are not supported for campus; use the built-in "
                            "move/stance/growth/rescue keys (R-CAM-40)", key="policy.name")
