"""The fast engine: per-run loops compiled with numba (``@njit(cache=True)``) over the batch axis.

Same rules, same uniform columns (``sim.formation.layout``) as the scalar reference in
``sim.formation.reference``; per-run results are identical for the same seed (tested step by
step). The ambush and the session are vectorized numpy; the skirmish is one compiled call per
round over every unfinished run, one function per step of a unit's turn, each named after its rule:

- :func:`leave_grapple` (R-MDK-10), :func:`withdraw` (R-MDK-5), :func:`call_companion` (R-MDK-5),
- :func:`move` (R-MDK-11), :func:`best_attacks` / :func:`attack_score` (R-MDK-6/7/8 with the
  policy's choice), :func:`attack` (R-MDK-1/2/4/10/12/13/14).

The scenario is compiled to a few integer arrays (:func:`compile_arrays`): ``P`` (one row per unit
attribute, ``P_*``), ``C`` (scalar settings, ``C_*``) and the expected-damage table ``EX``; one
run's state is an int64 array ``S`` with one row per field (``S_*``) and one column per unit.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from sim.dice import faces_from_uniform
from sim.formation import layout as L
from sim.formation.columns import AMBUSH, SESSION, SKIRMISH, allocate, fill
from sim.formation.model import FRONT, G_ASSAULT, G_NONE, G_SERVICE, G_TRAINING, MAGIC, MELEE, RANGED, Params
from sim.formation.rules import AREA_PENALTY, GRAPPLE_PENALTY, PASSIVE_PENALTY

DRAW = 2
NO_SKIRMISH = -1

# unit attributes (rows of P)
(P_SIDE, P_AREA, P_ATTACK, P_ATTACKS, P_COMBAT, P_EVADE, P_DAMAGE, P_ARMOR, P_HP, P_TROOP, P_TROOP_SIZE,
 P_SUPER, P_GRAPPLE, P_STAMINA, P_RESOLVE, P_MASTER, P_WITHDRAW, P_CALLS, P_SLAVE, P_RECALL, P_DISMISS) = range(21)
N_P = 21
# settings (entries of C)
C_AMBUSH_SIDE, C_MARGIN, C_MIN_DAMAGE, C_FOCUS, C_POLICY, C_CHOICE, C_MOVEMENT, C_GRAPPLE_AREA = range(8)
N_C = 8
POLICY_CODES = {"greedy": 0, "first": 1, "random": 2}
MOVEMENT_CODES = {"fixed": 0, "best": 1, "best_attack": 2}  # R-MDK-11
# the middle axis of EX: an attack by a unit not grappled, by a grappled one (R-MDK-10), a grapple attempt
EX_FREE, EX_GRAPPLED, EX_GRAPPLE_TRY = range(3)
# one run's state (rows of S)
(S_HP, S_ALIVE, S_PRESENT, S_ENTERED, S_PARTNER, S_INITIATOR, S_GKIND, S_AREA, S_WITHDRAWN, S_ENTRY_HP,
 S_DISMISSED) = range(11)
N_S = 11
# layout columns as plain module constants (numba freezes them at compile time)
UNIT_COLS = L.UNIT_COLS
ATTACK_0, ATTACK_1 = L.ATTACK_DICE
DEFENSE_0, DEFENSE_1 = L.DEFENSE_DICE
LEAVE_0, LEAVE_1 = L.LEAVE_DICE
HOLD_0, HOLD_1 = L.HOLD_DICE
TARGET_PICK, VICTIM_PICK, ROLEPLAY_D4 = L.TARGET_PICK, L.VICTIM_PICK, L.ROLEPLAY_D4
STATE_FIELDS = ("hp", "alive", "present", "entered", "partner", "initiator", "gkind", "area", "withdrawn", "entry_hp",
                "dismissed")


# --------------------------------------------------------------------------------------------
# R-MDK-1 / R-MDK-2 on arrays (ambush and session) and as compiled scalars (skirmish)


def dark_arrays(f1: np.ndarray, f2: np.ndarray):
    """R-MDK-1: (dark sum, critical, fumble, DP) of die faces, elementwise."""
    s = np.where(f1 == 6, 0, f1) + np.where(f2 == 6, 0, f2)
    sixes = (f1 == 6).astype(np.int8) + (f2 == 6).astype(np.int8)
    dp = np.where(sixes == 2, 4, sixes)
    return s, sixes == 2, (f1 == 5) & (f2 == 5), dp


def active_wins_arrays(a_total, a_crit, a_fumble, p_total, p_crit, p_fumble) -> np.ndarray:
    """R-MDK-2: critical beats non-critical, fumble loses to non-fumble, else higher total;
    ties to the passive side."""
    return np.where(a_crit != p_crit, a_crit, np.where(a_fumble != p_fumble, p_fumble, a_total > p_total))


@njit(cache=True, inline="always")
def face(u, sides):
    """``sim.dice.faces_from_uniform`` for one uniform."""
    return int(math.floor(u * sides)) + 1


@njit(cache=True, inline="always")
def dark(u1, u2):
    """R-MDK-1: (dark dice sum, critical, fumble) of two uniforms read as d6."""
    a, b = face(u1, 6), face(u2, 6)
    return a % 6 + b % 6, a == 6 and b == 6, a == 5 and b == 5


@njit(cache=True, inline="always")
def active_wins(a_total, a_crit, a_fumble, p_total, p_crit, p_fumble):
    """R-MDK-2, ties to the passive side."""
    if a_crit != p_crit:
        return a_crit
    if a_fumble != p_fumble:
        return p_fumble
    return a_total > p_total


# --------------------------------------------------------------------------------------------
# ambush and session


def ambush_kernel(p: Params, u: np.ndarray) -> dict[str, np.ndarray]:
    """R-MDK-12, R-MDK-20 for the whole batch."""
    f = faces_from_uniform(u, 6)
    sa, ca, fa, _ = dark_arrays(f[:, 0], f[:, 1])
    sd, cd, fd, _ = dark_arrays(f[:, 2], f[:, 3])
    a_total = p.ambusher_base - sa
    d_total = p.defender_base - sd
    win = active_wins_arrays(a_total, ca, fa, d_total, cd, fd) & p.ambush_possible
    return {"ambush_ambusher_total": a_total.astype(np.int64), "ambush_defender_total": d_total.astype(np.int64),
            "ambush_win": win, "ambush_win_by_2": win & (a_total - d_total >= 2)}


def session_kernel(p: Params, u: np.ndarray) -> dict[str, np.ndarray]:
    """R-MDK-3 rewards (the PCs' and the enslaved opponents' ★ × 3) + R-MDK-1 DP from sixes over
    ``checks`` rolls (R-MDK-21)."""
    n = u.shape[0]
    sixes = sixes_dp(u)
    return {"dp_rewards": np.full(n, p.reward_dp, dtype=np.int64), "dp_sixes": sixes,
            "dp_session": p.reward_dp + sixes}


@njit(cache=True, nogil=True)  # called from Python: threads may run several chunks at once
def sixes_dp(u):
    """R-MDK-1: per run, the DP of its 2DR rolls (die pairs of columns): one six 1, two sixes 4."""
    out = np.zeros(u.shape[0], dtype=np.int64)
    for i in range(u.shape[0]):
        total = 0
        for c in range(0, u.shape[1] - 1, 2):
            sixes = (face(u[i, c], 6) == 6) + (face(u[i, c + 1], 6) == 6)
            total += 4 if sixes == 2 else sixes
        out[i] = total
    return out


# --------------------------------------------------------------------------------------------
# compiled scenario


def opposed_offsets() -> tuple[np.ndarray, np.ndarray]:
    """The 36 × 36 opposed outcomes (R-MDK-2) grouped by x = defender dark sum − attacker dark sum
    (index x + 10): ``forced[x]`` outcomes the attacker wins whatever the totals (a critical
    against a non-critical, a non-fumble against a fumble), ``compared[x]`` outcomes decided by the
    totals (the attacker wins when diff + x > 0, diff = attacker's base − defender's base)."""
    forced = np.zeros(21, dtype=np.int64)
    compared = np.zeros(21, dtype=np.int64)
    for a1 in range(1, 7):
        for a2 in range(1, 7):
            sa, ca, fa = a1 % 6 + a2 % 6, a1 == 6 and a2 == 6, a1 == 5 and a2 == 5
            for d1 in range(1, 7):
                for d2 in range(1, 7):
                    sd, cd, fd = d1 % 6 + d2 % 6, d1 == 6 and d2 == 6, d1 == 5 and d2 == 5
                    x = sd - sa + 10
                    if ca != cd:
                        forced[x] += ca
                    elif fa != fd:
                        forced[x] += fd
                    else:
                        compared[x] += 1
    return forced, compared


@njit(cache=True)
def expected_damage(forced, compared, diff, base, margin, min_damage):
    """R-MDK-6 choice: 1296 × the expected damage of one attack (R-MDK-14 damage models)."""
    total = 0
    for xi in range(21):
        x = xi - 10
        wins = forced[xi] + (compared[xi] if diff + x > 0 else 0)
        if wins:
            total += wins * max(min_damage, base + (diff + x if margin else 0))
    return total


@njit(cache=True)
def _expected_table(P, C, forced, compared):
    """EX[j, k, penalised, grappled, passive]: 1296 × the expected damage of j's attack on k; at grappled =
    EX_GRAPPLE_TRY (penalised 0), 1296 × the sum over the four d4 faces of the expected damage of j's grapple
    attempt on k with its R-MDK-13 bonus (service: the service value with the bonus, no margin)."""
    U = P.shape[1]
    ex = np.zeros((U, U, 2, 3, 2), dtype=np.int64)
    for j in range(U):
        roleplay = P[P_GRAPPLE, j] == G_TRAINING or P[P_GRAPPLE, j] == G_SERVICE
        service = P[P_GRAPPLE, j] == G_SERVICE
        for k in range(U):
            base = P[P_DAMAGE, j] - P[P_ARMOR, k]
            for pas in range(2):
                for pen in range(2):
                    for grap in range(2):
                        diff = (P[P_COMBAT, j] - AREA_PENALTY * pen - GRAPPLE_PENALTY * grap
                                - (P[P_EVADE, k] - PASSIVE_PENALTY * pas))
                        ex[j, k, pen, grap, pas] = expected_damage(forced, compared, diff, base, C[C_MARGIN],
                                                                   C[C_MIN_DAMAGE])
                diff = P[P_COMBAT, j] - (P[P_EVADE, k] - PASSIVE_PENALTY * pas)
                total = 0
                for bonus in range(4):  # R-MDK-13: 1d4 − 1
                    b = bonus if roleplay else 0
                    total += expected_damage(forced, compared, diff + b, base + (b if service else 0),
                                             C[C_MARGIN] and not service, C[C_MIN_DAMAGE])
                ex[j, k, 0, EX_GRAPPLE_TRY, pas] = total
    return ex


def compile_arrays(p: Params):
    """(P, C, order, EX) for the compiled functions."""
    rows = [p.side, p.area, p.attack, p.attacks, p.combat, p.evade, p.damage, p.armor, p.hp, p.troop,
            p.troop_size, p.super_perception, p.grapple, p.stamina, p.resolve, p.master, p.withdraw_hp,
            [len(c) > 0 for c in p.companions], p.slave, p.recall_hp, p.dismiss_hp]
    P = np.array([np.asarray(r, dtype=np.int64) for r in rows], dtype=np.int64).reshape(N_P, p.n_units)
    C = np.array([p.ambush_side, p.margin_damage, p.min_damage, p.focus_target, POLICY_CODES[p.policy],
                  p.choice == "min_penalty", MOVEMENT_CODES[p.movement], p.grapple_area], dtype=np.int64)
    order = np.asarray(p.order, dtype=np.int64)
    ex = _expected_table(P, C, *opposed_offsets())
    return P, C, order, ex


def init_state(p: Params, n: int) -> np.ndarray:
    """The starting skirmish state of ``n`` runs: (n, N_S, units) int64."""
    S = np.zeros((n, N_S, p.n_units), dtype=np.int64)
    S[:, S_HP] = p.hp
    S[:, S_ALIVE] = 1
    S[:, S_PRESENT] = p.master < 0  # R-MDK-5: called units wait
    S[:, S_PARTNER] = -1
    S[:, S_AREA] = p.area
    S[:, S_ENTRY_HP] = p.hp  # R-MDK-5: hp when it last entered the combat
    return S


# --------------------------------------------------------------------------------------------
# the steps of a unit's turn (one run)


@njit(cache=True, inline="always")
def onfield(S, k):
    return S[S_ALIVE, k] == 1 and S[S_PRESENT, k] == 1


@njit(cache=True, inline="always")
def release(S, k):
    """R-MDK-10: end the grapple ``k`` is in."""
    g = S[S_PARTNER, k]
    S[S_PARTNER, k] = -1
    S[S_INITIATOR, k] = 0
    S[S_GKIND, k] = G_NONE
    if g >= 0:
        S[S_PARTNER, g] = -1
        S[S_INITIATOR, g] = 0
        S[S_GKIND, g] = G_NONE


@njit(cache=True, inline="always")
def is_overflow(P, S, j, area_j):
    """R-MDK-7: a front fighter ranked (file order) at or after the enemy front's size overflows."""
    if area_j != FRONT:
        return False
    enemy_front = 0
    rank = 0
    for k in range(P.shape[1]):
        if not onfield(S, k) or S[S_AREA, k] != FRONT:
            continue
        if P[P_SIDE, k] != P[P_SIDE, j]:
            enemy_front += 1
        elif k < j:
            rank += 1
    return rank >= enemy_front


