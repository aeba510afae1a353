"""Interval estimates used by every summary."""

from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson_interval(successes: float, n: int, z: float = Z95) -> list[float]:
    """Two-sided Wilson score interval for a binomial proportion; [0, 1] when n == 0."""
    if n <= 0:
        return [0.0, 1.0]
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if successes <= 0 else max(0.0, min(p, centre - half))  # exact bounds at 0 and n,
    hi = 1.0 if successes >= n else min(1.0, max(p, centre + half))  # and always around p
    return [lo, hi]


def standard_error(p: float, n: int) -> float:
    """Binomial standard error of a proportion estimated from n runs."""
    return math.sqrt(max(p * (1 - p), 0.0) / n) if n > 0 else float("inf")
