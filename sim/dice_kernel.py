"""The compiled twins of :mod:`sim.dice` that every kind's numba engine shares (the scalar references use
:mod:`sim.dice` itself; tests compare the two)."""

from __future__ import annotations

from numba import njit


@njit(cache=True, inline="always")
def net_dice(bonus, penalty, pool):
    """R-GEN-4: cancel (default: any bonus and any penalty cancel, several count once) or pool (net count)."""
    if pool:
        return bonus - penalty
    if bonus > 0 and penalty > 0:
        return 0
    if bonus > 0:
        return 1
    if penalty > 0:
        return -1
    return 0