@njit(cache=True, inline="always")
def troop_unblocked(P, S, j):
    """R-MDK-8: a troop reaches the back line unless the enemy front holds a troop as large."""
    if not P[P_TROOP, j]:
        return False
    for k in range(P.shape[1]):
        if (onfield(S, k) and P[P_SIDE, k] != P[P_SIDE, j] and S[S_AREA, k] == FRONT and P[P_TROOP, k]
                and P[P_TROOP_SIZE, k] >= P[P_TROOP_SIZE, j]):
            return False
    return True


@njit(cache=True, inline="always")
def area_penalty(t, area_j, area_k, overflow, troop_ok):
    """R-MDK-6/7/8: penalty of attack type ``t`` from ``area_j`` at a unit in ``area_k``."""
    if t == MAGIC:
        return 0
    if area_k != FRONT and troop_ok:
        return 0
    if t == MELEE:
        if area_k == FRONT:
            return 0 if area_j == FRONT else AREA_PENALTY
        return 0 if overflow else AREA_PENALTY
    if area_j == FRONT:  # ranged
        return AREA_PENALTY if area_k == FRONT else 0
    return 0 if area_k == FRONT else AREA_PENALTY


@njit(cache=True, inline="always")
def attack_score(P, C, EX, S, j, k, t, pen, passive):
    """R-MDK-6 choice: minus the penalty (``min_penalty``) or 2592 × the expected damage, halved at
    a grappled pair for a non-magic attack (``expected_damage``)."""
    if C[C_CHOICE] == 1:
        return -pen
    count = EX[j, k, 1 if pen else 0, 1 if (S[S_PARTNER, j] >= 0 and t != MAGIC) else 0, 1 if passive else 0]
    if S[S_PARTNER, k] >= 0 and t != MAGIC:
        return count
    return 2 * count


