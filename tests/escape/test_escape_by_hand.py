"""Every tier and every class feature of the escape challenge, worked by hand from RULES.md.

These tests guard rules that the reference and the batch kernel read from one shared table
(``sim/escape/model.py``, ``sim/escape/params.py``, ``sim/composure.py``): agreement between the two
engines cannot catch a wrong entry there, so each expected number below is derived in a comment
from the rule text. They run the scalar reference round (``play_round``) with a scripted random
source, which reports the ``need`` of every check (DC minus every static bonus), so a wrong
bonus, DC or tier shows as a wrong number.
"""

from __future__ import annotations

import pytest
from escape_helpers import Script, character, setup

from sim.dice import CHECK_DENOMINATOR, check_numerator
from sim.errors import PolicyError
from sim.escape.params import ARMS, EARPLUGS
from sim.escape.reference import play_round
from sim.escape.state import Action

# R-ESC-2, transcribed from RULES.md: (id, DC, on success becomes, accumulation mark).
LADDER = ("free", "simple", "light", "moderate", "heavy", "severe", "complete", "despair", "utter")
TIERS = [
    ("simple", 10, "free", "*"),
    ("light", 12, "free", "*"),
    ("moderate", 15, "simple", "+"),
    ("heavy", 18, "light", "+"),
    ("severe", 21, "heavy", "#"),
    ("complete", 24, "severe", "#"),
    ("despair", 26, "complete", "x"),
]
# R-ESC-3: acc after one failed check, (alone, assisted): `*` none, `+` 2 (+2 assisted),
# `#` 1 (+1 assisted), `x` 0 (1 assisted).
ACC_AFTER_ONE_FAILURE = {"*": (0, 0), "+": (2, 4), "#": (1, 2), "x": (0, 1)}
CLASSES = ("barbarian", "bard", "cleric", "druid", "fighter", "monk", "paladin",
           "ranger", "rogue", "sorcerer", "warlock", "wizard", "artificer")

STRUGGLE_ARMS_STR = Action("struggle", slot=ARMS, ability=0)


def fixed(actions):
    return lambda view: list(actions)


def tier_name(c, slot=ARMS):
    return LADDER[c.tiers[slot]]


# --- R-ESC-2 / R-ESC-3: every tier ---------------------------------------------------------------


@pytest.mark.parametrize(("tier", "dc", "becomes", "mark"), TIERS)
def test_R_ESC_2_every_tier_dc_and_becomes_on_success(tier, dc, becomes, mark):
    # all scores 10 (mod 0), a fighter (no class bonus): the check needs exactly the DC
    p, st = setup(character("A", restraints={"arms": tier}))
    src = Script(checks=[True])
    play_round(p, st, fixed([STRUGGLE_ARMS_STR]), src)
    assert src.of("check")[0][3] == dc
    c = st.chars[0]
    assert tier_name(c) == becomes
    assert c.acc[ARMS] == 0 and c.streak[ARMS] == 0  # R-ESC-33: a success resets acc and streak


@pytest.mark.parametrize("assisted", [False, True])
@pytest.mark.parametrize(("tier", "dc", "becomes", "mark"), TIERS)
def test_R_ESC_3_every_tier_mark_after_two_failed_rounds(tier, dc, becomes, mark, assisted):
    # A struggles its arms twice and fails both rolls; B assists A both rounds, or rests.
    p, st = setup(character("A", restraints={"arms": tier}), character("B"))
    helper = Action("assist", target=0) if assisted else Action("rest")
    src = Script(checks=[False, False], rolls={"rest": [0, 0]})
    play_round(p, st, fixed([STRUGGLE_ARMS_STR, helper]), src)
    c = st.chars[0]
    one = ACC_AFTER_ONE_FAILURE[mark][assisted]
    assert tier_name(c) == tier and c.acc[ARMS] == one and c.streak[ARMS] == 1
    play_round(p, st, fixed([STRUGGLE_ARMS_STR, helper]), src)
    checks = src.of("check")
    assert checks[1][3] == dc - one  # the second check uses the acc that stood at the start of round 2
    assert checks[1][2] == (1 if assisted else 0)  # an assist is one bonus die (R-ESC-8)
    if mark == "*":
        assert tier_name(c) == "free"  # `*`: released on the second consecutive round whatever the roll
    else:
        assert tier_name(c) == tier and c.acc[ARMS] == 2 * one and c.streak[ARMS] == 2


