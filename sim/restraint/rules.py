"""RST rules as plain scalar functions (RULES.md section 2), and the compiled parameters.

These functions read like the rules. The scalar reference (:mod:`sim.restraint.reference`) and
the exact analysis (:mod:`sim.restraint.exact`) are built from them; the vectorized kernel
(:mod:`sim.restraint.kernel`) re-implements the same rules over a batch and is tested against them.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.composure import composure_maximum
from sim.dice import (
    ABILITIES,
    CHECK_DENOMINATOR,
    ability_modifier,
    check_numerator,
    kept_d20_counts,
    net_dice,
    parse_dice,
    proficiency_bonus,
)
from sim.restraint.model import SLOTS, Scenario

# ---------------------------------------------------------------------------------------------
# R-RST-1 slots and levels

ARMS, LEGS, FINGERS, BODY, GAG, BLINDFOLD, EARPLUGS = range(len(SLOTS))
N_SLOTS = len(SLOTS)
NONE, LIGHT, MODERATE, HEAVY, COMPLETE, DESPAIR = range(6)
N_LEVELS = 6

# Escape abilities in tie-break order (R-RST-30).
ESCAPE_ABILITIES = ("str", "dex", "int")
STR, DEX, INT = range(3)

# ---------------------------------------------------------------------------------------------
# R-RST-5 / R-RST-6 score penalties by level (despair as complete)

ARMS_STR_PENALTY = (0, 2, 4, 6, 8, 8)
ARMS_DEX_PENALTY = (0, 0, 2, 4, 6, 6)
LEGS_DEX_PENALTY = (0, 2, 4, 6, 8, 8)
LEGS_STR_PENALTY = (0, 0, 0, 2, 4, 4)

# R-RST-12 rages per day by barbarian level: 2, 3 at 3, 4 at 6, 5 at 12, 6 at 17.
_RAGE_STEPS = ((17, 6), (12, 5), (6, 4), (3, 3), (1, 2))

# ---------------------------------------------------------------------------------------------
# Column layout of the per-round uniform block (shared by reference and kernel).
COL_BINDER = 0  # binder's contest d20
COL_TARGET = (1, 2)  # target's contest d20 and its flank penalty die (R-RST-11)
COL_BONUS = (3, 4, 5)  # bonus-action escape check: up to 3 d20 (pool stacking)
COL_ACTION = (6, 7, 8)  # action escape check
COL_STIMULUS = 9  # then n_dice columns per composure pool; then, when some pool has a recovery (R-RST-32),
# two columns per pool: REC_D20 (absolute focus check) and REC_DIE (its d8, or the 1d6 of channel divinity / ki)
REC_D20, REC_DIE = 0, 1

# R-RST-32 / R-ESC-14: absolute focus and its casting ability
FOCUS_CASTING = {"wizard": "int", "artificer": "int", "sorcerer": "cha"}
RECOVERY_SIDES = 6  # channel divinity and ki: 1d6
FOCUS_SIDES = 8  # absolute focus: 1d8 + casting mod


def channel_divinity_uses(cls: str, level: int) -> int:
    """R-RST-32: cleric 0 at 1, 1 at 2-5, 2 at 6-17, 3 at 18-20; paladin 0 at 1-2, 1 from 3."""
    if cls == "cleric":
        return 0 if level < 2 else (1 if level < 6 else (2 if level < 18 else 3))
    if cls == "paladin":
        return 0 if level < 3 else 1
    return 0


def ki_points(cls: str, level: int) -> int:
    """R-RST-32 (as the escape challenge): a monk's ki points, its level from level 2 (0 at level 1)."""
    return level if (cls == "monk" and level >= 2) else 0


def rages_per_day(level: int) -> int:
    """R-RST-12: a barbarian's rages per day (per duel, R-RST-31)."""
    for at, rages in _RAGE_STEPS:
        if level >= at:
            return rages
    return 2


# ---------------------------------------------------------------------------------------------
# compiled parameters