@njit(cache=True, inline="always")
def best_attacks(P, C, EX, S, j, area_j, free_by2, cand_k, cand_t):
    """R-MDK-6: the best score over attack types and enemies; fills (target, type) candidates in
    file order (per target its first type reaching the best; ``cand_t`` = type + 4 × penalty) and
    returns (best, count)."""
    overflow = is_overflow(P, S, j, area_j)
    troop_ok = troop_unblocked(P, S, j)
    ambushed = 1 - C[C_AMBUSH_SIDE]
    best = 0
    count = 0
    for k in range(P.shape[1]):
        if not onfield(S, k) or P[P_SIDE, k] == P[P_SIDE, j]:
            continue
        passive = free_by2 and P[P_SIDE, k] == ambushed
        for t in (MELEE, RANGED, MAGIC):
            if not (P[P_ATTACKS, j] >> t) & 1:
                continue
            pen = area_penalty(t, area_j, S[S_AREA, k], overflow, troop_ok)
            score = attack_score(P, C, EX, S, j, k, t, pen, passive)
            if count == 0 or score > best:
                best = score
                cand_k[0], cand_t[0] = k, t + 4 * pen
                count = 1
            elif score == best and cand_k[count - 1] != k:
                cand_k[count], cand_t[count] = k, t + 4 * pen
                count += 1
    return best, count


