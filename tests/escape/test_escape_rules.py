"""One test (or more) per escape rule ID, on the scalar reference with a scripted random source."""

from __future__ import annotations

import pytest
from escape_helpers import Script, character, scenario, setup

from sim.dice import CHECK_DENOMINATOR
from sim.errors import PolicyError, ScenarioError
from sim.escape.params import (
    ARMS,
    BODY,
    COMPLETE,
    DESPAIR,
    DEX,
    FINGERS,
    GAG,
    HARNESS,
    HEAVY,
    INT,
    LEGS,
    LIGHT,
    MODERATE,
    SEVERE,
    SIMPLE,
    STR,
    UTTER,
    compile_params,
)
from sim.escape.policy import PolicyView, check_action, greedy
from sim.escape.reference import play_round
from sim.escape.state import Action, check_spec, spec_numerator


def plan_of(p, st, rnd=1):
    dazed = tuple(c.dazed_left > 0 for c in st.chars)
    return greedy(PolicyView(p, st, rnd, dazed))


def fixed(actions):
    """A policy that always declares the given actions."""
    return lambda view: list(actions)


# --- R-ESC-1 / R-ESC-2 ------------------------------------------------------------------------


def test_R_ESC_1_slots_are_validated():
    with pytest.raises(ScenarioError, match=r"party\.0\.restraints\.tail"):
        scenario(character(restraints={"tail": "light"}))


def test_R_ESC_2_tier_ladder_defaults_and_overrides():
    p, _ = setup(character(restraints={"arms": "heavy"}))
    assert list(p.dc[1:8]) == [10, 12, 15, 18, 21, 24, 26]
    assert list(p.becomes[1:9]) == [0, 0, 1, 2, 4, 5, 6, 8]
    p2, _ = setup(character(restraints={"arms": "heavy"}),
                  rules={"tiers": {"heavy": {"dc": 16, "becomes": "free"}}})
    assert p2.dc[HEAVY] == 16 and p2.becomes[HEAVY] == 0


def test_R_ESC_2_utter_cannot_be_struggled_and_takes_no_override():
    p, st = setup(character(restraints={"legs": "utter"}, str=1, dex=1))
    st.chars[0].tiers[ARMS] = 1  # no free hands, so no untie
    st.chars[0].tiers[ARMS] = 0
    st.chars[0].tiers[FINGERS] = 2  # fingers bound: cannot untie itself
    plan = plan_of(p, st)
    assert not (plan[0].kind == "struggle" and plan[0].slot == LEGS)
    with pytest.raises(ScenarioError, match="utter"):
        scenario(character(), rules={"tiers": {"utter": {"dc": 30}}})


# --- R-ESC-3 accumulation ----------------------------------------------------------------------


@pytest.mark.parametrize(("tier", "assisted", "expected"), [
    ("moderate", False, 2), ("moderate", True, 4),  # `+`
    ("severe", False, 1), ("severe", True, 2),  # `#`
    ("despair", False, 0), ("despair", True, 1),  # `x`
])
def test_R_ESC_3_accumulation_after_a_failed_check(tier, assisted, expected):
    a = character("A", restraints={"arms": tier})
    b = character("B")
    p, st = setup(a, b)
    actions = [Action("struggle", slot=ARMS, ability=STR), Action("assist", target=0) if assisted else Action("rest")]
    src = Script(checks=[False], rolls={"rest": [0]})
    play_round(p, st, fixed(actions), src)
    assert st.chars[0].acc[ARMS] == expected
    assert st.chars[0].streak[ARMS] == 1


def test_R_ESC_3_star_tier_released_on_second_consecutive_round():
    p, st = setup(character(restraints={"arms": "light", "legs": "light"}))
    act = [Action("struggle", slot=ARMS, ability=STR)]
    play_round(p, st, fixed(act), Script(checks=[False]))
    assert st.chars[0].tiers[ARMS] == LIGHT and st.chars[0].acc[ARMS] == 0
    play_round(p, st, fixed(act), Script(checks=[False]))
    assert st.chars[0].tiers[ARMS] == 0  # released regardless of the roll