@dataclass(frozen=True)
class Params:
    """Everything a step needs, derived once from the validated scenario (immutable)."""

    rounds: int  # duel rounds (R-RST-13)
    horizon: int  # rounds simulated: max(duel rounds, composure rounds)
    composure_rounds: int
    stacking: str  # R-GEN-4 / R-RST-31
    has_binder: bool
    binder_mod: int  # R-RST-27: max(mod str, mod dex), no penalties, nothing from level or class
    method_action: bool  # R-RST-10 / R-RST-28
    flank_penalty: bool  # R-RST-11: the target's contest roll has a penalty die
    flank_extra: bool  # R-RST-11: a won binding adds one more level
    bind_slots: tuple[int, ...]
    bindable_condition: bool  # R-RST-9: incapacitated, grappled, restrained or prone
    incapacitated_condition: bool  # R-RST-26
    binder_first: bool  # R-RST-13 initiative
    str_score: int
    dex_score: int
    int_score: int
    class_bonus: int  # R-RST-31: rogue proficiency, druid wis mod
    ranger_bonus: int  # R-RST-12: 2 x proficiency
    ranger_uses: int  # 0 unless a ranger in favoured terrain
    rages: int  # 0 unless a barbarian
    initial_levels: tuple[int, ...]
    composure_max: int  # the target's (R-RST-25)
    pool_names: tuple[str, ...]  # composure pools under the stimulus: target, then party
    pool_max: tuple[int, ...]
    pool_constant: tuple[int, ...]  # constant + ability part of the stimulus, per pool
    die_sides: tuple[int, ...]  # one entry per die of the stimulus
    die_signs: tuple[int, ...]
    craving: bool  # R-RST-22
    recoveries: bool = False  # R-RST-32 switch
    pool_focus: tuple[bool, ...] = ()  # R-RST-32: absolute focus (wizard, sorcerer, artificer)
    pool_focus_mod: tuple[int, ...] = ()  # its casting modifier
    pool_uses: tuple[int, ...] = ()  # R-RST-32: channel divinity or ki uses (0: none)
    rec_cols: bool = False  # two recovery columns per pool are drawn
    duel_overload: bool = False  # R-RST-33: the target's composure runs alongside the duel
    dazed_rounds: int = 1  # R-RST-33

    @property
    def n_pools(self) -> int:
        return len(self.pool_max)

    @property
    def n_dice(self) -> int:
        return len(self.die_sides)

    @property
    def n_cols(self) -> int:
        return COL_STIMULUS + self.n_pools * self.n_dice + (2 * self.n_pools if self.rec_cols else 0)

    def recovery_col(self, pool: int, which: int) -> int:
        """Column of pool ``pool``'s absolute-focus d20 (``REC_D20``) or recovery die (``REC_DIE``)."""
        return COL_STIMULUS + self.n_pools * self.n_dice + 2 * pool + which

    def stimulus_cols(self, pool: int) -> range:
        start = COL_STIMULUS + pool * self.n_dice
        return range(start, start + self.n_dice)


def character_composure(cls: str, level: int, scores: dict, ability: str | None, override: int | None) -> int:
    """R-RST-25: the composure maximum, or the scenario's override."""
    if override is not None:
        return int(override)
    return composure_maximum(cls, level, scores, ability)