@njit(cache=True, inline="always")
def choose(C, S, cand_k, count, u_pick):
    """Policy tie-break among the best candidates (file order): index into ``cand_k``."""
    if C[C_POLICY] == 1:  # first
        return 0
    if C[C_POLICY] == 2:  # random
        return int(math.floor(u_pick * count))
    # greedy: avoid a grappled pair (R-MDK-10 random victim) if possible, then the weakest
    any_free = False
    for i in range(count):
        if S[S_PARTNER, cand_k[i]] < 0:
            any_free = True
    best = -1
    for i in range(count):
        k = cand_k[i]
        if any_free and S[S_PARTNER, k] >= 0:
            continue
        if best < 0 or S[S_HP, k] < S[S_HP, cand_k[best]]:
            best = i
    return best


@njit(cache=True, inline="always")
def leave_grapple(P, C, S, row, j):
    """R-MDK-10 (no action): assault by an opposed 体力 check, training by a 自尊 focus check,
    service freely."""
    g = S[S_PARTNER, j]
    if g < 0 or S[S_INITIATOR, j]:
        return
    base = j * UNIT_COLS
    ms, mc, mf = dark(row[base + LEAVE_0], row[base + LEAVE_1])
    kind = S[S_GKIND, j]
    if kind == G_SERVICE:
        leave = True
    elif kind == G_ASSAULT:
        ts, tc, tf = dark(row[base + HOLD_0], row[base + HOLD_1])
        leave = active_wins(P[P_STAMINA, j] - ms, mc, mf, P[P_STAMINA, g] - ts, tc, tf)
    else:
        leave = mc or (not mf and P[P_RESOLVE, j] - ms - C[C_FOCUS] >= 0)
    if leave:
        release(S, j)


