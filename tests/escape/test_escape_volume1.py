"""The 2026-12 revision of the escape rules, each by hand from RULES.md: the volume-1 features (R-ESC-14a), the
class actions channel, inspire and meditate (R-ESC-14b) and how greedy, arms_first and team use them (R-ESC-20
steps 0 and 4, R-ESC-31, R-ESC-37), untying oneself with free arms (R-ESC-10b, `self_untie`), the blessing that
needs gag and mask at 0 (R-ESC-14), and the monk's breath from ki (R-ESC-14). Then exact against Monte Carlo on
scenarios that use the new actions."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from escape_helpers import Script, character, scenario, setup

import sim
from sim.dice import CHECK_DENOMINATOR
from sim.errors import PolicyError
from sim.escape.greedy import PolicyView, arms_first, greedy
from sim.escape.params import ARMS, DEX, INT, LEGS, STR, UNLIMITED, compile_params
from sim.escape.policy import check_action
from sim.escape.reference import play_round
from sim.escape.state import Action, can_untie_self, check_spec, initial_state, spec_numerator
from sim.escape.team import team


def plan(p, st, policy=greedy, rnd=1):
    return policy(PolicyView(p, st, rnd, tuple(c.dazed_left > 0 for c in st.chars)))


def fixed(actions):
    return lambda view: list(actions)


OFF = {"volume1_features": False}


# --- R-ESC-14a rogue and druid -----------------------------------------------------------------------


def test_R_ESC_14a_rogue_adds_proficiency_once_on_every_check():
    # level 5: proficiency 3. str 12 (+1), dex 16 (+3), int 14 (+2); arms heavy DC 18.
    # str: 18 - 1 - 3 = 14 (the rogue's survival skill); dex 18 - 3 - 3 = 12 and int 18 - 2 - 3 = 13: escape
    # artist and the volume-1 feature are the same proficiency bonus, added once (not 18 - 3 - 6 = 9).
    kw = dict(cls="rogue", level=5, str=12, dex=16, int=14, restraints={"arms": "heavy"})
    p, st = setup(character("A", **kw))
    assert [check_spec(p, 0, st.chars[0], ARMS, a).need for a in (STR, DEX, INT)] == [14, 12, 13]
    p, st = setup(character("A", **kw), rules=OFF)  # the earlier reading: dex and int only
    assert [check_spec(p, 0, st.chars[0], ARMS, a).need for a in (STR, DEX, INT)] == [17, 12, 13]


@pytest.mark.parametrize(("wis", "needs"), [(16, [14, 15, 15]), (8, [17, 18, 18])])
def test_R_ESC_14a_druid_adds_a_positive_wis_modifier(wis, needs):
    # str 12 (+1), dex 10, int 10; arms heavy DC 18. wis 16 (+3): every check 3 lower (17 - 3, 18 - 3, 18 - 3);
    # wis 8 (-1): "may" (可以) add it, so a negative modifier is not added: 17, 18, 18 (not 18, 19, 19).
    p, st = setup(character("U", cls="druid", level=2, str=12, wis=wis, restraints={"arms": "heavy"}))
    assert [check_spec(p, 0, st.chars[0], ARMS, a).need for a in (STR, DEX, INT)] == needs
    p, st = setup(character("U", cls="druid", level=2, str=12, wis=wis, restraints={"arms": "heavy"}), rules=OFF)
    assert [check_spec(p, 0, st.chars[0], ARMS, a).need for a in (STR, DEX, INT)] == [17, 18, 18]


# --- R-ESC-14a ranger in favoured terrain ---------------------------------------------------------------


def _ranger(arms="severe", terrain=True, **sections):
    return setup(dict(character("R", cls="ranger", level=5, dex=14, restraints={"arms": arms}),
                      favoured_terrain=terrain), **sections)


def test_R_ESC_14a_R_ESC_31_ranger_spends_favoured_terrain_below_one_half():
    # level 5: proficiency 3, 3 uses. dex 14 (+2), arms severe DC 21. Chosen without the terrain bonus:
    # dex need 21 - 2 - 3 = 16, P = 5/20 (str 21: 0; int 18: 3/20) < 1/2, so a use is spent. The check then adds
    # 2 x 3 = 6 instead of the artist's 3: need 21 - 2 - 6 = 13. Uses 3 -> 2.
    p, st = _ranger()
    a = plan(p, st)[0]
    assert (a.kind, a.slot, a.ability, a.terrain) == ("struggle", ARMS, DEX, True)
    src = Script(checks=[False])
    play_round(p, st, fixed([a]), src)
    assert src.of("check")[0][3] == 13 and st.chars[0].terrain == 2


def test_R_ESC_14a_ranger_terrain_not_spent_at_one_half_or_more_nor_without_uses_or_terrain():
    # arms light DC 12: dex need 12 - 5 = 7, P = 14/20 >= 1/2: no use spent.
    p, st = _ranger(arms="light")
    assert not plan(p, st)[0].terrain
    p, st = _ranger()
    st.chars[0].terrain = 0  # proficiency-bonus times per challenge: none left
    assert not plan(p, st)[0].terrain
    p, st = _ranger(terrain=False)  # not in its favoured terrain: no uses at all
    assert st.chars[0].terrain == 0 and not plan(p, st)[0].terrain
    p, st = _ranger(rules=OFF)
    assert st.chars[0].terrain == 0


def test_R_ESC_14a_ranger_terrain_on_str_is_twice_proficiency():
    # str 10 (+0): a str check has no escape-artist bonus, so the terrain adds the full 2 x 3: need 21 - 6 = 15
    p, st = _ranger()
    assert check_spec(p, 0, st.chars[0], ARMS, STR, terrain=True).need == 15
    assert check_spec(p, 0, st.chars[0], ARMS, DEX, terrain=True).need == 21 - 2 - 6


def test_favoured_terrain_is_validated_for_rangers_only():
    with pytest.raises(sim.ScenarioError, match=r"party\.0\.favoured_terrain"):
        scenario(dict(character("F", cls="fighter"), favoured_terrain=True))


# --- R-ESC-14a barbarian rage ------------------------------------------------------------------------


def _barbarian(arms="heavy", level=3, **sections):
    return setup(character("B", cls="barbarian", level=level, str=16, restraints={"arms": arms}),
                 goal={"slots": ["arms"]}, **sections)


def test_R_ESC_14a_rage_bonus_die_counted_and_spent_on_str_success():
    # level 3: 3 rages. str 16 (+3), arms heavy DC 18. With the rage's bonus die: need 15, P = 1 - (14/20)^2 = 0.51
    # (dex 10: need 18, 3/20), so greedy struggles str with rage. Success: heavy becomes light, then one more
    # position down the ladder: simple. The use is spent: 3 -> 2.
    p, st = _barbarian()
    a = plan(p, st)[0]
    assert (a.ability, a.rage) == (STR, True)
    src = Script(checks=[True])
    play_round(p, st, fixed([a]), src)
    assert src.of("check")[0][2:4] == (1, 15)  # one bonus die, need 18 - 3
    assert st.chars[0].tiers[ARMS] == 1 and st.chars[0].rage == 2


def test_R_ESC_14a_rage_kept_on_failure():
    p, st = _barbarian()
    play_round(p, st, fixed([plan(p, st)[0]]), Script(checks=[False]))
    assert st.chars[0].tiers[ARMS] == 4 and st.chars[0].rage == 3 and st.chars[0].acc[ARMS] == 2


def test_R_ESC_14a_rage_drop_comes_after_becomes_and_never_below_free():
    # severe becomes heavy, then one more: moderate (3). Dropping first and then applying `becomes` would give
    # severe -> heavy -> light (2): the order matters.
    p, st = _barbarian(arms="severe")
    play_round(p, st, fixed([Action("struggle", slot=ARMS, ability=STR, rage=True)]), Script(checks=[True]))
    assert st.chars[0].tiers[ARMS] == 3
    # light becomes free; free stays free (never below), and the use is still spent
    p, st = _barbarian(arms="light")
    play_round(p, st, fixed([Action("struggle", slot=ARMS, ability=STR, rage=True)]), Script(checks=[True]))
    assert st.chars[0].tiers[ARMS] == 0 and st.chars[0].rage == 2


def test_R_ESC_14a_rage_unlimited_at_level_20_and_only_on_str():
    p, st = _barbarian(level=20)
    assert st.chars[0].rage == UNLIMITED
    play_round(p, st, fixed([Action("struggle", slot=ARMS, ability=STR, rage=True)]), Script(checks=[True]))
    assert st.chars[0].rage == UNLIMITED
    p, st = _barbarian()
    with pytest.raises(PolicyError, match="R-ESC-14a"):
        check_action(p, st, 0, Action("struggle", slot=ARMS, ability=DEX, rage=True), 1)


@pytest.mark.parametrize(("stacking", "net"), [("cancel", 1), ("pool", 2)])
def test_R_ESC_14a_rage_and_assist_are_two_bonus_dice(stacking, net):
    # R-GEN-4: cancel: several bonus dice count once; pool: assist + rage = two extra d20
    p, st = setup(character("B", cls="barbarian", level=3, str=16, restraints={"arms": "heavy"}), character("H"),
                  rules={"dice_stacking": stacking})
    src = Script(checks=[False])
    play_round(p, st, fixed([Action("struggle", slot=ARMS, ability=STR, rage=True), Action("assist", target=0)]),
               src)
    assert src.of("check")[0][2] == net


@pytest.mark.parametrize(("level", "uses"), [(1, 2), (2, 2), (3, 3), (5, 3), (6, 4), (11, 4), (12, 5), (16, 5),
                                             (17, 6), (19, 6), (20, UNLIMITED)])
def test_R_ESC_14a_rage_uses_by_level(level, uses):
    p, st = setup(character("B", cls="barbarian", level=level))
    assert st.chars[0].rage == uses


# --- R-ESC-14b channel, meditate, inspire; R-ESC-20 step 0 -------------------------------------------------


@pytest.mark.parametrize(("cls", "level", "uses"), [("cleric", 1, 0), ("cleric", 2, 1), ("cleric", 5, 1),
                                                    ("cleric", 6, 2), ("cleric", 17, 2), ("cleric", 18, 3),
                                                    ("paladin", 2, 0), ("paladin", 3, 1), ("paladin", 20, 1),
                                                    ("fighter", 10, 0)])
def test_R_ESC_14b_channel_uses(cls, level, uses):
    p, st = setup(character("C", cls=cls, level=level))
    assert st.chars[0].channel == uses


def _cleric(composure, harness=None, **sections):
    restraints = {"arms": "heavy"} | ({"harness": harness} if harness else {})
    p, st = setup(dict(character("C", cls="cleric", level=2, restraints=restraints), composure=10),
                  stimulus={"damage": "1d4"}, goal={"slots": ["arms"]}, **sections)
    st.chars[0].composure = composure
    return p, st


def test_R_ESC_20_step_0_channel_when_composure_is_at_most_the_largest_damage():
    # stimulus 1d4: the largest damage this round is 4. Composure 4 <= 4: channel; 5 > 4: struggle.
    p, st = _cleric(4)
    assert plan(p, st)[0].kind == "channel"
    p, st = _cleric(5)
    assert plan(p, st)[0].kind == "struggle"
    # with a harness (1d4 at its maximum 4 more): 5 <= 8, channel
    p, st = _cleric(5, harness="light")
    assert plan(p, st)[0].kind == "channel"
    p, st = _cleric(4, rules=OFF)  # the earlier reading has no channel
    assert plan(p, st)[0].kind == "struggle"


def test_R_ESC_14b_channel_recovers_1d6_and_spends_its_use():
    # composure 4, recover roll 5: min(4 + 5, 10) = 9, then the stimulus 1: 8. One use (level 2): none left,
    # so the next round greedy struggles even at composure 1.
    p, st = _cleric(4)
    play_round(p, st, greedy, Script(rolls={"recover": [5], "stimulus": [1]}))
    c = st.chars[0]
    assert (c.composure, c.channel) == (8, 0)
    c.composure = 1
    assert plan(p, st)[0].kind == "struggle"


def test_R_ESC_14b_meditate_spends_ki_not_breath():
    # monk level 2: ki 2, breath ceil(2 / 2) = 1 (separate pools). Composure 3 <= 4 (stimulus 1d4): meditate;
    # recover 6: min(3 + 6, 10) = 9, stimulus 2: 7. ki 2 -> 1, breath stays 1.
    p, st = setup(dict(character("K", cls="monk", level=2, restraints={"arms": "heavy"}), composure=10),
                  stimulus={"damage": "1d4"}, goal={"slots": ["arms"]})
    c = st.chars[0]
    c.composure = 3
    assert (c.ki, c.breath) == (2, 1)
    assert plan(p, st)[0].kind == "meditate"
    play_round(p, st, greedy, Script(rolls={"recover": [6], "stimulus": [2]}))
    assert (c.composure, c.ki, c.breath) == (7, 1, 1)


def test_R_ESC_14_level_1_monk_has_no_ki_breath_or_meditate():
    p, st = setup(dict(character("K", cls="monk", level=1, restraints={"arms": "heavy"}), composure=10),
                  stimulus={"damage": "1d4"})
    st.chars[0].composure = 1
    assert (st.chars[0].ki, st.chars[0].breath) == (0, 0)
    a = plan(p, st)[0]
    assert a.kind == "struggle" and not a.breath


def test_R_ESC_20_step_0_comes_first_in_arms_first_and_is_kept_by_team():
    p, st = _cleric(4)
    assert plan(p, st, arms_first)[0].kind == "channel"
    assert plan(p, st, team)[0].kind == "channel"


def _bard_party(bard_restraints=None, target_restraints=None, **sections):
    """A fighter with heavy legs (str 14; simple arms, not in the goal, so it cannot untie itself) and a bard
    (level 5: d8, cha 16: 3 uses) that cannot assist (arms complete) nor guide (blindfold): the goal is the legs."""
    bard = bard_restraints or {"arms": "complete", "blindfold": "light"}
    target = {"legs": "heavy", "arms": "simple"} | (target_restraints or {})
    return setup(dict(character("A", str=14, restraints=target), composure=10),
                 character("D", cls="bard", level=5, cha=16, restraints=bard), goal={"slots": ["legs"]},
                 **sections)


def test_R_ESC_14b_inspire_die_for_a_later_check_restores_its_face():
    # Round 1: A struggles (need 18 - 2 = 16, no die yet: a later round's check), fails: acc 2; the bard inspires
    # A (attention.guide = 1 drawn), uses 3 -> 2; A holds a d8 at the end of the round.
    p, st = _bard_party()
    a = plan(p, st)
    assert a[1] == Action("inspire", target=0)
    src = Script(checks=[False])
    play_round(p, st, greedy, src)
    assert src.of("check")[0][3] == 16 and not src.of("inspiration")
    assert (st.chars[0].insp_die, st.chars[1].inspire, st.attention) == (8, 2, 1)
    # Round 2: A holds a die, so the bard does not inspire it again (it rests). A's check: the d8 (face 5) first,
    # need 18 - 2 - 2 (acc) - 5 = 9; composure 3 + 5 = 8. The die is gone.
    st.chars[0].composure = 3
    assert plan(p, st, rnd=2)[1].kind == "rest"
    src = Script(checks=[False], dice=[5], rolls={"rest": [0]})
    play_round(p, st, greedy, src)
    assert src.of("inspiration") == [("inspiration", 0, 8)]
    assert src.of("check")[0][3] == 9
    assert (st.chars[0].composure, st.chars[0].insp_die) == (8, 0)


def test_R_ESC_14b_inspire_composure_capped_at_maximum_minus_craving():
    p, st = _bard_party()
    c = st.chars[0]
    c.insp_die, c.composure, c.craving = 8, 9, 2  # 9 + 7 capped at 10 - 2 = 8
    play_round(p, st, fixed([Action("struggle", slot=LEGS, ability=STR), Action("rest")]),
               Script(checks=[False], dice=[7], rolls={"rest": [0]}))
    assert c.composure == 8


def test_R_ESC_31_held_die_counted_in_the_success_probability():
    # A: need 18 - 2 = 16 plus acc 2: 14 with a d8: P = mean over faces f of P(d20 >= 14 - f)
    # = sum_f (7 + f) / 20 / 8 = (56 + 36) / 160 = 92/160
    p, st = _bard_party()
    st.chars[0].acc[LEGS], st.chars[0].streak[LEGS], st.chars[0].insp_die = 2, 1, 8
    assert spec_numerator(check_spec(p, 0, st.chars[0], LEGS, STR)) / CHECK_DENOMINATOR == Fraction(92, 160)


@pytest.mark.parametrize(("bard", "target"), [({"arms": "complete", "blindfold": "light", "gag": "light"}, None),
                                              (None, {"earplugs": "light"})])
def test_R_ESC_14b_inspire_needs_the_bards_gag_and_the_targets_earplugs_at_0(bard, target):
    p, st = _bard_party(bard, target)
    assert plan(p, st)[1].kind == "rest"
    with pytest.raises(PolicyError, match="R-ESC-14b"):
        check_action(p, st, 1, Action("inspire", target=0), 1)


def test_R_ESC_14b_inspire_uses_and_dice_by_level():
    # uses max(1, cha mod): cha 8 -> 1, cha 16 -> 3; die d6 at 1-4, d8 at 5-9, d10 at 10-14, d12 at 15-20
    for level, cha, uses, sides in ((1, 8, 1, 6), (4, 16, 3, 6), (5, 10, 1, 8), (10, 20, 5, 10), (15, 12, 1, 12)):
        p = compile_params(scenario(character("D", cls="bard", level=level, cha=cha)))
        assert (int(p.inspire_uses[0]), int(p.inspire_sides[0])) == (uses, sides)
        assert initial_state(p).chars[0].inspire == uses


def test_R_ESC_20_step_4_guide_before_inspire():
    # a bard that can guide (gag and blindfold 0) guides: inspire is the third alternative
    p, st = _bard_party({"arms": "complete"})
    assert plan(p, st)[1] == Action("guide", target=0)


# --- R-ESC-10b / R-ESC-31 self_untie -------------------------------------------------------------------


@pytest.mark.parametrize(("restraints", "arms_free", "hands_free"), [
    ({"fingers": "light"}, True, False), ({"fingers": "utter"}, True, False), ({}, True, True),
    ({"arms": "simple"}, False, False), ({"body": "light"}, False, False)])
def test_R_ESC_10b_untying_oneself_needs_arms_and_body_free_not_fingers(restraints, arms_free, hands_free):
    p, st = setup(character("A", restraints=restraints))
    assert can_untie_self(p, st.chars[0]) is arms_free
    p, st = setup(character("A", restraints=restraints), rules={"self_untie": "hands_free"})
    assert can_untie_self(p, st.chars[0]) is hands_free


@pytest.mark.parametrize("policy", ["greedy", "arms_first", "team"])
def test_R_ESC_10b_exact_bound_fingers_untie_themselves(policy):
    """A: arms light, dex 16 (+3): P = 12/20 of freeing them in round 1. B: fingers light, arms and body free: with
    `self_untie = "arms_free"` B unties its own fingers (R-ESC-20 step 1, certain). One round: P(escape) = 12/20
    = 0.6 (the earlier reading: B must struggle, 12/20 x 11/20 = 0.33, test_escape_exact_party.py)."""
    s = scenario(character("A", restraints={"arms": "light"}, dex=16),
                 character("B", restraints={"fingers": "light"}, str=14),
                 run={"max_rounds": 1}, policy={"name": policy})
    assert sim.exact(s)["escape_rate"] == pytest.approx(0.6, abs=1e-12)


# --- R-ESC-14 blessing --------------------------------------------------------------------------------


def test_R_ESC_14_blessing_needs_gag_and_mask_at_0():
    # the cleric (fingers light: no assist; gag 0 and mask 0) blesses its bound teammate; with a mask it cannot
    # (the mouth is not free), so it rests
    p, st = setup(character("C", cls="cleric", restraints={"fingers": "light", "blindfold": "light"}),
                  character("B", restraints={"arms": "heavy"}), goal={"slots": ["arms"]})
    assert plan(p, st)[0].kind == "bless"
    p, st = setup(character("C", cls="cleric", restraints={"fingers": "light", "blindfold": "light",
                                                           "mask": "simple"}),
                  character("B", restraints={"arms": "heavy"}), goal={"slots": ["arms"]})
    assert plan(p, st)[0].kind == "rest"
    with pytest.raises(PolicyError, match="mask"):
        check_action(p, st, 0, Action("bless"), 1)


# --- reading stated -----------------------------------------------------------------------------------


def test_the_summary_states_the_reading():
    s = scenario(character("A", restraints={"arms": "light"}), rules={"self_untie": "hands_free"})
    got = sim.simulate(s, runs=50, seed=1).summary["reading"]
    assert got == {"volume1_features": True, "self_untie": "hands_free"}
    assert sim.exact(s)["reading"] == got


# --- exact against Monte Carlo with the new actions ------------------------------------------------------------

EXACT_SCENARIOS = {
    # the barbarian's rage, the bard's inspiration (die, composure), greedy and team
    "rage_and_inspire": scenario(
        dict(character("B", cls="barbarian", level=3, str=14, restraints={"legs": "severe", "arms": "simple"}),
             composure=6),
        character("D", cls="bard", level=5, cha=14, restraints={"arms": "complete", "blindfold": "light"}),
        goal={"slots": ["legs"]}, stimulus={"damage": "1d2"}, run={"max_rounds": 5}),
    # channel and meditate (step 0)
    "channel_and_meditate": scenario(
        dict(character("C", cls="cleric", level=2, restraints={"legs": "heavy", "arms": "simple"}), composure=3),
        dict(character("K", cls="monk", level=2, wis=14, restraints={"legs": "moderate", "arms": "simple"}),
             composure=3),
        goal={"slots": ["legs"]}, stimulus={"damage": "1d2"}, run={"max_rounds": 3}),
    # a ranger in favoured terrain and a druid (no class action: their effect is on the checks)
    "terrain_and_druid": scenario(
        dict(character("R", cls="ranger", level=5, dex=14, restraints={"arms": "severe"}), favoured_terrain=True),
        character("U", cls="druid", level=3, wis=16, restraints={"legs": "heavy", "arms": "simple"}),
        goal={"slots": ["arms", "legs"]}, run={"max_rounds": 4}),
}


@pytest.mark.parametrize("policy", ["greedy", "team"])
@pytest.mark.parametrize("name", sorted(EXACT_SCENARIOS))
def test_exact_agrees_with_monte_carlo_on_the_new_actions(name, policy):
    s = EXACT_SCENARIOS[name]
    s = s.model_copy(update={"policy": s.policy.model_copy(update={"name": policy})})
    e = sim.exact(s)
    n = 40_000
    mc = sim.simulate(s, runs=n, seed=5)
    used = {k: int(mc.runs[f"actions_{k}"].sum()) for k in ("channel", "inspire", "meditate")}
    if name != "terrain_and_druid":
        assert sum(used.values()) > 1000, used  # the new actions happen
    for key in ("escape_rate", "timeout_rate"):
        q = e[key]
        se = math.sqrt(max(q * (1 - q), 1e-12) / n)
        assert abs(mc.summary[key] - q) <= 4 * se, (key, mc.summary[key], q)