def compile_params(s: Scenario) -> Params:
    """Derive :class:`Params` from a validated scenario: the target, the binder and the composure pools, each by
    its own helper below."""
    t = s.target
    scores = t.scores.as_dict()
    b = s.binder
    pools = _composure_pools(s)
    composure_rounds = s.composure.rounds if s.composure.rounds is not None else s.run.rounds
    return Params(
        rounds=s.run.rounds,
        horizon=max(s.run.rounds, composure_rounds if pools["pool_max"] else 0),
        composure_rounds=composure_rounds,
        stacking=s.rules.dice_stacking,
        **_binder(s),
        method_action=b is not None and b.method == "action",
        flank_penalty=b is not None and b.flanking and b.flank_choice == "penalty",
        flank_extra=b is not None and b.flanking and b.flank_choice == "extra_level",
        bindable_condition=t.condition != "none",
        incapacitated_condition=t.condition == "incapacitated",
        binder_first=t.initiative == "binder",
        str_score=scores["str"],
        dex_score=scores["dex"],
        int_score=scores["int"],
        **_class_features(t, scores, s.policy.forbid),
        initial_levels=t.restraints.as_tuple(),
        composure_max=character_composure(t.class_, t.level, scores, t.composure_ability, t.composure),
        **pools,
        craving=s.composure.kind == "craving",
        **_pool_recoveries(s, bool(pools["pool_max"])),
        duel_overload=bool(s.rules.overload_in_duel and pools["pool_max"]),
        dazed_rounds=s.overload.dazed_rounds,
    )


def _class_features(t, scores: dict, forbid=()) -> dict:
    """The target's class features: the rogue's and druid's check bonus (R-RST-12, R-RST-31), the ranger's
    favoured-terrain bonus and uses, the barbarian's rages (none where policy.forbid names rage: issue 36, the
    balance audit; every engine reads ``rages``, so all three honour it alike)."""
    prof = proficiency_bonus(t.level)
    class_bonus = 0
    if t.class_ == "rogue":
        class_bonus = prof  # R-RST-12 / R-RST-31
    elif t.class_ == "druid":
        class_bonus = max(0, ability_modifier(scores["wis"]))  # R-RST-31: only when positive (「可以」)
    return dict(
        class_bonus=class_bonus,
        ranger_bonus=2 * prof,
        ranger_uses=prof if (t.class_ == "ranger" and t.favoured_terrain) else 0,
        rages=rages_per_day(t.level) if t.class_ == "barbarian" and "rage" not in forbid else 0,
    )


def _binder(s: Scenario) -> dict:
    """The binder, if any: its modifier (the better of str and dex) and the slots it binds."""
    b = s.binder
    if b is None:
        return dict(has_binder=False, binder_mod=0, bind_slots=())
    bs = b.scores.as_dict()
    return dict(has_binder=True, binder_mod=max(ability_modifier(bs["str"]), ability_modifier(bs["dex"])),
                bind_slots=tuple(SLOTS.index(x) for x in b.slots))


def _composure_pools(s: Scenario) -> dict:
    """The composure pools (the target's, then the party's, in file order) when a stimulus is set: their names,
    maxima and the stimulus's constant part for each; the stimulus dice as sides and signs, one per die."""
    t, c = s.target, s.composure
    pool_names: tuple[str, ...] = ()
    pool_max: tuple[int, ...] = ()
    pool_constant: tuple[int, ...] = ()
    sides: list[int] = []
    signs: list[int] = []
    if c.stimulus is not None:
        expr = parse_dice(c.stimulus, ABILITIES)
        for term in expr.dice:
            sides += [term.sides] * term.count
            signs += [term.sign] * term.count
        members = [("target", t.class_, t.level, t.scores.as_dict(), t.composure_ability, t.composure)]
        members += [(m.name, m.class_, m.level, m.scores.as_dict(), m.composure_ability, m.composure) for m in c.party]
        pool_names = tuple(m[0] for m in members)
        pool_max = tuple(character_composure(*m[1:]) for m in members)
        pool_constant = tuple(
            expr.constant + expr.ability_part({a: ability_modifier(m[3][a]) for a in ABILITIES}) for m in members
        )
    return dict(pool_names=pool_names, pool_max=pool_max, pool_constant=pool_constant, die_sides=tuple(sides),
                die_signs=tuple(signs))