def test_R_ESC_3_streak_breaks_and_acc_uses_start_of_round_value():
    p, st = setup(character(restraints={"arms": "moderate", "legs": "moderate"}))
    arms = [Action("struggle", slot=ARMS, ability=STR)]
    src = Script(checks=[False, False])
    play_round(p, st, fixed(arms), src)
    play_round(p, st, fixed(arms), src)
    # the second check used acc 2 (start of round 2): need = 15 - 0 - 2
    assert src.of("check")[1][3] == 13
    assert st.chars[0].acc[ARMS] == 4
    play_round(p, st, fixed([Action("struggle", slot=LEGS, ability=STR)]), Script(checks=[False]))
    assert st.chars[0].acc[ARMS] == 0 and st.chars[0].streak[ARMS] == 0  # streak broke


def test_R_ESC_3_acc_resets_when_tier_changes():
    p, st = setup(character(restraints={"arms": "heavy"}))
    act = [Action("struggle", slot=ARMS, ability=STR)]
    play_round(p, st, fixed(act), Script(checks=[False]))
    assert st.chars[0].acc[ARMS] == 2
    play_round(p, st, fixed(act), Script(checks=[True]))
    assert st.chars[0].tiers[ARMS] == LIGHT and st.chars[0].acc[ARMS] == 0 and st.chars[0].streak[ARMS] == 0


# --- R-ESC-4 / R-ESC-20 ability choice ---------------------------------------------------------


def test_R_ESC_4_greedy_picks_the_best_ability():
    p, st = setup(character(restraints={"arms": "moderate"}, str=8, dex=16, int=12))
    assert plan_of(p, st)[0] == Action("struggle", slot=ARMS, ability=DEX)
    p, st = setup(character(restraints={"arms": "moderate"}, str=10, dex=10, int=10))
    assert plan_of(p, st)[0].ability == STR  # exact ties go to str (R-ESC-31)


# --- R-ESC-5 round order --------------------------------------------------------------------------


def test_R_ESC_5_caught_is_tested_before_escaped():
    p, st = setup(character("A", restraints={"arms": "simple"}), character("B"),
                  attention={"limit": 2, "assist": 2})
    play_round(p, st, fixed([Action("struggle", slot=ARMS, ability=STR), Action("assist", target=0)]),
               Script(checks=[True]))
    assert all(t == 0 for t in st.chars[0].tiers)
    assert st.outcome == "caught"


def test_R_ESC_32_party_free_at_start_escapes_in_round_1():
    p, st = setup(character())
    play_round(p, st, greedy, Script(rolls={"rest": [1]}))
    assert st.outcome == "escaped" and st.round == 1


# --- R-ESC-6 illegal actions ---------------------------------------------------------------------


def test_R_ESC_6_illegal_custom_action_names_character_round_and_rule():
    p, st = setup(character("Mei", restraints={"fingers": "light"}), character("Bo"))
    with pytest.raises(PolicyError, match=r"'Mei'.*round 3.*R-ESC-7"):
        check_action(p, st, 0, Action("assist", target=1), 3)
    with pytest.raises(PolicyError, match="R-ESC-2"):
        check_action(p, st, 1, Action("struggle", slot=ARMS, ability=STR), 3)
    with pytest.raises(PolicyError, match="R-ESC-5"):
        check_action(p, st, 1, "jump", 3)


# --- R-ESC-7 / R-ESC-8 assist ----------------------------------------------------------------


@pytest.mark.parametrize(("restraints", "can"), [
    ({}, True), ({"fingers": "simple"}, False), ({"arms": "severe"}, True), ({"arms": "complete"}, False),
    ({"legs": "complete"}, False), ({"body": "simple"}, False), ({"gag": "heavy"}, True),
])
def test_R_ESC_7_who_can_help_physically(restraints, can):
    from sim.escape.state import can_help_physically

    p, st = setup(character(restraints=restraints or None))
    assert can_help_physically(st.chars[0]) is can