def test_R_ESC_2_utter_has_no_check():
    p, st = setup(character("A", restraints={"arms": "utter"}), goal={"slots": ["arms"]})
    with pytest.raises(PolicyError, match="R-ESC"):
        play_round(p, st, fixed([STRUGGLE_ARMS_STR]), Script(checks=[True]), validate=True)


# --- R-ESC-9 guide ------------------------------------------------------------------------------


@pytest.mark.parametrize(("level", "int_", "dex", "bonus"), [
    (9, 14, 16, 4),  # proficiency largest: level 9 -> 2 + floor(8 / 4) = 4 > dex +3 > int +2
    (1, 18, 14, 4),  # int largest: int 18 -> +4 > dex +2 > proficiency 2
    (5, 12, 20, 5),  # dex largest: dex 20 -> +5 > proficiency 3 > int +1
])
def test_R_ESC_9_guide_bonus_each_term_the_largest(level, int_, dex, bonus):
    # G guides B; B struggles heavy arms (DC 18) with str 10: need = 18 - bonus
    p, st = setup(character("G", level=level, int=int_, dex=dex), character("B", restraints={"arms": "heavy"}))
    src = Script(checks=[False])
    play_round(p, st, fixed([Action("guide", target=1), STRUGGLE_ARMS_STR]), src)
    assert src.of("check")[0][3] == 18 - bonus
    assert src.of("check")[0][2] == 0  # a guide gives no bonus die
    assert int(p.guide_bonus[0]) == bonus


def test_R_ESC_9_several_guides_only_the_largest_counts():
    # guides of +2 (level 1, mods 0) and +5 (dex 20): need 18 - 5, not 18 - 7
    p, st = setup(character("G1"), character("G2", dex=20), character("B", restraints={"arms": "heavy"}))
    src = Script(checks=[False])
    play_round(p, st, fixed([Action("guide", target=2), Action("guide", target=2), STRUGGLE_ARMS_STR]), src)
    assert src.of("check")[0][3] == 13


def test_R_ESC_9_earplugs_stop_being_guided():
    p, st = setup(character("G"), character("B", restraints={"arms": "heavy", "earplugs": "simple"}))
    assert st.chars[1].tiers[EARPLUGS] == 1
    with pytest.raises(PolicyError):
        play_round(p, st, fixed([Action("guide", target=1), STRUGGLE_ARMS_STR]), Script(checks=[False]),
                   validate=True)


# --- R-ESC-14 escape artist, mage hand ----------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
def test_R_ESC_14_escape_artists_every_class(cls):
    # level 5: proficiency 3; str 12 (+1), dex 16 (+3), int 14 (+2); heavy arms DC 18.
    # Rogue and ranger add proficiency to dex and int checks; the rogue (R-ESC-14a, default reading) adds it once
    # on str as well. wis 10: the druid adds nothing (R-ESC-14a: only a positive wis mod).
    artist = cls in ("rogue", "ranger")
    needs = []
    for ability in (0, 1, 2):
        p, st = setup(character("A", cls=cls, level=5, str=12, dex=16, int=14, restraints={"arms": "heavy"}))
        src = Script(checks=[False])
        play_round(p, st, fixed([Action("struggle", slot=ARMS, ability=ability)]), src)
        needs.append(src.of("check")[0][3])
    str_need = 18 - 1 - 3 if cls == "rogue" else 18 - 1
    assert needs == ([str_need, 18 - 3 - 3, 18 - 2 - 3] if artist else [str_need, 18 - 3, 18 - 2])


