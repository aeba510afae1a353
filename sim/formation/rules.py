"""The MDK rules as plain scalar functions (RULES.md section 4), and their exact analysis.

These read like the rules and are shared by the scalar reference, the targeting table and the
exact engine; the vectorized kernel re-implements the per-roll ones on arrays.
"""

from __future__ import annotations

from functools import lru_cache

from sim.dice import DARK_DICE_EXPECTED_DP, DarkRoll, dark_roll

N_OUTCOMES = 36  # R-MDK-1: 2d6
N_PAIRS = N_OUTCOMES * N_OUTCOMES  # R-MDK-20: 36 x 36 opposed outcomes
DP_PER_ROLL = {0: 25, 1: 10, 4: 1}  # R-MDK-1: counts over 36 of the DP a 2DR roll gives
GRAPPLE_PENALTY = 2  # R-MDK-10
AREA_PENALTY = 4  # R-MDK-6
AMBUSH_STEP = 2  # R-MDK-12: per powered armor / per super-perception monster
AMBUSH_MARGIN = 2  # R-MDK-12: "by a success value 2 or more higher"
PASSIVE_PENALTY = 2  # R-MDK-12: defenders' passive checks after a win by 2


# --------------------------------------------------------------------------------------------
# R-MDK-1 / R-MDK-2 checks


def success_value(total: int, target: int) -> int:
    """R-MDK-1: success value (成功値) = total − target number."""
    return int(total) - int(target)


def check_succeeds(total: int, target: int, roll: DarkRoll) -> bool:
    """An unopposed 2DR check: success value >= 0; a critical always succeeds and a fumble always
    fails (decision, docs/decisions.md (Formation); used for the training focus check, R-MDK-10)."""
    if roll.critical:
        return True
    if roll.fumble:
        return False
    return success_value(total, target) >= 0


def active_wins(a_total: int, a_roll: DarkRoll, p_total: int, p_roll: DarkRoll) -> bool:
    """R-MDK-2 opposed check: does the active side beat the passive side?

    A critical beats anything but a critical; a fumble loses to anything but a fumble; otherwise
    (and between two criticals or two fumbles) the higher total wins; ties go to the passive side."""
    if a_roll.critical != p_roll.critical:
        return a_roll.critical
    if a_roll.fumble != p_roll.fumble:
        return p_roll.fumble
    return a_total > p_total


@lru_cache(maxsize=4096)
def opposed_counts(active_base: int, passive_base: int, margin: int = AMBUSH_MARGIN) -> tuple[int, int]:
    """Exact counts over the 36 x 36 outcomes (R-MDK-2, R-MDK-20): (active wins,
    active wins with active total − passive total >= margin)."""
    wins = wins_by = 0
    rolls = [dark_roll(a, b) for a in range(1, 7) for b in range(1, 7)]
    for ra in rolls:
        ta = active_base - ra.sum
        for rp in rolls:
            tp = passive_base - rp.sum
            if active_wins(ta, ra, tp, rp):
                wins += 1
                if ta - tp >= margin:
                    wins_by += 1
    return wins, wins_by


def opposed_win_probability(active_base: int, passive_base: int) -> float:
    """Exact P(active side wins) of an R-MDK-2 opposed check with these totals before dice."""
    return opposed_counts(int(active_base), int(passive_base))[0] / N_PAIRS


def hit_probability(combat: int, penalty: int, evade: int, grappled: bool = False,
                    passive_penalty: int = 0) -> float:
    """Exact P(hit): attacker 戦闘 − penalty (− 2 if grappled, R-MDK-10) against the target's
    evade (− passive penalty, R-MDK-12), opposed (R-MDK-2, ties to the defender)."""
    active = int(combat) - int(penalty) - (GRAPPLE_PENALTY if grappled else 0)
    return opposed_win_probability(active, int(evade) - int(passive_penalty))


