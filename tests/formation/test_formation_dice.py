"""R-MDK-1 dark dice, R-MDK-2 opposed checks and R-MDK-20 ambush numbers against independent
brute-force enumeration (bf_* functions written here from the rule text, not from the package)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from sim.dice import dark_dice_distribution, dark_roll
from sim.formation.kernel import active_wins_arrays, dark_arrays
from sim.formation.model import Ambush
from sim.formation.rules import (
    active_wins,
    ambush_exact,
    check_succeeds,
    hit_probability,
    opposed_counts,
    opposed_win_probability,
)

FACES = range(1, 7)


def bf_dark(a: int, b: int) -> tuple[int, bool, bool, int]:
    """R-MDK-1 from the text: sixes count 0; 0 is a critical, 10 a fumble; a six 1 DP, two 4 DP."""
    value = {6: 0}.get(a, a) + {6: 0}.get(b, b)
    n_sixes = [a, b].count(6)
    return value, value == 0, value == 10, [0, 1, 4][n_sixes]


def bf_winner(ta, ta_class, tp, tp_class) -> bool:
    """Rank an opposed check: (class, total) with critical=2, normal=1, fumble=0 ... except that
    two criticals / two fumbles compare totals, which the tuple order gives for free."""
    return (ta_class, ta) > (tp_class, tp)


def bf_opposed(active_base: int, passive_base: int) -> tuple[Fraction, Fraction]:
    """Exact P(active wins), P(active wins with total margin >= 2) by enumerating 6^4 dice."""
    win = by2 = 0
    for a1, a2, p1, p2 in itertools.product(FACES, repeat=4):
        va, ca, fa, _ = bf_dark(a1, a2)
        vp, cp, fp, _ = bf_dark(p1, p2)
        ta, tp = active_base - va, passive_base - vp
        cls_a = 2 if ca else (0 if fa else 1)
        cls_p = 2 if cp else (0 if fp else 1)
        if bf_winner(ta, cls_a, tp, cls_p):
            win += 1
            if ta - tp >= 2:
                by2 += 1
    return Fraction(win, 1296), Fraction(by2, 1296)


def test_r_mdk_1_dark_dice_distribution_matches_enumeration():
    """R-MDK-1: the sum distribution (0..10), critical and fumble 1/36, E[DP] = 14/36."""
    counts: dict[int, int] = {}
    for a, b in itertools.product(FACES, repeat=2):
        v = bf_dark(a, b)[0]
        counts[v] = counts.get(v, 0) + 1
    dist = dark_dice_distribution()
    assert sorted(dist) == list(range(11))
    for v, c in counts.items():
        assert dist[v] == pytest.approx(c / 36, abs=1e-12)
    rolls = [dark_roll(a, b) for a, b in itertools.product(FACES, repeat=2)]
    assert sum(r.critical for r in rolls) == 1
    assert sum(r.fumble for r in rolls) == 1
    assert Fraction(sum(r.dp for r in rolls), 36) == Fraction(14, 36)
    # a pinned worked example: sum 0 with two sixes only; 5+6 counts as 5
    assert dark_roll(5, 6).sum == 5 and dark_roll(6, 6).sum == 0 and dark_roll(5, 5).sum == 10


def test_r_mdk_1_kernel_dark_arrays_match_bf_on_all_36():
    f = np.array(list(itertools.product(FACES, repeat=2)))
    s, crit, fum, dp = dark_arrays(f[:, 0], f[:, 1])
    for i, (a, b) in enumerate(f):
        assert (int(s[i]), bool(crit[i]), bool(fum[i]), int(dp[i])) == bf_dark(int(a), int(b))


def test_r_mdk_2_scalar_and_array_opposed_agree_with_bf_rank():
    """R-MDK-2: critical beats non-critical, fumble loses to non-fumble, ties to the passive side."""
    pairs = list(itertools.product(FACES, repeat=4))
    for a1, a2, p1, p2 in pairs[::7]:
        ra, rp = dark_roll(a1, a2), dark_roll(p1, p2)
        for base_a, base_p in ((5, 5), (9, 3), (2, 12)):
            ta, tp = base_a - ra.sum, base_p - rp.sum
            cls_a = 2 if ra.critical else (0 if ra.fumble else 1)
            cls_p = 2 if rp.critical else (0 if rp.fumble else 1)
            expected = bf_winner(ta, cls_a, tp, cls_p)
            assert active_wins(ta, ra, tp, rp) == expected
            got = active_wins_arrays(np.array([ta]), np.array([ra.critical]), np.array([ra.fumble]),
                                     np.array([tp]), np.array([rp.critical]), np.array([rp.fumble]))
            assert bool(got[0]) == expected


def test_r_mdk_2_ties_go_to_the_defender():
    r = dark_roll(2, 3)
    assert not active_wins(5, r, 5, r)
    crit, fumble = dark_roll(6, 6), dark_roll(5, 5)
    assert active_wins(-20, crit, 50, r)  # a critical beats anything but a critical
    assert not active_wins(50, fumble, -20, r)  # a fumble loses to anything but a fumble
    assert not active_wins(7, crit, 7, crit)  # two criticals: totals, tie to the defender
    assert active_wins(-3, fumble, -4, fumble)


@pytest.mark.parametrize("diff", range(-12, 13, 3))
def test_r_mdk_2_opposed_probability_matches_bf(diff):
    win, by2 = bf_opposed(diff, 0)
    w, b = opposed_counts(diff, 0)
    assert Fraction(w, 1296) == win and Fraction(b, 1296) == by2
    assert opposed_win_probability(diff + 4, 4) == pytest.approx(float(win), abs=1e-12)


@pytest.mark.parametrize(
    "ath,pa,size,info,sp",
    [(8, 1, 4, 7, 1), (7, 0, 4, 7, 0), (10, 2, 3, 6, 0), (5, 0, 2, 9, 2), (12, 0, 6, 3, 0), (6, 3, 4, 6, 1)],
)
def test_r_mdk_20_ambush_exact_matches_bf(ath, pa, size, info, sp):
    """R-MDK-20 / R-MDK-12: −2 per powered armor, +2 per super-perception, 36 × 36 exact."""
    got = ambush_exact(Ambush(ambusher_athletics=ath, powered_armor=pa, party_size=size,
                              defender_information=info, super_perception=sp))
    win, by2 = bf_opposed(ath - 2 * pa, info + 2 * sp)
    assert got["ambush_win"] == pytest.approx(float(win), abs=1e-12)
    assert got["ambush_win_by_2"] == pytest.approx(float(by2), abs=1e-12)
    assert got["ambush_win_by_2"] <= got["ambush_win"]


@pytest.mark.parametrize("pa,size", [(4, 4), (5, 4), (1, 1)])
def test_r_mdk_12_no_ambush_when_everyone_wears_powered_armor(pa, size):
    got = ambush_exact(Ambush(ambusher_athletics=50, powered_armor=pa, party_size=size))
    assert got == {"ambush_win": 0.0, "ambush_win_by_2": 0.0}


def test_r_mdk_12_pinned_equal_abilities():
    """Equal totals, no modifiers: P(win) = (1296 − ties − defender wins)/1296 by symmetry."""
    got = ambush_exact(Ambush(ambusher_athletics=7, defender_information=7))
    win, _ = bf_opposed(0, 0)
    assert got["ambush_win"] == pytest.approx(float(win), abs=1e-12)
    assert got["ambush_win"] < 0.5  # ties go to the defenders


def test_r_mdk_14_hit_probability_with_penalty_and_grapple():
    """Hit = 戦闘 − penalty (− 2 grappled, R-MDK-10) against evade (− passive penalty)."""
    assert hit_probability(9, 4, 6) == pytest.approx(float(bf_opposed(5, 6)[0]), abs=1e-12)
    assert hit_probability(9, 4, 6, grappled=True) == pytest.approx(float(bf_opposed(3, 6)[0]), abs=1e-12)
    assert hit_probability(9, 0, 6, passive_penalty=2) == pytest.approx(float(bf_opposed(9, 4)[0]), abs=1e-12)


def test_r_mdk_1_unopposed_check_success_value():
    """R-MDK-1: success when total − target >= 0; critical / fumble decide (decision)."""
    assert check_succeeds(5, 5, dark_roll(1, 2))
    assert not check_succeeds(4, 5, dark_roll(1, 2))
    assert check_succeeds(-10, 5, dark_roll(6, 6))
    assert not check_succeeds(30, 5, dark_roll(5, 5))
