"""Rule-by-rule checks of the scalar RST rules against hand-computed values (RULES.md section 2)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from restraint_helpers import make

from sim.dice import CHECK_DENOMINATOR
from sim.restraint import rules as R
from sim.restraint.reference import Target, escape_check, target_turn
from sim.restraint.rules import compile_params

ARMS, LEGS, FINGERS, BODY, GAG = R.ARMS, R.LEGS, R.FINGERS, R.BODY, R.GAG


def lv(**levels) -> list[int]:
    out = [0] * R.N_SLOTS
    for name, value in levels.items():
        out[getattr(R, name.upper())] = value
    return out


def fraction(num: int) -> Fraction:
    return Fraction(num, CHECK_DENOMINATOR)


def dice(*faces: int) -> np.ndarray:
    """Pre-drawn d20 faces for the 9 d20 columns (binder, target x2, bonus x3, action x3)."""
    out = np.full(9, 10, dtype=np.int64)
    out[: len(faces)] = faces
    return out


def test_r_rst_1_slots_and_levels():
    """R-RST-1: seven slots, levels 0 none … 5 despair."""
    from sim.restraint.model import LEVEL_NAMES, SLOTS

    assert SLOTS == ("arms", "legs", "fingers", "body", "gag", "blindfold", "earplugs")
    assert LEVEL_NAMES == ("none", "light", "moderate", "heavy", "complete", "despair")
    assert (R.NONE, R.LIGHT, R.MODERATE, R.HEAVY, R.COMPLETE, R.DESPAIR) == (0, 1, 2, 3, 4, 5)


@pytest.mark.parametrize(
    "slot, levels, dc",
    [
        (ARMS, lv(arms=1), 14),
        (ARMS, lv(arms=3), 22),
        (ARMS, lv(arms=4), 26),
        (ARMS, lv(arms=2, fingers=1), 22),  # fingers light: +4 to other slots
        (ARMS, lv(arms=2, fingers=2), 22),
        (ARMS, lv(arms=2, fingers=3), 18),  # fingers heavy: no DC modifier (a penalty die instead)
        (FINGERS, lv(fingers=2), 18),  # fingers' own DC has no fingers modifier
        (ARMS, lv(arms=2, body=1), 26),  # body: +8 to every other slot
        (FINGERS, lv(fingers=1, body=4), 22),
        (ARMS, lv(arms=1, fingers=1, body=1), 26),
    ],
)
def test_r_rst_2_escape_dc(slot, levels, dc):
    """R-RST-2: DC = 10 + 4 x level, fingers light/moderate +4, body +8 on every other slot."""
    assert R.escape_dc(slot, levels) == dc


@pytest.mark.parametrize("level", [1, 2, 3, 4, 5])
def test_r_rst_29_body_dc_is_heavy_at_every_level(level):
    """R-RST-29 / R-RST-2: the body's own DC uses level 3 (22) whatever its level; fingers still add 4."""
    assert R.escape_dc(BODY, lv(body=level)) == 22
    assert R.escape_dc(BODY, lv(body=level, fingers=2)) == 26


def test_r_rst_29_body_drops_one_level_and_despair_holds():
    """R-RST-29: success lowers body one level (complete -> moderate); despair cannot be escaped."""
    assert [R.dropped_level(v, False) for v in (1, 2, 3, 4)] == [0, 1, 2, 2]
    assert not R.escapable(BODY, lv(body=5))
    assert R.escapable(BODY, lv(body=4))


def test_r_rst_3_success_lowers_one_level_complete_to_moderate():
    """R-RST-3: a success lowers one level; in combat complete drops to moderate; despair is final."""
    assert [R.dropped_level(v, rage=False) for v in (1, 2, 3, 4)] == [0, 1, 2, 2]
    assert not R.escapable(ARMS, lv(arms=5))
    assert not R.escapable(ARMS, lv())