def test_R_ESC_8_assist_gives_one_bonus_die_however_many_assistants():
    p, st = setup(character("A", restraints={"arms": "heavy"}), character("B"), character("C"))
    src = Script(checks=[False])
    play_round(p, st, fixed([Action("struggle", slot=ARMS, ability=STR), Action("assist", target=0),
                             Action("assist", target=0)]), src)
    assert src.of("check")[0][2] == 1  # net +1 (cancel mode)
    assert st.attention == 4  # both draw attention (R-ESC-9a)
    assert st.chars[0].acc[ARMS] == 4  # assisted accumulation


def test_R_ESC_8_assist_on_a_non_struggler_is_spent():
    p, st = setup(character("A", restraints={"arms": "heavy"}), character("B"))
    play_round(p, st, fixed([Action("rest"), Action("assist", target=0)]), Script(rolls={"rest": [0]}))
    assert st.attention == 2


# --- R-ESC-9 guide ------------------------------------------------------------------------------


def test_R_ESC_9_guide_adds_the_largest_of_prof_int_dex():
    p, st = setup(character("A", restraints={"arms": "heavy"}), character("B", int=18, dex=12),
                  character("C", level=9))
    src = Script(checks=[False])
    play_round(p, st, fixed([Action("struggle", slot=ARMS, ability=STR), Action("guide", target=0),
                             Action("guide", target=0)]), src)
    assert src.of("check")[0][3] == 18 - 4  # the +4 of B's int beats C's proficiency +4? equal: max is 4
    assert st.attention == 2


def test_R_ESC_9_guide_needs_gag_and_blindfold_free_and_target_earplugs_free():
    p, st = setup(character("A", restraints={"arms": "heavy", "earplugs": "light"}),
                  character("B", restraints={"gag": "light"}))
    with pytest.raises(PolicyError, match="R-ESC-9"):
        check_action(p, st, 1, Action("guide", target=0), 1)


def test_R_ESC_9a_attention_costs_and_limit():
    p, st = setup(character("A", restraints={"arms": "heavy"}), character("B"), character("C"),
                  attention={"limit": 100, "assist": 3, "guide": 2, "search": 5, "per_round": 1}, search={"dc": 30})
    play_round(p, st, fixed([Action("search"), Action("assist", target=0), Action("guide", target=0)]),
               Script(searches=[False]))
    assert st.attention == 1 + 3 + 2 + 5


# --- R-ESC-10 search and items ------------------------------------------------------------------


def test_R_ESC_10_search_finds_weighted_items_and_counts_run_out():
    items = [{"name": "nail", "kind": "bonus", "value": 2, "weight": 3, "count": 1},
             {"name": "key", "kind": "release", "max_tier": "heavy", "weight": 1}]
    p, st = setup(character("A", wis=14, level=5, restraints={"arms": "complete"}), search={"dc": 14, "items": items})
    st.chars[0].tiers[ARMS] = COMPLETE
    src = Script(searches=[True], items=[0])
    play_round(p, st, fixed([Action("search")]), src)
    assert src.of("search")[0][2] == 14 - 2  # wis mod only (not proficient)
    assert st.chars[0].item_bonus == 2 and st.item_left[0] == 0
    src = Script(searches=[True], items=[1])
    play_round(p, st, fixed([Action("search")]), src)
    assert src.of("item")[0][2] == (0.0, 1.0)  # the nail ran out
    assert st.chars[0].held == [1]


def test_R_ESC_10_perception_proficiency_and_empty_pool():
    p, st = setup(dict(character("A", wis=14, level=5), perception=True), search={"dc": 14})
    src = Script(searches=[True])
    play_round(p, st, fixed([Action("search")]), src)
    assert src.of("search")[0][2] == 14 - 2 - 3
    assert st.chars[0].items_found == 0  # R-ESC-36: an empty pool finds nothing


def test_R_ESC_10_release_item_used_by_greedy_on_highest_covered_goal():
    items = [{"name": "key", "kind": "release", "max_tier": "heavy"},
             {"name": "pick", "kind": "release", "max_tier": "severe"}]
    p, st = setup(character("A", restraints={"arms": "heavy", "fingers": "light", "legs": "severe"}),
                  search={"items": items})
    st.chars[0].held = [1, 0]
    plan = plan_of(p, st)
    # severe legs covered only by the pick; heavy arms by both: highest tier first (legs, the pick)
    assert plan[0] == Action("use_item", slot=LEGS, target=0, item=0)
    play_round(p, st, fixed(plan), Script(rolls={}))
    assert st.chars[0].tiers[LEGS] == 0 and st.chars[0].held == [0]