@pytest.mark.parametrize("cls", CLASSES)
def test_R_ESC_14_mage_hand_every_class(cls):
    # H has legs complete and a body wrap: no physical help (R-ESC-7). Only a wizard or sorcerer
    # may still assist (mage hand), and with gag 0 the target adds int mod + prof = 3 + 3 (level 5, int 16).
    p, st = setup(character("H", cls=cls, level=5, int=16, restraints={"legs": "complete", "body": "simple"}),
                  character("B", restraints={"arms": "heavy"}), goal={"slots": ["arms"]})
    actions = fixed([Action("assist", target=1), STRUGGLE_ARMS_STR])
    if cls not in ("wizard", "sorcerer"):
        with pytest.raises(PolicyError):
            play_round(p, st, actions, Script(checks=[False]), validate=True)
        return
    src = Script(checks=[False])
    play_round(p, st, actions, src, validate=True)
    assert src.of("check")[0][2:4] == (1, 18 - 6)  # bonus die, need 18 - (int 3 + prof 3)


@pytest.mark.parametrize("cls", ["wizard", "sorcerer"])
def test_R_ESC_14_mage_hand_gagged_assists_without_the_bonus(cls):
    p, st = setup(character("H", cls=cls, level=5, int=16, restraints={"legs": "complete", "gag": "simple"}),
                  character("B", restraints={"arms": "heavy"}), goal={"slots": ["arms"]})
    src = Script(checks=[False])
    play_round(p, st, fixed([Action("assist", target=1), STRUGGLE_ARMS_STR]), src, validate=True)
    assert src.of("check")[0][2:4] == (1, 18)  # the bonus die only


def test_R_ESC_14_mage_hand_stacks_with_guide():
    # wizard assist +6 (int 16, level 5) and a guide +4 (dex 18): 18 - 10
    p, st = setup(character("W", cls="wizard", level=5, int=16), character("G", dex=18),
                  character("B", restraints={"arms": "heavy"}))
    src = Script(checks=[False])
    play_round(p, st, fixed([Action("assist", target=2), Action("guide", target=2), STRUGGLE_ARMS_STR]), src)
    assert src.of("check")[0][2:4] == (1, 8)


# --- R-ESC-14 absolute focus, monk breath ---------------------------------------------------------


def _about_to_overload(cls, **scores):
    """One character at composure 4 of 20 that rests (recovery 0) and takes stimulus 4."""
    p, st = setup(dict(character("A", cls=cls, **scores), composure=20), stimulus={"damage": "1d4"},
                  goal={"slots": ["arms"]})
    st.chars[0].composure = 4
    return p, st


@pytest.mark.parametrize("cls", CLASSES)
def test_R_ESC_14_absolute_focus_every_class(cls):
    # int 16 (+3), cha 12 (+1), wis 10. Damage 4: focus DC 10 + floor(4 / 2) = 12, d20 + casting mod:
    # wizard and artificer int (need 12 - 3 = 9), sorcerer cha (need 12 - 1 = 11). Success restores
    # 1d8 (rolled 2) + casting mod. A monk of level 1 has no ki, so no breath point (R-ESC-14, revised
    # 2026-12): it overloads like the others; test_R_ESC_14_monk_breath_points covers levels 2 and up.
    p, st = _about_to_overload(cls, int=16, cha=12)
    src = Script(saves=[True], focus=[2], rolls={"stimulus": [4], "rest": [0]})
    play_round(p, st, fixed([Action("rest")]), src)
    c = st.chars[0]
    expected = {"wizard": (9, 5), "artificer": (9, 5), "sorcerer": (11, 3)}
    if cls in expected:
        need, composure = expected[cls]
        assert [s[2] for s in src.of("save")] == [need]
        assert c.composure == composure and c.overloads == 0
    else:
        assert not src.of("save") and not src.of("focus")
        assert c.overloads == 1 and c.composure == 0


def test_R_ESC_14_absolute_focus_immune_through_the_next_round_only():
    # round 1: focus succeeds (immune in rounds 1 and 2); round 2: damage to 0, no overload and no
    # check; round 3: damage again, the check is attempted again and fails: overload.
    p, st = _about_to_overload("wizard", int=16)
    act = fixed([Action("rest")])
    play_round(p, st, act, Script(saves=[True], focus=[1], rolls={"stimulus": [4], "rest": [0]}))
    c = st.chars[0]
    assert c.composure == 4  # 1 + 3
    src2 = Script(rolls={"stimulus": [4], "rest": [0]})
    play_round(p, st, act, src2)
    assert c.composure == 0 and c.overloads == 0 and not src2.of("save")
    src3 = Script(saves=[False], rolls={"stimulus": [1], "rest": [0]})
    play_round(p, st, act, src3)
    assert [s[2] for s in src3.of("save")] == [10 + 0 - 3]  # floor(1 / 2) = 0
    assert c.overloads == 1