@njit(cache=True, inline="always")
def withdraw(P, S, j):
    """R-MDK-5: a slave monster below the policy's threshold withdraws to the dark prison with its
    own action (not while another holds it; one called back once it is hurt after its return).
    Returns True if it did."""
    if (S[S_HP, j] < P[P_WITHDRAW, j] and S[S_HP, j] < S[S_ENTRY_HP, j]
            and (S[S_PARTNER, j] < 0 or S[S_INITIATOR, j])):
        release(S, j)
        S[S_PRESENT, j] = 0
        S[S_WITHDRAWN, j] = 1
        return True
    return False


@njit(cache=True, inline="always")
def dismiss(P, S, j):
    """R-MDK-5 dismissal (a free declaration, no action): when master ``j`` has another summon waiting, its
    summon in combat with hp below policy.dismiss_below is dismissed (its grapple ends) and gone for the combat."""
    U = P.shape[1]
    waiting = False
    for c in range(U):
        if (P[P_MASTER, c] == j and not P[P_SLAVE, c] and S[S_ALIVE, c] and not S[S_PRESENT, c]
                and not S[S_DISMISSED, c]):
            waiting = True
    if not waiting:
        return
    for c in range(U):
        if P[P_MASTER, c] == j and not P[P_SLAVE, c] and onfield(S, c) and S[S_HP, c] < P[P_DISMISS, c]:
            release(S, c)
            S[S_PRESENT, c] = 0
            S[S_DISMISSED, c] = 1


@njit(cache=True, inline="always")
def call_companion(P, S, j, r):
    """R-MDK-5: one summon and one slave of a master in combat at a time; call the first (file order)
    waiting one, or withdrawn slave with hp above recall_above, whose kind has none in combat (costs the
    master's action; it acts from the next round)."""
    if not P[P_CALLS, j]:
        return False
    U = P.shape[1]
    busy_summon = False
    busy_slave = False
    for c in range(U):
        if P[P_MASTER, c] == j and onfield(S, c):
            if P[P_SLAVE, c]:
                busy_slave = True
            else:
                busy_summon = True
    for c in range(U):
        if P[P_MASTER, c] != j or S[S_PRESENT, c] or S[S_DISMISSED, c]:
            continue
        if busy_slave if P[P_SLAVE, c] else busy_summon:
            continue
        if not S[S_WITHDRAWN, c] or (P[P_RECALL, c] > 0 and S[S_HP, c] >= P[P_RECALL, c]):
            S[S_PRESENT, c] = 1
            S[S_WITHDRAWN, c] = 0
            S[S_ENTERED, c] = r
            S[S_ENTRY_HP, c] = S[S_HP, c]
            return True
    return False


@njit(cache=True)
def best_action(P, C, EX, S, j, area_j, free_by2, cand_k, cand_t):
    """R-MDK-11: the best score of the unit's actions from ``area_j`` in units of 1/4 of an attack score: its
    best attack and, with ``movement = "best"``, a grapple attempt on an ungrappled enemy in contact (R-MDK-9;
    ``min_penalty``: 4 × the mean R-MDK-13 bonus, ``expected_damage``: 2 × EX at EX_GRAPPLE_TRY)."""
    best = 4 * best_attacks(P, C, EX, S, j, area_j, free_by2, cand_k, cand_t)[0]
    if C[C_MOVEMENT] != 1 or P[P_GRAPPLE, j] == G_NONE:
        return best
    overflow = is_overflow(P, S, j, area_j)
    troop_ok = troop_unblocked(P, S, j)
    ambushed = 1 - C[C_AMBUSH_SIDE]
    roleplay = P[P_GRAPPLE, j] == G_TRAINING or P[P_GRAPPLE, j] == G_SERVICE
    for k in range(P.shape[1]):
        if not onfield(S, k) or P[P_SIDE, k] == P[P_SIDE, j] or S[S_PARTNER, k] >= 0:
            continue
        if not ((area_j == FRONT) if S[S_AREA, k] == FRONT else (overflow or troop_ok)):
            continue  # R-MDK-9: contact
        if C[C_CHOICE] == 1:
            score = 6 if roleplay else 0  # 4 × (no penalty + the mean of 1d4 − 1)
        else:
            score = 2 * EX[j, k, 0, EX_GRAPPLE_TRY, 1 if (free_by2 and P[P_SIDE, k] == ambushed) else 0]
        if score > best:
            best = score
    return best