def test_R_ESC_10a_rest_recovers_up_to_the_maximum():
    p, st = setup(dict(character("A"), composure=10))
    st.chars[0].composure = 4
    play_round(p, st, fixed([Action("rest")]), Script(rolls={"rest": [5]}))
    assert st.chars[0].composure == 9
    play_round(p, st, fixed([Action("rest")]), Script(rolls={"rest": [5]}))
    assert st.chars[0].composure == 10


def test_R_ESC_10b_untie_removes_up_to_severe_and_lowers_complete_to_severe():
    p, st = setup(character("A", restraints={"legs": "severe", "gag": "complete"}))
    assert plan_of(p, st)[0] == Action("untie", slot=GAG, target=0)  # highest tier first
    play_round(p, st, greedy, Script())
    assert st.chars[0].tiers[GAG] == SEVERE
    p, st = setup(character("A", restraints={"arms": "complete"}), character("B"), character("C"))
    untie = Action("untie", slot=ARMS, target=0)
    play_round(p, st, fixed([Action("rest"), untie, untie]), Script(rolls={"rest": [0]}))
    assert st.chars[0].tiers[ARMS] == 0  # two unties of one complete restraint free it
    assert st.attention == 4


# --- R-ESC-11 slot effects ------------------------------------------------------------------------


def test_R_ESC_11_fingers_penalty_die_on_dex_of_other_slots_and_str_only_at_moderate():
    p, st = setup(character("A", restraints={"arms": "heavy", "fingers": "light"}, dex=16))
    c = st.chars[0]
    assert check_spec(p, 0, c, ARMS, DEX).net == -1
    assert check_spec(p, 0, c, FINGERS, DEX).net == 0
    c.tiers[FINGERS] = MODERATE
    from sim.escape.state import allowed_abilities

    assert allowed_abilities(c, ARMS) == (STR,) and allowed_abilities(c, FINGERS) == (STR,)


def test_R_ESC_11_body_allows_only_str_on_the_body_slot_and_blocks_search():
    from sim.escape.state import allowed_abilities, can_search

    p, st = setup(character("A", restraints={"body": "heavy", "arms": "light"}), search={})
    c = st.chars[0]
    assert allowed_abilities(c, ARMS) == () and allowed_abilities(c, BODY) == (STR,)
    assert not can_search(p, c)


def test_R_ESC_11_mask_penalty_on_every_str_check():
    p, st = setup(character("A", restraints={"mask": "simple", "arms": "heavy"}))
    c = st.chars[0]
    assert check_spec(p, 0, c, ARMS, STR).net == -1 and check_spec(p, 0, c, MASK_SLOT, STR).net == -1
    assert check_spec(p, 0, c, ARMS, INT).net == 0


MASK_SLOT = 5


def test_R_ESC_11_harness_damages_composure_when_struggling():
    p, st = setup(dict(character("A", restraints={"harness": "light", "arms": "heavy"}), composure=10),
                  harness={"damage": "1d4"})
    src = Script(checks=[False], rolls={"harness": [3]})
    play_round(p, st, fixed([Action("struggle", slot=ARMS, ability=STR)]), src)
    assert st.chars[0].composure == 7
    src = Script(rolls={"rest": [0]})
    play_round(p, st, fixed([Action("rest")]), src)
    assert not src.of("roll")[0][2] == "harness" and st.chars[0].composure == 7


def test_R_ESC_11_gag_blindfold_earplugs_legs_arms():
    from sim.escape.state import can_assist, can_be_guided, can_guide, can_search

    p, st = setup(character("A", restraints={"gag": "simple"}), character("B", restraints={"blindfold": "simple"}),
                  character("C", restraints={"earplugs": "simple"}), character("D", restraints={"legs": "complete"}),
                  character("E", restraints={"arms": "complete"}), search={})
    a, b, c, d, e = st.chars
    assert not can_guide(a) and not can_guide(b) and not can_search(p, b)
    assert not can_be_guided(c)
    assert not can_assist(p, 3, d) and not can_search(p, d)
    assert not can_assist(p, 4, e)


