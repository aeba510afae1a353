"""sim.dice by hand: the pieces the kernels use (kept-die counts, the check lookup array, net dice)
and the edges of the check and dice-expression arithmetic. Expected numbers are worked in comments
from R-GEN-1 .. R-GEN-5 and R-MDK-21."""

from __future__ import annotations

import numpy as np
import pytest

from sim.dice import (
    CHECK_DENOMINATOR,
    CHECK_MAX_SUM,
    DARK_DICE_EXPECTED_DP,
    MAX_NET_DICE,
    check_numerator,
    check_table_array,
    d20_check_probability,
    keep_d20,
    kept_d20_counts,
    net_dice,
    parse_dice,
)


@pytest.mark.parametrize(("bonus", "penalty", "cancel", "pool"), [
    (0, 0, 0, 0), (1, 0, 1, 1), (2, 0, 1, 2), (0, 1, -1, -1), (0, 3, -1, -3),
    (1, 1, 0, 0), (3, 1, 0, 2), (1, 2, 0, -1),
])
def test_R_GEN_4_net_dice(bonus, penalty, cancel, pool):
    # cancel: any bonus and any penalty cancel, several of one kind count once; pool: the net count
    assert net_dice(bonus, penalty, "cancel") == cancel
    assert net_dice(bonus, penalty, "pool") == pool


def test_R_GEN_4_kept_d20_counts_by_hand():
    v = np.arange(1, 21)
    assert list(kept_d20_counts(0)[1:]) == [1] * 20  # a plain d20
    assert list(kept_d20_counts(1)[1:]) == list(2 * v - 1)  # max of 2: v^2 - (v-1)^2
    assert list(kept_d20_counts(-1)[1:]) == list(41 - 2 * v)  # min of 2: (21-v)^2 - (20-v)^2
    assert list(kept_d20_counts(2)[1:]) == list(3 * v * v - 3 * v + 1)  # max of 3: v^3 - (v-1)^3
    assert kept_d20_counts(-2)[1] == 20**3 - 19**3 and kept_d20_counts(-2)[20] == 1
    for net in range(-2, 3):
        assert kept_d20_counts(net)[0] == 0 and kept_d20_counts(net).sum() == 20 ** (abs(net) + 1)


def test_R_GEN_4_keep_d20_reads_the_first_dice():
    rolls = np.array([15, 4, 20])
    assert [keep_d20(rolls, n) for n in (-2, -1, 0, 1, 2)] == [4, 4, 15, 15, 20]
    rolls = np.array([3, 17, 9])
    assert [keep_d20(rolls, n) for n in (-2, -1, 0, 1, 2)] == [3, 3, 3, 17, 17]


def test_R_GEN_1_check_edges():
    # every die at its maximum: 20 + 4 + 20 = 44 = CHECK_MAX_SUM, 1 outcome of 20 * 4 * 20
    assert CHECK_MAX_SUM == 44
    assert check_numerator(0, 44, True, True) * 1600 == CHECK_DENOMINATOR
    assert check_numerator(0, 45, True, True) == 0
    assert check_numerator(0, 1) == check_numerator(0, 0) == check_numerator(0, -5) == CHECK_DENOMINATOR
    assert check_numerator(0, 2) * 20 == 19 * CHECK_DENOMINATOR


def test_R_GEN_1_d20_check_probability():
    # +3 vs DC 15: d20 >= 12, 9/20; with a bonus die 1 - (11/20)^2; with a penalty die (9/20)^2
    assert d20_check_probability(3, 15) == pytest.approx(0.45)
    assert d20_check_probability(3, 15, 1) == pytest.approx(1 - 0.55**2)
    assert d20_check_probability(3, 15, -1) == pytest.approx(0.45**2)
    assert d20_check_probability(-2, 15) == pytest.approx(4 / 20)  # d20 >= 17


def test_check_table_array_is_the_numerators_by_net_blessing_breath_need():
    arr = check_table_array()
    assert arr.shape == (2 * MAX_NET_DICE + 1, 2, 2, CHECK_MAX_SUM + 2) and arr.dtype == np.int64
    for net in range(-MAX_NET_DICE, MAX_NET_DICE + 1):
        for b in (0, 1):
            for r in (0, 1):
                row = arr[net + MAX_NET_DICE, b, r]
                assert [int(x) for x in row] == [check_numerator(net, n, bool(b), bool(r))
                                                 for n in range(CHECK_MAX_SUM + 2)]
    # one cell by hand: net +1, blessed, no breath, need 18 -> sum over d4 k of 1 - ((17 - k)/20)^2
    hits = sum(400 - (17 - k) ** 2 for k in range(1, 5))
    assert arr[1 + MAX_NET_DICE, 1, 0, 18] * 1600 == hits * CHECK_DENOMINATOR


def test_R_GEN_5_evaluate_reads_faces_term_by_term():
    e = parse_dice("1d4+2d6+1d8", ())
    assert e.n_dice == 4 and e.evaluate([1, 2, 3, 4]) == 1 + (2 + 3) + 4
    e = parse_dice("1d4+wis-con+2", ("wis", "con"))
    assert e.evaluate([3], {"wis": 2, "con": -1}) == 3 + 2 + 1 + 2
    assert e.distribution({"wis": 0, "con": 0}) == pytest.approx({k + 2: 0.25 for k in range(1, 5)})
    with pytest.raises(ValueError, match="needs ability modifiers"):
        e.evaluate([1])
    e = parse_dice("2d6-1d4", ())
    assert e.evaluate([6, 5, 4]) == 7


def test_R_GEN_5_limits():
    assert parse_dice("1d1000", ()).distribution()[1000] == pytest.approx(1e-3)
    with pytest.raises(ValueError, match="sides"):
        parse_dice("1d1001", ())
    assert parse_dice("10000", ()).constant == 10000
    with pytest.raises(ValueError, match="constant"):
        parse_dice("10001", ())


def test_R_MDK_21_expected_dp_per_roll():
    # one six (10 of 36 ordered pairs) 1 DP, two sixes (1 of 36) 4 DP: 14/36
    assert DARK_DICE_EXPECTED_DP == pytest.approx((10 * 1 + 1 * 4) / 36)


def test_R_GEN_5_constants_signs_and_counts():
    # integers add and subtract left to right; a leading minus negates the first term
    assert parse_dice("2+3", ()).constant == 5
    assert parse_dice("10-2-3", ()).constant == 5
    assert parse_dice("-2+1d4", ()).distribution() == pytest.approx({k: 0.25 for k in (-1, 0, 1, 2)})
    # 1 to 100 dice of 1 to 1000 sides, at most 100 dice in all
    assert parse_dice("1d1", ()).distribution() == {1: 1.0}
    assert parse_dice("100d2", ()).n_dice == parse_dice("50d2+50d2", ()).n_dice == 100
    for bad, key in (("101d2", "1..100"), ("50d2+51d2", "more than 100"), ("1d0", "1..1000"), ("", "empty")):
        with pytest.raises(ValueError, match=key):
            parse_dice(bad, ())