def test_r_rst_3_fingers_heavy_penalty_die_and_complete_blocks():
    """R-RST-3 / R-RST-30: fingers heavy puts a penalty die on every escape check (its own too);
    fingers complete or despair blocks every other slot, not itself (complete)."""
    p = compile_params(make())
    levels = lv(arms=2, fingers=3)
    for slot in (ARMS, FINGERS):
        for ability in (R.STR, R.DEX, R.INT):
            assert R.check_spec(p, levels, slot, ability, 0).net == -1
    assert not R.escapable(ARMS, lv(arms=2, fingers=4))
    assert R.escapable(FINGERS, lv(arms=2, fingers=4))
    assert not R.escapable(ARMS, lv(arms=2, fingers=5))
    assert not R.escapable(FINGERS, lv(arms=2, fingers=5))


def test_r_rst_4_bonus_action_then_action():
    """R-RST-4: a light restraint gets a bonus-action check, then the action check; body >= 1
    (incapacitation) does not stop them."""
    p = compile_params(make())
    t = Target(levels=lv(arms=1, legs=2, body=1), rages=0, ranger=0)
    made = target_turn(p, t, dice(1, 1, 1, 1, 1, 1, 1, 1, 1))  # every roll a 1: both fail
    assert made == 2 and t.levels == lv(arms=1, legs=2, body=1)
    t = Target(levels=lv(legs=2), rages=0, ranger=0)
    assert target_turn(p, t, dice(1, 1, 1, 1, 1, 1, 1, 1, 1)) == 1  # no light restraint: the action only
    t = Target(levels=lv(), rages=0, ranger=0)
    assert target_turn(p, t, dice()) == 0


@pytest.mark.parametrize(
    "arms, legs, str_, dex",
    [(0, 0, 12, 12), (1, 0, 10, 12), (2, 0, 8, 10), (3, 0, 6, 8), (4, 0, 4, 6), (5, 0, 4, 6),
     (0, 1, 12, 10), (0, 2, 12, 8), (0, 3, 10, 6), (0, 4, 8, 4), (0, 5, 8, 4), (3, 3, 4, 2)],
)
def test_r_rst_5_r_rst_6_score_penalties(arms, legs, str_, dex):
    """R-RST-5 arms and R-RST-6 legs score penalties (despair as complete), scores not clamped."""
    assert R.contest_scores(12, 12, lv(arms=arms, legs=legs)) == (str_, dex)


def test_r_rst_5_arms_heavy_penalty_die_and_complete_auto_fail():
    """R-RST-5: arms heavy gives str checks a penalty die; arms complete makes them fail."""
    p = compile_params(make())
    assert R.check_spec(p, lv(arms=3), ARMS, R.STR, 0).net == -1
    assert R.check_spec(p, lv(arms=3), ARMS, R.DEX, 0).net == 0
    spec = R.check_spec(p, lv(arms=4, legs=2), LEGS, R.STR, 0)
    assert spec.auto_fail and spec.numerator() == 0


def test_r_rst_6_legs_never_touch_dex_escape():
    """R-RST-6 / R-RST-30: legs dex penalties, dice and failures never apply to a dex escape check."""
    p = compile_params(make(target={"scores": {"dex": 16}}))
    for legs in range(6):
        spec = R.check_spec(p, lv(legs=legs, arms=1), ARMS, R.DEX, 0)
        assert spec.static == 3 and spec.net == 0 and not spec.auto_fail
    # ... but they do lower the str used for escapes (legs heavy -2 str)
    assert R.check_spec(p, lv(legs=3), LEGS, R.STR, 0).static == 0  # str 12 - 2 = 10


def test_r_rst_8_str_auto_fail_policy_picks_another_ability():
    """R-RST-8: with arms complete str escape fails automatically; the policy picks dex or int."""
    p = compile_params(make(target={"scores": {"str": 20, "dex": 8, "int": 11}}))
    levels = lv(arms=4, legs=2)
    spec, num = R.best_check(p, levels, LEGS, 0)
    assert spec.ability == R.INT  # dex 8 - 6 = 2 (-4) < int 11 (+0); str 20 - 8 = 12 but fails
    assert fraction(num) == Fraction(3, 20)  # DC 18