# --- R-ESC-12 / R-ESC-13 / R-ESC-34 composure ----------------------------------------------------


def test_R_ESC_12_overload_dazes_then_resets():
    p, st = setup(dict(character("A", restraints={"arms": "heavy"}), composure=3),
                  stimulus={"damage": "1d4"}, overload={"dazed_rounds": 2})
    act = fixed([Action("struggle", slot=ARMS, ability=STR)])
    play_round(p, st, act, Script(checks=[False], rolls={"stimulus": [4]}))
    c = st.chars[0]
    assert c.overloads == 1 and c.composure == 0 and c.dazed_left == 2
    src = Script(rolls={"stimulus": [4]})
    play_round(p, st, act, src)  # dazed: no action, damage ignored
    assert not src.of("check") and c.composure == 0 and c.acc[ARMS] == 0
    play_round(p, st, act, Script(rolls={"stimulus": [4]}))
    assert c.composure == 3 and c.dazed_left == 0  # reset at the end of round r + D


def test_R_ESC_13_craving_lowers_the_maximum():
    p, st = setup(dict(character("A"), composure=10), stimulus={"damage": "1d4", "kind": "craving"},
                  goal={"slots": ["arms"]})
    st.chars[0].tiers[ARMS] = HEAVY
    st.chars[0].tiers[FINGERS] = 1
    play_round(p, st, fixed([Action("rest")]), Script(rolls={"stimulus": [3], "rest": [6]}))
    c = st.chars[0]
    assert c.craving == 3 and c.composure == 7  # rest capped at 10 - 0, then damage 3


# --- R-ESC-14 class skills ------------------------------------------------------------------------


def test_R_ESC_14_escape_artist_adds_proficiency_to_dex_and_int():
    p, st = setup(character("A", cls="rogue", level=5, restraints={"arms": "heavy"}, dex=16))
    c = st.chars[0]
    assert check_spec(p, 0, c, ARMS, DEX).need == 18 - 3 - 3
    # R-ESC-14a (default reading): the rogue adds its proficiency once on every check, str included
    assert check_spec(p, 0, c, ARMS, STR).need == 18 - 3
    p, st = setup(character("A", cls="rogue", level=5, restraints={"arms": "heavy"}, dex=16),
                  rules={"volume1_features": False})
    assert check_spec(p, 0, st.chars[0], ARMS, STR).need == 18  # the earlier reading: dex and int only
    assert check_spec(p, 0, st.chars[0], ARMS, DEX).need == 18 - 3 - 3


def test_R_ESC_14_monk_breath_spend_below_one_half_and_save():
    # volume-1 features off: with them, composure 2 <= the largest stimulus 4 makes greedy meditate first
    # (R-ESC-20 step 0); breath itself is the same in both readings
    p, st = setup(dict(character("A", cls="monk", level=3, restraints={"arms": "heavy"}, wis=14), composure=2),
                  stimulus={"damage": "1d4"}, rules={"volume1_features": False})
    c = st.chars[0]
    assert c.breath == 2  # ceil(3 / 2)
    plan = plan_of(p, st)
    assert plan[0].breath
    src = Script(checks=[False], saves=[True], rolls={"stimulus": [3]})
    play_round(p, st, fixed(plan), src)
    assert src.of("check")[0][5] is True and src.of("check")[0][3] == 18 - 2
    assert src.of("save")[0][2] == 10 + 3 - 2  # DC 10 + damage, d20 + wis
    assert c.composure == 1 and c.breath == 0 and c.overloads == 0  # half of 2