@pytest.mark.parametrize(("level", "points"), [(1, 0), (2, 1), (3, 2), (4, 2), (5, 3), (20, 10)])
def test_R_ESC_14_monk_breath_points(level, points):
    # ceil(ki / 2), ki 0 at level 1 and the level from 2 (R-ESC-14, revised 2026-12)
    p, st = setup(character("M", cls="monk", level=level), character("F", level=level))
    assert st.chars[0].breath == points and st.chars[1].breath == 0


def test_R_ESC_14_monk_save_dc_rises_by_two_until_a_real_overload():
    # monk level 5 (3 points), wis 14 (+2), composure 20. Round 1: damage 3 -> 0, save DC 10 + 3,
    # need 13 - 2 = 11, succeeds: composure 10. Round 2: damage 2 -> 0, DC 10 + 2 + 2, need 12,
    # fails: overload, and the +2 steps reset. Round 3 dazed (reset to 20 at its end). Round 4:
    # damage 20 -> 0, DC back to 10 + 20, need 28; fails: second overload, no point left.
    p, st = setup(dict(character("M", cls="monk", level=5, wis=14), composure=20), stimulus={"damage": "1d4"},
                  goal={"slots": ["arms"]})
    c = st.chars[0]
    c.composure = 3
    act = fixed([Action("rest")])
    src = Script(saves=[True, False, False], rolls={"stimulus": [3, 2, 0, 20], "rest": [0, 0, 0, 0]})
    play_round(p, st, act, src)
    assert c.composure == 10 and c.overloads == 0
    c.composure = 2
    play_round(p, st, act, src)
    assert c.overloads == 1 and c.breath == 1
    play_round(p, st, act, src)  # dazed, reset to 20 at its end
    assert c.composure == 20
    play_round(p, st, act, src)
    assert [s[2] for s in src.of("save")] == [11, 12, 28]
    assert c.overloads == 2 and c.breath == 0


# --- R-ESC-14 paladin ---------------------------------------------------------------------------


def _paladin(cha=16, **restraints):
    p, st = setup(dict(character("P", cls="paladin", cha=cha, restraints=restraints or None), composure=10),
                  character("B", restraints={"arms": "heavy"}))
    st.chars[0].composure = 5
    return p, st


def test_R_ESC_14_paladin_recovers_on_its_own_success_only():
    # cha 16: +3 on a success, nothing on a failure
    p, st = _paladin(arms="heavy")
    play_round(p, st, fixed([STRUGGLE_ARMS_STR, Action("rest")]), Script(checks=[False], rolls={"rest": [0]}))
    assert st.chars[0].composure == 5
    play_round(p, st, fixed([STRUGGLE_ARMS_STR, Action("rest")]), Script(checks=[True], rolls={"rest": [0]}))
    assert st.chars[0].composure == 8


@pytest.mark.parametrize("help_kind", ["assist", "guide"])
def test_R_ESC_14_paladin_recovers_when_the_target_it_helped_succeeds(help_kind):
    p, st = _paladin()
    act = fixed([Action(help_kind, target=1), STRUGGLE_ARMS_STR])
    play_round(p, st, act, Script(checks=[False]))
    assert st.chars[0].composure == 5
    play_round(p, st, act, Script(checks=[True]))
    assert st.chars[0].composure == 8


def test_R_ESC_14_paladin_negative_cha_recovers_nothing():
    p, st = _paladin(cha=6, arms="heavy")  # cha 6 -> -2, minimum 0
    play_round(p, st, fixed([STRUGGLE_ARMS_STR, Action("rest")]), Script(checks=[True], rolls={"rest": [0]}))
    assert st.chars[0].composure == 5


