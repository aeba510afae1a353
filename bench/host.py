"""How fast this host is, in the unit issue 27 set its targets in: numpy's d20 draws per CPU second on one core.

Issue 27 set the engines' absolute targets (escape 20 M character-rounds/s, campus 12 M PC-turns/s) on a host where
numpy's Generator drew about 220 M d20 per second per core. The project's machine is a virtual machine whose speed
changes from one session to the next (the same engine and the same bench have measured 6.3 M and 10.3 M
character-rounds/s on different days), so the escape and campus benches print this rate beside their own: an
absolute rate is read against the host it was measured on.
"""

from __future__ import annotations

import time

import numpy as np

ISSUE_HOST_D20 = 220e6  # numpy d20 draws per CPU second on the host issue 27's targets were set on
BLOCK = 10_000_000


def d20_rate(repeat: int = 5, seed: int = 0) -> float:
    """numpy's d20 draws (``Generator.integers(1, 21)``, int64, blocks of 10 M) per CPU second, fastest of
    ``repeat``."""
    rng = np.random.default_rng(seed)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        rng.integers(1, 21, size=BLOCK)
        best = min(best, time.process_time() - t0)
    return BLOCK / best


def host_line(rate: float, target: float, unit: str) -> str:
    """One line: this host's d20 rate, and ``target`` scaled by it to this host (rate / 220 M)."""
    scale = rate / ISSUE_HOST_D20
    return (f"this host: numpy draws {rate / 1e6:.0f} M d20 per CPU second ({scale:.2f} of the ~220 M of the host "
            f"issue 27's targets were set on); the {target / 1e6:.0f} M {unit}/s target at this host's speed: "
            f"{target * scale / 1e6:.1f} M")
