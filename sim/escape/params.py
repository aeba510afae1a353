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
    breath_points: np.ndarray  # ceil(level / 2) for monks, else 0
    comp_max: np.ndarray  # (C,) composure maximum
    modifiers: tuple[dict, ...]  # per character: ability name -> modifier (dice expressions)
    attention_limit: int  # 0: none
    att_assist: int
    att_guide: int
    att_search: int
    att_per_round: int
    search_on: bool
    search_dc: int
    item_kind: np.ndarray  # (I,) 0 bonus, 1 release
    item_value: np.ndarray
    item_weight: np.ndarray  # float64
    item_max_tier: np.ndarray
    item_count: np.ndarray  # -1 unlimited
    item_names: tuple[str, ...]
    rest_expr: DiceExpr
    harness_expr: DiceExpr
    stimulus_expr: DiceExpr | None
    craving: bool
    dazed_rounds: int
    policy: str

    @property
    def n_items(self) -> int:
        return len(self.item_names)

    @property
    def has_release(self) -> bool:
        """Whether any search item is a release item (the item steps of greedy can apply)."""
        return bool((self.item_kind == 1).any())


def tier_index(tier_id: str | None) -> int:
    return 0 if tier_id is None else TIER_IDS.index(tier_id)


def compile_params(s: Scenario) -> EscapeParams:
    dc = np.array(DEFAULT_DC, dtype=np.int64)
    becomes = np.array(DEFAULT_BECOMES, dtype=np.int64)
    for tier_id, override in s.rules.tiers.items():  # R-ESC-2 scenario-tunable tiers
        t = TIER_IDS.index(tier_id)
        if override.dc is not None:
            dc[t] = override.dc
        if override.becomes is not None:
            becomes[t] = TIER_IDS.index(override.becomes)
    mark = np.array([MARK_CODES[m] for m in MARKS], dtype=np.int64)
    goal = np.array([slot in s.goal.slots for slot in SLOTS], dtype=bool)
    C = len(s.party)
    init = np.zeros((C, N_SLOTS), dtype=np.int8)
    escape_mod = np.zeros((C, 3), dtype=np.int64)
    artist = np.zeros((C, 3), dtype=np.int64)
    wis = np.zeros(C, dtype=np.int64)
    intm = np.zeros(C, dtype=np.int64)
    cha = np.zeros(C, dtype=np.int64)
    prof = np.zeros(C, dtype=np.int64)
    search_mod = np.zeros(C, dtype=np.int64)
    guide = np.zeros(C, dtype=np.int64)
    mage = np.zeros(C, dtype=np.int64)
    comp = np.zeros(C, dtype=np.int64)
    breath = np.zeros(C, dtype=np.int64)
    focus_mod = np.zeros(C, dtype=np.int64)
    modifiers = []
    classes = tuple(c.class_ for c in s.party)
    for i, ch in enumerate(s.party):
        scores = ch.scores.as_dict()
        mods = {a: ability_modifier(scores[a]) for a in SCORE_NAMES}
        modifiers.append(mods)
        for slot_i, slot in enumerate(SLOTS):
            init[i, slot_i] = tier_index(getattr(ch.restraints, slot))
        pb = proficiency_bonus(ch.level)
        prof[i] = pb
        escape_mod[i] = [mods["str"], mods["dex"], mods["int"]]
        if ch.class_ in ESCAPE_ARTISTS:  # R-ESC-14 escape artist: dex and int checks
            artist[i] = [0, pb, pb]
        wis[i], intm[i], cha[i] = mods["wis"], mods["int"], mods["cha"]
        search_mod[i] = mods["wis"] + (pb if ch.perception else 0)  # R-ESC-10
        guide[i] = max(pb, mods["int"], mods["dex"])  # R-ESC-9
        mage[i] = mods["int"] + pb  # R-ESC-14 mage hand
        if ch.composure is not None:  # R-ESC-35: a scenario's composure replaces R-RST-20
            comp[i] = ch.composure
        else:
            comp[i] = composure_maximum(ch.class_, ch.level, scores, ch.composure_ability)
        if ch.class_ == "monk":
            breath[i] = -(-ch.level // 2)  # R-ESC-35 ceil(level / 2)
        if ch.class_ in FOCUS_CASTING:
            focus_mod[i] = mods[FOCUS_CASTING[ch.class_]]
    att = s.attention
    search_on = s.search is not None
    items = s.search.items if s.search is not None else []
    rest_expr = parse_dice(s.rest.recovery, SCORE_NAMES)
    harness_expr = parse_dice(s.harness.damage, SCORE_NAMES)
    stim_expr = parse_dice(s.stimulus.damage, SCORE_NAMES) if s.stimulus is not None else None
    return EscapeParams(
        n_chars=C,
        names=tuple(c.name for c in s.party),
        classes=classes,
        max_rounds=s.run.max_rounds,
        stacking=s.rules.dice_stacking,
        dc=dc,
        becomes=becomes,
        mark=mark,
        goal=goal,
        init_tiers=init,
        escape_mod=escape_mod,
        artist_bonus=artist,
        wis_mod=wis,
        int_mod=intm,
        cha_mod=cha,
        prof=prof,
        search_mod=search_mod,
        guide_bonus=guide,
        mage_bonus=mage,
        is_monk=np.array([c == "monk" for c in classes]),
        is_paladin=np.array([c == "paladin" for c in classes]),
        is_cleric=np.array([c == "cleric" for c in classes]),
        is_mage_hand=np.array([c in MAGE_HANDS for c in classes]),
        is_focus=np.array([c in FOCUS_CASTING for c in classes]),
        focus_mod=focus_mod,
        breath_points=breath,
        comp_max=comp,
        modifiers=tuple(modifiers),
        attention_limit=att.limit or 0,
        att_assist=att.assist,
        att_guide=att.guide,
        att_search=att.search,
        att_per_round=att.per_round,
        search_on=search_on,
        search_dc=s.search.dc if s.search is not None else 14,
        item_kind=np.array([1 if it.kind == "release" else 0 for it in items], dtype=np.int64),
        item_value=np.array([it.value for it in items], dtype=np.int64),
        item_weight=np.array([it.weight for it in items], dtype=np.float64),
        item_max_tier=np.array([TIER_IDS.index(it.max_tier) for it in items], dtype=np.int64),
        item_count=np.array([-1 if it.count is None else it.count for it in items], dtype=np.int64),
        item_names=tuple(it.name for it in items),
        rest_expr=rest_expr,
        harness_expr=harness_expr,
        stimulus_expr=stim_expr,
        craving=s.stimulus is not None and s.stimulus.kind == "craving",
        dazed_rounds=s.overload.dazed_rounds,
        policy=s.policy.name,
    )
