"""R-CAM-9a growth purchases ([growth.costs], policy.buy) and R-CAM-25a missions found by early ears and miso
bombs in missions, by hand, each turn played by both engines on the same numbers (``play_both``).

Every expected number is worked out in a comment from RULES.md section 3. The small campus of
``campus_helpers.BASE``: the hall (the only location that is no capture room) and the cell; the move policy is
``avoid`` (no early ears: the hall, no draw) and the stance ``fixed`` fight unless a test says otherwise."""

from __future__ import annotations

import pytest
from campus_fuzz import random_purchase_scenario
from campus_helpers import kernel_matches_reference, new_game, params_of, play_both, scenario_data, uniforms

import sim
from sim.campus.params import CAPTURED, FREE, GAME_OVER, compile_params
from sim.campus.reference import Turn
from sim.scenario import parse_scenario

PC = {"fight": 10, "flee": 10, "hide": 10}
SIG = {"name": "sig", "cost": 4, "kind": "multiplier", "stances": ["fight"], "value": 2}


def costs(*skills, team=None):
    c = {"skills": list(skills)}
    if team is not None:
        c["team"] = team
    return {"costs": c}


# ------------------------------------------------------------------------------------------------ R-CAM-9a
def test_r_cam_9a_skill_bought_in_step_3_before_the_rest_is_spent_and_counts_this_turn():
    """R-CAM-9a / R-CAM-5 step 3: A (fight 10, flee 8, hide 9) has 5 gp and buys "sig" (x2 on fight, 4 gp) first:
    5 - 4 = 1 gp left, which `lowest` puts on flee (8, the lowest) -> (10, 9, 9), gp 0. The guard (fight 15,
    fixed fight, reward 3) meets A in fight: no advantage, A's value floor(10 x 2) = 20 > 15: A wins, gp 3; step 7
    +1 -> 4. Without the purchase (or with `lowest` spending first) the 5 gp go (10,8,9) -> flee, flee, hide, fight,
    flee = (11, 11, 10) and 11 < 15 captures A."""
    p = params_of(
        party=[{"name": "A", "abilities": {"fight": 10, "flee": 8, "hide": 9}}],
        adversaries=[{"name": "guard", "abilities": {"fight": 15}, "stance": "fight", "reward": 3}],
        spawns=[{"adversary": "guard", "locations": ["hall"]}],
        growth=costs(SIG), policy={"buy": ["sig"], "growth": "lowest", "move": "avoid"})
    g = new_game(p)
    g.gp[0] = 5
    play_both(p, g, 1, uniforms(p))
    assert g.bought == [[1]]
    assert g.base[0] == [10, 9, 9]
    assert g.status == [FREE] and g.gp == [4]


def test_r_cam_9a_buy_list_in_order_stops_at_the_first_item_it_cannot_afford():
    """R-CAM-9a "in order, as soon as it can afford it": buy = [big (6 gp), small (1 gp)], growth none.
    Turn 1 with 3 gp: big is not affordable, so small (after it) is not bought either: gp 3 + 1 = 4.
    Turn 2 with 6 gp: big (6 - 6 = 0), then small: 0 < 1, stop; gp 0 + 1 = 1; bought = [2, 0]."""
    big = {"name": "big", "cost": 6, "kind": "bonus", "value": 5}
    small = {"name": "small", "cost": 1, "kind": "bonus", "value": 1}
    p = params_of(growth=costs(big, small), policy={"buy": ["big", "small"], "move": "avoid"})
    g = new_game(p)
    g.gp[0] = 3
    play_both(p, g, 1, uniforms(p))
    assert g.bought == [[0, 0]] and g.gp == [4]
    g.gp[0] = 6
    play_both(p, g, 2, uniforms(p))
    assert g.bought == [[2, 0]] and g.gp == [1]


