"""Shared dice: R-GEN-1 .. R-GEN-5 and the dark dice of R-MDK-1, against brute-force enumeration."""

from __future__ import annotations

import collections
import functools
import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim.dice import (
    CHECK_DENOMINATOR,
    ability_modifier,
    check_numerator,
    dark_dice_distribution,
    dark_dice_outcomes,
    net_dice,
    parse_dice,
    proficiency_bonus,
)


@functools.cache
def bf_totals(net: int, blessed: bool, breath: bool) -> tuple[collections.Counter, int]:
    """Brute force: enumerate every die of the check once (kept pool, blessing d4, breath d20) and
    count the outcomes by total (at most 20**3 * 4 * 20 = 640 000 outcomes)."""
    k = abs(net) + 1
    kept = collections.Counter(max(pool) if net >= 0 else min(pool)
                               for pool in itertools.product(range(1, 21), repeat=k))
    totals: collections.Counter = collections.Counter()
    for value, n in kept.items():
        for d4 in (range(1, 5) if blessed else [0]):
            for d20 in (range(1, 21) if breath else [0]):
                totals[value + d4 + d20] += n
    return totals, sum(totals.values())


def bf_check(net: int, need: int, blessed: bool, breath: bool) -> Fraction:
    totals, n = bf_totals(net, blessed, breath)
    return Fraction(sum(c for t, c in totals.items() if t >= need), n)


@pytest.mark.parametrize("net", [-2, -1, 0, 1, 2])
@pytest.mark.parametrize(("blessed", "breath"), [(False, False), (True, False), (False, True), (True, True)])
def test_R_GEN_1_R_GEN_4_check_numerators_match_brute_force(net, blessed, breath):
    for need in (-3, 0, 1, 2, 7, 11, 15, 20, 21, 24, 30, 41, 45, 50):
        assert Fraction(check_numerator(net, need, blessed, breath), CHECK_DENOMINATOR) == bf_check(
            net, need, blessed, breath), need


def test_R_GEN_1_no_automatic_success_or_failure():
    assert check_numerator(0, 21) == 0 and check_numerator(0, 1) == CHECK_DENOMINATOR


def test_R_GEN_2_R_GEN_3_modifier_and_proficiency():
    assert [ability_modifier(s) for s in (1, 8, 9, 10, 11, 12, 17, 30)] == [-5, -1, -1, 0, 0, 1, 3, 10]
    assert [proficiency_bonus(lv) for lv in (1, 4, 5, 8, 9, 12, 13, 16, 17, 20)] == [2, 2, 3, 3, 4, 4, 5, 5, 6, 6]


def test_R_GEN_4_stacking_modes():
    assert net_dice(3, 1, "cancel") == 0 and net_dice(2, 0, "cancel") == 1 and net_dice(0, 4, "cancel") == -1
    assert net_dice(3, 1, "pool") == 2 and net_dice(0, 2, "pool") == -2


def test_R_GEN_5_dice_expressions():
    e = parse_dice("2d6+3")
    assert e.distribution() == pytest.approx({v: (6 - abs(v - 10)) / 36 for v in range(5, 16)})
    assert parse_dice("1d8+int", ("int",)).distribution({"int": 2}) == pytest.approx({v: 1 / 8 for v in range(3, 11)})
    assert parse_dice("3").distribution() == {3: 1.0}
    assert parse_dice("-1d4 + 2").distribution() == pytest.approx({v: 0.25 for v in (-2, -1, 0, 1)})
    assert parse_dice("d6").n_dice == 1
    faces = [4, 2]
    assert parse_dice("2d6+1").evaluate(faces) == 7


@pytest.mark.parametrize("text", ["", "2d", "d", "1d6++2", "2d6 3", "__import__('os')", "1d0", "101d6", "1d6*2",
                                  "wis", "1e9", "+", "1d6-"])
def test_R_GEN_5_malformed_expressions_are_rejected(text):
    with pytest.raises(ValueError):
        parse_dice(text)


@given(st.text(max_size=30))
def test_R_GEN_5_parser_never_crashes_otherwise(text):
    try:
        parse_dice(text, ("str", "int"))
    except ValueError:
        pass


def test_R_MDK_1_dark_dice_distribution_against_enumeration():
    dist = dark_dice_distribution()
    counts: dict[int, int] = {}
    for a in range(1, 7):
        for b in range(1, 7):
            v = (0 if a == 6 else a) + (0 if b == 6 else b)
            counts[v] = counts.get(v, 0) + 1
    assert dist == pytest.approx({v: c / 36 for v, c in counts.items()})
    outcomes = dark_dice_outcomes()
    assert sum(p for r, p in outcomes if r.critical) == pytest.approx(1 / 36)
    assert sum(p for r, p in outcomes if r.fumble) == pytest.approx(1 / 36)
    assert sum(r.dp * p for r, p in outcomes) == pytest.approx(14 / 36)
    assert np.isclose(sum(dist.values()), 1.0)


def test_compiled_net_dice_equals_the_scalar_rule():
    """R-GEN-4: the numba twin every engine shares (sim.dice_kernel) agrees with sim.dice on every count."""
    from sim.dice import net_dice
    from sim.dice_kernel import net_dice as compiled

    for bonus in range(4):
        for penalty in range(4):
            assert compiled(bonus, penalty, False) == net_dice(bonus, penalty, "cancel")
            assert compiled(bonus, penalty, True) == net_dice(bonus, penalty, "pool")
    # by hand: cancel counts several as one and any pair cancels; pool nets the counts
    assert [compiled(2, 0, False), compiled(2, 1, False), compiled(0, 3, False)] == [1, 0, -1]
    assert [compiled(2, 0, True), compiled(2, 1, True), compiled(0, 3, True)] == [2, 1, -3]
