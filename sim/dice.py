"""Shared dice: d20 checks with bonus/penalty dice (R-GEN-1, R-GEN-4), the dice-expression
grammar (R-GEN-5) and the 2d6 dark dice of R-MDK-1.

Everything here is exact where it can be: distributions are dicts ``value -> probability``
computed by enumeration, and d20 check probabilities are integer numerators over the common
denominator :data:`CHECK_DENOMINATOR` so that policies compare them exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import numpy as np

from sim.limits import check_exact_dice

ABILITIES = ("str", "dex", "con", "int", "wis", "cha")

# --------------------------------------------------------------------------------------------
# R-GEN-2 / R-GEN-3


def ability_modifier(score: int) -> int:
    """R-GEN-2: floor((score - 10) / 2)."""
    return (int(score) - 10) // 2


def proficiency_bonus(level: int) -> int:
    """R-GEN-3: 2 + floor((level - 1) / 4)."""
    return 2 + (int(level) - 1) // 4


# --------------------------------------------------------------------------------------------
# R-GEN-4 bonus and penalty dice

STACKING_MODES = ("cancel", "pool")
MAX_NET_DICE = 2  # |bonus - penalty| handled by the tables below


def net_dice(bonus: int, penalty: int, mode: str) -> int:
    """R-GEN-4: the signed number of extra dice after stacking.

    ``cancel``: any bonus and any penalty dice cancel to a plain roll, several of one kind count
    as one, so the result is -1, 0 or +1. ``pool``: the net count decides.
    """
    if mode == "cancel":
        if bonus > 0 and penalty > 0:
            return 0
        return 1 if bonus > 0 else (-1 if penalty > 0 else 0)
    return int(bonus) - int(penalty)


def kept_d20_counts(net: int) -> np.ndarray:
    """Counts (over 20**(|net|+1) outcomes) of the kept d20 value 1..20 (index 0 unused).

    net > 0 keeps the highest of net+1 dice, net < 0 the lowest, 0 is a plain d20."""
    k = abs(int(net)) + 1
    faces = np.arange(1, 21)
    counts = np.zeros(21, dtype=np.int64)
    if net >= 0:
        # P(max <= v) = (v/20)^k -> count(max = v) = v^k - (v-1)^k
        counts[1:] = faces**k - (faces - 1) ** k
    else:
        # count(min = v) = (21-v)^k - (20-v)^k
        counts[1:] = (21 - faces) ** k - (20 - faces) ** k
    return counts


def keep_d20(rolls: np.ndarray, net: int) -> int:
    """Kept value of the first |net|+1 of the pre-drawn d20 ``rolls`` (R-GEN-4)."""
    k = abs(int(net)) + 1
    head = rolls[:k]
    return int(head.max() if net >= 0 else head.min())


# Every d20 check of the d20 kinds is: kept d20 [+ 1d4 blessing] [+ d20 breath] + static >= DC.
# With at most 3 kept-pool dice, one d4 and one extra d20, 20**3 * 4 * 20 is a common denominator.
CHECK_DENOMINATOR = 20**3 * 4 * 20
CHECK_MAX_SUM = 20 + 4 + 20


@cache
def _check_table(net: int, blessed: bool, breath: bool) -> tuple[int, ...]:
    """Numerators (over CHECK_DENOMINATOR) of P(random part >= need), need = 0..CHECK_MAX_SUM+1."""
    counts = kept_d20_counts(net).astype(object) * (20 ** (3 - (abs(net) + 1)))
    dist = {v: int(counts[v]) for v in range(1, 21)}
    if blessed:
        dist = _convolve_counts(dist, {v: 1 for v in range(1, 5)})
    else:
        dist = {v: c * 4 for v, c in dist.items()}
    if breath:
        dist = _convolve_counts(dist, {v: 1 for v in range(1, 21)})
    else:
        dist = {v: c * 20 for v, c in dist.items()}
    assert sum(dist.values()) == CHECK_DENOMINATOR
    out = []
    for need in range(CHECK_MAX_SUM + 2):
        out.append(sum(c for v, c in dist.items() if v >= need))
    return tuple(out)


def _convolve_counts(a: dict[int, int], b: dict[int, int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for va, ca in a.items():
        for vb, cb in b.items():
            out[va + vb] = out.get(va + vb, 0) + ca * cb
    return out


def check_numerator(net: int, need: int, blessed: bool = False, breath: bool = False) -> int:
    """Exact numerator over :data:`CHECK_DENOMINATOR` of
    P(kept d20 [+1d4] [+d20] >= need) for ``net`` extra dice (R-GEN-1, R-GEN-4)."""
    if need <= 0:
        return CHECK_DENOMINATOR
    if need > CHECK_MAX_SUM:
        return 0
    return _check_table(int(net), bool(blessed), bool(breath))[need]


def check_table_array() -> np.ndarray:
    """Lookup array ``[net + MAX_NET_DICE, blessed, breath, need_index]`` of check numerators
    for the vectorized kernels; need_index = clip(need, 0, CHECK_MAX_SUM + 1)."""
    nets = range(-MAX_NET_DICE, MAX_NET_DICE + 1)
    arr = np.zeros((len(nets), 2, 2, CHECK_MAX_SUM + 2), dtype=np.int64)
    for i, net in enumerate(nets):
        for b in (0, 1):
            for r in (0, 1):
                arr[i, b, r] = _check_table(net, bool(b), bool(r))
    return arr


def d20_check_probability(modifier: int, dc: int, net: int = 0) -> float:
    """P(d20 check succeeds): kept d20 + modifier >= dc (R-GEN-1, no automatic results)."""
    return check_numerator(net, dc - modifier) / CHECK_DENOMINATOR


# --------------------------------------------------------------------------------------------
# R-GEN-5 dice expressions

MAX_DICE_COUNT = 100
MAX_DIE_SIDES = 1000
MAX_CONSTANT = 10_000

_TOKEN = re.compile(r"\s*(?:(?P<dice>(?P<n>\d*)d(?P<m>\d+))|(?P<int>\d+)|(?P<name>[a-z]+)|(?P<op>[+-]))")


@dataclass(frozen=True)
class DiceTerm:
    sign: int
    count: int
    sides: int


@dataclass(frozen=True)
class DiceExpr:
    """A parsed dice expression: Σ sign·NdM + constant + Σ sign·ability modifier (R-GEN-5)."""

    text: str
    dice: tuple[DiceTerm, ...]
    constant: int
    abilities: tuple[tuple[int, str], ...]

    @property
    def n_dice(self) -> int:
        """How many individual dice one evaluation draws."""
        return sum(t.count for t in self.dice)

    def evaluate(self, faces, modifiers: dict[str, int] | None = None) -> int:
        """Value for pre-drawn ``faces`` (one per die, in term order)."""
        total = self.constant + self.ability_part(modifiers)
        i = 0
        for t in self.dice:
            total += t.sign * int(sum(int(f) for f in faces[i : i + t.count]))
            i += t.count
        return total

    def ability_part(self, modifiers: dict[str, int] | None) -> int:
        if not self.abilities:
            return 0
        if modifiers is None:
            raise ValueError(f"dice expression {self.text!r} needs ability modifiers")
        return sum(sign * int(modifiers[name]) for sign, name in self.abilities)

    def distribution(self, modifiers: dict[str, int] | None = None) -> dict[int, float]:
        """Exact distribution ``value -> probability`` (refused beyond the exact-analysis dice limit)."""
        check_exact_dice(self)
        counts = {self.constant + self.ability_part(modifiers): 1}
        denom = 1
        for t in self.dice:
            for _ in range(t.count):
                die = {t.sign * f: 1 for f in range(1, t.sides + 1)}
                counts = _convolve_counts(counts, die)
                denom *= t.sides
        return {v: c / denom for v, c in sorted(counts.items())}

    def __str__(self) -> str:
        return self.text


def field_problem(exc: ValueError) -> str:
    """A scenario field's dice error saying once what was expected: "expected a dice expression such as '1d6+2';
    unknown name 'true' in 'TRUE' (allowed: ...)"."""
    reason = str(exc)
    return reason if reason.startswith("expected") else f"expected a dice expression such as '1d6+2'; {reason}"


