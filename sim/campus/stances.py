"""Campus stance analysis: the 3x3 stance game of a PC against an adversary and its exact zero-sum
equilibrium (issue 7; R-CAM-2, R-CAM-3, R-CAM-4, R-CAM-30; the stance policy ``equilibrium``).

A confrontation is deterministic once both stances are declared: the stance that beats the other
doubles its value (R-CAM-2), ``when = "advantage"`` multipliers count only then (R-CAM-30), the higher
value wins and a tie is a loss for the PC, boss or not (R-CAM-4, R-CAM-54). So the PC's payoff
matrix ``M[s][s2]`` = P(PC wins | PC stance s, adversary stance s2) is 0 or 1.

The PC's maximin mixed strategy is found exactly with :class:`fractions.Fraction` by vertex
enumeration: the guaranteed payoff ``f(x) = min_c x . M[:, c]`` is concave and piecewise linear on the
triangle of mixed strategies, linear on each cell of the arrangement of the lines ``x_r = 0`` and
``x . (M[:, c] - M[:, c']) = 0``, so its maximum is attained at an intersection of two of those lines.
The same holds for a sum of such minima (several adversaries, each choosing its own stance), which is
what the ``equilibrium`` policy solves when it sees several adversaries: the expected number of wins per
adversary met, whether the PC meets them one after another (R-CAM-6 ``fights = "until_cleared"``) or one
drawn at random (``"once"``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction
from functools import lru_cache
from itertools import combinations

import numpy as np
import pandas as pd

from sim.campus.model import STANCES, Adversary, PartyMember, Scenario
from sim.campus.params import member_terms, template_multipliers, template_stance_probs
from sim.campus.rules import Fighter, duel

Vector = tuple[Fraction, Fraction, Fraction]
ONE = Fraction(1)


# ---------------------------------------------------------------- the stance game (R-CAM-2..4)
def pc_fighter(pc: PartyMember) -> Fighter:
    """A PC at its starting abilities with its bonus and multiplier skills (R-CAM-30)."""
    bonus, always, adv = member_terms(pc)
    return Fighter(name=pc.name, stance=0, base=pc.abilities.as_tuple(), bonus=bonus, mult_always=always,
                   mult_advantage=adv)


def adversary_fighter(adversary: Adversary) -> Fighter:
    """An adversary template (its multipliers always count)."""
    return Fighter(name=adversary.name, stance=0, base=adversary.abilities.as_tuple(),
                   bonus=adversary.bonus.as_tuple(), mult_always=template_multipliers(adversary),
                   reward=adversary.reward)


def _fighter(x, kind: str) -> Fighter:
    if isinstance(x, Fighter):
        return x
    if kind == "pc" and isinstance(x, PartyMember):
        return pc_fighter(x)
    if kind == "adversary" and isinstance(x, Adversary):
        return adversary_fighter(x)
    raise TypeError(f"expected a {'PartyMember' if kind == 'pc' else 'Adversary'} or a Fighter; given {type(x)}")


def stance_values(pc, adversary) -> tuple[tuple[tuple[int, int], ...], ...]:
    """``[s][s2]`` = (PC value, adversary value) when the PC declares stance s and the adversary s2
    (R-CAM-2, R-CAM-3, R-CAM-30). ``pc`` a :class:`PartyMember` (or a :class:`Fighter`), ``adversary`` an
    :class:`Adversary` template (or a :class:`Fighter`)."""
    p, a = _fighter(pc, "pc"), _fighter(adversary, "adversary")
    return tuple(
        tuple(duel(replace(p, stance=s), replace(a, stance=s2))[:2] for s2 in range(3)) for s in range(3)
    )


def stance_matrix(pc, adversary) -> tuple[tuple[int, int, int], ...]:
    """The PC's 3x3 payoff matrix: ``[s][s2]`` = 1 if the PC wins with stance s against stance s2, else 0
    (R-CAM-4: a tie is a loss for the PC; R-CAM-54: also against a boss). Rows and columns in the order
    fight, flee, hide."""
    return tuple(tuple(int(pv > av) for pv, av in row) for row in stance_values(pc, adversary))


def matrix_code(matrix) -> int:
    """A 0/1 3x3 matrix as a 9-bit integer (bit 3*s + s2), the key of the policy's solution cache."""
    return sum(int(matrix[s][s2]) << (3 * s + s2) for s in range(3) for s2 in range(3))


