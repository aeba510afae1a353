"""Scalar rule helpers shared by the reference engine and the worked-example test.

Everything here is plain Python on integers and :class:`fractions.Fraction` multipliers, so values
are exact: value = floor((base + additions) x product of multipliers), floored once (R-CAM-3,
R-CAM-58).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

FIGHT, FLEE, HIDE = 0, 1, 2
STANCE_NAMES = ("fight", "flee", "hide")


def beats(a: int, b: int) -> bool:
    """R-CAM-2: flee beats fight, hide beats flee, fight beats hide."""
    return a == (b + 1) % 3


def to_fraction(x: float | int) -> Fraction:
    """A multiplier as an exact fraction (0.5 -> 1/2, 1.5 -> 3/2, 0.333.. -> 1/3)."""
    return Fraction(str(x)).limit_denominator(10_000)


def value(base: int, addition: int, multiplier: Fraction) -> int:
    """R-CAM-3: additions first, then multipliers, floored once (R-CAM-58)."""
    total = (base + addition) * multiplier
    return total.numerator // total.denominator


@dataclass
class Fighter:
    """One side of a confrontation, in one stance.

    ``mult_always`` holds the multipliers that always count; ``mult_advantage`` those that count only
    with the stance advantage (R-CAM-30 ``when = "advantage"``); the stance advantage's own x2 is added
    by :func:`fighter_value` (R-CAM-2)."""

    name: str
    stance: int
    base: tuple[int, int, int]
    bonus: tuple[int, int, int] = (0, 0, 0)
    mult_always: tuple[Fraction, Fraction, Fraction] = (Fraction(1), Fraction(1), Fraction(1))
    mult_advantage: tuple[Fraction, Fraction, Fraction] = (Fraction(1), Fraction(1), Fraction(1))
    reward: int = 0
    reduction: int = 0  # R-CAM-9: temporary lowering of the base in the stance used
    tag: object = None  # caller's id (PC index or adversary slot)


def fighter_value(f: Fighter, advantage: bool) -> int:
    """R-CAM-3 value of a fighter in its stance; a team battle's reduction lowers the base first,
    not below 0."""
    s = f.stance
    base = max(f.base[s] - f.reduction, 0)
    mult = f.mult_always[s]
    if advantage:
        mult = mult * f.mult_advantage[s] * 2  # R-CAM-2 stance advantage, R-CAM-30 when = advantage
    return value(base, f.bonus[s], mult)


def plain_value(base: tuple[int, int, int], bonus, mult_always, stance: int) -> int:
    """A value taken without an opponent (``best``, missions): no stance advantage and no
    ``when = "advantage"`` multiplier (R-CAM-30, R-CAM-56)."""
    return value(base[stance], bonus[stance], mult_always[stance])


def best_stance(base, bonus, mult_always, allowed: int = 7) -> int:
    """R-CAM-40 ``best``: highest own value before the stance advantage; ties fight, flee, hide. ``allowed``: the
    stances the PC may declare (bit s; policy.forbid, issue 36): the best of those."""
    vals = [plain_value(base, bonus, mult_always, s) for s in range(3)]
    return max((s for s in range(3) if allowed >> s & 1), key=lambda s: (vals[s], -s))


def duel(pc: Fighter, adv: Fighter) -> tuple[int, int, int]:
    """R-CAM-2, R-CAM-3, R-CAM-4: (pc value, adversary value, outcome) with outcome +1 PC wins,
    -1 adversary wins, 0 tie (R-CAM-4: both lose)."""
    pv = fighter_value(pc, beats(pc.stance, adv.stance))
    av = fighter_value(adv, beats(adv.stance, pc.stance))
    return pv, av, (1 if pv > av else (-1 if av > pv else 0))


@dataclass
class TeamBattleResult:
    duels: list[tuple[object, object, int, int, int]] = field(default_factory=list)
    team_won: bool = False
    reward_total: int = 0
    reward_each: int = 0
    put_out_by: dict = field(default_factory=dict)  # PC tag -> adversary tag that put it out
    adversaries_beaten: list = field(default_factory=list)


def team_battle(pcs: list[Fighter], adversaries: list[Fighter], draw_stance=None) -> TeamBattleResult:
    """R-CAM-9 team battle on sides already in their random order.

    An adversary given with ``stance=None`` draws its stance with ``draw_stance(tag)`` when it first steps up
    (R-CAM-52: once per battle; one that never duels draws nothing).

    The first of each side duel; the loser is out, and the winner's base in the stance it used is
    lowered by the loser's value until the battle ends (a tie puts both out). When one side is empty
    the battle ends; a last duel that empties both sides is a loss for the team (R-CAM-52). Rewards of
    won duels are summed and shared equally among the members, floored, even when the team loses."""
    pcs = [Fighter(**{**f.__dict__, "reduction": 0}) for f in pcs]
    advs = [Fighter(**{**f.__dict__, "reduction": 0}) for f in adversaries]
    out = TeamBattleResult()
    i = j = 0
    while i < len(pcs) and j < len(advs):
        p, a = pcs[i], advs[j]
        if a.stance is None:
            a.stance = draw_stance(a.tag)
        pv, av, res = duel(p, a)
        out.duels.append((p.tag, a.tag, pv, av, res))
        if res > 0:
            p.reduction += max(av, 0)
            out.reward_total += a.reward
            out.adversaries_beaten.append(a.tag)
            j += 1
        elif res < 0:
            a.reduction += max(pv, 0)
            out.put_out_by[p.tag] = a.tag
            i += 1
        else:
            out.put_out_by[p.tag] = a.tag
            i += 1
            j += 1
    out.team_won = i < len(pcs)
    out.reward_each = out.reward_total // len(pcs) if pcs else 0
    return out


def grow_lowest(base: list[int], gp: int) -> list[int]:
    """R-CAM-40 growth ``lowest``: each gp, one at a time, to the lowest base ability
    (ties fight, flee, hide)."""
    out = list(base)
    for _ in range(max(gp, 0)):
        k = out.index(min(out))
        out[k] += 1
    return out