def _pool_recoveries(s: Scenario, has_pools: bool) -> dict:
    """R-RST-32: each pool uses its class's volume-1 recoveries (none with the switch off): absolute focus and
    its casting modifier, channel divinity and ki uses."""
    t, c = s.target, s.composure
    recoveries = bool(s.rules.recoveries and has_pools)
    focus, focus_mod, uses = (), (), ()
    if has_pools:
        classes = [(t.class_, t.level, t.scores.as_dict())] + [(m.class_, m.level, m.scores.as_dict()) for m in c.party]
        # R-RST-32: each pool uses its class's volume-1 recoveries (none with the switch off)
        focus = tuple(recoveries and cls in FOCUS_CASTING for cls, _, _ in classes)
        focus_mod = tuple(ability_modifier(sc[FOCUS_CASTING[cls]]) if cls in FOCUS_CASTING else 0
                          for cls, _, sc in classes)
        uses = tuple((channel_divinity_uses(cls, lv) + ki_points(cls, lv)) if recoveries else 0
                     for cls, lv, _ in classes)
    return dict(recoveries=recoveries, pool_focus=focus, pool_focus_mod=focus_mod, pool_uses=uses,
                rec_cols=any(focus) or any(u > 0 for u in uses))


# ---------------------------------------------------------------------------------------------
# R-RST-2, R-RST-3, R-RST-29, R-RST-30: escape DCs and which restraints may be struggled


def escape_dc(slot: int, levels) -> int:
    """R-RST-2 / R-RST-29: 10 + 4 x level (body: always as heavy, 22) + fingers and body modifiers."""
    level = levels[slot]
    dc = 10 + 4 * (HEAVY if slot == BODY else level)
    if slot != FINGERS and levels[FINGERS] in (LIGHT, MODERATE):
        dc += 4
    if slot != BODY and levels[BODY] >= LIGHT:
        dc += 8
    return dc


def escapable(slot: int, levels) -> bool:
    """R-RST-3 / R-RST-30: above 0, not despair, and not blocked by fingers at complete or despair."""
    if not LIGHT <= levels[slot] <= COMPLETE:
        return False
    return slot == FINGERS or levels[FINGERS] < COMPLETE


def dropped_level(level: int, rage: bool) -> int:
    """R-RST-3 / R-RST-29 / R-RST-31: a success lowers one level; complete drops to moderate in
    combat; a rage success then takes one level more, not below 0."""
    new = MODERATE if level == COMPLETE else level - 1
    if rage:
        new = max(NONE, new - 1)
    return new


# ---------------------------------------------------------------------------------------------
# R-RST-5, R-RST-6, R-RST-27, R-RST-30: scores under restraint


def contest_scores(str_score: int, dex_score: int, levels) -> tuple[int, int]:
    """R-RST-5 / R-RST-6: str and dex after every arms and legs score penalty (not clamped)."""
    a, lg = levels[ARMS], levels[LEGS]
    return (
        str_score - ARMS_STR_PENALTY[a] - LEGS_STR_PENALTY[lg],
        dex_score - ARMS_DEX_PENALTY[a] - LEGS_DEX_PENALTY[lg],
    )


def contest_modifier(str_score: int, dex_score: int, levels) -> int:
    """R-RST-10 / R-RST-27: max(mod str, mod dex) after score penalties."""
    s, d = contest_scores(str_score, dex_score, levels)
    return max(ability_modifier(s), ability_modifier(d))


def escape_score(p: Params, ability: int, levels) -> int:
    """R-RST-30: str minus the arms and legs str penalties; dex minus the arms dex penalty only
    (R-RST-6: legs never touch a dex escape); int unpenalised."""
    if ability == STR:
        return p.str_score - ARMS_STR_PENALTY[levels[ARMS]] - LEGS_STR_PENALTY[levels[LEGS]]
    if ability == DEX:
        return p.dex_score - ARMS_DEX_PENALTY[levels[ARMS]]
    return p.int_score


@dataclass(frozen=True)
class CheckSpec:
    """One escape check before the ranger's choice: dice, static modifier, DC."""

    slot: int
    ability: int
    net: int  # signed extra d20s after R-GEN-4 stacking
    static: int  # ability mod + class bonus (ranger bonus not included)
    dc: int
    auto_fail: bool  # R-RST-8: str with arms at complete or despair
    rage: bool  # R-RST-12 / R-RST-31: a barbarian's rage rides on this str check

    def numerator(self, extra: int = 0) -> int:
        """Exact P(success) x CHECK_DENOMINATOR, with ``extra`` added to the static modifier."""
        if self.auto_fail:
            return 0
        return check_numerator(self.net, self.dc - self.static - extra)