@njit(cache=True)
def move(P, C, EX, S, j, free_by2, cand_k, cand_t):
    """R-MDK-11 (policy ``best`` or ``best_attack``, no action): move to the other area if the best action is
    strictly better from there, never leaving the side's front empty; a grappled unit stays."""
    if S[S_PARTNER, j] >= 0:
        return
    here = S[S_AREA, j]
    there = 1 - here
    if there != FRONT:
        fronts = 0
        for k in range(P.shape[1]):
            if onfield(S, k) and P[P_SIDE, k] == P[P_SIDE, j] and S[S_AREA, k] == FRONT:
                fronts += 1
        if fronts <= 1:
            return
    stay = best_action(P, C, EX, S, j, here, free_by2, cand_k, cand_t)
    S[S_AREA, j] = there
    go = best_action(P, C, EX, S, j, there, free_by2, cand_k, cand_t)
    if go <= stay:
        S[S_AREA, j] = here


@njit(cache=True, inline="always")
def side_fell(P, S):
    """The winner if a side has no unit on the field (fallen or withdrawn), else NO_SKIRMISH."""
    left_a = False
    left_b = False
    for k in range(P.shape[1]):
        if onfield(S, k):
            if P[P_SIDE, k] == 0:
                left_a = True
            else:
                left_b = True
    if not left_a:
        return 1
    if not left_b:
        return 0
    return NO_SKIRMISH


@njit(cache=True, inline="always")
def partner_attack(P, C, EX, S, j, g, free_by2):
    """R-MDK-10 (second round): the held unit's attack type at its partner ``g`` (the best score: ``min_penalty``
    minus the whole penalty, ``expected_damage`` the expected damage, not halved; ties melee, ranged, magic) and
    that type's R-MDK-6 penalty at the partner, to which the -2 adds (none on magic). Returns (type, penalty)."""
    overflow = is_overflow(P, S, j, S[S_AREA, j])
    troop_ok = troop_unblocked(P, S, j)
    passive = 1 if (free_by2 and P[P_SIDE, g] == 1 - C[C_AMBUSH_SIDE]) else 0
    best, kind, penalty = 0, -1, 0
    for t in (MELEE, RANGED, MAGIC):
        if not (P[P_ATTACKS, j] >> t) & 1:
            continue
        pen = area_penalty(t, S[S_AREA, j], S[S_AREA, g], overflow, troop_ok)
        grap = 0 if t == MAGIC else 1
        if C[C_CHOICE] == 1:
            score = -(pen + GRAPPLE_PENALTY * grap)
        else:
            score = EX[j, g, 1 if pen else 0, grap, passive]
        if kind < 0 or score > best:
            best, kind, penalty = score, t, pen
    return kind, penalty


