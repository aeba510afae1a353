"""Compiled, immutable parameters of an escape scenario (STYLE.md practice 1: parameters are a
separate immutable object). Everything the reference, the kernel and the exact engine need is
read from here, never from the pydantic model."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.composure import composure_maximum
from sim.dice import DiceExpr, ability_modifier, parse_dice, proficiency_bonus
from sim.escape.model import (
    DEFAULT_BECOMES,
    DEFAULT_DC,
    MARKS,
    SCORE_NAMES,
    SLOTS,
    TIER_IDS,
    Scenario,
)

N_SLOTS = len(SLOTS)
ARMS, FINGERS, BODY, LEGS, HARNESS, MASK, GAG, BLINDFOLD, EARPLUGS = range(N_SLOTS)
SIMPLE, LIGHT, MODERATE, HEAVY, SEVERE, COMPLETE, DESPAIR, UTTER = range(1, 9)
STR, DEX, INT = 0, 1, 2
ESCAPE_ABILITIES = ("str", "dex", "int")
MARK_NONE, MARK_STAR, MARK_PLUS, MARK_HASH, MARK_X = range(5)
MARK_CODES = {"": MARK_NONE, "*": MARK_STAR, "+": MARK_PLUS, "#": MARK_HASH, "x": MARK_X}

ESCAPE_ARTISTS = ("rogue", "ranger")  # R-ESC-14 escape artist
MAGE_HANDS = ("wizard", "sorcerer")  # R-ESC-14 mage hand
FOCUS_CASTING = {"wizard": "int", "artificer": "int", "sorcerer": "cha"}  # R-ESC-14 absolute focus
UNLIMITED = -1  # a use count that never runs out (R-ESC-14a: rage at level 20)


def ki_points(level: int) -> int:
    """R-ESC-14 / R-ESC-14b: a monk's ki points, 0 at level 1 and the monk's level from level 2 (5e)."""
    return level if level >= 2 else 0


def rage_uses(level: int) -> int:
    """R-ESC-14a: rage uses per challenge (5e): 2 at 1-2, 3 at 3-5, 4 at 6-11, 5 at 12-16, 6 at 17-19,
    unlimited at 20."""
    if level >= 20:
        return UNLIMITED
    return 2 if level <= 2 else 3 if level <= 5 else 4 if level <= 11 else 5 if level <= 16 else 6


def channel_uses(cls: str, level: int) -> int:
    """R-ESC-14b channel divinity uses (5e): cleric 0 at 1, 1 at 2-5, 2 at 6-17, 3 at 18-20; paladin 0 at 1-2,
    1 from 3; other classes none."""
    if cls == "cleric":
        return 0 if level <= 1 else 1 if level <= 5 else 2 if level <= 17 else 3
    if cls == "paladin":
        return 0 if level <= 2 else 1
    return 0


def max_roll(expr: DiceExpr, mods: dict) -> int:
    """The largest value of a dice expression (each added die at its highest face, each subtracted one at 1)."""
    dice = sum(t.count * (t.sides if t.sign > 0 else -1) for t in expr.dice)
    return expr.constant + expr.ability_part(mods) + dice


def inspiration_die(level: int) -> int:
    """R-ESC-14b: the bardic inspiration die's sides: d6 at 1-4, d8 at 5-9, d10 at 10-14, d12 at 15-20."""
    return 6 if level <= 4 else 8 if level <= 9 else 10 if level <= 14 else 12


