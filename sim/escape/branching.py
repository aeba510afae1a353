"""The branching source of the compiled exact engine: the random events of the batch kernel's round, answered
with every outcome in turn and its exact probability (issue 35).

The kernel (:mod:`sim.escape.kernel`) draws its random numbers through five events: a die, a check (R-GEN-4), a
die reaching a number (a search or a save), a dice sum (R-GEN-5) and an item draw (R-ESC-10). Each event picks its
implementation by the type of the random source the round was called with: the chunk's key (a plain tuple, Monte
Carlo, unchanged) or a :class:`Branching` (a named tuple of arrays, the exact engine). So the exact engine plays the
kernel's own rule steps, compiled, and no rule is written a third time.

A :class:`Branching` replays one *path*: the outcome chosen at each random event of the round, by position. An event
beyond the path's fixed prefix takes its first outcome and records how many it has; after the round, :func:`advance`
moves to the next path (the last event with an outcome left takes its next one, the events after it are replayed
fresh), as an odometer. The probability of the path is the product of its outcomes' probabilities. Outcomes of
probability 0 are never played, so a check that cannot fail (or succeed) is one outcome.

**Pinned characters** (issue 35 item 2, the factored round of :mod:`sim.escape.exact_fast`): ``who[i]`` 0 pins
character ``i``'s events to one fixed outcome (its first possible one), played without a position on the path and
without its probability, so a replay enumerates only the events of the characters left active. All active (the
default) is the plain odometer above.

Probabilities: a check's is its numerator over :data:`sim.dice.CHECK_DENOMINATOR` (the shared check table, as the
reference engine reads it); a die's face 1 / sides; a dice sum's the convolution of its dice; an item's its weight
over the weights left.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import NamedTuple

import numpy as np
from numba import njit

from sim.dice import CHECK_DENOMINATOR, CHECK_MAX_SUM, MAX_NET_DICE, check_table_array

#: the modules whose compiled code ends up inside the exact engine's cached functions
_SOURCES = ("escape/kernel.py", "escape/branching.py", "escape/exact_fast.py", "dice_kernel.py")
_CACHED = ("kernel", "branching", "exact_fast")


def fresh_cache() -> None:
    """numba's on-disk cache checks only the source file of each cached function, not the modules whose code it
    inlined: the exact engine's round (exact_fast.play_frontier) holds the kernel's rule steps and this module's
    events. So when any of :data:`_SOURCES` changes, the cached code of :data:`_CACHED` is dropped here (before
    numba loads it), and a digest of the sources is kept next to it. A cache elsewhere (NUMBA_CACHE_DIR) is not
    touched."""
    root = Path(__file__).resolve().parents[1]
    try:
        digest = hashlib.sha256(b"".join((root / name).read_bytes() for name in _SOURCES)).hexdigest()
        cache = root / "escape" / "__pycache__"
        stamp = cache / "exact_sources.sha256"
        if stamp.exists() and stamp.read_text() == digest:
            return
        for module in _CACHED:
            for f in [*cache.glob(f"{module}.*.nbi"), *cache.glob(f"{module}.*.nbc")]:
                f.unlink(missing_ok=True)
        cache.mkdir(exist_ok=True)
        stamp.write_text(digest)
    except OSError:  # a read-only install: numba keeps its cache elsewhere
        return


fresh_cache()
leaf = njit(cache=True)  # plain calls: numba inlines the Monte Carlo leaves, LLVM these

#: the most random events one round may have (a party of four with every event: well below); beyond it the round is
#: handed to the reference-driven engine (the OVERFLOW flag)
MAX_EVENTS = 96
#: the widest dice sum played exactly here (the distribution's scratch); wider sums hand over likewise
MAX_WIDTH = 4096
#: dice expressions whose sum distributions are kept (a round reads at most four: rest, harness, stimulus, recovery),
#: of at most MAX_TERMS terms each
N_CACHED = 4
MAX_TERMS = 8
POS, FIXED, OVERFLOW = range(3)  # Branching.cur columns
#: the largest party whose events can be pinned (Branching.who)
MAX_CHARS = 16


class Branching(NamedTuple):
    """The exact engine's random source: the path being replayed and its probability."""

    path: np.ndarray  # (MAX_EVENTS,) int64: the outcome chosen at each event
    nout: np.ndarray  # (MAX_EVENTS,) int64: how many outcomes each event has
    cur: np.ndarray  # (3,) int64: POS (the next event's position), FIXED (the prefix replayed), OVERFLOW
    prob: np.ndarray  # (1,) float64: the probability of the path so far
    checks: np.ndarray  # check numerators [net + MAX_NET_DICE, blessed, breath, clip(need, 0, CHECK_MAX_SUM + 1)]
    dist: np.ndarray  # (N_CACHED, MAX_WIDTH) float64: the distributions of the dice sums met so far
    dkey: np.ndarray  # (N_CACHED, 3 * MAX_TERMS + 1) int64: their dice rows (sign, count, sides), then the width
    tmp: np.ndarray  # (MAX_WIDTH,) float64 scratch
    who: np.ndarray  # (MAX_CHARS,) int64: 1 where the character's events branch, 0 where they are pinned
    span: np.ndarray  # (MAX_CHARS,) float64: the product of the outcome counts of each pinned character's events