def matrix_of_code(code: int) -> tuple[tuple[int, int, int], ...]:
    return tuple(tuple((code >> (3 * s + s2)) & 1 for s2 in range(3)) for s in range(3))


def win_vs_weights(matrix, probs: Sequence) -> Vector:
    """Expected win probability of each PC stance against an adversary drawing its stance from ``probs``
    (what the ``counter`` policy maximises, R-CAM-40)."""
    return tuple(sum((Fraction(probs[c]) * matrix[s][c] for c in range(3)), Fraction(0)) for s in range(3))


# ---------------------------------------------------------------- exact zero-sum solution
def _as_matrix(m) -> tuple[tuple[Fraction, ...], ...]:
    rows = tuple(tuple(Fraction(v) for v in row) for row in m)
    if len(rows) != 3 or not rows[0] or any(len(r) != len(rows[0]) for r in rows):
        raise ValueError("expected a matrix with 3 rows (PC stances) of equal length")
    return rows


def _cross(a, b) -> tuple:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _lines(matrices) -> set[tuple[Fraction, ...]]:
    """Normal vectors d of the lines d . x = 0 where f can change slope, plus the triangle's sides."""
    lines = {(ONE, Fraction(0), Fraction(0)), (Fraction(0), ONE, Fraction(0)), (Fraction(0), Fraction(0), ONE)}
    for m in matrices:
        for c, c2 in combinations(range(len(m[0])), 2):
            d = tuple(m[r][c] - m[r][c2] for r in range(3))
            lead = next((v for v in d if v != 0), None)
            if lead is not None:
                lines.add(tuple(v / lead for v in d))
    return lines


def _vertices(matrices) -> set[Vector]:
    """Mixed strategies where two lines of the arrangement meet inside the triangle."""
    out = set()
    for a, b in combinations(_lines(matrices), 2):
        x = _cross(a, b)
        total = sum(x)
        if total == 0:
            continue
        x = tuple(v / total for v in x)
        if min(x) >= 0:
            out.add(x)
    return out


def guarantee(matrices, x) -> Fraction:
    """Sum over the matrices of the PC's payoff with mix x against that adversary's best reply."""
    return sum((min(sum((x[r] * m[r][c] for r in range(3)), Fraction(0)) for c in range(len(m[0])))
                for m in matrices), Fraction(0))


def maximin(matrices, prefer: Sequence | None = None, allowed: int = 7) -> tuple[Vector, Fraction]:
    """Exact maximin mix of the PC (3 stances) against one or more adversaries, each replying with its own
    worst-case stance: maximises ``mean_a min_c x . M_a[:, c]`` (R-CAM-6: each adversary met in turn, or one
    drawn uniformly).

    Returns (x, value). Among optimal mixes: the one with the highest ``prefer . x`` (the policy passes the
    expected wins against the adversaries' own stance weights), then the lexicographically largest
    (x_fight, x_flee, x_hide), so a pure stance early in the order fight, flee, hide is preferred.

    ``allowed`` (bit s: the PC may declare stance s; policy.forbid, issue 36): only mixes without the others. The
    optimum over that face of the triangle is still at a vertex of the arrangement (the face is bounded by the
    sides ``x_r = 0``, which are lines of it), so the vertices with ``x_s = 0`` for every forbidden s suffice."""
    ms = [_as_matrix(m) for m in matrices]
    if not ms:
        raise ValueError("expected at least one matrix")
    pref = tuple(Fraction(v) for v in prefer) if prefer is not None else (Fraction(0),) * 3

    def key(x):
        return guarantee(ms, x), sum(p * v for p, v in zip(pref, x, strict=True)), x

    best = max((x for x in _vertices(ms) if all(allowed >> s & 1 or x[s] == 0 for s in range(3))), key=key)
    return best, guarantee(ms, best) / len(ms)