@dataclass(frozen=True)
class EscapeParams:
    n_chars: int
    names: tuple[str, ...]
    classes: tuple[str, ...]
    max_rounds: int
    stacking: str
    dc: np.ndarray  # (9,) by tier
    becomes: np.ndarray  # (9,) by tier
    mark: np.ndarray  # (9,) MARK_* by tier
    goal: np.ndarray  # (S,) bool
    init_tiers: np.ndarray  # (C, S) int8
    escape_mod: np.ndarray  # (C, 3) str/dex/int modifier
    artist_bonus: np.ndarray  # (C, 3) escape-artist bonus per ability
    wis_mod: np.ndarray  # (C,)
    int_mod: np.ndarray
    cha_mod: np.ndarray
    prof: np.ndarray  # (C,)
    search_mod: np.ndarray  # (C,) wis mod (+ prof when proficient in perception)
    guide_bonus: np.ndarray  # (C,) R-ESC-9 max(prof, int mod, dex mod)
    mage_bonus: np.ndarray  # (C,) R-ESC-14 int mod + prof
    is_monk: np.ndarray
    is_paladin: np.ndarray
    is_cleric: np.ndarray
    is_mage_hand: np.ndarray
    is_focus: np.ndarray
    focus_mod: np.ndarray  # casting modifier for absolute focus
    breath_points: np.ndarray  # R-ESC-14: ceil(ki / 2) for monks (ki 0 at level 1), else 0
    # the rule switches (R-ESC-14a, R-ESC-10b)
    volume1: bool  # R-ESC-14a / R-ESC-14b volume-1 features on
    arms_free: bool  # R-ESC-10b self_untie = "arms_free": untying oneself needs arms and body at 0 only
    legs_hinder: bool  # R-ESC-10c bound legs hinder search and stealth (the three values below are 0 without it)
    # R-ESC-14a / R-ESC-14b (all 0 with volume1_features = false)
    feature_bonus: np.ndarray  # (C, 3) rogue's proficiency on str (dex, int come from artist_bonus), druid's wis
    terrain_bonus: np.ndarray  # (C, 3) what a favoured-terrain use adds over the check: 2 x prof - artist_bonus
    terrain_uses: np.ndarray  # (C,) favoured-terrain uses (proficiency bonus) for a ranger with favoured_terrain
    rage_uses: np.ndarray  # (C,) barbarian rage uses, UNLIMITED at level 20
    channel_uses: np.ndarray  # (C,) cleric / paladin channel divinity uses
    ki: np.ndarray  # (C,) monk ki points for meditate (separate from breath)
    inspire_uses: np.ndarray  # (C,) bard: max(1, cha mod)
    inspire_sides: np.ndarray  # (C,) bard: the inspiration die it gives
    danger: np.ndarray  # (C, 2) the largest harness and stimulus damage rolls (at least 0), R-ESC-20 step 0
    recover_expr: DiceExpr  # R-ESC-14b: channel and meditate recover 1d6
    comp_max: np.ndarray  # (C,) composure maximum
    modifiers: tuple[dict, ...]  # per character: ability name -> modifier (dice expressions)
    attention_limit: int  # 0: none
    att_assist: int
    att_guide: int
    att_search: int
    att_per_round: int
    att_legs: int  # R-ESC-10c: more attention for a moving action with bound legs (0 with legs_hinder = false)
    search_on: bool
    search_dc: int
    search_legs_dc: int  # R-ESC-10c: DC added per tier of bound legs (0 with legs_hinder = false)
    item_kind: np.ndarray  # (I,) 0 bonus, 1 release
    item_value: np.ndarray
    item_weight: np.ndarray  # float64
    item_max_tier: np.ndarray
    item_count: np.ndarray  # -1 unlimited
    item_needs_legs: np.ndarray  # (I,) bool: never found with bound legs (R-ESC-10c; all False without legs_hinder)
    item_names: tuple[str, ...]
    rest_expr: DiceExpr
    harness_expr: DiceExpr
    stimulus_expr: DiceExpr | None
    craving: bool
    dazed_rounds: int
    policy: str
    #: restricted play (the balance audit's Monte Carlo fallback, issue 36): pairs (option, character index or
    #: None) a policy may not declare (sim.escape.actions.forbids); empty for every scenario. No rule reads it.
    forbidden: frozenset = frozenset()

    @property
    def n_items(self) -> int:
        return len(self.item_names)


def tier_index(tier_id: str | None) -> int:
    return 0 if tier_id is None else TIER_IDS.index(tier_id)


def compile_params(s: Scenario) -> EscapeParams:
    """The validated scenario compiled for the engines: the tier ladder, the party, the dice expressions,
    attention and search, each by its own helper below."""
    party = _party(s)
    return EscapeParams(
        max_rounds=s.run.max_rounds, stacking=s.rules.dice_stacking, **_ladder(s), **party,
        volume1=bool(s.rules.volume1_features), arms_free=s.rules.self_untie == "arms_free",
        legs_hinder=bool(s.rules.legs_hinder),
        **_dice(s, party["modifiers"]), **_attention(s), **_search(s),
        craving=s.stimulus is not None and s.stimulus.kind == "craving", dazed_rounds=s.overload.dazed_rounds,
        policy=s.policy.name,
    )


