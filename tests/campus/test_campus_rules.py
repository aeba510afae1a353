"""Rule-by-rule tests on hand-built states with chosen uniforms (scalar reference), each checked against
the kernel on the same row where the kernel has a state to compare."""

from fractions import Fraction

import numpy as np
import pytest
from campus_helpers import new_game, params_of, play, play_both, uniforms

from sim.campus.params import CAPTURED, CLEARED, FREE, GAME_OVER
from sim.campus.rules import FIGHT, FLEE, HIDE, Fighter, beats, best_stance, duel, grow_lowest, value

HOUND = {"name": "hound", "abilities": {"fight": 12, "flee": 12, "hide": 12}, "reward": 2, "stance": "fight"}


def assert_same(p, g, t, u):
    """The reference's turn, and the kernel's on the same numbers (campus_helpers.play_both)."""
    return play_both(p, g, t, u)


# ------------------------------------------------------------------ characters and values
def test_r_cam_1_abilities_and_starting_state():
    """R-CAM-1: three abilities, vitality (scenario default 3), gp start 0."""
    p = params_of(party=[{"name": "A", "abilities": {"fight": 1, "flee": 2, "hide": 3}},
                         {"name": "B", "abilities": {"fight": 0, "flee": 0, "hide": 0}, "vitality": 5}])
    g = new_game(p)
    assert g.base == [[1, 2, 3], [0, 0, 0]] and g.vit == [3, 5] and g.gp == [0, 0]


def test_r_cam_2_stance_cycle():
    """R-CAM-2: flee beats fight, hide beats flee, fight beats hide; the winner's stance doubles."""
    assert beats(FLEE, FIGHT) and beats(HIDE, FLEE) and beats(FIGHT, HIDE)
    assert not beats(FIGHT, FLEE) and not beats(FLEE, HIDE) and not beats(HIDE, FIGHT) and not beats(FLEE, FLEE)
    pv, av, res = duel(Fighter("p", FLEE, base=(0, 10, 0)), Fighter("a", FIGHT, base=(15, 0, 0)))
    assert (pv, av, res) == (20, 15, 1)


def test_r_cam_3_additions_first_then_multipliers_floored():
    """R-CAM-3 / R-CAM-58: floor((base + additions) x product of multipliers), floored once."""
    assert value(7, 2, Fraction(3, 2)) == 13
    assert value(5, 0, Fraction(3, 2) * Fraction(3, 2)) == 11  # 11.25 once, not floor(floor(7.5)*1.5)=10
    f = Fighter("p", FIGHT, base=(4, 0, 0), bonus=(1, 0, 0), mult_always=(Fraction(3, 2), 1, 1), reduction=10)
    assert duel(f, Fighter("a", FLEE, base=(0, 0, 0)))[0] == (0 + 1) * 3 // 2


def test_r_cam_4_tie_both_lose_pc_captured_adversary_leaves():
    """R-CAM-4: equal values, both lose: the PC is captured, the adversary leaves."""
    p = params_of(adversaries=[{**HOUND, "abilities": {"fight": 10, "flee": 0, "hide": 0}}],
                  spawns=[{"adversary": "hound", "locations": ["hall"]}],
                  locations=[{"id": "hall"}, {"id": "cell", "capture_room": True}], rules={"options": "all"})
    g = new_game(p)
    u = uniforms(p, pc_move=[0.0])
    assert_same(p, g, 1, u)
    assert g.status == [CAPTURED] and g.vit == [2] and g.room == [1] and g.captures_t[0] == 1


# ------------------------------------------------------------------ a turn
def test_r_cam_5_turn_order_and_clear_after_last_turn():
    """R-CAM-5: captured this turn -> no check this turn; +1 gp to every PC in the game; after turn T a free
    PC has cleared."""
    p = params_of(rules={"turns": 2})
    g = new_game(p)
    g.status[0], g.room[0], g.cap_turn[0] = CAPTURED, 1, 2
    play(p, g, 2, uniforms(p))
    assert g.checks_t == [0, 0] and g.gp == [1]
    from sim.campus.reference import finish

    g2 = new_game(p)
    for t in (1, 2):
        play(p, g2, t, uniforms(p, pc_move=[0.0]))
    finish(p, g2)
    assert g2.status == [CLEARED] and g2.end_turn == [2] and g2.gp == [2]