def new_branching() -> Branching:
    return Branching(np.zeros(MAX_EVENTS, dtype=np.int64), np.zeros(MAX_EVENTS, dtype=np.int64),
                     np.zeros(3, dtype=np.int64), np.ones(1), check_table_array(),
                     np.zeros((N_CACHED, MAX_WIDTH)), np.zeros((N_CACHED, 3 * MAX_TERMS + 1), dtype=np.int64),
                     np.zeros(MAX_WIDTH), np.ones(MAX_CHARS, dtype=np.int64), np.ones(MAX_CHARS))


@leaf
def start(b):
    """Before each replay of the round: the first event, probability 1."""
    b.cur[POS] = 0
    b.prob[0] = 1.0


@njit(cache=True)
def first_path(b):
    b.cur[FIXED] = 0
    b.cur[OVERFLOW] = 0


@njit(cache=True)
def advance(b):
    """The next path after the replay just played (the odometer); False when every path was played."""
    d = b.cur[POS] - 1
    while d >= 0 and b.path[d] + 1 >= b.nout[d]:
        d -= 1
    if d < 0:
        return False
    b.path[d] += 1
    b.cur[FIXED] = d + 1
    return True


@leaf
def choose(b, n):
    """The outcome (0 .. n - 1) of the event at the current position."""
    d = b.cur[POS]
    if d >= MAX_EVENTS:
        b.cur[OVERFLOW] = 1
        return 0
    b.cur[POS] = d + 1
    if d >= b.cur[FIXED]:
        b.path[d] = 0
        b.nout[d] = n
        b.cur[FIXED] = d + 1
    return b.path[d]


@leaf
def binary(b, i, num, den):
    """An event of character ``i`` that succeeds with probability num / den (pinned: success if it can)."""
    if num >= den:
        return True
    if num <= 0:
        return False
    if b.who[i] == 0:
        b.span[i] *= 2
        return True
    if choose(b, 2) == 0:
        b.prob[0] *= num / den
        return True
    b.prob[0] *= (den - num) / den
    return False


@leaf
def exact_check(b, i, net, need, blessed, breath):
    """R-GEN-4 (R-ESC-14 blessing and breath): success with the check table's numerator."""
    k = min(max(need, 0), CHECK_MAX_SUM + 1)
    num = b.checks[net + MAX_NET_DICE, 1 if blessed else 0, 1 if breath else 0, k]
    return binary(b, i, num, CHECK_DENOMINATOR)


