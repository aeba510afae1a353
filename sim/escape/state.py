"""Scalar state of one escape run, actions, and the check arithmetic shared by the reference,
the policies and the exact engine (RULES.md section 1)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction

from sim.dice import CHECK_DENOMINATOR, check_numerator, net_dice
from sim.escape.params import (
    ARMS,
    BLINDFOLD,
    BODY,
    COMPLETE,
    DEX,
    EARPLUGS,
    FINGERS,
    GAG,
    INT,
    LEGS,
    MARK_STAR,
    MASK,
    MODERATE,
    N_SLOTS,
    STR,
    UNLIMITED,
    UTTER,
    EscapeParams,
)

ACTION_KINDS = ("struggle", "assist", "guide", "search", "rest", "untie", "use_item", "bless",
                "channel", "inspire", "meditate")
#: the R-ESC-14b class actions: they exist only with ``[rules] volume1_features = true``
CLASS_ACTIONS = ("channel", "inspire", "meditate")
ACTION_INDEX = {kind: k for k, kind in enumerate(ACTION_KINDS)}


@dataclass(frozen=True)
class Action:
    """One declared action (R-ESC-5). ``target`` is a party index; ``item`` an index into the
    actor's held release items."""

    kind: str
    slot: int = -1
    ability: int = -1
    target: int = -1
    item: int = -1
    breath: bool = False
    rage: bool = False  # R-ESC-14a: a barbarian spends a rage use on this str check
    terrain: bool = False  # R-ESC-14a: a ranger spends a favoured-terrain use on this check


REST = Action("rest")
SEARCH = Action("search")
BLESS = Action("bless")
CHANNEL = Action("channel")
MEDITATE = Action("meditate")


_EARLIER_KINDS = tuple(k for k in ACTION_KINDS if k not in CLASS_ACTIONS)


def action_kinds(p: EscapeParams) -> tuple[str, ...]:
    """The action kinds of the reading in effect: the class actions only with volume-1 features (R-ESC-14b)."""
    return ACTION_KINDS if p.volume1 else _EARLIER_KINDS


def _copied_lists(state) -> dict[str, list]:
    """A shallow copy of each list-valued field of a state dataclass, by name (for ``dataclasses.replace``)."""
    return {name: value[:] for name, value in vars(state).items() if type(value) is list}


@dataclass
class CharState:
    tiers: list[int]
    acc: list[int]
    streak: list[int]
    last_slot: int
    composure: int
    craving: int
    dazed_left: int
    breath: int
    save_bonus: int
    immune_until: int
    item_bonus: int
    held: list[int]  # indices of held release items
    blessed: bool
    # R-ESC-14a / R-ESC-14b resources (uses left; UNLIMITED rage never runs out), and the inspiration die held
    rage: int = 0
    terrain: int = 0
    channel: int = 0
    ki: int = 0
    inspire: int = 0
    insp_die: int = 0  # sides of the bardic inspiration die held (0: none)
    # statistics (R-ESC-15), not part of the dynamics
    freed_round: int = 0
    checks: int = 0
    successes: int = 0
    overloads: int = 0
    items_found: int = 0
    rounds_at_tier: list[int] = field(default_factory=lambda: [0] * 9)
    checks_at_tier: list[int] = field(default_factory=lambda: [0] * 9)
    successes_at_tier: list[int] = field(default_factory=lambda: [0] * 9)
    # actions declared while not dazed, by kind in ACTION_KINDS order (statistics, not in key())
    actions_taken: list[int] = field(default_factory=lambda: [0] * len(ACTION_KINDS))

    def copy(self) -> CharState:
        """An independent copy: every list field copied (found by value, so a new field needs no edit here)."""
        return replace(self, **_copied_lists(self))

    def key(self) -> tuple:
        return (
            tuple(self.tiers), tuple(self.acc), tuple(self.streak), self.last_slot, self.composure,
            self.craving, self.dazed_left, self.breath, self.save_bonus, self.immune_until,
            self.item_bonus, tuple(sorted(self.held)), self.blessed, self.rage, self.terrain, self.channel,
            self.ki, self.inspire, self.insp_die,
        )