def test_r_rst_7_r_rst_26_incapacitated_by_body_or_condition():
    """R-RST-7 / R-RST-26: body >= 1 incapacitates; so does the scenario's condition."""
    p = compile_params(make())
    assert not R.is_incapacitated(p, lv(arms=4))
    assert R.is_incapacitated(p, lv(body=1))
    p = compile_params(make(target={"condition": "incapacitated"}))
    assert R.is_incapacitated(p, lv())


def test_r_rst_9_r_rst_28_who_can_be_bound():
    """R-RST-9 / R-RST-28: condition none cannot be bound unless body >= 1; others can."""
    for condition in ("incapacitated", "grappled", "restrained", "prone"):
        p = compile_params(make(target={"condition": condition}))
        assert R.binding_slot(p, lv()) == ARMS
    p = compile_params(make(target={"condition": "none"}))
    assert R.binding_slot(p, lv()) is None
    assert R.binding_slot(p, lv(body=1)) == ARMS


def test_r_rst_10_contest_probability_ties_change_nothing():
    """R-RST-10: binder wins only if strictly higher: equal modifiers win 190/400."""
    assert R.contest_win_probability(0, 0, False) == pytest.approx(190 / 400)
    # binder +3 vs target +1: win iff b - t >= -1: 19 + 210 = 229 of 400
    assert R.contest_win_probability(3, 1, False) == pytest.approx(229 / 400)


def test_r_rst_11_flank_penalty_die_contest_brute_force():
    """R-RST-11 / R-RST-27: the flank penalty die is the target's only die (keep the lower of two)."""
    for bm, tm in [(0, 0), (3, 1), (-2, 4), (5, -1)]:
        wins = sum(
            1
            for b in range(1, 21)
            for t1 in range(1, 21)
            for t2 in range(1, 21)
            if b + bm > min(t1, t2) + tm
        )
        assert R.contest_win_probability(bm, tm, True) == pytest.approx(wins / 8000, abs=1e-12)


def test_r_rst_10_r_rst_11_r_rst_28_binding_steps():
    """R-RST-10 / R-RST-28: by action 0 -> moderate (a re-binding too), above 0 one up; other: one up;
    R-RST-11 extra_level adds one more; capped at despair."""
    assert [R.bound_level(v, True, False) for v in range(5)] == [2, 2, 3, 4, 5]
    assert [R.bound_level(v, False, False) for v in range(5)] == [1, 2, 3, 4, 5]
    assert [R.bound_level(v, True, True) for v in range(5)] == [3, 3, 4, 5, 5]
    assert [R.bound_level(v, False, True) for v in range(5)] == [2, 3, 4, 5, 5]


def test_r_rst_28_first_slot_below_despair():
    """R-RST-28: the binder attempts the first slot of binder.slots below despair, else none."""
    p = compile_params(make(binder={"slots": ["legs", "arms", "gag"]}))
    assert R.binding_slot(p, lv()) == LEGS
    assert R.binding_slot(p, lv(legs=5)) == ARMS
    assert R.binding_slot(p, lv(legs=5, arms=5)) == GAG
    assert R.binding_slot(p, lv(legs=5, arms=5, gag=5)) is None


def test_r_rst_12_rages_per_day():
    """R-RST-12: rages 2, 3 at 3, 4 at 6, 5 at 12, 6 at 17."""
    expected = {1: 2, 2: 2, 3: 3, 5: 3, 6: 4, 11: 4, 12: 5, 16: 5, 17: 6, 20: 6}
    assert {lv_: R.rages_per_day(lv_) for lv_ in expected} == expected
    assert compile_params(make(target={"class": "barbarian", "level": 6})).rages == 4
    assert compile_params(make(target={"class": "fighter", "level": 6})).rages == 0


def test_r_rst_12_r_rst_31_class_bonuses():
    """R-RST-12 / R-RST-31: rogue + proficiency, druid + wis mod only when positive (revised 2026-12: wis 7,
    mod −2, adds nothing; wis 15 adds +2), ranger 2 x prof uses."""
    rogue = compile_params(make(target={"class": "rogue", "level": 5}))
    assert rogue.class_bonus == 3
    druid = compile_params(make(target={"class": "druid", "scores": {"wis": 7}}))
    assert druid.class_bonus == 0
    assert compile_params(make(target={"class": "druid", "scores": {"wis": 15}})).class_bonus == 2
    ranger = compile_params(make(target={"class": "ranger", "level": 9, "favoured_terrain": True}))
    assert (ranger.ranger_uses, ranger.ranger_bonus) == (4, 8)
    assert compile_params(make(target={"class": "ranger", "level": 9})).ranger_uses == 0