@pytest.mark.parametrize(("roll", "composure"), [(False, 5), (True, 8)])
def test_R_ESC_33_paladin_auto_release_counts_only_a_roll_that_meets_the_dc(roll, composure):
    # light arms (`*`): round 1 fails; round 2 releases them whatever the roll, but the paladin
    # recovers only if the roll met the DC
    p, st = _paladin(arms="light")
    act = fixed([STRUGGLE_ARMS_STR, Action("rest")])
    play_round(p, st, act, Script(checks=[False], rolls={"rest": [0]}))
    play_round(p, st, act, Script(checks=[roll], rolls={"rest": [0]}))
    assert st.chars[0].tiers[ARMS] == 0 and st.chars[0].composure == composure


# --- R-ESC-14 cleric blessing ---------------------------------------------------------------------


def test_R_ESC_14_two_blessings_do_not_stack_and_never_bless_the_cleric_itself():
    # two clerics bless in round 1: each blesses the other, F is blessed once; in round 2 F's check
    # carries one blessing flag, i.e. one d4
    p, st = setup(character("C1", cls="cleric"), character("C2", cls="cleric"),
                  character("F", restraints={"arms": "heavy"}))
    play_round(p, st, fixed([Action("bless"), Action("bless"), Action("rest")]),
               Script(rolls={"rest": [0]}))
    assert [c.blessed for c in st.chars] == [True, True, True]
    play_round(p, st, fixed([Action("bless"), Action("rest"), STRUGGLE_ARMS_STR]),
               Script(checks=[False], rolls={"rest": [0]}))
    # round 2: only C1 blessed, so C2 and F are blessed for round 3, C1 is not
    assert [c.blessed for c in st.chars] == [False, True, True]


def test_R_ESC_14_blessing_is_one_d4_on_the_check():
    # d20 + 1d4 >= 18: for a d4 face k the d20 needs 18 - k or more, 3 + k faces: 4 + 5 + 6 + 7 = 22 of 80
    assert check_numerator(0, 18, blessed=True) * 80 == 22 * CHECK_DENOMINATOR
    # with a bonus die: P(max of 2d20 + d4 >= 18) = sum_k (1 - ((17 - k) / 20)^2) / 4
    hits = sum(400 - (17 - k) ** 2 for k in range(1, 5))  # over 20^2 * 4
    assert check_numerator(1, 18, blessed=True) * 1600 == hits * CHECK_DENOMINATOR


@pytest.mark.parametrize("cls", [c for c in CLASSES if c != "cleric"])
def test_R_ESC_14_only_a_cleric_blesses(cls):
    p, st = setup(character("X", cls=cls), character("F", restraints={"arms": "heavy"}))
    with pytest.raises(PolicyError):
        play_round(p, st, fixed([Action("bless"), STRUGGLE_ARMS_STR]), Script(checks=[False]), validate=True)


def test_R_ESC_14_gagged_cleric_cannot_bless():
    p, st = setup(character("C", cls="cleric", restraints={"gag": "simple"}),
                  character("F", restraints={"arms": "heavy"}))
    with pytest.raises(PolicyError):
        play_round(p, st, fixed([Action("bless"), STRUGGLE_ARMS_STR]), Script(checks=[False]), validate=True)


# --- R-ESC-13 craving caps, R-ESC-34 stimulus while dazed ------------------------------------------


def _craving(cls="fighter", composure=10, **scores):
    return setup(dict(character("A", cls=cls, **scores), composure=composure),
                 stimulus={"damage": "1d4", "kind": "craving"}, goal={"slots": ["arms"]})


def test_R_ESC_13_rest_is_capped_at_maximum_minus_craving():
    # round 1: rest 0, craving 3: maximum 10 - 3, composure 10 - 3 = 7.
    # round 2: rest 6 -> min(7 + 6, 10 - 3) = 7, craving 2 more -> composure 5 (maximum 5).
    # (without the craving cap the rest would give 10 and the round end 8)
    p, st = _craving()
    act = fixed([Action("rest")])
    play_round(p, st, act, Script(rolls={"rest": [0], "stimulus": [3]}))
    c = st.chars[0]
    assert (c.craving, c.composure) == (3, 7)
    play_round(p, st, act, Script(rolls={"rest": [6], "stimulus": [2]}))
    assert (c.craving, c.composure) == (5, 5)