@dataclass
class PartyState:
    chars: list[CharState]
    attention: int
    item_left: list[int]  # remaining count per item, -1 unlimited
    round: int = 0  # rounds played
    outcome: str = ""  # "", escaped, caught, timeout
    first_round: int = 0  # statistics: round 1 had 0 no check, 1 checks and no success, 2 a success

    def copy(self) -> PartyState:
        """An independent copy: the characters copied, every other list field copied (as :meth:`CharState.copy`)."""
        return replace(self, **{**_copied_lists(self), "chars": [c.copy() for c in self.chars]})

    def key(self) -> tuple:
        return (tuple(c.key() for c in self.chars), self.attention, tuple(self.item_left), self.outcome)


def initial_state(p: EscapeParams) -> PartyState:
    chars = []
    for i in range(p.n_chars):
        chars.append(CharState(
            tiers=[int(t) for t in p.init_tiers[i]], acc=[0] * N_SLOTS, streak=[0] * N_SLOTS, last_slot=-1,
            composure=int(p.comp_max[i]), craving=0, dazed_left=0, breath=int(p.breath_points[i]), save_bonus=0,
            immune_until=0, item_bonus=0, held=[], blessed=False, rage=int(p.rage_uses[i]),
            terrain=int(p.terrain_uses[i]), channel=int(p.channel_uses[i]), ki=int(p.ki[i]),
            inspire=int(p.inspire_uses[i]),
        ))
    return PartyState(chars, 0, [int(c) for c in p.item_count])


# ---------------------------------------------------------------------------------------------
# who may do what (R-ESC-7, R-ESC-9, R-ESC-10, R-ESC-10b, R-ESC-11)


def can_untie_self(p: EscapeParams, c: CharState) -> bool:
    """R-ESC-10b / R-ESC-31: arms and body at 0 (``self_untie = "arms_free"``); with ``"hands_free"`` the
    fingers at 0 as well."""
    return c.tiers[ARMS] == 0 and c.tiers[BODY] == 0 and (p.arms_free or c.tiers[FINGERS] == 0)


def can_help_physically(c: CharState) -> bool:
    """R-ESC-7 (with R-ESC-11): fingers 0, arms and legs below complete, body 0."""
    t = c.tiers
    return t[FINGERS] == 0 and t[ARMS] < COMPLETE and t[LEGS] < COMPLETE and t[BODY] == 0


def can_untie_other(p: EscapeParams, c: CharState) -> bool:
    """R-ESC-10b, R-ESC-31: free hands for oneself and R-ESC-7."""
    return can_untie_self(p, c) and can_help_physically(c)


def has_mage_hand(p: EscapeParams, i: int, c: CharState) -> bool:
    """R-ESC-14 mage hand: a wizard or sorcerer with arms and fingers at 0."""
    return bool(p.is_mage_hand[i]) and c.tiers[ARMS] == 0 and c.tiers[FINGERS] == 0


def can_assist(p: EscapeParams, i: int, c: CharState) -> bool:
    return can_help_physically(c) or has_mage_hand(p, i, c)


def mouth_free(c: CharState) -> bool:
    """R-ESC-14 「口部」: gag 0 and mask 0 (the blessing's mouth and mage hand's, revised 2026-12)."""
    return c.tiers[GAG] == 0 and c.tiers[MASK] == 0


def mage_hand_bonus(p: EscapeParams, i: int, c: CharState) -> int:
    """R-ESC-14 / R-ESC-33: an assist by a wizard or sorcerer with arms and fingers at 0 and the mouth free (gag 0
    and mask 0, second round of 2026-12) adds int + prof."""
    if has_mage_hand(p, i, c) and mouth_free(c):
        return int(p.mage_bonus[i])
    return 0


