"""The seed's team-battle worked example, verbatim (R-CAM-9, R-CAM-3, R-CAM-2, R-CAM-30; STYLE.md 9).

Seed 003: 「チーム３人グループ ＶＳ 組織の犬達」, five duels 32:16, 6:32, 76:10, 9:34, 42:32, team wins.
"""

from fractions import Fraction

from sim.campus import Fighter, team_battle
from sim.campus.rules import FIGHT, FLEE, HIDE

ONE = Fraction(1)
TWO = Fraction(2)
PLUS3 = (3, 3, 3)  # 「＋１＋１＋１」 on every stance


def seed_sides():
    pc14 = Fighter("14", FLEE, base=(9, 13, 10), bonus=PLUS3, mult_always=(ONE, TWO, ONE), tag="14")
    # PC 13: x2 on fight only with the stance advantage (when = "advantage")
    pc13 = Fighter("13", FIGHT, base=(16, 8, 9), bonus=PLUS3, mult_advantage=(TWO, ONE, ONE), tag="13")
    pc15 = Fighter("15", HIDE, base=(8, 10, 18), bonus=PLUS3, mult_always=(ONE, ONE, TWO), tag="15")
    hound1 = Fighter("hound", FLEE, base=(15, 15, 15), bonus=(0, 1, 1), reward=2, tag="hound1")
    hound2 = Fighter("hound", HIDE, base=(15, 15, 15), bonus=(0, 1, 1), reward=2, tag="hound2")
    executive = Fighter("executive", FIGHT, base=(17, 8, 8), mult_always=(TWO, ONE, ONE), reward=6, tag="exec")
    return [pc14, pc13, pc15], [hound1, hound2, executive]


def test_r_cam_9_seed_worked_example_five_duels():
    """R-CAM-9 / R-CAM-3 / R-CAM-2: 32:16, 6:32, 76:10, 9:34, 42:32 and the team wins."""
    pcs, foes = seed_sides()
    res = team_battle(pcs, foes)
    values = [(pv, av) for _, _, pv, av, _ in res.duels]
    assert values == [(32, 16), (6, 32), (76, 10), (9, 34), (42, 32)]
    winners = [(p, a, o) for p, a, _, _, o in res.duels]
    assert winners == [
        ("14", "hound1", 1),
        ("14", "hound2", -1),
        ("13", "hound2", 1),
        ("13", "exec", -1),
        ("15", "exec", 1),
    ]
    assert res.team_won
    # R-CAM-9: no member is captured when the team wins; rewards of won duels shared, floored
    assert res.reward_total == 2 + 2 + 6
    assert res.reward_each == 10 // 3
    assert set(res.put_out_by) == {"14", "13"}


def test_r_cam_3_reduction_floors_base_at_zero():
    """R-CAM-3 / R-CAM-9: duel 2 uses 13 - 16 -> 0, so (0+3)x2 = 6; duel 3 the hound's hide is 15 - 6 = 9."""
    pcs, foes = seed_sides()
    res = team_battle(pcs, foes)
    assert res.duels[1][2] == (0 + 3) * 2
    assert res.duels[2][3] == (15 - 6) + 1
    assert res.duels[4][3] == (17 - 9) * 2 * 2  # executive 8 x2 (signature) x2 (stance advantage)


def test_r_cam_52_team_loses_when_last_duel_empties_both_sides():
    """R-CAM-52: a last duel that empties both sides is a loss; rewards are still shared."""
    a = Fighter("a", FIGHT, base=(10, 0, 0), tag="a")
    b = Fighter("b", FIGHT, base=(10, 0, 0), tag="b")
    h1 = Fighter("h1", HIDE, base=(0, 0, 5), reward=3, tag="h1")  # a wins 20:5 (advantage)
    h2 = Fighter("h2", FIGHT, base=(20, 0, 0), reward=1, tag="h2")  # 10-5=5 -> 5 vs 20: a out; b 10 vs 20-5=15: b out
    res = team_battle([a, b], [h1, h2])
    assert [(d[2], d[3]) for d in res.duels] == [(20, 5), (5, 20), (10, 15)]
    assert not res.team_won
    assert res.reward_each == 3 // 2
    assert res.put_out_by == {"a": "h2", "b": "h2"}
    tie = team_battle([Fighter("c", FIGHT, base=(7, 0, 0), tag="c")], [Fighter("d", FIGHT, base=(7, 0, 0), tag="d")])
    assert [d[4] for d in tie.duels] == [0] and not tie.team_won