def _ladder(s: Scenario) -> dict:
    """R-ESC-2 tiers (DC and the tier a success leaves, scenario-tunable), R-ESC-3 marks, the goal's slots."""
    dc = np.array(DEFAULT_DC, dtype=np.int64)
    becomes = np.array(DEFAULT_BECOMES, dtype=np.int64)
    for tier_id, override in s.rules.tiers.items():  # R-ESC-2 scenario-tunable tiers
        t = TIER_IDS.index(tier_id)
        if override.dc is not None:
            dc[t] = override.dc
        if override.becomes is not None:
            becomes[t] = TIER_IDS.index(override.becomes)
    return dict(dc=dc, becomes=becomes, mark=np.array([MARK_CODES[m] for m in MARKS], dtype=np.int64),
                goal=np.array([slot in s.goal.slots for slot in SLOTS], dtype=bool))


#: the per-character columns of EscapeParams (one int64 value, or one per escape ability) filled by _character
_CHAR_COLUMNS = ("wis_mod", "int_mod", "cha_mod", "prof", "search_mod", "guide_bonus", "mage_bonus", "comp_max",
                 "breath_points", "terrain_uses", "rage_uses", "channel_uses", "ki", "inspire_uses", "inspire_sides",
                 "focus_mod")
_CHAR_ABILITY_COLUMNS = ("escape_mod", "artist_bonus", "feature_bonus", "terrain_bonus")


def _party(s: Scenario) -> dict:
    """The characters: their restraints, modifiers and class features, one row each."""
    C = len(s.party)
    rows = {name: np.zeros(C, dtype=np.int64) for name in _CHAR_COLUMNS}
    rows.update({name: np.zeros((C, 3), dtype=np.int64) for name in _CHAR_ABILITY_COLUMNS})
    rows["init_tiers"] = np.zeros((C, N_SLOTS), dtype=np.int8)
    modifiers = [_character(rows, i, ch, s.rules.volume1_features) for i, ch in enumerate(s.party)]
    classes = tuple(c.class_ for c in s.party)
    return dict(
        rows, n_chars=C, names=tuple(c.name for c in s.party), classes=classes, modifiers=tuple(modifiers),
        is_monk=np.array([c == "monk" for c in classes]),
        is_paladin=np.array([c == "paladin" for c in classes]),
        is_cleric=np.array([c == "cleric" for c in classes]),
        is_mage_hand=np.array([c in MAGE_HANDS for c in classes]),
        is_focus=np.array([c in FOCUS_CASTING for c in classes]),
    )