@lru_cache(maxsize=65536)
def expected_damage_count(diff: int, base: int, margin: bool, min_damage: int) -> int:
    """R-MDK-6 target choice: 1296 × the expected damage of one attack, exactly, by enumerating the
    36 × 36 opposed outcomes (R-MDK-2). ``diff`` = attacker 戦闘 + modifiers − (evade − passive
    penalty); ``base`` = damage − armor. A hit deals max(min_damage, base) (``flat``) or
    max(min_damage, base + attacker total − defender total) (``margin``, R-MDK-14)."""
    total = 0
    rolls = [dark_roll(a, b) for a in range(1, 7) for b in range(1, 7)]
    for ra in rolls:
        a_total = diff - ra.sum
        for rd in rolls:
            d_total = -rd.sum
            if active_wins(a_total, ra, d_total, rd):
                total += max(min_damage, base + (a_total - d_total if margin else 0))
    return total


# --------------------------------------------------------------------------------------------
# R-MDK-12 / R-MDK-20 ambush


def ambush_bases(ambush) -> tuple[int, int, bool]:
    """R-MDK-20: (ambushers' total before dice, defenders' total before dice, ambush possible)."""
    a = ambush.ambusher_athletics - AMBUSH_STEP * ambush.powered_armor
    d = ambush.defender_information + AMBUSH_STEP * ambush.super_perception
    possible = ambush.powered_armor < ambush.party_size  # all in powered armor: no ambush
    return a, d, possible


def ambush_exact(ambush) -> dict[str, float]:
    """R-MDK-12, R-MDK-20: exact P(ambush wins) and P(wins by >= 2) over 36 x 36 outcomes."""
    a, d, possible = ambush_bases(ambush)
    if not possible:
        return {"ambush_win": 0.0, "ambush_win_by_2": 0.0}
    wins, wins_by = opposed_counts(a, d, AMBUSH_MARGIN)
    return {"ambush_win": wins / N_PAIRS, "ambush_win_by_2": wins_by / N_PAIRS}


# --------------------------------------------------------------------------------------------
# R-MDK-3 / R-MDK-21 DP


def session_reward_dp(stars) -> int:
    """R-MDK-3: a successful session gives each PC ★ × 3 DP."""
    return sum(3 * int(s) for s in stars)


def enslave_dp(stars: int) -> int:
    """R-MDK-3: enslaving an opponent gives its ★ × 3 DP."""
    return 3 * int(stars)


def enslaved_reward_dp(enslaved_stars) -> int:
    """R-MDK-3 / R-MDK-21: each opponent enslaved in the session gives its ★ × 3 DP."""
    return sum(enslave_dp(s) for s in enslaved_stars)


def dp_per_session_exact(session) -> float:
    """R-MDK-21: Σ ★ × 3 over the PCs + Σ ★ × 3 over the enslaved opponents (R-MDK-3)
    + checks × E[DP per 2DR roll] (14/36)."""
    return (session_reward_dp(session.stars) + enslaved_reward_dp(session.enslaved_stars)
            + session.checks * DARK_DICE_EXPECTED_DP)


def dp_variance_per_roll() -> float:
    """Variance of the DP one 2DR roll gives (R-MDK-1): E[X²] − E[X]²."""
    mean = sum(v * c for v, c in DP_PER_ROLL.items()) / N_OUTCOMES
    second = sum(v * v * c for v, c in DP_PER_ROLL.items()) / N_OUTCOMES
    return second - mean * mean


def sixes_dp_distribution(checks: int) -> dict[int, float]:
    """Exact distribution of the DP from sixes over ``checks`` 2DR rolls (R-MDK-1, R-MDK-21)."""
    dist = {0: 1.0}
    per = {v: c / N_OUTCOMES for v, c in DP_PER_ROLL.items()}
    for _ in range(int(checks)):
        nxt: dict[int, float] = {}
        for v, p in dist.items():
            for w, q in per.items():
                nxt[v + w] = nxt.get(v + w, 0.0) + p * q
        dist = nxt
    return dict(sorted(dist.items()))


# --------------------------------------------------------------------------------------------
# R-MDK-13 roleplay bonus


def roleplay_bonus(d4_face: int) -> int:
    """R-MDK-13: charm, training and service checks get 1d4 − 1 instead of roleplay bonuses."""
    return int(d4_face) - 1