@leaf
def exact_at_least(b, i, sides, need):
    """One die of ``sides`` faces reaching ``need`` (a search, a save): a plain d20 read from the check table."""
    if sides == 20:
        return exact_check(b, i, 0, need, False, False)
    return binary(b, i, min(max(sides - need + 1, 0), sides), sides)


@leaf
def exact_die(b, i, sides):
    """One die: each face 1 / sides (pinned: 1)."""
    if b.who[i] == 0:
        b.span[i] *= sides
        return 1
    k = choose(b, sides)
    b.prob[0] *= 1.0 / sides
    return k + 1


@leaf
def _cached(b, dice):
    """The cache row holding the distribution of ``dice`` (computed on first use), or -1 (too wide: OVERFLOW)."""
    terms = dice.shape[0]
    if terms > MAX_TERMS:
        b.cur[OVERFLOW] = 1
        return -1
    for c in range(N_CACHED):
        w = b.dkey[c, 3 * MAX_TERMS]
        if w == 0:
            return _fill(b, dice, c)
        same = True
        for t in range(MAX_TERMS):
            for f in range(3):
                v = dice[t, f] if t < terms else 0
                if b.dkey[c, 3 * t + f] != v:
                    same = False
        if same:
            return c
    return _fill(b, dice, N_CACHED - 1)


@leaf
def _fill(b, dice, c):
    """Convolution of the dice of ``dice`` into cache row ``c``: a die of m sides adds a uniform 0 .. m - 1."""
    width = 1
    for t in range(dice.shape[0]):
        width += dice[t, 1] * (dice[t, 2] - 1)
    if width > MAX_WIDTH:
        b.cur[OVERFLOW] = 1
        return -1
    dist, tmp = b.dist[c], b.tmp
    dist[0] = 1.0
    w = 1
    for t in range(dice.shape[0]):
        m = dice[t, 2]
        for _ in range(dice[t, 1]):
            for x in range(w + m - 1):
                tmp[x] = 0.0
            for x in range(w):
                q = dist[x] / m
                for g in range(m):
                    tmp[x + g] += q
            w += m - 1
            for x in range(w):
                dist[x] = tmp[x]
    for t in range(MAX_TERMS):
        for f in range(3):
            b.dkey[c, 3 * t + f] = dice[t, f] if t < dice.shape[0] else 0
    b.dkey[c, 3 * MAX_TERMS] = width
    return c


@leaf
def exact_dice(b, i, dice, fixed):
    """R-GEN-5: a dice expression's sum (rows of ``dice``: sign, count, sides), every value with its probability.
    A die of sign s and m sides adds (1 if s > 0 else -m) plus a uniform number in 0 .. m - 1."""
    base = fixed
    for t in range(dice.shape[0]):
        base += dice[t, 1] * (1 if dice[t, 0] > 0 else -dice[t, 2])
    if b.who[i] == 0:  # pinned: the lowest sum
        width = 1
        for t in range(dice.shape[0]):
            width += dice[t, 1] * (dice[t, 2] - 1)
        b.span[i] *= width
        return base
    c = _cached(b, dice)
    if c < 0:
        return base
    k = choose(b, b.dkey[c, 3 * MAX_TERMS])
    b.prob[0] *= b.dist[c, k]
    return base + k


@leaf
def exact_item(b, i, weights):
    """R-ESC-10: an item by weight among those with a positive weight (pinned: the first)."""
    if b.who[i] == 0:
        first, n = 0, 0
        for k in range(weights.shape[0]):
            if weights[k] > 0:
                first = k if n == 0 else first
                n += 1
        b.span[i] *= max(n, 1)
        return first
    total = 0.0
    n = 0
    for k in range(weights.shape[0]):
        total += weights[k]
        if weights[k] > 0:
            n += 1
    pick = choose(b, n)
    seen = 0
    for k in range(weights.shape[0]):
        if weights[k] > 0:
            if seen == pick:
                b.prob[0] *= weights[k] / total
                return k
            seen += 1
    return 0
