"""Interval estimates used by every summary, and the spread of a sample (balance metrics)."""

from __future__ import annotations

import math

import numpy as np

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


def spread(values) -> dict[str, float] | None:
    """Mean, sd, min, p10, p50, p90, max and inter-quartile range of a sample (None when empty)."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return None
    q10, q25, q50, q75, q90 = np.percentile(x, [10, 25, 50, 75, 90])
    return {"mean": float(x.mean()), "sd": float(x.std(ddof=1)) if x.size > 1 else 0.0, "min": float(x.min()),
            "p10": float(q10), "p50": float(q50), "p90": float(q90), "max": float(x.max()), "iqr": float(q75 - q25)}


def spread_from_counts(counts) -> dict[str, float] | None:
    """:func:`spread` of a sample given as a histogram (``counts[v]`` = how often value v occurred)."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if total == 0:
        return None
    values = np.arange(len(counts), dtype=float)
    mean = float((values * counts).sum() / total)
    var = float(((values - mean) ** 2 * counts).sum() / (total - 1)) if total > 1 else 0.0
    cum = np.cumsum(counts)

    def q(f):  # the percentile by linear interpolation between order statistics, as np.percentile
        pos = f * (total - 1)
        lo, hi = int(np.floor(pos)), int(np.ceil(pos))
        vlo, vhi = values[np.searchsorted(cum, lo + 1)], values[np.searchsorted(cum, hi + 1)]
        return float(vlo + (vhi - vlo) * (pos - lo))

    nz = np.flatnonzero(counts)
    return {"mean": mean, "sd": var**0.5, "min": float(nz[0]), "p10": q(0.10), "p50": q(0.50), "p90": q(0.90),
            "max": float(nz[-1]), "iqr": q(0.75) - q(0.25)}