def can_guide(c: CharState) -> bool:
    """R-ESC-9: the guide needs gag and blindfold at 0 (a body wrap does not stop it, R-ESC-33)."""
    return c.tiers[GAG] == 0 and c.tiers[BLINDFOLD] == 0


def can_be_guided(c: CharState) -> bool:
    return c.tiers[EARPLUGS] == 0  # R-ESC-11 earplugs


def can_search(p: EscapeParams, c: CharState) -> bool:
    """R-ESC-10: search configured, blindfold 0, legs below complete, body 0."""
    return p.search_on and c.tiers[BLINDFOLD] == 0 and c.tiers[LEGS] < COMPLETE and c.tiers[BODY] == 0


def can_bless(p: EscapeParams, i: int, c: CharState) -> bool:
    """R-ESC-14 blessing: a cleric with the mouth free (gag 0 and mask 0, revised 2026-12)."""
    return bool(p.is_cleric[i]) and mouth_free(c)


def moves(p: EscapeParams, i: int, c: CharState, a) -> bool:
    """R-ESC-10c: whether action ``a`` of character ``i`` needs it to move: a search, an untie of another, and an
    assist under R-ESC-7 (not a mage-hand assist: a wizard's or sorcerer's assist is one whenever mage hand allows
    it). Guiding, inspiring and an item used on a teammate need no movement."""
    if a.kind == "search":
        return True
    if a.kind == "untie":
        return a.target != i
    return a.kind == "assist" and not has_mage_hand(p, i, c)


def legs_attention(p: EscapeParams, i: int, c: CharState, a) -> int:
    """R-ESC-10c: the attention a moving action draws on top of R-ESC-9a when the actor's legs are bound (read
    from ``c`` as the action resolves); ``p.att_legs`` is 0 with ``legs_hinder = false``."""
    return p.att_legs if c.tiers[LEGS] >= 1 and moves(p, i, c, a) else 0


def attention_drawn(p: EscapeParams, i: int, c: CharState, a) -> int:
    """The attention action ``a`` of character ``i`` draws, ``per_round`` excluded, its legs read from ``c``:
    R-ESC-9a (an assist and an untie of another ``attention.assist``, an item used on a teammate too, a guide and
    an inspire ``attention.guide``, a search ``attention.search``) and R-ESC-10c (:func:`legs_attention`)."""
    if a is None:
        return 0
    if a.kind == "assist" or (a.kind in ("untie", "use_item") and a.target != i):
        base = p.att_assist
    elif a.kind in ("guide", "inspire"):
        base = p.att_guide
    elif a.kind == "search":
        base = p.att_search
    else:
        base = 0
    return base + legs_attention(p, i, c, a)


def search_need(p: EscapeParams, i: int, c: CharState) -> int:
    """R-ESC-10 / R-ESC-10c: what the search d20 must reach: search.dc + legs tier x search.legs_dc - the
    character's search modifier (``p.search_legs_dc`` is 0 with ``legs_hinder = false``)."""
    return p.search_dc + c.tiers[LEGS] * p.search_legs_dc - int(p.search_mod[i])


def findable_weights(p: EscapeParams, c: CharState, item_left) -> list[float]:
    """R-ESC-10 / R-ESC-10c: the draw weight of each item for this searcher: 0 when none is left, and 0 for an
    item marked ``needs_free_legs`` when its legs are bound (it stays in the pool)."""
    bound = c.tiers[LEGS] >= 1
    return [0.0 if item_left[k] == 0 or (bound and p.item_needs_legs[k]) else float(p.item_weight[k])
            for k in range(p.n_items)]


def can_inspire(p: EscapeParams, i: int, c: CharState) -> bool:
    """R-ESC-14b: a bard with an inspire use left and gag 0 (the target needs earplugs 0, as a guide's)."""
    return c.inspire > 0 and c.tiers[GAG] == 0