def check_spec(p: Params, levels, slot: int, ability: int, rages_left: int) -> CheckSpec:
    """R-RST-3, R-RST-5, R-RST-8, R-RST-12, R-RST-30, R-RST-31: the check on ``slot`` with ``ability``."""
    bonus = penalty = 0
    rage = ability == STR and rages_left > 0
    if rage:
        bonus += 1  # R-RST-12 barbarian: bonus die on a str escape check
    if ability == STR and levels[ARMS] == HEAVY:
        penalty += 1  # R-RST-5: penalty die on str checks at arms heavy
    if levels[FINGERS] == HEAVY:
        penalty += 1  # R-RST-3 / R-RST-30: fingers at heavy, every escape check
    return CheckSpec(
        slot=slot,
        ability=ability,
        net=net_dice(bonus, penalty, p.stacking),
        static=ability_modifier(escape_score(p, ability, levels)) + p.class_bonus,
        dc=escape_dc(slot, levels),
        auto_fail=ability == STR and levels[ARMS] >= COMPLETE,  # R-RST-5 / R-RST-8
        rage=rage,
    )


def best_check(p: Params, levels, slot: int, rages_left: int) -> tuple[CheckSpec, int]:
    """R-RST-30: the ability with the highest success probability (ties str, dex, int), without the
    ranger's spend (R-RST-31). Returns the check and its numerator."""
    best: tuple[CheckSpec, int] | None = None
    for ability in (STR, DEX, INT):
        spec = check_spec(p, levels, slot, ability, rages_left)
        num = spec.numerator()
        if best is None or num > best[1]:
            best = (spec, num)
    assert best is not None
    return best


def bonus_action_slot(levels) -> int | None:
    """R-RST-4 / R-RST-30: the light restraint with the lowest DC (ties in slot order), if any."""
    best: tuple[int, int] | None = None
    for slot in range(N_SLOTS):
        if levels[slot] == LIGHT and escapable(slot, levels):
            dc = escape_dc(slot, levels)
            if best is None or dc < best[1]:
                best = (slot, dc)
    return None if best is None else best[0]


def action_slot(p: Params, levels, rages_left: int) -> int | None:
    """R-RST-4 / R-RST-30: the escapable restraint with the highest success probability (slot order)."""
    best: tuple[int, int] | None = None
    for slot in range(N_SLOTS):
        if escapable(slot, levels):
            _, num = best_check(p, levels, slot, rages_left)
            if best is None or num > best[1]:
                best = (slot, num)
    return None if best is None else best[0]


def ranger_spends(p: Params, num: int, ranger_left: int) -> bool:
    """R-RST-31: a ranger in favoured terrain spends a use when its best probability is below 1/2."""
    return ranger_left > 0 and 2 * num < CHECK_DENOMINATOR


# ---------------------------------------------------------------------------------------------
# R-RST-9, R-RST-10, R-RST-11, R-RST-28: binding


def can_be_bound(p: Params, levels) -> bool:
    """R-RST-9 / R-RST-28: the scenario's condition allows it, or body >= 1."""
    return p.bindable_condition or levels[BODY] >= LIGHT


def binding_slot(p: Params, levels) -> int | None:
    """R-RST-28: the first slot of ``binder.slots`` below despair, if the target can be bound."""
    if not p.has_binder or not can_be_bound(p, levels):
        return None
    for slot in p.bind_slots:
        if levels[slot] < DESPAIR:
            return slot
    return None


def bound_level(level: int, method_action: bool, extra: bool) -> int:
    """R-RST-10 / R-RST-11 / R-RST-28: a won binding. By action a slot at 0 goes to moderate,
    otherwise one level up; flank ``extra_level`` adds one more; capped at despair."""
    new = MODERATE if (method_action and level == NONE) else level + 1
    if extra:
        new += 1
    return min(new, DESPAIR)