@njit(cache=True, inline="always")
def attack_target(P, C, EX, S, row, j, free_by2, cand_k, cand_t):
    """Whom the unit attacks and how, ``(victim, kind, penalty, grapple_try, contact)``: inside a grapple its
    partner (R-MDK-10); a grappler tries a grapple on an enemy in contact (R-MDK-9); otherwise the best attack
    (R-MDK-6); an attack on a grappled enemy may hit its partner instead (R-MDK-10 random victim)."""
    U = P.shape[1]
    base = j * UNIT_COLS
    g = S[S_PARTNER, j]
    grapple_try = False
    kind = P[P_ATTACK, j]
    penalty = 0
    contact = g >= 0 and S[S_INITIATOR, j] == 1  # the grappler keeps up its own contact action
    if g >= 0:
        target = g
        if not contact and C[C_GRAPPLE_AREA]:
            kind, penalty = partner_attack(P, C, EX, S, j, g, free_by2)  # R-MDK-10 (second round)
        elif not contact and (P[P_ATTACKS, j] >> MAGIC) & 1:
            kind = MAGIC  # R-MDK-10 (revised 2026-12): magic takes no grapple penalty, so it casts
    else:
        count = 0
        if P[P_GRAPPLE, j] != G_NONE:  # R-MDK-9 contact needed
            overflow = is_overflow(P, S, j, S[S_AREA, j])
            troop_ok = troop_unblocked(P, S, j)
            for k in range(U):
                if not onfield(S, k) or P[P_SIDE, k] == P[P_SIDE, j] or S[S_PARTNER, k] >= 0:
                    continue
                if (S[S_AREA, j] == FRONT) if S[S_AREA, k] == FRONT else (overflow or troop_ok):
                    cand_k[count] = k
                    count += 1
            grapple_try = count > 0
        if grapple_try:
            target = cand_k[choose(C, S, cand_k, count, row[base + TARGET_PICK])]
        else:
            count = best_attacks(P, C, EX, S, j, S[S_AREA, j], free_by2, cand_k, cand_t)[1]
            i = choose(C, S, cand_k, count, row[base + TARGET_PICK])
            target, kind = cand_k[i], cand_t[i] % 4
            penalty = cand_t[i] // 4
    victim = target
    if g < 0 and S[S_PARTNER, target] >= 0 and kind != MAGIC and row[base + VICTIM_PICK] >= 0.5:
        victim = S[S_PARTNER, target]  # R-MDK-10 random victim
    return victim, kind, penalty, grapple_try, contact


@njit(cache=True, inline="always")
def attack(P, C, EX, S, row, j, free_by2, cand_k, cand_t):
    """The unit's action (True if its victim fell) on the target of :func:`attack_target`: opposed 2DR
    (R-MDK-1/2) with the grapple penalty (R-MDK-10) and roleplay bonus (R-MDK-13), damage model (R-MDK-14) with
    armor (R-MDK-4), R-MDK-12 passive penalty."""
    base = j * UNIT_COLS
    ambushed = 1 - C[C_AMBUSH_SIDE]
    g = S[S_PARTNER, j]
    victim, kind, penalty, grapple_try, contact = attack_target(P, C, EX, S, row, j, free_by2, cand_k, cand_t)
    modifier = -penalty
    if g >= 0 and (contact or kind != MAGIC):
        modifier -= GRAPPLE_PENALTY  # R-MDK-10: attacks only, none on magic
    bonus = 0
    if (P[P_GRAPPLE, j] == G_TRAINING or P[P_GRAPPLE, j] == G_SERVICE) and (grapple_try or contact):
        bonus = face(row[base + ROLEPLAY_D4], 4) - 1  # R-MDK-13
    modifier += bonus
    service = P[P_GRAPPLE, j] == G_SERVICE and (grapple_try or contact)
    sa, ca, fa = dark(row[base + ATTACK_0], row[base + ATTACK_1])
    sd, cd, fd = dark(row[base + DEFENSE_0], row[base + DEFENSE_1])
    a_total = P[P_COMBAT, j] + modifier - sa
    passive = PASSIVE_PENALTY if (free_by2 and P[P_SIDE, victim] == ambushed) else 0
    d_total = P[P_EVADE, victim] - passive - sd
    if not active_wins(a_total, ca, fa, d_total, cd, fd):
        return False
    dmg = P[P_DAMAGE, j] - P[P_ARMOR, victim]
    if service:
        dmg += bonus  # R-MDK-13 (revised 2026-12): service value with the bonus only, no success value
    elif C[C_MARGIN]:
        dmg += a_total - d_total
    S[S_HP, victim] -= max(C[C_MIN_DAMAGE], dmg)
    if S[S_HP, victim] <= 0:
        S[S_ALIVE, victim] = 0
        release(S, victim)
        return True
    if grapple_try:  # R-MDK-10 grapple formed
        S[S_PARTNER, j] = victim
        S[S_PARTNER, victim] = j
        S[S_INITIATOR, j] = 1
        S[S_GKIND, j] = P[P_GRAPPLE, j]
        S[S_GKIND, victim] = P[P_GRAPPLE, j]
    return False