def _character(rows: dict, i: int, ch, v1: bool) -> dict:
    """Character i's row of ``rows``; returns its ability modifiers (for dice expressions)."""
    scores = ch.scores.as_dict()
    mods = {a: ability_modifier(scores[a]) for a in SCORE_NAMES}
    for slot_i, slot in enumerate(SLOTS):
        rows["init_tiers"][i, slot_i] = tier_index(getattr(ch.restraints, slot))
    pb = proficiency_bonus(ch.level)
    rows["prof"][i] = pb
    rows["escape_mod"][i] = [mods["str"], mods["dex"], mods["int"]]
    if ch.class_ in ESCAPE_ARTISTS:  # R-ESC-14 escape artist: dex and int checks
        rows["artist_bonus"][i] = [0, pb, pb]
    rows["wis_mod"][i], rows["int_mod"][i], rows["cha_mod"][i] = mods["wis"], mods["int"], mods["cha"]
    rows["search_mod"][i] = mods["wis"] + (pb if ch.perception else 0)  # R-ESC-10
    rows["guide_bonus"][i] = max(pb, mods["int"], mods["dex"])  # R-ESC-9
    rows["mage_bonus"][i] = mods["int"] + pb  # R-ESC-14 mage hand
    if ch.composure is not None:  # R-ESC-35: a scenario's composure replaces R-RST-20
        rows["comp_max"][i] = ch.composure
    else:
        rows["comp_max"][i] = composure_maximum(ch.class_, ch.level, scores, ch.composure_ability)
    if ch.class_ == "monk":
        # R-ESC-14 / R-ESC-35: ceil(ki / 2), ki 0 at level 1 (a correction without a switch: docs/decisions.md)
        rows["breath_points"][i] = -(-ki_points(ch.level) // 2)
    if v1:
        _volume1_features(rows, i, ch, mods, pb)
    if ch.class_ in FOCUS_CASTING:
        rows["focus_mod"][i] = mods[FOCUS_CASTING[ch.class_]]
    return mods


def _volume1_features(rows: dict, i: int, ch, mods: dict, pb: int) -> None:
    """R-ESC-14a / R-ESC-14b class features of character i (only with ``volume1_features = true``)."""
    if ch.class_ == "rogue":  # R-ESC-14a: proficiency once on every check (dex, int: escape artist)
        rows["feature_bonus"][i] = [pb, 0, 0]
    if ch.class_ == "druid":  # R-ESC-14a: the wis modifier when it is positive
        rows["feature_bonus"][i] = max(0, mods["wis"])
    if ch.class_ == "ranger" and ch.favoured_terrain:  # R-ESC-14a: 2 x prof instead of the artist's
        rows["terrain_uses"][i] = pb
        rows["terrain_bonus"][i] = 2 * pb - rows["artist_bonus"][i]
    if ch.class_ == "barbarian":
        rows["rage_uses"][i] = rage_uses(ch.level)  # R-ESC-14a
    rows["channel_uses"][i] = channel_uses(ch.class_, ch.level)  # R-ESC-14b
    if ch.class_ == "monk":
        rows["ki"][i] = ki_points(ch.level)  # R-ESC-14b meditate
    if ch.class_ == "bard":  # R-ESC-14b inspire
        rows["inspire_uses"][i] = max(1, mods["cha"])
        rows["inspire_sides"][i] = inspiration_die(ch.level)


def _dice(s: Scenario, modifiers: list[dict]) -> dict:
    """The dice expressions (R-ESC-10a rest, R-ESC-11 harness, R-ESC-13 stimulus, R-ESC-14b recovery) and each
    character's danger: damage at its maximum roll, 0 when none (R-ESC-20 step 0)."""
    rest_expr = parse_dice(s.rest.recovery, SCORE_NAMES)
    harness_expr = parse_dice(s.harness.damage, SCORE_NAMES)
    stim_expr = parse_dice(s.stimulus.damage, SCORE_NAMES) if s.stimulus is not None else None
    danger = np.zeros((len(modifiers), 2), dtype=np.int64)
    for i in range(len(modifiers)):  # R-ESC-20 step 0: damage at its maximum roll, 0 when none
        danger[i, 0] = max(0, max_roll(harness_expr, modifiers[i]))
        if stim_expr is not None:
            danger[i, 1] = max(0, max_roll(stim_expr, modifiers[i]))
    return dict(rest_expr=rest_expr, harness_expr=harness_expr, stimulus_expr=stim_expr, danger=danger,
                recover_expr=parse_dice("1d6"))


def _attention(s: Scenario) -> dict:
    """R-ESC-9a attention: the limit (0: none) and what each kind of action draws."""
    att = s.attention
    return dict(attention_limit=att.limit or 0, att_assist=att.assist, att_guide=att.guide, att_search=att.search,
                att_per_round=att.per_round, att_legs=att.legs if s.rules.legs_hinder else 0)  # R-ESC-10c


def _search(s: Scenario) -> dict:
    """R-ESC-10 search: whether it is configured, its DC and the item pool; R-ESC-10c what bound legs change."""
    items = s.search.items if s.search is not None else []
    hinder = bool(s.rules.legs_hinder)
    return dict(
        search_on=s.search is not None,
        search_dc=s.search.dc if s.search is not None else 14,
        search_legs_dc=s.search.legs_dc if s.search is not None and hinder else 0,
        item_needs_legs=np.array([hinder and it.needs_free_legs for it in items], dtype=bool),
        item_kind=np.array([1 if it.kind == "release" else 0 for it in items], dtype=np.int64),
        item_value=np.array([it.value for it in items], dtype=np.int64),
        item_weight=np.array([it.weight for it in items], dtype=np.float64),
        item_max_tier=np.array([TIER_IDS.index(it.max_tier) for it in items], dtype=np.int64),
        item_count=np.array([-1 if it.count is None else it.count for it in items], dtype=np.int64),
        item_names=tuple(it.name for it in items),
    )