def contest_win_probability(binder_mod: int, target_mod: int, penalty: bool) -> float:
    """R-RST-10 / R-RST-27: P(binder d20 + mod > target kept d20 + mod); ties change nothing."""
    counts = kept_d20_counts(-1 if penalty else 0)
    total = int(counts.sum())
    wins = 0
    for b in range(1, 21):
        for t in range(1, 21):
            if b + binder_mod > t + target_mod:
                wins += int(counts[t])
    return wins / (20 * total)


def is_incapacitated(p: Params, levels) -> bool:
    """R-RST-7 / R-RST-26: body >= 1, or the scenario's condition is incapacitated."""
    return p.incapacitated_condition or levels[BODY] >= LIGHT


# ---------------------------------------------------------------------------------------------
# R-RST-21, R-RST-22, R-RST-32, R-RST-33 (with R-ESC-34 / R-ESC-35): one pool's composure at the end of a round


@dataclass
class Pool:
    """One composure pool's state: composure left, maximum lost to craving, channel divinity / ki uses left,
    the last round of absolute-focus immunity, dazed rounds left, overloads and recoveries made."""

    composure: int
    craving: int = 0
    uses: int = 0
    immune_until: int = 0
    dazed_left: int = 0
    overloads: int = 0
    recoveries: int = 0


def new_pool(p: Params, pool: int) -> Pool:
    return Pool(composure=p.pool_max[pool], uses=p.pool_uses[pool] if p.pool_uses else 0)


def composure_step(p: Params, pool: int, st: Pool, damage: int, d20: int, die: int, round_no: int) -> bool:
    """The stimulus ``damage`` (already >= 0) hits ``st`` at the end of round ``round_no``; returns True when the
    pool overloads. ``d20`` / ``die``: the pool's recovery faces this round (absolute focus d20 and d8, or the
    1d6 of channel divinity / ki; read only when used).

    Order (R-ESC-34, R-RST-32): a dazed pool stays at 0 and ignores damage (craving still lowers the maximum),
    and resets to maximum − craving at the end of its last dazed round; otherwise damage lowers composure (a
    craving also the maximum); at 0 after damage > 0 a pool immune from absolute focus stays at 0, else
    absolute focus is tried (d20 + casting mod >= 10 + floor(damage / 2): composure 1d8 + mod, capped, immune
    through the next round), else it overloads (dazed ``dazed_rounds``, or reset at once when 0). A pool not
    overloaded and left at or below half its maximum − craving (round down) spends one channel divinity or ki
    use: + 1d6, capped at maximum − craving."""
    if p.craving:
        st.craving += damage  # R-RST-22 / R-ESC-34: counted once, also while dazed
    top = p.pool_max[pool] - st.craving
    if st.dazed_left > 0:
        st.dazed_left -= 1
        if st.dazed_left == 0:
            st.composure = max(0, top)
        return False
    st.composure = max(0, min(st.composure - damage, top))
    if damage > 0 and st.composure == 0:
        if round_no <= st.immune_until:
            return False  # R-ESC-35: no overload until the end of the round after a focus success
        if p.pool_focus and p.pool_focus[pool]:  # R-RST-32 / R-ESC-14 absolute focus, always attempted
            mod = p.pool_focus_mod[pool]
            if d20 + mod >= 10 + damage // 2:
                st.composure = min(max(0, die + mod), max(0, top))
                st.immune_until = round_no + 1
                st.recoveries += 1
                return False
        st.overloads += 1  # R-RST-21
        if p.dazed_rounds > 0:
            st.dazed_left = p.dazed_rounds
        else:
            st.composure = max(0, top)
        return True
    if st.uses > 0 and st.composure <= max(0, top) // 2:  # R-RST-32 channel divinity / ki, one use a round
        st.uses -= 1
        st.recoveries += 1
        st.composure = min(st.composure + die, max(0, top))
    return False