def test_r_cam_9a_the_rest_is_spent_by_the_growth_rule_unless_save_for_buy():
    """R-CAM-9a "before spending the rest by its ability rule": "sig" costs 3, A has 2 gp and growth `lowest`:
    nothing is bought and the 2 gp go to fight then flee (ties fight, flee, hide): (11, 11, 10), gp 0 + 1 = 1.
    With the project option save_for_buy the 2 gp wait: (10, 10, 10), gp 2 + 1 = 3; in turn 2 it buys sig:
    3 - 3 = 0, gp 0 + 1 = 1, bought in turn 2."""
    sig = {**SIG, "cost": 3}
    p = params_of(growth=costs(sig), policy={"buy": ["sig"], "growth": "lowest", "move": "avoid"})
    g = new_game(p)
    g.gp[0] = 2
    play_both(p, g, 1, uniforms(p))
    assert g.base[0] == [11, 11, 10] and g.gp == [1] and g.bought == [[0]]
    p = params_of(growth=costs(sig), policy={"buy": ["sig"], "growth": "lowest", "move": "avoid",
                                             "save_for_buy": True})
    g = new_game(p)
    g.gp[0] = 2
    play_both(p, g, 1, uniforms(p))
    assert g.base[0] == [10, 10, 10] and g.gp == [3] and g.bought == [[0]]
    play_both(p, g, 2, uniforms(p))
    assert g.gp == [1] and g.bought == [[2]]


@pytest.mark.parametrize("engine", ["kernel", "reference"])
def test_r_cam_9a_gp_saved_until_the_price_whole_game(engine):
    """R-CAM-9a over a whole game (growth none, nothing else happens): gp at step 3 of turn t is t - 1 (+1 in every
    step 7), so a 3-gp skill is bought in turn 4 (3 >= 3), leaving 0; after turn 12: 0 + 9 x 1 - 0 = 9. Every run,
    so bought_rate 1 and bought_turn 4."""
    sig = {**SIG, "cost": 3}
    s = parse_scenario(scenario_data(growth=costs(sig), policy={"buy": ["sig"], "move": "avoid"}))
    r = sim.simulate(s, runs=20, seed=1, engine=engine)
    assert (r.runs["pc0_bought_sig"] == 4).all()
    assert (r.runs["pc0_gp"] == 9).all()
    assert r.summary["bought_rate_by_item"] == {"sig": 1.0}
    assert r.summary["bought_turn_by_item"] == {"sig": 4.0}


def test_r_cam_9a_team_membership_team_max_and_one_team_per_pc():
    """R-CAM-9a `team = 2`, team_max 2, buy = ["team:A"], every PC with 2 gp, in party order:
    P0 joins (0 members < 2; gp 0), P1 joins (1 < 2; gp 0), P2 cannot (2 members: passed over, keeps 2),
    P3 is already in team "B" (one team per PC). Step 7: gp 1, 1, 3, 3.
    Turn 2 after P0's game over: members in the game = 1 (P1) < 2, so P2 joins: 3 - 2 = 1, + 1 = 2."""
    party = [{"name": f"P{k}", "abilities": PC} for k in range(4)]
    party[3]["team"] = "B"
    p = params_of(party=party, rules={"team_max": 2}, growth=costs(team=2),
                  policy={"buy": ["team:A"], "move": "avoid"})
    g = new_game(p)
    g.gp = [2, 2, 2, 2]
    play_both(p, g, 1, uniforms(p))
    assert g.bought == [[1], [1], [0], [0]]
    assert g.gp == [1, 1, 3, 3]
    teams = [tm.team for tm in Turn(p, g, 2, uniforms(p)).terms]
    assert teams[0] == teams[1] == p.team_names.index("A") and teams[2] == -1 and teams[3] == p.team_names.index("B")
    g.status[0] = GAME_OVER
    play_both(p, g, 2, uniforms(p))
    assert g.bought[2] == [2] and g.gp[2] == 2


