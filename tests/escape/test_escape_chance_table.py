"""The engine's success chance table (issue 27): every chance the compiled policies weigh (R-ESC-20 step 2, the
helpers of steps 4-6, the team pass of R-ESC-21 / R-ESC-37) is one look-up in it, so each entry is checked here
against the exact check numerators of :mod:`sim.dice`, entry by entry, for every need a check can have."""

from __future__ import annotations

import pytest

from sim.dice import CHECK_DENOMINATOR, CHECK_MAX_SUM, MAX_NET_DICE, check_numerator
from sim.escape import kernel as K


def expected(sides: int, blessed: bool, breath: bool, net: int, need: int) -> int:
    """P(success) over DENOM = CHECK_DENOMINATOR x 120: without a held die, the check numerator x 120; with a held
    inspiration die of ``sides`` faces (R-ESC-14b: it adds to the check), the mean over its faces, i.e. the sum of
    the numerators at need - face, x 120 / sides (120 is divisible by 6, 8, 10 and 12)."""
    if sides == 0:
        return check_numerator(net, need, blessed, breath) * 120
    return sum(check_numerator(net, need - f, blessed, breath) for f in range(1, sides + 1)) * (120 // sides)


def look_up(table, sides: int, blessed: bool, breath: bool, net: int, need: int) -> int:
    return int(table[K.chance_row(sides, blessed, breath, net) + min(max(need, 0), K.NEED_TOP)])


@pytest.mark.parametrize("sides", [0, 6, 8, 10, 12])  # no die; R-ESC-14b: d6 at levels 1-4 ... d12 at 15-20
def test_every_entry_is_the_exact_chance(sides):
    table = K.chance_table()
    assert K.DENOM == CHECK_DENOMINATOR * 120
    for blessed in (False, True):
        for breath in (False, True):
            for net in range(-MAX_NET_DICE, MAX_NET_DICE + 1):
                # needs from well below 0 (always succeeds) to above the largest total with the largest die
                for need in range(-15, CHECK_MAX_SUM + 16):
                    assert look_up(table, sides, blessed, breath, net, need) == expected(
                        sides, blessed, breath, net, need), (sides, blessed, breath, net, need)


def test_hand_worked_entries():
    table = K.chance_table()
    # a plain d20 (net 0, no blessing, no breath) must reach 11: faces 11..20, 10 of 20 -> 1/2
    assert look_up(table, 0, False, False, 0, 11) * 2 == K.DENOM
    # with a held d6 it must reach 11 - face: P = mean over faces f of (10 + f) / 20 = (10 + 3.5) / 20 = 27/40
    assert look_up(table, 6, False, False, 0, 11) * 40 == K.DENOM * 27
    # advantage (net +1) reaching 20: 1 - (19/20)^2 = 39/400
    assert look_up(table, 0, False, False, 1, 20) * 400 == K.DENOM * 39


def test_auto_release_row_always_succeeds():
    # R-ESC-3 / R-ESC-37: a `*` restraint in its second consecutive round counts as a certain success
    table = K.chance_table()
    for need in range(-5, CHECK_MAX_SUM + 10):
        assert table[K.AUTO_ROW + min(max(need, 0), K.NEED_TOP)] == K.DENOM