def test_R_ESC_13_reset_after_overload_is_maximum_minus_craving_including_dazed_rounds():
    # composure 3 of 20. Round 1: craving 3 -> 0, overload, dazed in round 2 (D = 1).
    # Round 2: the stimulus still rolls (R-ESC-34), craving 2 more; at its end composure resets to
    # 20 - 5 = 15 (without craving 20; without the dazed round's craving 17).
    p, st = _craving(composure=20)
    st.chars[0].composure = 3
    act = fixed([Action("rest")])
    play_round(p, st, act, Script(rolls={"rest": [0], "stimulus": [3]}))
    c = st.chars[0]
    assert c.overloads == 1 and c.dazed_left == 1
    src = Script(rolls={"stimulus": [2]})
    play_round(p, st, act, src)
    assert src.of("roll") == [("roll", 0, "stimulus")]
    assert (c.craving, c.composure, c.dazed_left) == (5, 15, 0)


def test_R_ESC_13_paladin_recovery_is_capped_at_maximum_minus_craving():
    # paladin cha 18 (+4), composure 10; round 1 craving 3 (maximum 7); composure set to 5;
    # round 2 its own success: min(5 + 4, 10 - 3) = 7 (without the cap 9); stimulus 0.
    p, st = setup(dict(character("P", cls="paladin", cha=18, restraints={"arms": "heavy"}), composure=10),
                  stimulus={"damage": "1d4", "kind": "craving"})
    c = st.chars[0]
    play_round(p, st, fixed([Action("rest")]), Script(rolls={"rest": [0], "stimulus": [3]}))
    c.composure = 5
    play_round(p, st, fixed([STRUGGLE_ARMS_STR]), Script(checks=[True], rolls={"stimulus": [0]}))
    assert (c.craving, c.composure) == (3, 7)


def test_R_ESC_13_monk_half_is_of_maximum_minus_craving():
    # monk composure 20, wis 10. Round 1 craving 4 (maximum 16), composure set to 3.
    # Round 2 craving 3 more -> 0: save (need 10 + 3 - 0) succeeds: floor((20 - 7) / 2) = 6.
    # level 2: ki 2, one breath point (R-ESC-14); volume-1 features off so that greedy's step 0 plays no part
    p, st = setup(dict(character("A", cls="monk", level=2), composure=20),
                  stimulus={"damage": "1d4", "kind": "craving"}, goal={"slots": ["arms"]},
                  rules={"volume1_features": False})
    c = st.chars[0]
    act = fixed([Action("rest")])
    play_round(p, st, act, Script(rolls={"rest": [0], "stimulus": [4]}))
    c.composure = 3
    src = Script(saves=[True], rolls={"rest": [0], "stimulus": [3]})
    play_round(p, st, act, src)
    assert [s[2] for s in src.of("save")] == [13]
    assert (c.craving, c.composure, c.overloads) == (7, 6, 0)


def test_R_ESC_13_absolute_focus_is_capped_at_maximum_minus_craving():
    # wizard int 16 (+3), composure 10. Round 1 craving 2; composure set to 1. Round 2 craving 1
    # more -> 0: focus (need 10 + 0 - 3) succeeds with d8 = 8: min(8 + 3, 10 - 3) = 7.
    p, st = _craving(cls="wizard", int=16)
    c = st.chars[0]
    act = fixed([Action("rest")])
    play_round(p, st, act, Script(rolls={"rest": [0], "stimulus": [2]}))
    c.composure = 1
    play_round(p, st, act, Script(saves=[True], focus=[8], rolls={"rest": [0], "stimulus": [1]}))
    assert (c.craving, c.composure, c.overloads) == (3, 7, 0)