def test_r_cam_9a_one_team_per_pc():
    """R-CAM-9a "one team per PC": P0 of team "B" (team_max 3, so "A" has room) does not buy "team:A": it keeps its
    2 gp (+1 = 3) and stays in "B"."""
    p = params_of(party=[{"name": "P0", "abilities": PC, "team": "B"}], growth=costs(team=2),
                  policy={"buy": ["team:A"], "move": "avoid"})
    g = new_game(p)
    g.gp[0] = 2
    play_both(p, g, 1, uniforms(p))
    assert g.bought == [[0]] and g.gp == [3]
    assert Turn(p, g, 2, uniforms(p)).terms[0].team == p.team_names.index("B")


def test_r_cam_9a_bought_team_fights_as_a_team_the_same_turn():
    """R-CAM-9a then R-CAM-9: A (fight 10) and B (fight 20) each buy "team:A" (2 gp of 2). The hound (fight 15, fixed
    fight, reward 4) meets the team: side order A, B (the shuffle's draw 0.0 keeps it); A 10 < 15 is out and the
    hound's fight base drops by 10 to 5; B 20 > 5 wins: the team wins, nobody is captured, 4 // 2 = 2 gp each;
    step 7: 0 + 2 + 1 = 3. Without the purchase A fights alone first (the same draw), 10 < 15: captured."""
    party = [{"name": "A", "abilities": PC}, {"name": "B", "abilities": {"fight": 20, "flee": 10, "hide": 10}}]
    p = params_of(party=party, growth=costs(team=2), policy={"buy": ["team:A"], "move": "avoid"},
                  adversaries=[{"name": "hound", "abilities": {"fight": 15}, "stance": "fight", "reward": 4}],
                  spawns=[{"adversary": "hound", "locations": ["hall"]}])
    g = new_game(p)
    g.gp = [2, 2]
    play_both(p, g, 1, uniforms(p, fill=0.0))
    assert g.status == [FREE, FREE]
    assert g.gp == [3, 3]


def test_r_cam_9a_bought_gp_per_turn_counts_in_step_7_of_the_same_turn():
    """R-CAM-9a, R-CAM-58: "veteran" (gp_per_turn +2, 1 gp) bought with 2 gp: 1 left; step 7: 1 + 1 + 2 = 4
    (without it: 2 + 1 = 3)."""
    vet = {"name": "veteran", "cost": 1, "kind": "gp_per_turn", "value": 2}
    p = params_of(growth=costs(vet), policy={"buy": ["veteran"], "move": "avoid"})
    g = new_game(p)
    g.gp[0] = 2
    play_both(p, g, 1, uniforms(p))
    assert g.gp == [4]


# ------------------------------------------------------------------------------------------------ R-CAM-25a
HOPELESS = {"location": "hall", "stance": "hide", "target": 100, "penalty": {"vitality": 1},
            "found_by": "early_ears"}


def test_r_cam_25a_found_mission_needs_early_ears_in_the_game_at_the_preview():
    """R-CAM-25a: a found mission (target 100, penalty 1 vitality) does not occur without early ears: A keeps 3
    vitality. A buys "ears" (1 gp) in turn 1's step 3, after the preview: still no mission in turn 1 (3); in turn 2
    A's ears count at the preview: the mission occurs and fails: 3 - 1 = 2."""
    ears = {"name": "ears", "cost": 1, "kind": "early_ears"}
    p = params_of(missions=[HOPELESS], growth=costs(ears), policy={"buy": ["ears"], "move": "avoid"})
    g = new_game(p)
    g.gp[0] = 1
    play_both(p, g, 1, uniforms(p))
    assert g.bought == [[1]] and g.vit == [3]
    play_both(p, g, 2, uniforms(p))
    assert g.vit == [2]