def test_r_rst_31_ranger_spends_below_one_half():
    """R-RST-31: a ranger spends a use when its best probability without it is below 1/2, then adds 2 x prof."""
    p = compile_params(make(target={"class": "ranger", "level": 1, "favoured_terrain": True}))
    half = CHECK_DENOMINATOR // 2
    assert R.ranger_spends(p, half - 1, 2) and not R.ranger_spends(p, half, 2)
    assert not R.ranger_spends(p, 0, 0)
    # arms moderate: dex 12 - 2 = 10 (+0), DC 18 -> 3/20 < 1/2: spend; +4 makes it 7/20.
    t = Target(levels=lv(arms=2), rages=0, ranger=2)
    escape_check(p, t, ARMS, np.array([14, 1, 1]))  # 14 + 0 + 4 = 18: a success only with the use
    assert t.ranger == 1 and t.levels[ARMS] == 1
    # bonus action on the light arms: DC 14, dex 12 +1 -> 8/20 < 1/2: spends again
    t2 = Target(levels=lv(arms=1), rages=0, ranger=1)
    escape_check(p, t2, ARMS, np.array([9, 1, 1]))  # 9 + 1 + 4 = 14
    assert t2.ranger == 0 and t2.levels[ARMS] == 0


def test_r_rst_12_r_rst_31_barbarian_rage():
    """R-RST-12 / R-RST-31: rage gives a str check a bonus die, a success drops one extra level and
    spends the rage; a failure keeps it; never below 0."""
    p = compile_params(make(target={"class": "barbarian", "level": 1, "scores": {"str": 16}}))
    spec = R.check_spec(p, lv(arms=2), ARMS, R.STR, rages_left=2)
    assert spec.rage and spec.net == 1
    assert not R.check_spec(p, lv(arms=2), ARMS, R.STR, rages_left=0).rage
    assert not R.check_spec(p, lv(arms=2), ARMS, R.DEX, rages_left=2).rage
    t = Target(levels=lv(arms=4), rages=2, ranger=0)
    escape_check(p, t, ARMS, np.array([20, 20, 20]))  # every ability impossible: str (ties), fails
    assert (t.rages, t.levels[ARMS]) == (2, 4)  # the rage is kept
    t = Target(levels=lv(legs=3), rages=2, ranger=0)  # str 16 - 2 = 14 (+2) with a bonus die; DC 22
    escape_check(p, t, LEGS, np.array([3, 4, 1]))  # kept 4 + 2 < 22: fails, rage kept
    assert (t.rages, t.levels[LEGS]) == (2, 3)
    escape_check(p, t, LEGS, np.array([3, 20, 1]))  # kept 20 + 2 = 22: success, heavy -> moderate -> light
    assert (t.rages, t.levels[LEGS]) == (1, 1)
    t = Target(levels=lv(legs=2), rages=2, ranger=0)  # DC 18, str 16 (+3)
    escape_check(p, t, LEGS, np.array([2, 15, 1]))  # kept 15 + 3 = 18: success, 2 -> 1 -> 0
    assert (t.rages, t.levels[LEGS]) == (1, 0)
    t = Target(levels=lv(legs=1), rages=1, ranger=0)
    escape_check(p, t, LEGS, np.array([20, 1, 1]))
    assert (t.rages, t.levels[LEGS]) == (0, 0)  # not below 0
    assert R.dropped_level(4, rage=True) == 1  # complete -> moderate -> light


def test_r_rst_31_rage_on_bonus_action_check():
    """R-RST-31: the rage rides on bonus-action str checks too."""
    p = compile_params(make(target={"class": "barbarian", "level": 1, "scores": {"str": 16, "dex": 8}}))
    spec, _ = R.best_check(p, lv(arms=1), ARMS, 2)
    assert spec.ability == R.STR and spec.rage
    t = Target(levels=lv(arms=1, legs=3), rages=2, ranger=0)
    target_turn(p, t, dice(1, 1, 1, 1, 14, 1, 1, 1, 1))  # bonus: kept 14 + 1 (str 16-2-2) >= 14
    assert t.levels[ARMS] == 0 and t.rages == 1