def parse_dice(text: str, allowed_names: tuple[str, ...] = ()) -> DiceExpr:
    """Parse a dice expression with the project's small grammar (R-GEN-5, never eval).

    Grammar: ``['+'|'-'] term (('+'|'-') term)*`` with term ``N``, ``NdM``, ``dM`` or an ability
    name from ``allowed_names``. Raises ValueError with a short reason."""
    if not isinstance(text, str):
        raise ValueError(f"expected a dice expression string such as '1d6+2', got {text!r}")
    s = text.strip().lower()
    if not s:
        raise ValueError("expected a dice expression such as '1d6+2', got an empty string")
    if len(s) > 200:
        raise ValueError("dice expression longer than 200 characters")
    pos = 0
    sign = 1
    expect_term = True
    dice: list[DiceTerm] = []
    constant = 0
    names: list[tuple[int, str]] = []
    while pos < len(s):
        m = _TOKEN.match(s, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot read {text!r} at character {pos + 1}")
        pos = m.end()
        if m.group("op"):
            if expect_term and (dice or constant or names or sign == -1):
                raise ValueError(f"two operators in a row in {text!r}")
            sign = 1 if m.group("op") == "+" else -1
            expect_term = True
            continue
        if not expect_term:
            raise ValueError(f"missing '+' or '-' between terms in {text!r}")
        if m.group("dice"):
            n = int(m.group("n")) if m.group("n") else 1
            sides = int(m.group("m"))
            if not 1 <= n <= MAX_DICE_COUNT:
                raise ValueError(f"dice count must be 1..{MAX_DICE_COUNT} in {text!r}")
            if not 1 <= sides <= MAX_DIE_SIDES:
                raise ValueError(f"die sides must be 1..{MAX_DIE_SIDES} in {text!r}")
            dice.append(DiceTerm(sign, n, sides))
        elif m.group("int"):
            value = int(m.group("int"))
            if value > MAX_CONSTANT:
                raise ValueError(f"constant larger than {MAX_CONSTANT} in {text!r}")
            constant += sign * value
        else:
            name = m.group("name")
            if name not in allowed_names:
                allowed = ", ".join(allowed_names) if allowed_names else "none here"
                raise ValueError(f"unknown name {name!r} in {text!r} (allowed: {allowed})")
            names.append((sign, name))
        sign = 1
        expect_term = False
    if expect_term:
        raise ValueError(f"dice expression {text!r} ends with an operator")
    if sum(t.count for t in dice) > MAX_DICE_COUNT:
        raise ValueError(f"more than {MAX_DICE_COUNT} dice in {text!r}")
    return DiceExpr(text.strip(), tuple(dice), constant, tuple(names))


def faces_from_uniform(u: np.ndarray, sides: int) -> np.ndarray:
    """Die faces 1..sides from uniforms in [0, 1) (the one conversion every kernel and
    reference shares, so both read the same faces from the same draws). The product is taken in
    float64, exact for float32 or float64 uniforms, so a face never reaches sides + 1."""
    return np.floor(np.asarray(u, dtype=np.float64) * sides).astype(np.int64) + 1


# --------------------------------------------------------------------------------------------
# R-MDK-1 dark dice (2DR)


@dataclass(frozen=True)
class DarkRoll:
    """One 2DR roll: dice faces with sixes counted as 0."""

    sum: int
    critical: bool
    fumble: bool
    dp: int


def dark_roll(a: int, b: int) -> DarkRoll:
    """R-MDK-1: 2d6, each 6 counts as 0; 0+0 critical, 5+5 fumble; one six 1 DP, two sixes 4 DP."""
    a, b = int(a), int(b)
    va = 0 if a == 6 else a
    vb = 0 if b == 6 else b
    sixes = int(a == 6) + int(b == 6)
    return DarkRoll(va + vb, sixes == 2, a == 5 and b == 5, {0: 0, 1: 1, 2: 4}[sixes])


def dark_dice_outcomes() -> list[tuple[DarkRoll, float]]:
    """All 36 equally likely 2DR outcomes (R-MDK-1)."""
    return [(dark_roll(a, b), 1 / 36) for a in range(1, 7) for b in range(1, 7)]


def dark_dice_distribution() -> dict[int, float]:
    """Exact distribution of the dark dice sum (0..10)."""
    out: dict[int, float] = {}
    for roll, p in dark_dice_outcomes():
        out[roll.sum] = out.get(roll.sum, 0.0) + p
    return dict(sorted(out.items()))


DARK_DICE_EXPECTED_DP = 14 / 36  # R-MDK-21: 10/36 one six (1 DP) + 1/36 two sixes (4 DP)