def test_R_ESC_14_paladin_recovers_on_own_and_helped_success():
    # cha 16: +3 composure when a target it assisted succeeds ...
    p, st = setup(dict(character("P", cls="paladin", cha=16), composure=10),
                  character("B", restraints={"arms": "heavy"}))
    st.chars[0].composure = 5
    play_round(p, st, fixed([Action("assist", target=1), Action("struggle", slot=ARMS, ability=STR)]),
               Script(checks=[True]))
    assert st.chars[0].composure == 8
    # ... and when it succeeds itself (5 + 3 = 8 again)
    p, st = setup(dict(character("P", cls="paladin", cha=16, restraints={"arms": "heavy"}), composure=10))
    st.chars[0].composure = 5
    play_round(p, st, fixed([Action("struggle", slot=ARMS, ability=STR)]), Script(checks=[True]))
    assert st.chars[0].composure == 8


def test_R_ESC_14_cleric_blessing_next_round_only_for_others():
    p, st = setup(character("C", cls="cleric", restraints={"fingers": "light"}),
                  character("B", restraints={"arms": "heavy", "earplugs": "light"}), goal={"slots": ["arms"]})
    plan = plan_of(p, st)
    assert plan[0].kind == "bless"  # cannot untie, assist or guide: blesses
    play_round(p, st, fixed([Action("bless"), Action("struggle", slot=ARMS, ability=STR)]), Script(checks=[False]))
    assert st.chars[1].blessed and not st.chars[0].blessed
    play_round(p, st, fixed([Action("rest"), Action("struggle", slot=ARMS, ability=STR)]),
               Script(checks=[False], rolls={"rest": [0]}))
    assert not st.chars[1].blessed


def test_R_ESC_14_mage_hand_assist_without_physical_requirements():
    from sim.escape.state import can_assist

    p, st = setup(character("W", cls="wizard", level=5, int=16, restraints={"legs": "complete", "body": "light"}),
                  character("B", restraints={"arms": "heavy"}))
    assert can_assist(p, 0, st.chars[0])
    src = Script(checks=[False])
    play_round(p, st, fixed([Action("assist", target=1), Action("struggle", slot=ARMS, ability=STR)]), src)
    assert src.of("check")[0][3] == 18 - (3 + 3) and src.of("check")[0][2] == 1


def test_R_ESC_14_absolute_focus_prevents_overload():
    p, st = setup(dict(character("W", cls="wizard", int=16), composure=3), stimulus={"damage": "1d4"},
                  goal={"slots": ["arms"]})
    src = Script(saves=[True], focus=[5], rolls={"stimulus": [4], "rest": [0]})
    play_round(p, st, fixed([Action("rest")]), src)
    c = st.chars[0]
    assert src.of("save")[0][2] == 10 + 2 - 3 and c.composure == 3 and c.overloads == 0  # min(5 + 3, 3)
    assert c.immune_until == 2


# --- R-ESC-15 outputs, R-ESC-20 greedy ------------------------------------------------------------


def test_R_ESC_15_per_run_outputs():
    """R-ESC-15 values, worked by hand. A (arms light, DC 12, str 10) struggles; B unties its own
    heavy legs in round 1 (R-ESC-10b), then, free, unties A in round 2 (attention.assist 2).
    Round 1: A escapes with d20 >= 12 (9/20). Otherwise round 2 ends it: `*` releases A (R-ESC-3),
    and its roll still counts as a success when it meets the DC (R-ESC-33)."""
    import sim

    s = scenario(character("A", restraints={"arms": "light"}), character("B", restraints={"legs": "heavy"}))
    n = 4000
    runs = sim.simulate(s, runs=n, seed=1).runs
    assert (runs["outcome"] == "escaped").all()
    assert set(runs["rounds"]) == {1, 2}
    assert (runs["A.freed_round"] == runs["rounds"]).all() and (runs["A.checks"] == runs["rounds"]).all()
    assert (runs["A.rounds_light"] == runs["rounds"]).all() and (runs["A.rounds_heavy"] == 0).all()
    assert (runs["attention"] == 2 * (runs["rounds"] - 1)).all()
    assert (runs["A.successes"][runs["rounds"] == 1] == 1).all()
    assert (runs["B.freed_round"] == 1).all() and (runs["B.checks"] == 0).all() and (runs["B.rounds_heavy"] == 1).all()
    assert (runs[["A.overloads", "B.overloads", "A.items_found", "B.items_found"]] == 0).all().all()
    p1 = 9 / 20
    se = (p1 * (1 - p1) / n) ** 0.5
    assert abs((runs["rounds"] == 1).mean() - p1) < 4 * se
    # successes: 9/20 in round 1, else 9/20 of the round-2 rolls: 0.45 + 0.55 * 0.45 = 0.6975
    assert abs(runs["A.successes"].mean() - (p1 + (1 - p1) * p1)) < 4 * 0.5 / n**0.5