def test_r_cam_6_team_battle_first_then_one_by_one():
    """R-CAM-6: teams of two or more fight first, against all adversaries present; the single PC then finds
    nobody left."""
    weak = {"name": "weak", "abilities": {"fight": 1, "flee": 1, "hide": 1}, "stance": "fight", "reward": 1}
    p = params_of(adversaries=[weak], spawns=[{"adversary": "weak", "locations": ["hall"], "count": 3}],
                  party=[{"name": n, "abilities": {"fight": 10, "flee": 10, "hide": 10}, "team": t}
                         for n, t in (("A", "x"), ("B", "x"), ("C", None))],
                  policy={"move": "random"})
    p_team = [pc for pc in p.scenario.party]
    assert p_team[2].team is None
    g = new_game(p)
    u = uniforms(p, pc_move=[0.0, 0.0, 0.0])
    assert_same(p, g, 1, u)
    # the team (A, B) beats all three adversaries in one battle: 3 rewards shared by 2 -> 1 each
    assert sum(g.duels_tmpl) == 3 and g.gp == [1 + 1, 1 + 1, 1]
    assert g.status == [FREE, FREE, FREE]


def test_r_cam_7_boss_stays_and_fights_each_pc_once():
    """R-CAM-7 / R-CAM-54: a boss stays after a confrontation (won, lost or tied) and fights each group at most
    once a turn: B, who beat it, does not meet it again although fights repeat until the location is cleared."""
    boss = {"name": "boss", "abilities": {"fight": 10, "flee": 0, "hide": 0}, "stance": "fight", "boss": True}
    p = params_of(adversaries=[boss], spawns=[{"adversary": "boss", "locations": ["hall"]}],
                  party=[{"name": n, "abilities": {"fight": f, "flee": 0, "hide": 0}} for n, f in
                         (("A", 10), ("B", 11), ("C", 3))])
    g = new_game(p)
    assert_same(p, g, 1, uniforms(p, pc_move=[0.0, 0.0, 0.0]))
    assert g.duels_tmpl == [3]  # the tie with A does not remove the boss
    assert g.status == [CAPTURED, FREE, CAPTURED]


def test_r_cam_8_win_reward_loss_capture_room():
    """R-CAM-8: a win gives the adversary's reward; a loss costs 1 vitality and sends the PC to the
    adversary's capture room."""
    adv = [{**HOUND, "capture_room": "cell2", "abilities": {"fight": 12, "flee": 0, "hide": 0}}]
    locs = [{"id": "hall"}, {"id": "cell", "capture_room": True}, {"id": "cell2", "capture_room": True}]
    spawn = [{"adversary": "hound", "locations": ["hall"]}]
    strong = params_of(adversaries=adv, spawns=spawn, locations=locs,
                       party=[{"name": "A", "abilities": {"fight": 13, "flee": 0, "hide": 0}}])
    g = new_game(strong)
    assert_same(strong, g, 1, uniforms(strong, pc_move=[0.0]))
    assert g.gp == [2 + 1] and g.status == [FREE]
    weak = params_of(adversaries=adv, spawns=spawn, locations=locs)
    g = new_game(weak)
    assert_same(weak, g, 1, uniforms(weak, pc_move=[0.0]))
    assert g.status == [CAPTURED] and g.room == [2] and g.vit == [2]


def test_r_cam_9_team_loses_every_member_captured_by_its_adversary():
    """R-CAM-9 / R-CAM-52: if the PCs' side is empty every member is captured (in the room of the adversary
    that put it out); every ordinary adversary that took part leaves, dueled or not."""
    big = {"name": "big", "abilities": {"fight": 50, "flee": 0, "hide": 0}, "stance": "fight",
           "capture_room": "cell"}
    small = {"name": "small", "abilities": {"fight": 1, "flee": 0, "hide": 0}, "stance": "fight"}
    p = params_of(adversaries=[big, small],
                  spawns=[{"adversary": "big", "locations": ["hall"]}, {"adversary": "small", "locations": ["hall"]}],
                  party=[{"name": n, "abilities": {"fight": 10, "flee": 0, "hide": 0}, "team": "x"} for n in "AB"]
                  + [{"name": "C", "abilities": {"fight": 10, "flee": 0, "hide": 0}}])
    g = new_game(p)
    # the adversaries' side shuffled from (big, small): u = 0.0 keeps big first, small second
    u = uniforms(p, pc_move=[0.0, 0.0, 0.0], draws={(("adv_side", 0), 0): 0.0})
    assert_same(p, g, 1, u)
    assert g.status == [CAPTURED, CAPTURED, FREE]  # C had no adversary left to fight
    assert g.duels_tmpl == [2, 0]


# ------------------------------------------------------------------ capture and rescue
def captive_game(p, mins_captive=3, cap_turn=1):
    g = new_game(p)
    g.status[0], g.room[0], g.cap_turn[0] = CAPTURED, 1, cap_turn
    g.base[0] = [mins_captive, 20, 20]
    return g