def maximin_float(matrices) -> tuple[tuple[float, float, float], float]:
    """:func:`maximin` for real payoffs in floats (the robust mode of :mod:`sim.campus.optimal`: each matrix is
    ``[s][c]`` = the PC's value when it declares stance s and the adversaries reply c, weighed by the chance of
    meeting them): the mix x maximising ``sum_i min_c x . M_i[:, c]`` and that sum. The same vertex enumeration
    as :func:`_vertices` (the triangle's sides and the lines where two replies pay the same meet; numpy, a small
    tolerance) after each matrix loses its duplicate and dominated replies (a reply no better for the adversaries
    than another in every PC stance); among optimal mixes the lexicographically largest, so a pure stance early in
    the order fight, flee, hide. With one reply left in every matrix the payoff is linear: the best pure stance."""
    ms = [np.array(_undominated(m)) for m in matrices]
    if all(m.shape[1] == 1 for m in ms):
        vals = sum(m[:, 0] for m in ms)
        s = int(np.argmax(vals))  # the first of the best: ties fight, flee, hide
        return tuple(float(j == s) for j in range(3)), float(vals[s])
    lines = [np.eye(3)]
    for m in ms:  # where two replies of one matrix pay the same
        i, j = np.triu_indices(m.shape[1], 1)
        lines.append((m[:, i] - m[:, j]).T)
    a = np.vstack(lines)
    i, j = np.triu_indices(len(a), 1)
    x = np.cross(a[i], a[j])
    total = x.sum(axis=1)
    x = x[np.abs(total) > 1e-12] / total[np.abs(total) > 1e-12, None]
    x = np.clip(x[(x >= -1e-9).all(axis=1)], 0.0, None)
    x = np.round(x / x.sum(axis=1, keepdims=True), 12)
    vals = sum((x @ m).min(axis=1) for m in ms)
    top = x[vals >= vals.max() - 1e-12]
    best = top[np.lexsort(top.T[::-1])[-1]]  # the lexicographically largest of the optimal mixes
    return tuple(float(v) for v in best), float(vals.max())


def _undominated(m) -> list[list[float]]:
    """The matrix without duplicate columns nor columns dominated (>= another in every row) for the minimiser."""
    keep: list[tuple] = []
    for c in sorted({tuple(float(m[r][c]) for r in range(3)) for c in range(len(m[0]))}):
        if any(all(k[r] <= c[r] + 1e-15 for r in range(3)) for k in keep):
            continue
        keep = [k for k in keep if not all(c[r] <= k[r] + 1e-15 for r in range(3))] + [c]
    return [[c[r] for c in keep] for r in range(3)]


def solve_zero_sum(matrix, prefer: Sequence | None = None) -> tuple[Vector, Vector, Fraction]:
    """Exact solution of the 3x3 zero-sum game ``matrix`` (the row player maximises):
    (row player's maximin mix, column player's minimax mix, game value). ``prefer`` breaks ties among the
    row player's optimal mixes (see :func:`maximin`); the column mix is the lexicographically largest
    optimal one."""
    m = _as_matrix(matrix)
    if len(m[0]) != 3:
        raise ValueError("expected a 3x3 matrix")
    row, value = maximin([m], prefer)
    neg_t = tuple(tuple(-m[r][c] for r in range(3)) for c in range(3))
    col, neg_value = maximin([neg_t])
    assert neg_value == -value  # the minimax theorem, exactly
    return row, col, value


# ---------------------------------------------------------------- the `equilibrium` stance policy
@lru_cache(maxsize=1 << 16)
def _mix_of_codes(codes: tuple[int, ...], prefer: tuple[int, int, int], allowed: int = 7) -> Vector:
    return maximin([matrix_of_code(c) for c in codes], prefer, allowed)[0]