@pytest.mark.parametrize(
    "stacking, net", [("cancel", 0), ("pool", -1)],
)
def test_r_rst_31_dice_stacking_applies(stacking, net):
    """R-RST-31 / R-GEN-4: rage (bonus) vs arms heavy and fingers heavy (two penalties): cancel gives a
    plain roll, pool leaves one penalty die."""
    p = compile_params(make(rules={"dice_stacking": stacking}, target={"class": "barbarian"}))
    assert R.check_spec(p, lv(arms=3, fingers=3), ARMS, R.STR, 1).net == net


def test_r_rst_27_contest_modifier_uses_scores_only():
    """R-RST-27: the target's contest modifier is max(mod str, mod dex) after score penalties only;
    the binder's level and class give it nothing."""
    assert R.contest_modifier(12, 12, lv(arms=3)) == -1  # str 6 (-2), dex 8 (-1)
    assert R.contest_modifier(12, 12, lv(legs=4)) == -1  # str 8 (-1), dex 4 (-3)
    low = compile_params(make(binder={"level": 1}))
    high = compile_params(make(binder={"level": 20}))
    assert low.binder_mod == high.binder_mod == 3


def test_r_rst_30_bonus_action_lowest_dc_ties_in_slot_order():
    """R-RST-30: the bonus action goes to the light restraint of lowest DC, ties in slot order."""
    assert R.bonus_action_slot(lv(legs=1, gag=1)) == LEGS
    assert R.bonus_action_slot(lv(arms=1, legs=1)) == ARMS
    assert R.bonus_action_slot(lv(body=1, gag=1)) == BODY  # body light: DC 22; gag 14 + 8 = 22: tie, slot order
    assert R.bonus_action_slot(lv(fingers=1, arms=1)) == FINGERS  # arms 14 + 4, fingers 14
    assert R.bonus_action_slot(lv(arms=2)) is None
    assert R.bonus_action_slot(lv(arms=1, fingers=4)) is None  # blocked by fingers complete


def test_r_rst_30_action_highest_probability_ties_in_slot_order():
    """R-RST-30: the action goes to the restraint with the highest success probability; ties in slot
    order; abilities tie str, dex, int."""
    p = compile_params(make(target={"scores": {"str": 10, "dex": 10, "int": 10}}))
    assert R.action_slot(p, lv(arms=3, legs=2), 0) == LEGS
    assert R.action_slot(p, lv(gag=2, legs=2), 0) == LEGS  # equal DCs: slot order
    spec, _ = R.best_check(p, lv(gag=2), GAG, 0)
    assert spec.ability == R.STR  # all equal: str first
    # everything impossible still gets a check, on the first slot in order, with str
    p = compile_params(make(target={"scores": {"str": 1, "dex": 1, "int": 1}}))
    spec, num = R.best_check(p, lv(legs=4, gag=4), LEGS, 0)
    assert num == 0 and spec.ability == R.STR
    assert R.action_slot(p, lv(legs=4, gag=4), 0) == LEGS


def test_r_rst_30_exact_probabilities_by_hand():
    """R-RST-30: escape scores, hand-computed: arms moderate, str 12 -> 8 (-1), dex 12 -> 10 (+0)."""
    p = compile_params(make())
    assert fraction(R.check_spec(p, lv(arms=2), ARMS, R.STR, 0).numerator()) == Fraction(2, 20)
    assert fraction(R.check_spec(p, lv(arms=2), ARMS, R.DEX, 0).numerator()) == Fraction(3, 20)
    spec, num = R.best_check(p, lv(arms=2), ARMS, 0)
    assert spec.ability == R.DEX and fraction(num) == Fraction(3, 20)
    # arms heavy: str 6 (-2) with a penalty die vs DC 22 -> impossible; dex 8 (-1) -> impossible
    assert R.best_check(p, lv(arms=3), ARMS, 0)[1] == 0