def test_r_cam_25a_found_mission_occurs_while_a_captured_pc_holds_early_ears():
    """R-CAM-25a with R-CAM-51: B holds early ears and is captured (free or captured counts): the found mission
    occurs and A, alone at the hall, fails it: 3 - 1 = 2. Without B's ears: A keeps 3."""
    for ears, expected in ((True, 2), (False, 3)):
        b = {"name": "B", "abilities": PC, "skills": [{"kind": "early_ears"}] if ears else []}
        p = params_of(party=[{"name": "A", "abilities": PC}, b], missions=[HOPELESS], policy={"move": "avoid"})
        g = new_game(p)
        g.status[1], g.room[1], g.cap_turn[1] = CAPTURED, 1, 1
        # the hall is the only safe option (A's avoid with early ears: no adversary, no capture room)
        play_both(p, g, 2, uniforms(p))
        assert g.vit[0] == expected


def miso_game(mission, b_skills=(), bought=None, rules=None, a_skills=(), c_hide=None):
    """A (10, 10, 10) free at the hall; B out of the game (base 4, 4, 4) returns as a miso bomb, placed at the hall
    (the only location that is no capture room: no draw). Optional C (hide ``c_hide``) at the hall too."""
    party = [{"name": "A", "abilities": PC, "skills": list(a_skills)},
             {"name": "B", "abilities": {"fight": 4, "flee": 4, "hide": 4}, "skills": list(b_skills)}]
    if c_hide is not None:
        party.append({"name": "C", "abilities": {"fight": 10, "flee": 10, "hide": c_hide}})
    over = {}
    if bought is not None:
        over = {"growth": costs(bought), "policy": {"buy": [bought["name"]], "move": "avoid"}}
    p = params_of(party=party, missions=[mission], rules={"miso_bomb": True, **(rules or {})},
                  **({"policy": {"move": "avoid"}} | over))
    g = new_game(p)
    g.status[1], g.vit[1] = GAME_OVER, 0
    if bought is not None:
        g.bought[1] = [1]
    return p, g


SUM8 = {"location": "hall", "stance": "hide", "target": 8, "reward": 2, "penalty": {"vitality": 1}}
EARS = ({"kind": "early_ears"},)  # B's early ears: the adversary side has them once B is a miso bomb


def test_r_cam_25a_miso_bomb_lowers_the_mission_total():
    """R-CAM-25a: the miso bomb B (hide 4, early ears) at the hall takes part and lowers the total: A's hide
    10 - 4 = 6 < 8, the mission fails: A 3 - 1 = 2 vitality, gp 0 (+1 in step 7 = 1). (Then B meets A: fixed fight,
    10 > 4, A wins reward 0.) Without the lowering: 10 >= 8, success: vitality 3, gp 2 + 1 = 3."""
    p, g = miso_game(SUM8, b_skills=EARS)
    play_both(p, g, 1, uniforms(p))
    assert g.vit[0] == 2 and g.gp[0] == 1 and g.status[0] == FREE


def test_r_cam_25a_switch_miso_in_missions_false_is_the_earlier_reading():
    """rules.miso_in_missions = false (R-CAM-57 before the revision: no part in missions): 10 >= 8, success:
    vitality 3, gp 2 + 1 = 3."""
    p, g = miso_game(SUM8, b_skills=EARS, rules={"miso_in_missions": False})
    play_both(p, g, 1, uniforms(p))
    assert g.vit[0] == 3 and g.gp[0] == 3


def test_r_cam_25a_miso_bomb_lowers_each_value_in_mode_each():
    """R-CAM-25a, mode each (target 7): A 10 - 4 = 6 < 7 and C (hide 9) 9 - 4 = 5: the mission fails, both lose 1
    vitality (3 -> 2). Without the lowering 10 and 9 >= 7: success, both keep 3."""
    p, g = miso_game({**SUM8, "mode": "each", "target": 7}, b_skills=EARS, c_hide=9)
    play_both(p, g, 1, uniforms(p, pc_move=[0.0]))
    assert g.vit[0] == 2 and g.vit[2] == 2