def equilibrium_mix(codes, prefer, allowed: int = 7) -> Vector:
    """The policy's mix against the adversaries whose 0/1 matrices are ``codes`` (a multiset: one per
    adversary), ties broken by the integer scores ``prefer``, over the stances ``allowed`` (bit s; policy.forbid)
    (cached; both engines call this)."""
    return _mix_of_codes(tuple(sorted(int(c) for c in codes)), tuple(int(v) for v in prefer), int(allowed))


@lru_cache(maxsize=1 << 16)
def _thresholds(codes: tuple[int, ...], prefer: tuple[int, int, int], allowed: int = 7) -> tuple[float, float]:
    return mix_thresholds(_mix_of_codes(codes, prefer, allowed))


def equilibrium_thresholds(codes, prefer, allowed: int = 7) -> tuple[float, float]:
    return _thresholds(tuple(sorted(int(c) for c in codes)), tuple(int(v) for v in prefer), int(allowed))


def mix_thresholds(x: Vector) -> tuple[float, float]:
    """Cumulative thresholds: the stance drawn with uniform u is ``(u >= c1) + (u >= c2)`` (the R-CAM-21
    convention of the adversaries' stance draw)."""
    c1 = float(x[0])
    c2 = float(x[0] + x[1]) if x[2] > 0 else 1.0
    return c1, c2


def draw_stance(x: Vector, u: float) -> int:
    c1, c2 = mix_thresholds(x)
    return int(u >= c1) + int(u >= c2)


# ---------------------------------------------------------------- the report's table
def _best_index(v) -> int:
    return max(range(3), key=lambda s: (v[s], -s))


def stance_table(scenario: Scenario) -> pd.DataFrame:
    """One row per PC x adversary template (party order, then file order), at the PCs' starting
    abilities: the nine outcomes ``{s}_vs_{s2}`` (1 = the PC wins), the PC's equilibrium mix ``eq_*``
    (ties broken towards the template's own stance weights, as the policy does), the game ``value``
    (the win probability the mix guarantees), the adversary's minimax mix ``adv_eq_*``, the expected win
    of each PC stance against the template's stance weights ``vs_weights_*`` and the best pure stance
    against them (``best_vs_weights``, what ``counter`` plays; ties fight, flee, hide). Probabilities are
    exact :class:`~fractions.Fraction` objects."""
    rows = []
    for pc in scenario.party:
        for adv in scenario.adversaries:
            m = stance_matrix(pc, adv)
            probs = template_stance_probs(adv)
            w = win_vs_weights(m, probs)
            row_mix, col_mix, value = solve_zero_sum(m, prefer=w)
            best = _best_index(w)
            rec = {"pc": pc.name, "adversary": adv.name}
            for s, a in enumerate(STANCES):
                for s2, b in enumerate(STANCES):
                    rec[f"{a}_vs_{b}"] = m[s][s2]
            rec.update({f"eq_{a}": row_mix[s] for s, a in enumerate(STANCES)})
            rec["value"] = value
            rec.update({f"adv_eq_{a}": col_mix[s] for s, a in enumerate(STANCES)})
            rec.update({f"vs_weights_{a}": w[s] for s, a in enumerate(STANCES)})
            rec["best_vs_weights"] = STANCES[best]
            rec["best_vs_weights_win"] = w[best]
            rows.append(rec)
    columns = (["pc", "adversary"] + [f"{a}_vs_{b}" for a in STANCES for b in STANCES]
               + [f"eq_{a}" for a in STANCES] + ["value"] + [f"adv_eq_{a}" for a in STANCES]
               + [f"vs_weights_{a}" for a in STANCES] + ["best_vs_weights", "best_vs_weights_win"])
    return pd.DataFrame(rows, columns=columns)


__all__ = [
    "adversary_fighter",
    "draw_stance",
    "equilibrium_mix",
    "equilibrium_thresholds",
    "guarantee",
    "matrix_code",
    "matrix_of_code",
    "maximin",
    "maximin_float",
    "mix_thresholds",
    "pc_fighter",
    "solve_zero_sum",
    "stance_matrix",
    "stance_table",
    "stance_values",
    "win_vs_weights",
]