def two_pcs(**over):
    return params_of(party=[{"name": "A", "abilities": {"fight": 3, "flee": 20, "hide": 20}},
                            {"name": "B", "abilities": {"fight": 5, "flee": 6, "hide": 7}}], **over)


def test_r_cam_11_escape_target_is_turn_plus_offset():
    """R-CAM-11: target = t + escape_offset (a capture room's own offset wins)."""
    p = params_of(locations=[{"id": "hall"}, {"id": "cell", "capture_room": True, "escape_offset": -2}],
                  rules={"escape_offset": 5})
    g = captive_game(p, mins_captive=3)
    play(p, g, 5, uniforms(p))  # 5 - 2 = 3 <= 3
    assert g.status == [FREE] and g.escapes_t[4] == 1 and g.checks_t[4] == 1
    p2 = params_of(rules={"escape_offset": 1})
    g = captive_game(p2, mins_captive=3)
    assert_same(p2, g, 3, uniforms(p2))  # 3 + 1 = 4 > 3
    assert g.status == [CAPTURED] and g.vit == [2]


def test_r_cam_12_13_rescuer_supports_and_gains_gp():
    """R-CAM-12 / R-CAM-13: a PC moving to the capture room supports a captive; success when
    target <= min(captive) + min(rescuer); each rescuer gains floor(t/2)+1 gp."""
    p = two_pcs()
    g = captive_game(p, mins_captive=3)
    assert_same(p, g, 8, uniforms(p, pc_move=[0.0, 0.99]))  # B goes to the cell: 3 + 5 = 8 >= 8
    assert g.status == [FREE, FREE] and g.gp == [1, 8 // 2 + 1 + 1] and g.rescues_won == 1


def test_r_cam_14_failed_rescue_captures_the_rescuer():
    """R-CAM-14: failure: captive -1 vitality and stays; each rescuer -1 vitality and captured there."""
    p = two_pcs()
    g = captive_game(p, mins_captive=3)
    assert_same(p, g, 9, uniforms(p, pc_move=[0.0, 0.99]))  # 3 + 5 = 8 < 9
    assert g.status == [CAPTURED, CAPTURED] and g.vit == [2, 2] and g.room == [1, 1] and g.cap_turn[1] == 9
    assert g.captures_t[8] == 1 and g.rescues_tried == 1 and g.rescues_won == 0


def test_r_cam_12_exclusion_empties_room_support_fails():
    """R-CAM-12: exclusions that leave no one make the support fail (the rescuer is captured)."""
    p = params_of(party=[{"name": "A", "abilities": {"fight": 3, "flee": 20, "hide": 20}},
                         {"name": "B", "abilities": {"fight": 5, "flee": 6, "hide": 7}, "exclude": ["A"]}])
    g = captive_game(p, mins_captive=30)
    assert_same(p, g, 2, uniforms(p, pc_move=[0.0, 0.99]))
    assert g.status == [FREE, CAPTURED] and g.vit == [3, 2] and g.rescues_tried == 1


def test_r_cam_53_rescuer_where_nobody_checks_does_nothing():
    """R-CAM-53: a rescuer in a room where nobody checks does nothing (the captive was taken this turn)."""
    p = two_pcs()
    g = captive_game(p, cap_turn=4)
    assert_same(p, g, 4, uniforms(p, pc_move=[0.0, 0.99]))
    assert g.status == [CAPTURED, FREE] and g.rescues_tried == 0 and g.vit == [3, 3]


def test_r_cam_15_game_over_and_miso_bomb_returns():
    """R-CAM-15 / R-CAM-57: vitality <= 0 leaves the game; with miso_bomb it returns as an adversary with
    its final abilities, placed on a location that is no capture room, reward 0."""
    p = two_pcs(rules={"miso_bomb": True}, policy={"stance": "best"})
    g = new_game(p)
    g.status[0], g.room[0], g.cap_turn[0], g.vit[0] = CAPTURED, 1, 1, 1
    g.base[0] = [3, 20, 20]
    assert_same(p, g, 9, uniforms(p, pc_move=[0.0, 0.0]))
    assert g.status == [GAME_OVER, FREE] and g.end_turn[0] == 9
    # next turn the miso bomb (best stance flee/hide 20, first is flee) meets B in the hall
    assert_same(p, g, 10, uniforms(p, pc_move=[0.0, 0.0], pc_miso_loc=[0.0]))
    assert g.duels_tmpl == [1] and g.status[1] == CAPTURED and g.gp[1] == 2  # no reward from a miso bomb


def test_r_cam_16_negative_ability_spends_gp():
    """R-CAM-16: an ability pushed below 0 by a mission is lifted back to 0 with gp (gp may go negative)."""
    p = params_of(missions=[{"location": "hall", "stance": "hide", "target": 100,
                             "penalty": {"ability": "fight", "amount": 14}}])
    g = new_game(p)
    g.gp[0] = 1
    assert_same(p, g, 1, uniforms(p, pc_move=[0.0]))
    assert g.base[0][0] == 0 and g.gp == [1 - 4 + 1]


# ------------------------------------------------------------------ adversaries, missions, exits, skills
def test_r_cam_20_50_spawn_schedule_chance_and_candidates():
    """R-CAM-20 / R-CAM-50: each of `count` placed independently with `chance`, at a uniform candidate;
    "any" never includes capture rooms; outside its turns an entry places nothing."""
    p = params_of(adversaries=[HOUND], spawns=[{"adversary": "hound", "count": 2, "chance": 0.5, "turns": [2, 3]}],
                  locations=[{"id": "a"}, {"id": "b"}, {"id": "cell", "capture_room": True}])
    assert [list(c) for c in p.adv_cands] == [[0, 1], [0, 1]]
    g = new_game(p)
    assert_same(p, g, 1, uniforms(p, pc_move=[0.0], adv_chance=[0.0, 0.0], adv_loc=[0.0, 0.0]))
    assert g.duels_tmpl == [0]
    g = new_game(p)
    assert_same(p, g, 2, uniforms(p, pc_move=[0.0], adv_chance=[0.6, 0.4], adv_loc=[0.0, 0.0]))
    assert g.duels_tmpl == [1]


def test_r_cam_21_stance_from_weights():
    """R-CAM-21: the adversary's stance is drawn from its weights (thresholds on one uniform)."""
    p = params_of(adversaries=[{**HOUND, "stance": {"fight": 1, "flee": 0, "hide": 3}},
                               {"name": "only", "stance": "flee"}],
                  spawns=[{"adversary": "hound"}, {"adversary": "only"}])
    assert p.adv_fixed_stance.tolist() == [-1, FLEE]
    assert p.adv_c1[0] == 0.25 and p.adv_c2[0] == 0.25
    u = np.array([0.1, 0.3, 0.99])
    assert ((u >= p.adv_c1[0]).astype(int) + (u >= p.adv_c2[0])).tolist() == [0, 2, 2]
    assert p.adv_wnum[0].tolist() == [p.weight_den // 4, 0, 3 * p.weight_den // 4]


@pytest.mark.parametrize("mode,target,ok", [("sum", 20, True), ("sum", 21, False), ("each", 10, True),
                                             ("each", 11, False)])
def test_r_cam_25_56_missions_sum_and_each(mode, target, ok):
    """R-CAM-25 / R-CAM-56: sum (or each) of the present free PCs' values without the stance advantage;
    success gives every participant the reward, failure hits every participant."""
    p = params_of(party=[{"name": "A", "abilities": {"fight": 0, "flee": 0, "hide": 10}},
                         {"name": "B", "abilities": {"fight": 0, "flee": 0, "hide": 10}}],
                  missions=[{"location": "hall", "stance": "hide", "mode": mode, "target": target, "reward": 3,
                             "penalty": {"vitality": 1}}])
    g = new_game(p)
    assert_same(p, g, 1, uniforms(p, pc_move=[0.0, 0.0]))
    assert g.gp == ([4, 4] if ok else [1, 1]) and g.vit == ([3, 3] if ok else [2, 2])


def test_r_cam_56_mission_chance_and_no_free_pc():
    """R-CAM-56: the chance is rolled each turn; a mission with no free PC present has no effect."""
    p = params_of(missions=[{"location": "hall", "stance": "hide", "target": 100, "chance": 0.5,
                             "penalty": {"vitality": 1}}],
                  locations=[{"id": "hall"}, {"id": "yard"}, {"id": "cell", "capture_room": True}])
    g = new_game(p)
    assert_same(p, g, 1, uniforms(p, pc_move=[0.0], missions=[0.7]))
    assert g.vit == [3]
    assert_same(p, g, 2, uniforms(p, pc_move=[0.0], missions=[0.2]))
    assert g.vit == [2]
    assert_same(p, g, 3, uniforms(p, pc_move=[0.4], missions=[0.2]))  # at the yard
    assert g.vit == [2]


def test_r_cam_26_58_exit_opens_and_clears_without_gp():
    """R-CAM-26 / R-CAM-58: a free PC at an open exit after its confrontations leaves, cleared, no more gp."""
    p = params_of(locations=[{"id": "gate", "exit": True, "opens_on": 3}, {"id": "cell", "capture_room": True}])
    g = new_game(p)
    assert_same(p, g, 2, uniforms(p, pc_move=[0.0]))
    assert g.status == [FREE] and g.gp == [1]
    assert_same(p, g, 3, uniforms(p, pc_move=[0.0]))
    assert g.status == [CLEARED] and g.gp == [1] and g.end_turn == [3]


def test_r_cam_30_skills_compile():
    """R-CAM-30: bonus, multiplier (always / advantage), team, early ears, nursing, gp_per_turn."""
    p = params_of(party=[{"name": "A", "abilities": {"fight": 1, "flee": 1, "hide": 1}, "skills": [
        {"kind": "bonus", "stances": ["fight", "hide"], "value": 3},
        {"kind": "multiplier", "stances": ["fight"], "value": 2},
        {"kind": "multiplier", "stances": ["fight"], "value": 1.5, "when": "advantage"},
        {"kind": "team", "name": "x"}, {"kind": "early_ears"}, {"kind": "nursing"},
        {"kind": "gp_per_turn", "value": -1}]}])
    assert p.pc_bonus[0].tolist() == [3, 0, 3]
    assert p.pc_mult_always[0][FIGHT] == 2 and p.pc_mult_adv[0][FIGHT] == Fraction(3, 2)
    assert (p.pc_num[0, FIGHT, 1], p.pc_den[0, FIGHT, 1]) == (6, 1)  # 2 x 1.5 x 2 (stance advantage)
    assert p.team_names == ("x",) and p.pc_ears[0] and p.pc_nurse[0] and p.pc_gpt[0] == -1
    g = new_game(p)
    assert_same(p, g, 1, uniforms(p, pc_move=[0.0]))
    assert g.gp == [0]  # +1 then gp_per_turn -1


def test_r_cam_55_nursing_lowest_other_free_pc():
    """R-CAM-55: the free nurse heals (+1, up to starting vitality) the other free PC at its location with
    the lowest vitality, a random one among ties; a PC at its starting vitality gains nothing."""
    p = params_of(party=[{"name": "N", "abilities": {"fight": 9, "flee": 9, "hide": 9},
                          "skills": [{"kind": "nursing"}]},
                         {"name": "B", "abilities": {"fight": 9, "flee": 9, "hide": 9}},
                         {"name": "C", "abilities": {"fight": 9, "flee": 9, "hide": 9}}])
    g = new_game(p)
    g.vit = [1, 2, 2]
    assert_same(p, g, 1, uniforms(p, pc_move=[0.0, 0.0, 0.0], pc_nurse_tie=[0.9]))
    assert g.vit == [1, 2, 3]
    g.vit = [3, 3, 3]
    assert_same(p, g, 2, uniforms(p, pc_move=[0.0, 0.0, 0.0]))
    assert g.vit == [3, 3, 3]


# ------------------------------------------------------------------ policies
def test_r_cam_40_move_avoid_with_and_without_ears():
    """R-CAM-40 / R-CAM-51: `avoid` with early ears: options with no adversary and no capture room;
    without: options that are not capture rooms; only capture rooms: all options."""
    locs = [{"id": "a"}, {"id": "b"}, {"id": "cell", "capture_room": True}]
    adv = [{**HOUND, "abilities": {"fight": 0, "flee": 0, "hide": 0}}]
    spawn = [{"adversary": "hound", "locations": ["a"]}]
    ears = params_of(locations=locs, adversaries=adv, spawns=spawn, policy={"move": "avoid"},
                     party=[{"name": "A", "abilities": {"fight": 5, "flee": 5, "hide": 5},
                             "skills": [{"kind": "early_ears"}]}])
    g = new_game(ears)
    assert_same(ears, g, 1, uniforms(ears, pc_move=[0.0]))
    assert g.duels_tmpl == [0]  # went to b
    deaf = params_of(locations=locs, adversaries=adv, spawns=spawn, policy={"move": "avoid"},
                     party=[{"name": "A", "abilities": {"fight": 5, "flee": 5, "hide": 5}}])
    g = new_game(deaf)
    assert_same(deaf, g, 1, uniforms(deaf, pc_move=[0.0]))
    assert g.duels_tmpl == [1]


def test_r_cam_40_rescue_policy_assigns_completing_pc():
    """R-CAM-40 rescue: free PCs in party order take the first uncovered captive their own min completes."""
    p = params_of(party=[{"name": "A", "abilities": {"fight": 3, "flee": 20, "hide": 20}},
                         {"name": "B", "abilities": {"fight": 2, "flee": 9, "hide": 9}},
                         {"name": "C", "abilities": {"fight": 6, "flee": 9, "hide": 9}}],
                  policy={"rescue": True})
    g = captive_game(p, mins_captive=3)
    # target 8: B (min 2) does not complete 3 + 2 < 8; C (min 6) does: 3 + 6 >= 8
    assert_same(p, g, 8, uniforms(p, pc_move=[0.0, 0.0, 0.0]))
    assert g.status == [FREE, FREE, FREE] and g.rescues_won == 1 and g.gp[2] == 1 + 8 // 2 + 1


def test_r_cam_40_stance_policies_and_growth():
    """R-CAM-40: best (ties fight, flee, hide), growth lowest (one gp at a time, ties fight, flee, hide)
    and best (all gp to the best stance's ability)."""
    assert best_stance((5, 5, 5), (0, 0, 0), (1, 1, 1)) == FIGHT
    assert best_stance((5, 6, 6), (0, 0, 0), (1, 1, 1)) == FLEE
    assert best_stance((5, 6, 4), (0, 0, 3), (1, 1, 1)) == HIDE
    assert grow_lowest([3, 1, 1], 3) == [3, 3, 2]
    assert grow_lowest([2, 2, 2], 4) == [4, 3, 3]
    assert grow_lowest([5, 0, 9], -2) == [5, 0, 9]
    rng = np.random.default_rng(5)
    base = rng.integers(0, 8, size=(500, 3))
    gp = rng.integers(-2, 15, size=500)
    expected = np.array([grow_lowest(list(b), int(g)) for b, g in zip(base, gp, strict=True)])
    assert (expected.sum(1) == base.sum(1) + np.maximum(gp, 0)).all()
    p = params_of(policy={"growth": "best", "stance": "best"},
                  party=[{"name": "A", "abilities": {"fight": 4, "flee": 9, "hide": 2}}])
    g = new_game(p)
    g.gp = [3]
    assert_same(p, g, 1, uniforms(p, pc_move=[0.0]))
    assert g.base == [[4, 12, 2]] and g.gp == [1]


def test_r_cam_40_51_counter_uses_weights_and_ears():
    """R-CAM-40 / R-CAM-51: counter maximises the win probability against the adversaries seen (stance
    weights); without early ears it acts as best."""
    adv = [{"name": "h", "abilities": {"fight": 15, "flee": 0, "hide": 0}, "stance": {"fight": 3, "hide": 1}}]
    spawn = [{"adversary": "h", "locations": ["hall"]}]
    pc = {"name": "A", "abilities": {"fight": 9, "flee": 8, "hide": 0}}
    ears = params_of(adversaries=adv, spawns=spawn, policy={"stance": "counter"},
                     party=[{**pc, "skills": [{"kind": "early_ears"}]}])
    g = new_game(ears)
    u = uniforms(ears, pc_move=[0.0], adv_stance={(0, 0): 0.0})  # the hound fights
    assert_same(ears, g, 1, u)
    assert g.duels_stance == [0, 1, 0] and g.status == [FREE]  # flee 16 beats fight 15
    deaf = params_of(adversaries=adv, spawns=spawn, policy={"stance": "counter"}, party=[pc])
    g = new_game(deaf)
    assert_same(deaf, g, 1, uniforms(deaf, pc_move=[0.0], adv_stance={(0, 0): 0.0}))
    assert g.duels_stance == [1, 0, 0] and g.status == [CAPTURED]  # best = fight 9 < 15


def test_r_cam_50_options_k_subset():
    """R-CAM-50: `options = k` draws the k locations with the smallest keys, once for the party."""
    p = params_of(rules={"options": 1}, locations=[{"id": "a"}, {"id": "b"}, {"id": "cell", "capture_room": True}])
    g = new_game(p)
    # one option: the first of a partial shuffle of (a, b, cell); u = 0.4 -> index 1 -> b, where everyone goes
    u = uniforms(p, options=[0.4])
    assert_same(p, g, 1, u)
    assert g.status == [FREE] and u.labels == [("options", 0)]  # one option: the move draws nothing
    p_all = params_of(rules={"options": 9})
    assert p_all.k_options == p_all.L


def test_r_cam_51_ears_count_while_captured():
    """R-CAM-51: early ears count while the holder is in the game, captured included."""
    locs = [{"id": "a"}, {"id": "b"}, {"id": "cell", "capture_room": True}]
    adv = [{**HOUND, "abilities": {"fight": 0, "flee": 0, "hide": 0}}]
    p = params_of(locations=locs, adversaries=adv, spawns=[{"adversary": "hound", "locations": ["a"]}],
                  policy={"move": "avoid"},
                  party=[{"name": "E", "abilities": {"fight": 0, "flee": 0, "hide": 0},
                          "skills": [{"kind": "early_ears"}]},
                         {"name": "B", "abilities": {"fight": 5, "flee": 5, "hide": 5}}])
    g = new_game(p)
    g.status[0], g.room[0], g.cap_turn[0] = CAPTURED, 2, 1
    assert_same(p, g, 2, uniforms(p, pc_move=[0.0, 0.0]))
    assert g.duels_tmpl == [0]


def test_r_cam_52_more_members_than_team_max_rest_fight_alone():
    """R-CAM-52: with more members present than team_max, a random team_max form the team; the rest
    fight one by one."""
    weak = {"name": "w", "abilities": {"fight": 1, "flee": 1, "hide": 1}, "stance": "fight", "boss": True}
    p = params_of(rules={"team_max": 2}, adversaries=[weak], spawns=[{"adversary": "w", "locations": ["hall"]}],
                  party=[{"name": n, "abilities": {"fight": 10, "flee": 0, "hide": 0}, "team": "x"} for n in "ABC"])
    g = new_game(p)
    # the members shuffled from (A, B, C): u = 0.0 keeps A first, u = 0.9 swaps B and C -> team A + C, B alone
    draws = {(("team_members", 0), 0): 0.0, (("team_members", 0), 1): 0.9}
    assert_same(p, g, 1, uniforms(p, pc_move=[0.0] * 3, draws=draws))
    # team A + C (one duel: the boss is out), then B alone against the boss: 2 duels in all; the boss has
    # fought both groups this turn, so fights stop although it stays (R-CAM-7)
    assert g.duels_tmpl == [2]


def test_r_cam_53_default_capture_room_random_among_several():
    """R-CAM-53: without capture_room, the only room or one at random among several."""
    p = params_of(adversaries=[{**HOUND, "abilities": {"fight": 30, "flee": 0, "hide": 0}}],
                  spawns=[{"adversary": "hound", "locations": ["hall"]}],
                  locations=[{"id": "hall"}, {"id": "c1", "capture_room": True}, {"id": "c2", "capture_room": True}])
    for uval, room in ((0.2, 1), (0.7, 2)):
        g = new_game(p)
        assert_same(p, g, 1, uniforms(p, pc_move=[0.0], pc_capture_room=[uval]))
        assert g.room == [room]


def test_r_cam_54_boss_tie_stays():
    """R-CAM-54: a boss that ties stays and meets the next PC."""
    boss = {"name": "b", "abilities": {"fight": 10, "flee": 0, "hide": 0}, "stance": "fight", "boss": True}
    p = params_of(adversaries=[boss], spawns=[{"adversary": "b", "locations": ["hall"]}],
                  party=[{"name": n, "abilities": {"fight": 10, "flee": 0, "hide": 0}} for n in "AB"])
    g = new_game(p)
    assert_same(p, g, 1, uniforms(p, pc_move=[0.0, 0.0]))
    assert g.duels_tmpl == [2] and g.status == [CAPTURED, CAPTURED]


def test_r_cam_57_miso_bomb_uses_policy_and_default_room():
    """R-CAM-57: a miso bomb keeps its skills, uses the stance policy (fixed here), gives reward 0 and
    takes no part in missions."""
    p = params_of(rules={"miso_bomb": True}, policy={"stance": "fixed", "stance_value": "fight"},
                  missions=[{"location": "hall", "stance": "hide", "target": 1, "reward": 5}],
                  party=[{"name": "M", "abilities": {"fight": 5, "flee": 0, "hide": 0},
                          "skills": [{"kind": "multiplier", "stances": ["fight"], "value": 3}]},
                         {"name": "B", "abilities": {"fight": 14, "flee": 0, "hide": 9}}])
    g = new_game(p)
    g.status[0] = GAME_OVER
    assert_same(p, g, 3, uniforms(p, pc_move=[0.0, 0.0], pc_miso_loc=[0.0]))
    # miso: 5 x 3 = 15 > 14: B captured; the mission paid B (hide 9 >= 1) but not the miso bomb
    assert g.status == [GAME_OVER, CAPTURED] and g.gp == [0, 5 + 1] and g.duels_tmpl == [1]


# ------------------------------------------------------------------ fights until the location is cleared
LADDER = [{"name": n, "abilities": {"fight": f, "flee": 0, "hide": 0}, "stance": "fight", "reward": r}
          for n, f, r in (("one", 5, 1), ("two", 8, 2), ("three", 30, 4))]


def ladder(fights: str):
    """One PC (fight 10, fixed stance fight) and three ordinary adversaries in the hall, all fixed on fight:
    5 and 8 lose to 10 and 30 beats it (R-CAM-2..4: same stance, no doubling)."""
    return params_of(adversaries=LADDER, rules={"fights": fights},
                     spawns=[{"adversary": a["name"], "locations": ["hall"]} for a in LADDER],
                     party=[{"name": "A", "abilities": {"fight": 10, "flee": 0, "hide": 0}}])


def test_r_cam_6_until_cleared_repeats_until_capture():
    """R-CAM-6 (seed 003: repeat until no adversary is left): the only PC fights again and again; with the
    adversary drawn first among those left (u = 0.0) it beats 'one' (+1 gp) and 'two' (+2 gp), then loses to
    'three' on its third confrontation of the turn and is captured (vitality 3 -> 2; +1 gp in step 7)."""
    p = ladder("until_cleared")
    g = new_game(p)
    u = uniforms(p, pc_move=[0.0], pc_duel_pick=[0.0])
    assert_same(p, g, 1, u)
    assert g.duels_tmpl == [1, 1, 1] and g.wins_tmpl == [1, 1, 0]
    assert g.status == [CAPTURED] and g.vit == [2] and g.captures_t[0] == 1 and g.gp == [1 + 2 + 1]
    assert [lab for lab in u.labels if lab[0] == "pc_duel_pick"] == [("pc_duel_pick", 0)] * 2  # 3, then 2 left


def test_r_cam_6_once_fights_one_confrontation():
    """R-CAM-6 `fights = "once"`: the same turn gives one confrontation ('one', won: +1 gp, +1 in step 7)."""
    p = ladder("once")
    g = new_game(p)
    assert_same(p, g, 1, uniforms(p, pc_move=[0.0], pc_duel_pick=[0.0]))
    assert g.duels_tmpl == [1, 0, 0] and g.status == [FREE] and g.gp == [1 + 1] and g.captures_t[0] == 0


def test_r_cam_6_no_group_twice_in_a_row_unless_the_last():
    """R-CAM-6: two single PCs and four weak adversaries: the rotation alternates A, B, A, B (A first: the
    shuffle of (A, B) with u = 0.0 keeps A first); each wins twice (+1 gp a win). The pick of the opponent is
    drawn while more than one is left: A, B, A."""
    weak = {"name": "w", "abilities": {"fight": 1, "flee": 0, "hide": 0}, "stance": "fight", "reward": 1}
    p = params_of(adversaries=[weak], spawns=[{"adversary": "w", "locations": ["hall"], "count": 4}],
                  party=[{"name": n, "abilities": {"fight": 10, "flee": 0, "hide": 0}} for n in "AB"])
    g = new_game(p)
    u = uniforms(p, pc_move=[0.0, 0.0], draws={(("pc_order", 0), 0): 0.0})
    assert_same(p, g, 1, u)
    assert [lab for lab in u.labels if lab[0] == "pc_duel_pick"] == [("pc_duel_pick", 0), ("pc_duel_pick", 1),
                                                                      ("pc_duel_pick", 0)]
    assert g.duels_tmpl == [4] and g.gp == [2 + 1, 2 + 1] and g.status == [FREE, FREE]


def test_r_cam_6_team_that_won_fights_again_after_the_singles():
    """R-CAM-6 / R-CAM-7: a boss in the hall with the team (A, B) and the single C: the team fights first and
    wins (the boss stays), then C fights it and wins; each group has met the boss once, so fights stop."""
    boss = {"name": "b", "abilities": {"fight": 1, "flee": 0, "hide": 0}, "stance": "fight", "boss": True,
            "reward": 3}
    p = params_of(adversaries=[boss], spawns=[{"adversary": "b", "locations": ["hall"]}],
                  party=[{"name": n, "abilities": {"fight": 10, "flee": 0, "hide": 0}, "team": t}
                         for n, t in (("A", "x"), ("B", "x"), ("C", None))])
    g = new_game(p)
    assert_same(p, g, 1, uniforms(p, pc_move=[0.0] * 3))
    # the team's win pays 3 // 2 = 1 each, C's win pays 3; + 1 each in step 7
    assert g.duels_tmpl == [2] and g.gp == [2, 2, 4] and g.status == [FREE, FREE, FREE]