def test_R_ESC_34_stimulus_rolls_for_dazed_and_free_characters():
    # A overloads in round 1 (dazed_rounds 2); B has no restraint at all. In rounds 2 and 3 the
    # stimulus still rolls for both; A's craving grows while dazed: 3 + 2 + 1 = 6, reset 20 - 6 = 14.
    p, st = setup(dict(character("A", restraints={"arms": "heavy"}), composure=20), character("B"),
                  stimulus={"damage": "1d4", "kind": "craving"}, overload={"dazed_rounds": 2})
    a = st.chars[0]
    a.composure = 3
    act = fixed([STRUGGLE_ARMS_STR, Action("rest")])
    play_round(p, st, act, Script(checks=[False], rolls={"rest": [0], "stimulus": [3, 0]}))
    assert a.overloads == 1 and a.dazed_left == 2
    for stim in (2, 1):
        src = Script(rolls={"rest": [0], "stimulus": [stim, 0]})
        play_round(p, st, act, src)
        assert ("roll", 0, "stimulus") in src.calls and ("roll", 1, "stimulus") in src.calls
        assert not src.of("check")  # dazed: no action
    assert (a.craving, a.composure, a.dazed_left) == (6, 14, 0)


# --- compiled parameters that the scripted source does not read ------------------------------------


def test_R_ESC_34_dice_expressions_use_each_characters_modifier():
    # rest "1d6" (R-ESC-10a default), harness "1d4" (R-ESC-11 default); a stimulus "2+wis" is 2 + the
    # character's wis modifier: wis 14 -> 4, wis 8 -> 1 (R-ESC-34)
    p, _ = setup(character("A", wis=14), character("B", wis=8), stimulus={"damage": "2+wis"})
    assert p.rest_expr.distribution() == pytest.approx({k: 1 / 6 for k in range(1, 7)})
    assert p.harness_expr.distribution() == pytest.approx({k: 1 / 4 for k in range(1, 5)})
    assert p.stimulus_expr.evaluate([], p.modifiers[0]) == 4
    assert p.stimulus_expr.evaluate([], p.modifiers[1]) == 1
    p, _ = setup(character("A", con=16), rest={"recovery": "1d4+con"}, harness={"damage": "2d4"})
    assert p.rest_expr.evaluate([3], p.modifiers[0]) == 3 + 3
    assert p.harness_expr.distribution()[8] == pytest.approx(1 / 16)


def test_R_RST_25_composure_ability_override_in_the_escape_challenge():
    # fighter level 2, con 10, cha 16: default con (saves str/con): 10 + 0, + 5 + 0 = 15;
    # composure_ability cha: 10 + 3, + 5 + 3 = 21
    base = character("A", level=2, cha=16)
    p, _ = setup(base)
    assert int(p.comp_max[0]) == 15
    p, _ = setup(dict(base, composure_ability="cha"))
    assert int(p.comp_max[0]) == 21


def test_R_ESC_20_greedy_searches_when_search_is_configured_else_rests():
    # arms utter: no struggle (R-ESC-2), no untie (arms bound), no teammate: step 5 search, else step 6 rest
    from sim.escape.policy import PolicyView, greedy

    for search, kind in (({"dc": 12}, "search"), (None, "rest")):
        p, st = setup(character("A", restraints={"arms": "utter"}), **({"search": search} if search else {}))
        assert greedy(PolicyView(p, st, 1, (False,)))[0].kind == kind


def test_R_ESC_9a_no_limit_means_never_caught():
    # attention.limit defaults to none: 2 per assist for 3 rounds is never "caught"
    p, st = setup(character("A", restraints={"arms": "despair"}), character("H"), run={"max_rounds": 3})
    act = fixed([STRUGGLE_ARMS_STR, Action("assist", target=0)])
    for _ in range(3):
        play_round(p, st, act, Script(checks=[False]))
    assert st.attention == 6 and st.outcome == "timeout"


def test_R_ESC_10_an_item_without_count_never_runs_out():
    p, st = setup(character("A", restraints={"arms": "utter"}), search={"items": [{"name": "pin", "value": 2}]})
    for _ in range(2):
        src = Script(searches=[True], items=[0])
        play_round(p, st, fixed([Action("search")]), src)
        assert src.of("item")[0][2] == (1.0,)  # still in the pool
    assert st.chars[0].item_bonus == 4 and st.chars[0].items_found == 2