@njit(cache=True, inline="always")
def unit_turn(P, C, EX, S, row, j, r, free, by2, cand_k, cand_t):
    """Unit ``j``'s turn of round ``r`` in one run; returns the winner (NO_SKIRMISH while it lasts)."""
    if not (onfield(S, j) and S[S_ENTERED, j] < r):
        return NO_SKIRMISH  # R-MDK-5: a called unit acts from the round after it is called
    if free and P[P_SIDE, j] == 1 - C[C_AMBUSH_SIDE] and not P[P_SUPER, j]:
        return NO_SKIRMISH  # R-MDK-12 free round; super-perception monsters act normally
    leave_grapple(P, C, S, row, j)
    if withdraw(P, S, j):
        return side_fell(P, S)
    if P[P_CALLS, j]:
        dismiss(P, S, j)
    if call_companion(P, S, j, r):
        return NO_SKIRMISH
    free_by2 = free and by2
    if C[C_MOVEMENT]:
        move(P, C, EX, S, j, free_by2, cand_k, cand_t)
    if attack(P, C, EX, S, row, j, free_by2, cand_k, cand_t):
        return side_fell(P, S)
    return NO_SKIRMISH


@njit(cache=True, nogil=True)  # called from Python: threads may run several chunks at once
def play_round(P, C, EX, order, S, winner, rounds, u, r, won, by2):
    """Round ``r`` of every unfinished run (``u``: the round's uniform block, one row per run)."""
    U = P.shape[1]
    cand_k = np.zeros(U, dtype=np.int64)
    cand_t = np.zeros(U, dtype=np.int64)
    for i in range(S.shape[0]):
        if winner[i] != NO_SKIRMISH:
            continue
        free = won[i] and r == 1
        for j in order:
            w = unit_turn(P, C, EX, S[i], u[i], j, r, free, by2[i], cand_k, cand_t)
            if w != NO_SKIRMISH:
                winner[i] = w
                rounds[i] = r
                break


def turn(p: Params, arrays, S: np.ndarray, row: np.ndarray, j: int, r: int, free: bool, by2: bool) -> int:
    """One unit's turn on one run's state ``S`` (N_S, units), for step-by-step tests."""
    P, C, _, EX = arrays
    U = p.n_units
    return int(unit_turn(P, C, EX, S, np.asarray(row, dtype=np.float64), j, r, bool(free), bool(by2),
                         np.zeros(U, dtype=np.int64), np.zeros(U, dtype=np.int64)))


def skirmish_kernel(p: Params, n: int, rng: np.random.Generator, ambush_win: np.ndarray,
                    by2: np.ndarray) -> dict[str, np.ndarray]:
    """The skirmish for the batch (``p.skirmish``); draws round blocks until every run has finished."""
    P, C, order, EX = compile_arrays(p)
    S = init_state(p, n)
    winner = np.full(n, NO_SKIRMISH, dtype=np.int64)
    rounds = np.zeros(n, dtype=np.int64)
    won = np.asarray(ambush_win & p.use_ambush, dtype=np.bool_)
    by2 = won & np.asarray(by2, dtype=np.bool_)
    for r in range(1, p.max_rounds + 1):
        if (winner != NO_SKIRMISH).all():
            break
        play_round(P, C, EX, order, S, winner, rounds, rng.random((n, L.round_cols(p.n_units))), r, won, by2)
    finished = winner != NO_SKIRMISH
    winner = np.where(finished, winner, DRAW)
    rounds = np.where(finished, rounds, p.max_rounds)
    on = (S[:, S_ALIVE] == 1) & (S[:, S_PRESENT] == 1)
    out = S[:, S_WITHDRAWN] == 1
    side_b = (p.side == 1)[None, :]
    fallen_b_dp = ((S[:, S_ALIVE] == 0) & side_b).astype(np.int64) @ (3 * p.stars.astype(np.int64))  # R-MDK-3
    return {
        "skirmish_winner": winner,
        "skirmish_rounds": rounds,
        "survivors_a": (on & ~side_b).sum(axis=1),
        "survivors_b": (on & side_b).sum(axis=1),
        "withdrawn_a": (out & ~side_b).sum(axis=1),
        "withdrawn_b": (out & side_b).sum(axis=1),
        "enslave_dp": np.where(winner == 0, fallen_b_dp, 0).astype(np.int64),
    }


def run_chunk_kernel(p: Params, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One seed chunk, blocks drawn in layout order: the per-run columns of :mod:`sim.formation.columns` (a step
    not played keeps its declared value)."""
    cols = allocate(n)
    fill(cols, AMBUSH, ambush_kernel(p, rng.random((n, L.AMBUSH_COLS))))
    fill(cols, SESSION, session_kernel(p, rng.random((n, L.session_cols(p.checks)))))
    if p.skirmish:
        fill(cols, SKIRMISH, skirmish_kernel(p, n, rng, cols["ambush_win"], cols["ambush_win_by_2"]))
    return cols


__all__ = ["STATE_FIELDS", "compile_arrays", "init_state", "run_chunk_kernel", "turn"]