def test_R_ESC_20_greedy_helpers_assist_the_weakest_struggler():
    p, st = setup(character("A", restraints={"legs": "heavy", "arms": "light"}, str=16),
                  character("B", restraints={"legs": "severe", "arms": "light"}),
                  character("H", restraints={"arms": "light"}), goal={"slots": ["legs"]})
    plan = plan_of(p, st)
    assert plan[2] == Action("assist", target=1)  # cannot untie (arms bound), can assist


def test_R_ESC_20_greedy_unties_teammates_before_assisting():
    p, st = setup(character("A", restraints={"arms": "heavy", "gag": "light"}), character("H"))
    plan = plan_of(p, st)
    assert plan[1] == Action("untie", slot=ARMS, target=0)


def test_R_ESC_31_tie_prefers_last_struggled_slot_then_slot_order():
    p, st = setup(character("A", restraints={"arms": "moderate", "legs": "moderate", "fingers": "moderate"}))
    assert plan_of(p, st)[0].slot == ARMS
    st.chars[0].last_slot = LEGS
    st.chars[0].tiers[FINGERS] = 0
    assert plan_of(p, st)[0].slot == LEGS


def test_R_ESC_31_star_second_round_counts_as_certain():
    p, st = setup(character("A", restraints={"arms": "severe", "legs": "simple"}))
    st.chars[0].streak[LEGS] = 1
    st.chars[0].last_slot = LEGS
    c = st.chars[0]
    assert spec_numerator(check_spec(p, 0, c, LEGS, STR)) == CHECK_DENOMINATOR
    assert plan_of(p, st)[0].slot == LEGS


def test_R_ESC_30_slot_order():
    from sim.escape.model import SLOTS

    assert SLOTS == ("arms", "fingers", "body", "legs", "harness", "mask", "gag", "blindfold", "earplugs")


def test_R_ESC_33_success_resets_even_if_becomes_same_tier():
    p, st = setup(character("A", restraints={"arms": "heavy"}), rules={"tiers": {"heavy": {"becomes": "heavy"}}})
    act = fixed([Action("struggle", slot=ARMS, ability=STR)])
    play_round(p, st, act, Script(checks=[False]))
    play_round(p, st, act, Script(checks=[True]))
    assert st.chars[0].tiers[ARMS] == HEAVY and st.chars[0].acc[ARMS] == 0


def test_R_ESC_35_composure_maximum_from_class_and_level():
    p = compile_params(scenario(character("A", cls="rogue", level=3, con=14, wis=10, cha=10)))
    # rogue d8, no con/wis/cha save: best of all three = con +2; 8+2 + 2*(4+2)
    assert p.comp_max[0] == 22


def test_R_ESC_36_defaults():
    s = scenario(character())
    assert s.run.max_rounds == 12 and s.run.runs == 20000 and s.run.seed == 0
    p = compile_params(scenario(character(), search={"items": [{"name": "x"}]}))
    assert p.search_dc == 14 and p.item_kind[0] == 0 and p.item_value[0] == 1 and p.item_max_tier[0] == SEVERE


def test_R_ESC_2_tier_constants_name_the_ladder():
    from sim.escape.model import TIER_IDS

    # the tier numbers the engines use are the rows of the R-ESC-2 table
    named = {"simple": SIMPLE, "light": LIGHT, "moderate": MODERATE, "heavy": HEAVY, "severe": SEVERE,
             "complete": COMPLETE, "despair": DESPAIR, "utter": UTTER}
    assert named == {"simple": 1, "light": 2, "moderate": 3, "heavy": 4, "severe": 5, "complete": 6,
                     "despair": 7, "utter": 8}
    assert all(TIER_IDS[t] == name for name, t in named.items())
    assert HARNESS == 4  # R-ESC-30 slot order: arms, fingers, body, legs, harness