def test_r_cam_25a_miso_bomb_in_a_found_mission_needs_adversary_side_early_ears():
    """R-CAM-25a: a found mission (A holds early ears, so it occurs). B without early ears may not take part: A's
    10 >= 8, success (vitality 3). B with early ears (the adversary side has them) lowers: 10 - 4 = 6 < 8, failure
    (vitality 2). (A's avoid with early ears: the hall holds B, so it picks among all options: the draw 0.0 gives
    the hall.)"""
    found = {**SUM8, "found_by": "early_ears"}
    for b_skills, expected in (((), 3), (({"kind": "early_ears"},), 2)):
        p, g = miso_game(found, b_skills=b_skills, a_skills=({"kind": "early_ears"},))
        play_both(p, g, 1, uniforms(p, pc_move=[0.0]))
        assert g.vit[0] == expected


def test_R_CAM_25a_bomb_without_adversary_side_ears_takes_part_in_no_mission():
    """R-CAM-25a, second round (settled 2026-12-05): 「敵対者側に早耳を取得している者がいない場合、ミッションには参加
    できない」. B (hide 4) is a miso bomb at the hall without early ears, and no other bomb holds them: it takes part
    in no mission, found or not. The scheduled mission (not found by ears), sum, target 8: A's hide 10 >= 8 alone,
    success: A keeps vitality 3 and gains gp 2 (+1 in step 7 = 3). (B lowering it would give 10 - 4 = 6 < 8: failure,
    vitality 2, gp 1, the reading of the first round.) Mode each, target 7, with C (hide 9): 10 and 9 >= 7, success,
    both keep 3 (lowered: 6 and 5 < 7, both 2)."""
    p, g = miso_game(SUM8)
    play_both(p, g, 1, uniforms(p))
    assert g.vit[0] == 3 and g.gp[0] == 3 and g.status[0] == FREE
    p, g = miso_game({**SUM8, "mode": "each", "target": 7}, c_hide=9)
    play_both(p, g, 1, uniforms(p, pc_move=[0.0]))
    assert g.vit[0] == 3 and g.vit[2] == 3


def test_r_cam_25a_miso_bomb_never_raises_the_total():
    """R-CAM-25a "lowers": B's (early ears)
    hide value floor(4 - 10) = -6 lowers by 0 (a miso bomb only takes part to lower):
    target 12, A's 10 < 12 fails: vitality 2 (a raise by 6 would give 16 >= 12, success)."""
    p, g = miso_game({**SUM8, "target": 12}, b_skills=({"kind": "bonus", "stances": ["hide"], "value": -10},) + EARS)
    play_both(p, g, 1, uniforms(p))
    assert g.vit[0] == 2


def test_r_cam_57_miso_bomb_keeps_the_skills_it_bought():
    """R-CAM-57 with R-CAM-9a: B (early ears)
    bought "cloak" (+4 hide) before its game over: its hide value 4 + 4 = 8 lowers the
    total (target 3): 10 - 8 = 2 < 3, failure: vitality 2. With only its own skills: 10 - 4 = 6 >= 3, success."""
    cloak = {"name": "cloak", "cost": 1, "kind": "bonus", "stances": ["hide"], "value": 4}
    p, g = miso_game({**SUM8, "target": 3}, b_skills=EARS, bought=cloak)
    play_both(p, g, 1, uniforms(p))
    assert g.vit[0] == 2


# ------------------------------------------------------------------------------------------------ agreement
@pytest.mark.parametrize("seed", range(30))
def test_r_cam_9a_r_cam_25a_reference_equals_kernel_random_scenarios(seed):
    """R-CAM-9a, R-CAM-25a with every other rule: random scenarios with purchases, found missions and miso bombs,
    identical games in both engines on the same draws."""
    assert kernel_matches_reference(compile_params(random_purchase_scenario(seed)), 25, seed)


def test_random_purchase_scenarios_do_buy_and_find():
    """The random scenarios above exercise the new rules: some PC buys something in some of them."""
    bought = 0
    for seed in range(30):
        r = sim.simulate(random_purchase_scenario(seed), runs=25, seed=seed)
        bought += sum(int((r.runs[c] > 0).sum()) for c in r.runs.columns if "_bought_" in c)
    assert bought > 0