def has_rage(c: CharState) -> bool:
    """R-ESC-14a: a rage use left (UNLIMITED never runs out)."""
    return c.rage > 0 or c.rage == UNLIMITED


def allowed_abilities(c: CharState, slot: int) -> tuple[int, ...]:
    """R-ESC-11: body restricts to str on the body slot; fingers at moderate or above force str."""
    if c.tiers[BODY] >= 1 and slot != BODY:
        return ()
    if c.tiers[BODY] >= 1 or c.tiers[FINGERS] >= MODERATE:
        return (STR,)
    return (STR, DEX, INT)


def may_struggle(c: CharState, slot: int) -> bool:
    """A restraint its wearer may struggle: tier 1..despair (utter cannot, R-ESC-2), body rule (R-ESC-11)."""
    t = c.tiers[slot]
    return 1 <= t < UTTER and bool(allowed_abilities(c, slot))


def goal_done(p: EscapeParams, c: CharState) -> bool:
    return all(c.tiers[s] == 0 for s in range(N_SLOTS) if p.goal[s])


# ---------------------------------------------------------------------------------------------
# the check (R-ESC-3, R-ESC-4, R-ESC-11, R-ESC-14, R-GEN-4)


@dataclass(frozen=True)
class CheckSpec:
    net: int
    need: int  # the random part must reach this
    blessed: bool
    breath: bool
    dc: int
    auto_release: bool  # a `*` restraint in its second consecutive round (R-ESC-3)
    insp: int = 0  # sides of the inspiration die added to the check (R-ESC-14b), 0: none


def check_spec(p: EscapeParams, i: int, c: CharState, slot: int, ability: int, *, assisted: bool = False,
               guide: int = 0, mage: int = 0, breath: bool = False, rage: bool = False,
               terrain: bool = False) -> CheckSpec:
    tier = c.tiers[slot]
    dc = int(p.dc[tier])
    static = int(p.escape_mod[i, ability]) + c.acc[slot] + c.item_bonus + int(p.artist_bonus[i, ability])
    static += int(p.feature_bonus[i, ability])  # R-ESC-14a rogue (proficiency once), druid (positive wis)
    static += guide + mage
    if terrain:
        static += int(p.terrain_bonus[i, ability])  # R-ESC-14a favoured terrain: 2 x prof in all
    if breath:
        static += int(p.wis_mod[i])  # R-ESC-14 inner breath: + d20 + wis mod
    penalty = 0
    if ability == DEX and c.tiers[FINGERS] >= 1 and slot != FINGERS:
        penalty += 1  # R-ESC-11 fingers: penalty die on dex checks of other slots
    if ability == STR and c.tiers[MASK] >= 1:
        penalty += 1  # R-ESC-11 mask: penalty die on every str check (R-ESC-33)
    # R-GEN-4: an assist's bonus die and a rage's bonus die (R-ESC-14a) are two bonus dice
    net = net_dice((1 if assisted else 0) + (1 if rage else 0), penalty, p.stacking)
    auto = int(p.mark[tier]) == MARK_STAR and c.streak[slot] == 1
    return CheckSpec(net, dc - static, c.blessed, breath, dc, auto, c.insp_die)


def spec_numerator(spec: CheckSpec) -> int | Fraction:
    """Success probability numerator over CHECK_DENOMINATOR; a `*` auto-release counts as 1. With an
    inspiration die held (R-ESC-14b) the mean over its faces, an exact Fraction (comparisons stay exact)."""
    if spec.auto_release:
        return CHECK_DENOMINATOR
    if spec.insp:
        total = sum(check_numerator(spec.net, spec.need - f, spec.blessed, spec.breath)
                    for f in range(1, spec.insp + 1))
        return Fraction(total, spec.insp)
    return check_numerator(spec.net, spec.need, spec.blessed, spec.breath)
