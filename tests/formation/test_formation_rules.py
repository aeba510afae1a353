"""R-MDK-3 rewards, R-MDK-4 armor, R-MDK-13 roleplay, R-MDK-21 DP."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from sim.dice import DARK_DICE_EXPECTED_DP
from sim.formation.model import Session, Unit, unit_armor
from sim.formation.rules import (
    dp_per_session_exact,
    dp_variance_per_roll,
    enslave_dp,
    roleplay_bonus,
    session_reward_dp,
    sixes_dp_distribution,
)


def test_r_mdk_3_rewards():
    """R-MDK-3: each PC's ★ × 3 for a successful session, an enslaved opponent's ★ × 3."""
    assert session_reward_dp([1, 1, 2]) == 12
    assert session_reward_dp([]) == 0
    assert enslave_dp(3) == 9


@pytest.mark.parametrize(
    "kw,expected",
    [
        ({"stars": 2}, 6),  # ★ × 3
        ({"stars": 3, "armor_stripped": True}, 5),  # 9 halved, round up
        ({"stars": 2, "armor_stripped": True}, 3),
        ({"stars": 1, "armor_stripped": True}, 2),  # 3 / 2 = 1.5 -> 2 (not floored, R-GEN-6 exception)
        ({"stars": 4, "summoned": True}, 0),  # a summoned monster has none
        ({"stars": 4, "monster": False}, 0),
        ({"stars": 4, "armor": 7, "armor_stripped": True}, 4),
    ],
)
def test_r_mdk_4_armor(kw, expected):
    assert unit_armor(Unit(name="m", **kw)) == expected


def test_r_mdk_13_roleplay_bonus_is_1d4_minus_1():
    assert [roleplay_bonus(f) for f in range(1, 5)] == [0, 1, 2, 3]


def test_r_mdk_3_r_mdk_21_enslaved_stars_add_to_dp_per_session():
    """R-MDK-3 / R-MDK-21 (issue 18): PCs ★ 1, 2 give 3 + 6 = 9; enslaved opponents ★ 2, 3 give
    6 + 9 = 15; no checks: 24 DP exactly, in the exact engine and in every simulated run."""
    import sim
    from sim.scenario import parse_scenario

    session = Session(checks=0, stars=[1, 2], enslaved_stars=[2, 3])
    assert dp_per_session_exact(session) == 24
    assert dp_per_session_exact(Session(checks=0, stars=[1, 2])) == 9
    scen = parse_scenario({"kind": "formation", "name": "t", "session": session.model_dump()})
    assert sim.exact(scen)["dp_per_session"] == 24
    for engine in ("kernel", "reference"):
        res = sim.simulate(scen, runs=50, seed=1, engine=engine)
        assert res.summary["dp_per_session"] == 24 and (res.runs["dp_rewards"] == 24).all()

def test_r_mdk_21_dp_per_session_formula():
    """R-MDK-21: Σ ★ × 3 + checks × 14/36."""
    assert dp_per_session_exact(Session(checks=40, stars=[1, 1, 2])) == pytest.approx(12 + 40 * 14 / 36, abs=1e-12)
    assert dp_per_session_exact(Session(checks=0, stars=[])) == 0
    assert DARK_DICE_EXPECTED_DP == pytest.approx(14 / 36, abs=1e-15)


def test_r_mdk_21_sixes_distribution_bf():
    """The DP-from-sixes distribution of 3 rolls against a 36^3 enumeration."""
    counts: dict[int, int] = {}
    faces = list(itertools.product(range(1, 7), repeat=2))
    for rolls in itertools.product(faces, repeat=3):
        dp = sum([0, 1, 4][(a == 6) + (b == 6)] for a, b in rolls)
        counts[dp] = counts.get(dp, 0) + 1
    dist = sixes_dp_distribution(3)
    assert set(dist) == set(counts)
    for v, c in counts.items():
        assert dist[v] == pytest.approx(float(Fraction(c, 36**3)), abs=1e-12)
    mean = sum(v * p for v, p in sixes_dp_distribution(10).items())
    assert mean == pytest.approx(10 * 14 / 36, abs=1e-12)
    var = sum(v * v * p for v, p in sixes_dp_distribution(10).items()) - mean**2
    assert var == pytest.approx(10 * dp_variance_per_roll(), abs=1e-9)
