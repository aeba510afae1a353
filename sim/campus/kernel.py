"""Batch campus engine: numba-compiled (``cache=True``), one game at a time over a batch of games (issue 11).

The batch axis is outermost: :func:`play_games` plays games ``g0, g0 + 1, ...`` of a chunk in run order, each
through its turns (R-CAM-5), every step one compiled function named after its rule. Every game draws only
what it uses from the chunk's uniform stream, in the order the steps need it (the conventions of
:mod:`sim.campus.params`), so the scalar reference (:mod:`sim.campus.reference`) reading the same doubles in
the same order plays the same games. The state and the per-game record are numpy arrays with the batch axis
first (:func:`new_record`); a turn works on one row of them and on a few scratch arrays reused by every game
(:func:`new_work`), so nothing is allocated per game.

The stream is a buffer of uniforms drawn from the chunk's generator; when a game runs past its end the game
is played again from its first draw once :func:`run_kernel` has refilled the buffer with the generator's next
doubles, so the result does not depend on the buffer size.

Each step function is compiled once as a native function (:data:`step`: no Python wrapper) marked for LLVM to
inline into the one compiled entry point :func:`play_games`, compiled without reference counting
(``_nrt=False``: it allocates nothing), which is what makes it fast. Inlining by LLVM rather than at numba-IR
level (``inline="always"``) gives the same machine code at a quarter of the cold compile time and memory.
"""

from __future__ import annotations

from collections import namedtuple

import numba as nb
import numpy as np

from sim.campus.columns import RUN_STATS, allocate, columns_from_record
from sim.campus.params import CAPTURED, CLEARED, FREE, GAME_OVER, Params
from sim.campus.stances import equilibrium_thresholds

GROWTH = {"none": 0, "lowest": 1, "best": 2}

def _first_rows(*heights: int) -> tuple[int, ...]:
    """The first row of each field of a packed table (fields of these heights, in order), then the row after the
    last (where a field of a size known only per scenario starts)."""
    return tuple(int(x) for x in np.cumsum((0, *heights)))


# The scenario's terms packed in a few tables (issue 27): a row per named field (the constants below: first row of
# each), a column per location, PC, adversary slot, mission, skill or buy-list item; bools are 0 / 1. A compiled
# step takes these few arrays rather than eighty (every array a compiled call passes is a dozen scalars).
# kp.loc: R-CAM-11, R-CAM-26, R-CAM-50, R-CAM-53 (ROOMS, PLAIN: the first n_rooms / n_plain columns list them)
LOC_IS_ROOM, LOC_IS_EXIT, LOC_OPENS_ON, LOC_ROOM_OFFSET, LOC_ROOMS, LOC_PLAIN, LOC_ROWS = _first_rows(1, 1, 1, 1, 1, 1)
# kp.pc: R-CAM-1, R-CAM-30 (NUM, DEN: row + 2 x stance + [no advantage, advantage]); EXCL + i: PC i's exclusions
PC_BASE, PC_BONUS, PC_NUM, PC_DEN, PC_VIT, PC_TEAM, PC_EARS, PC_NURSE, PC_GPT, PC_EXCL = _first_rows(
    3, 3, 6, 6, 1, 1, 1, 1, 1)
# kp.adv: R-CAM-20, R-CAM-21, R-CAM-53, R-CAM-54; CAND + q: the slot's candidate location q
(ADV_TEMPLATE, ADV_BOSS, ADV_REWARD, ADV_ROOM, ADV_BASE, ADV_BONUS, ADV_NUM, ADV_DEN, ADV_WNUM, ADV_FIRST, ADV_LAST,
 ADV_N_CANDS, ADV_FIXED_STANCE, ADV_CAND) = _first_rows(1, 1, 1, 1, 3, 3, 6, 6, 3, 1, 1, 1, 1)
# kp.prob (float64): an adversary slot's stance thresholds and spawn chance (R-CAM-20, R-CAM-21), a mission's chance
PROB_ADV_C1, PROB_ADV_C2, PROB_ADV_CHANCE, PROB_MIS_CHANCE, PROB_ROWS = _first_rows(1, 1, 1, 1)
# kp.mis: R-CAM-25, R-CAM-25a, R-CAM-56
(MIS_LOC, MIS_FIRST, MIS_LAST, MIS_STANCE, MIS_EACH, MIS_TARGET, MIS_REWARD, MIS_PEN_VIT, MIS_PEN_ABILITY,
 MIS_PEN_AMOUNT, MIS_FOUND, MIS_ROWS) = _first_rows(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
# kp.sk: the skills a buy list can buy (R-CAM-9a); kp.buy: the buy list (a skill or a team, the other -1)
SK_COST, SK_BONUS, SK_NUM, SK_DEN, SK_EARS, SK_NURSE, SK_GPT, SK_ROWS = _first_rows(1, 3, 6, 6, 1, 1, 1)
BUY_SKILL, BUY_TEAM, BUY_ROWS = _first_rows(1, 1)
# kp.eq: a column per turn: how many spawn slots the equilibrium policy falls back to, then the slots (issue 7)
EQ_N, EQ_SLOTS = _first_rows(1)

KParams = namedtuple("KParams", [
    "P", "L", "T", "S", "A", "team_max", "n_teams", "miso", "k_options", "until_cleared", "move_avoid",
    "stance_policy", "stance_value", "growth", "rescue", "unit_den", "weight_den", "M", "B", "team_cost",
    "miso_in_missions", "save_for_buy", "n_rooms", "n_plain",
    "loc", "pc", "adv", "prob", "mis", "sk", "buy", "eq",
])

Work = namedtuple("Work", [
    "adv_present", "adv_loc", "adv_base", "opt", "opt_list", "dest", "named", "stance", "free0", "cover",
    "grp_pc", "grp_first", "fought_boss", "here", "opp", "side_pc", "side_adv", "red_pc", "red_adv", "adv_st",
    "out_by", "sup_of", "failed", "codes", "prefer", "tmp", "team_tmp", "team_pcs", "team_start", "team_size",
    "team_order", "adv_at", "pcs_at", "score",
    "bonus", "num", "den", "ears", "nurse", "gpt", "team", "a_bonus", "a_num", "a_den",
])

# the per-game statistics of sim.campus.columns (their engine field names), and the state only the engine keeps
Record = namedtuple("Record", [*(s.engine for s in RUN_STATS), "room", "cap_turn"])


def _pack(rows: int, n: int, fields, dtype=np.int64) -> np.ndarray:
    """A packed table of ``rows`` rows and max(n, 1) columns; ``fields``: (first row, per-column values of shape
    (n, ...)), each column's values in C order down the field's rows."""
    t = np.zeros((rows, max(n, 1)), dtype)
    for first, x in fields:
        x = np.asarray(x, dtype)
        h = x.size // n if n else 0
        t[first:first + h, :n] = x.reshape(n, h).T
    return t


def kernel_params(p: Params) -> KParams:
    """The compiled scenario: plain scalars and the packed tables (C-contiguous int64, ``prob`` float64)."""
    P, L, A, M = p.P, p.L, p.A, p.M
    eq_n = np.array([len(x) for x in p.eq_fallback_slots], np.int64)
    eq_slots = np.zeros((p.T, max(1, int(eq_n.max()) if len(eq_n) else 1)), np.int64)
    for t, x in enumerate(p.eq_fallback_slots):
        eq_slots[t, : len(x)] = x
    lists = np.zeros((L, 2), np.int64)
    lists[: len(p.rooms), 0], lists[: len(p.plain), 1] = p.rooms, p.plain
    loc = _pack(LOC_ROWS, L, [(LOC_IS_ROOM, p.is_room), (LOC_IS_EXIT, p.is_exit), (LOC_OPENS_ON, p.opens_on),
                              (LOC_ROOM_OFFSET, p.room_offset), (LOC_ROOMS, lists)])
    pc = _pack(PC_EXCL + P, P, [(PC_BASE, p.pc_base), (PC_BONUS, p.pc_bonus), (PC_NUM, p.pc_num), (PC_DEN, p.pc_den),
                                (PC_VIT, p.pc_vit), (PC_TEAM, p.pc_team), (PC_EARS, p.pc_ears),
                                (PC_NURSE, p.pc_nurse), (PC_GPT, p.pc_gpt), (PC_EXCL, np.transpose(p.pc_excl))])
    adv = _pack(ADV_CAND + L, A, [
        (ADV_TEMPLATE, p.adv_template), (ADV_BOSS, p.adv_boss), (ADV_REWARD, p.adv_reward), (ADV_ROOM, p.adv_room),
        (ADV_BASE, p.adv_base), (ADV_BONUS, p.adv_bonus), (ADV_NUM, p.adv_num), (ADV_DEN, p.adv_den),
        (ADV_WNUM, p.adv_wnum), (ADV_FIRST, p.adv_first), (ADV_LAST, p.adv_last), (ADV_N_CANDS, p.adv_n_cands),
        (ADV_FIXED_STANCE, p.adv_fixed_stance), (ADV_CAND, p.adv_cand_table)])
    prob = np.zeros((PROB_ROWS, max(A, M, 1)), np.float64)
    prob[PROB_ADV_C1, :A], prob[PROB_ADV_C2, :A], prob[PROB_ADV_CHANCE, :A] = p.adv_c1, p.adv_c2, p.adv_chance
    prob[PROB_MIS_CHANCE, :M] = p.mis_chance
    mis = _pack(MIS_ROWS, M, [
        (MIS_LOC, p.mis_loc), (MIS_FIRST, p.mis_first), (MIS_LAST, p.mis_last), (MIS_STANCE, p.mis_stance),
        (MIS_EACH, p.mis_each), (MIS_TARGET, p.mis_target), (MIS_REWARD, p.mis_reward), (MIS_PEN_VIT, p.mis_pen_vit),
        (MIS_PEN_ABILITY, p.mis_pen_ability), (MIS_PEN_AMOUNT, p.mis_pen_amount), (MIS_FOUND, p.mis_found)])
    sk = _pack(SK_ROWS, p.K, [(SK_COST, p.sk_cost), (SK_BONUS, p.sk_bonus), (SK_NUM, p.sk_num), (SK_DEN, p.sk_den),
                              (SK_EARS, p.sk_ears), (SK_NURSE, p.sk_nurse), (SK_GPT, p.sk_gpt)])
    return KParams(
        P=int(P), L=int(L), T=int(p.T), S=int(p.S), A=int(A), team_max=int(p.team_max),
        n_teams=len(p.team_names), miso=bool(p.miso), k_options=int(p.k_options),
        until_cleared=bool(p.until_cleared), move_avoid=bool(p.move_avoid), stance_policy=int(p.stance_policy),
        stance_value=int(p.stance_value), growth=GROWTH[p.growth], rescue=bool(p.rescue), unit_den=bool(p.unit_den),
        weight_den=int(p.weight_den), M=int(M), B=int(p.B), team_cost=int(p.team_cost),
        miso_in_missions=bool(p.miso_in_missions), save_for_buy=bool(p.save_for_buy), n_rooms=len(p.rooms),
        n_plain=len(p.plain), loc=loc, pc=pc, adv=adv, prob=prob, mis=mis, sk=sk,
        buy=_pack(BUY_ROWS, p.B, [(BUY_SKILL, p.buy_skill), (BUY_TEAM, p.buy_team)]),
        eq=_pack(EQ_SLOTS + eq_slots.shape[1], p.T, [(EQ_N, eq_n), (EQ_SLOTS, eq_slots)]),
    )


def new_work(p: Params) -> Work:
    """Scratch arrays for one game-turn, reused by every game of a call. ``adv_base`` holds the abilities of
    the adversaries present: a spawn slot's never change, so they are set here once; a miso bomb's are set
    when it is placed. ``bonus`` .. ``team`` are the PCs' skill terms (R-CAM-30): their own skills, set here
    once; with a buy list they are set again from the game's purchases every turn (R-CAM-9a). ``a_bonus``,
    ``a_num``, ``a_den`` are the adversaries' (a miso bomb's: set when it is placed)."""
    P, A, L = p.P, max(p.A, 1), p.L
    z = np.zeros
    adv_base = z((A, 3), np.int64)
    adv_base[: p.S] = p.adv_base[: p.S]
    a_bonus, a_num, a_den = z((A, 3), np.int64), np.ones((A, 3, 2), np.int64), np.ones((A, 3, 2), np.int64)
    a_bonus[: p.A], a_num[: p.A], a_den[: p.A] = p.adv_bonus, p.adv_num, p.adv_den
    return Work(
        adv_present=z(A, np.bool_), adv_loc=z(A, np.int64), adv_base=adv_base, opt=z(L, np.bool_),
        opt_list=z(L, np.int64), dest=z(P, np.int64), named=z(P, np.int64), stance=z(P, np.int64),
        free0=z(P, np.bool_), cover=z(P, np.int64), grp_pc=z(P, np.int64), grp_first=z(P + 1, np.int64),
        fought_boss=z((P, A), np.bool_), here=z(P, np.int64), opp=z(A, np.int64), side_pc=z(P, np.int64),
        side_adv=z(A, np.int64), red_pc=z(P, np.int64), red_adv=z(A, np.int64), adv_st=z(A, np.int64),
        out_by=z(P, np.int64), sup_of=z(P, np.int64), failed=z(P, np.bool_), codes=z(max(A, p.S, 1), np.int64),
        prefer=z(3, np.int64), tmp=z(max(L, P, A) + 1, np.int64), team_tmp=z(P, np.int64),
        team_pcs=z(P, np.int64), team_start=z(P, np.int64), team_size=z(P, np.int64), team_order=z(P, np.int64),
        adv_at=z(L, np.int64), pcs_at=z(L, np.int64), score=z(3, np.int64),
        bonus=np.array(p.pc_bonus, np.int64), num=np.array(p.pc_num, np.int64), den=np.array(p.pc_den, np.int64),
        ears=np.array(p.pc_ears, np.bool_), nurse=np.array(p.pc_nurse, np.bool_), gpt=np.array(p.pc_gpt, np.int64),
        team=np.array(p.pc_team, np.int64), a_bonus=a_bonus, a_num=a_num, a_den=a_den,
    )


def new_record(p: Params, n: int) -> Record:
    """The per-game state and record, batch axis first (R-CAM-41): the statistics allocated as
    :mod:`sim.campus.columns` declares them, then the engine's own state."""
    return Record(**allocate(p, n, key="engine"), room=np.zeros((n, p.P), np.int64),
                  cap_turn=np.zeros((n, p.P), np.int64))


# A step of the turn: compiled only to be called from compiled code (no Python wrapper), and inlined by LLVM
# into the entry point when it links them.
step = nb.njit(cache=True, forceinline=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)


# ------------------------------------------------------------------ draws (sim.campus.params conventions)
@step
def draw(u, cur):
    """The next uniform of the stream; past its end: flag the game for a replay and return 0."""
    pos = cur[0]
    if pos >= u.shape[0]:
        cur[1] = 1
        return 0.0
    cur[0] = pos + 1
    return u[pos]


@step
def pick(u, cur, m):
    """A uniform choice among m: floor(u * m), drawn only when m > 1."""
    if m <= 1:
        return 0
    k = int(draw(u, cur) * m)
    return k if k < m else m - 1


@step
def chance(u, cur, prob):
    """True with probability prob, drawn only when 0 < prob < 1."""
    if prob >= 1.0:
        return True
    if prob <= 0.0:
        return False
    return draw(u, cur) < prob


@step
def shuffle(u, cur, a, lo, m):
    """Fisher-Yates on a[lo:lo + m] (m - 1 draws), the reference's ``Turn.shuffle``."""
    for j in range(m - 1):
        k = j + pick(u, cur, m - j)
        x = a[lo + j]
        a[lo + j] = a[lo + k]
        a[lo + k] = x


@step
def sort_prefix(a, m):
    """Sort a[:m] in place (insertion sort: m is at most the party size)."""
    for j in range(1, m):
        x = a[j]
        k = j - 1
        while k >= 0 and a[k] > x:
            a[k + 1] = a[k]
            k -= 1
        a[k + 1] = x


# ------------------------------------------------------------------ values (R-CAM-2, R-CAM-3, R-CAM-30)
@step
def r_cam_3_value(base, reduction, bonus, num, den, unit):
    """R-CAM-3: floor((max(base - reduction, 0) + additions) x product of multipliers), floored once."""
    b = base - reduction
    if b < 0:
        b = 0
    x = b + bonus
    return x * num if unit else (x * num) // den


@step
def pc_value(kp, w, rec, g, i, s, s2, red):
    """PC i's value in stance s against stance s2 (R-CAM-2: the stance that beats the other doubles)."""
    adv = 1 if s == (s2 + 1) % 3 else 0
    return r_cam_3_value(rec.base[g, i, s], red, w.bonus[i, s], w.num[i, s, adv], w.den[i, s, adv], kp.unit_den)


@step
def adv_value(kp, w, a, s, s2, red):
    adv = 1 if s == (s2 + 1) % 3 else 0
    return r_cam_3_value(w.adv_base[a, s], red, w.a_bonus[a, s], w.a_num[a, s, adv], w.a_den[a, s, adv],
                         kp.unit_den)


@step
def plain_value(kp, w, base_row, i, s):
    """A value without an opponent (``best``, missions): no stance advantage (R-CAM-30, R-CAM-56)."""
    return r_cam_3_value(base_row[s], 0, w.bonus[i, s], w.num[i, s, 0], w.den[i, s, 0], kp.unit_den)


@step
def r_cam_40_best_stance(kp, w, base_row, i):
    """R-CAM-40 ``best``: the highest own value before the stance advantage; ties fight, flee, hide."""
    best = 0
    v0 = 0
    for s in range(3):  # a loop, not a call with a constant stance: numba compiles once per literal argument
        v = plain_value(kp, w, base_row, i, s)
        if s == 0 or v > v0:
            best, v0 = s, v
    return best


@step
def is_boss(kp, a):
    return a < kp.S and kp.adv[ADV_BOSS, a] != 0


@step
def r_cam_21_adversary_stance(kp, w, a, u, cur):
    """R-CAM-21: drawn from the weights for each confrontation (no draw when one stance has all the weight);
    R-CAM-57: a miso bomb uses the scenario's stance policy (best and counter: its own best)."""
    if a >= kp.S:
        if kp.stance_policy == 0:
            return kp.stance_value
        if kp.stance_policy == 1:
            return pick(u, cur, 3)
        return r_cam_40_best_stance(kp, w, w.adv_base[a], a - kp.S)
    if kp.adv[ADV_FIXED_STANCE, a] >= 0:
        return kp.adv[ADV_FIXED_STANCE, a]
    x = draw(u, cur)
    return (1 if x >= kp.prob[PROB_ADV_C1, a] else 0) + (1 if x >= kp.prob[PROB_ADV_C2, a] else 0)


@step
def r_cam_8_capture(kp, rec, g, t, i, room):
    """R-CAM-8 / R-CAM-14: vitality -1, captured (moved to the room at the end of the turn)."""
    rec.status[g, i] = CAPTURED
    rec.vit[g, i] -= 1
    rec.room[g, i] = room
    rec.cap_turn[g, i] = t
    rec.captures_t[g, t - 1] += 1


@step
def r_cam_53_capture_room(kp, a, u, cur):
    """R-CAM-8 / R-CAM-53: the adversary's room, else the only room, else one at random."""
    if a < kp.S and kp.adv[ADV_ROOM, a] >= 0:
        return kp.adv[ADV_ROOM, a]
    return kp.loc[LOC_ROOMS, pick(u, cur, kp.n_rooms)]


@step
def record_duel(kp, rec, g, a, pc_stance, win):
    tm = kp.adv[ADV_TEMPLATE, a]
    rec.duels_tmpl[g, tm] += 1
    rec.duels_stance[g, pc_stance] += 1
    if win:
        rec.wins_tmpl[g, tm] += 1
        rec.wins_stance[g, pc_stance] += 1


# ------------------------------------------------------------------ 1. preview
@step
def r_cam_20_place_adversaries(kp, w, rec, g, t, u, cur):
    """R-CAM-20 / R-CAM-50: each spawn slot of this turn placed with its chance at a uniform candidate;
    R-CAM-15 / R-CAM-57: a miso bomb per game-over PC at a location that is no capture room. ``w.adv_at``
    counts the adversaries present at each location."""
    for loc in range(kp.L):
        w.adv_at[loc] = 0
    for a in range(kp.S):
        w.adv_present[a] = False
        if kp.adv[ADV_FIRST, a] <= t <= kp.adv[ADV_LAST, a] and chance(u, cur, kp.prob[PROB_ADV_CHANCE, a]):
            w.adv_present[a] = True
            loc = kp.adv[ADV_CAND + pick(u, cur, kp.adv[ADV_N_CANDS, a]), a]
            w.adv_loc[a] = loc
            w.adv_at[loc] += 1  # its abilities are in w.adv_base from new_work on
    if kp.miso:
        for i in range(kp.P):
            a = kp.S + i
            w.adv_present[a] = False
            if rec.status[g, i] == GAME_OVER:
                w.adv_present[a] = True
                loc = kp.loc[LOC_PLAIN, pick(u, cur, kp.n_plain)]
                w.adv_loc[a] = loc
                w.adv_at[loc] += 1
                for s in range(3):  # R-CAM-57: its final abilities and skills (bought ones too, R-CAM-9a)
                    w.adv_base[a, s] = rec.base[g, i, s]
                    w.a_bonus[a, s] = w.bonus[i, s]
                    for c in range(2):
                        w.a_num[a, s, c] = w.num[i, s, c]
                        w.a_den[a, s, c] = w.den[i, s, c]


@step
def r_cam_50_options(kp, w, u, cur):
    """R-CAM-50: `options = k` is a uniform k-subset (the first k of a partial shuffle), once for the party.
    Returns the number of options; ``w.opt_list`` holds them in location order."""
    L = kp.L
    if kp.k_options >= L:
        for loc in range(L):
            w.opt[loc] = True
            w.opt_list[loc] = loc
        return L
    order = w.tmp
    for loc in range(L):
        order[loc] = loc
        w.opt[loc] = False
    for j in range(kp.k_options):
        k = j + pick(u, cur, L - j)
        x = order[j]
        order[j] = order[k]
        order[k] = x
    for j in range(kp.k_options):
        w.opt[order[j]] = True
    n = 0
    for loc in range(L):  # branch-free: the draws make the options unpredictable
        w.opt_list[n] = loc
        n += w.opt[loc]
    return n


# ------------------------------------------------------------------ 2-3. declaration and growth
@step
def min3(rec, g, i):
    b = rec.base[g, i]
    return min(b[0], min(b[1], b[2]))


@step
def r_cam_40_rescue(kp, w, rec, g, t):
    """R-CAM-40 ``rescue = true``: free PCs in party order take the first captive (party order, held before
    this turn, room among the options) not yet covered whose check their own min completes."""
    P = kp.P
    for j in range(P):
        w.cover[j] = min3(rec, g, j)
    for i in range(P):
        if not w.free0[i]:
            continue
        own = min3(rec, g, i)  # before this turn's growth
        for j in range(P):
            if rec.status[g, j] != CAPTURED or not w.opt[rec.room[g, j]] or kp.pc[PC_EXCL + i, j]:
                continue
            target = t + kp.loc[LOC_ROOM_OFFSET, rec.room[g, j]]
            if w.cover[j] < target and w.cover[j] + own >= target:
                w.dest[i] = rec.room[g, j]
                w.named[i] = j
                w.cover[j] += own
                break


@step
def r_cam_40_move(kp, w, rec, g, n_opt, ears, u, cur):
    """R-CAM-40 move ``random`` (uniform among the options) or ``avoid`` (with early ears: options with no
    adversary and no capture room; without: options that are no capture room; none: all options)."""
    choices = w.tmp
    m = 0
    if kp.move_avoid:
        for q in range(n_opt):  # branch-free: which options qualify is unpredictable
            loc = w.opt_list[q]
            choices[m] = loc
            m += (not kp.loc[LOC_IS_ROOM, loc]) & (not (ears and w.adv_at[loc] > 0))
    if m == 0:
        for q in range(n_opt):
            choices[q] = w.opt_list[q]
        m = n_opt
    for i in range(kp.P):
        if w.free0[i] and w.dest[i] < 0:
            w.dest[i] = choices[pick(u, cur, m)]
    for loc in range(kp.L):  # the free PCs at each destination
        w.pcs_at[loc] = 0
    for i in range(kp.P):
        if w.free0[i]:
            w.pcs_at[w.dest[i]] += 1


@step
def gcd(a, b):
    while b:
        a, b = b, a % b
    return a


@step
def r_cam_9a_add_skill(kp, w, i, k):
    """R-CAM-9a: bought skill k joins PC i's terms (R-CAM-30: bonus added, multipliers multiplied as reduced
    fractions, early ears, nursing and gp per turn added)."""
    for s in range(3):
        w.bonus[i, s] += kp.sk[SK_BONUS + s, k]
        for c in range(2):
            n = w.num[i, s, c] * kp.sk[SK_NUM + 2 * s + c, k]
            d = w.den[i, s, c] * kp.sk[SK_DEN + 2 * s + c, k]
            r = gcd(n, d)
            w.num[i, s, c] = n // r
            w.den[i, s, c] = d // r
    w.ears[i] |= kp.sk[SK_EARS, k] != 0
    w.nurse[i] |= kp.sk[SK_NURSE, k] != 0
    w.gpt[i] += kp.sk[SK_GPT, k]


@step
def r_cam_9a_terms(kp, w, rec, g):
    """R-CAM-9a: every PC's terms in game g: its own skills, then what it bought (in buy-list order)."""
    for i in range(kp.P):
        for s in range(3):
            w.bonus[i, s] = kp.pc[PC_BONUS + s, i]
            for c in range(2):
                w.num[i, s, c] = kp.pc[PC_NUM + 2 * s + c, i]
                w.den[i, s, c] = kp.pc[PC_DEN + 2 * s + c, i]
        w.ears[i] = kp.pc[PC_EARS, i]
        w.nurse[i] = kp.pc[PC_NURSE, i]
        w.gpt[i] = kp.pc[PC_GPT, i]
        w.team[i] = kp.pc[PC_TEAM, i]
        for b in range(kp.B):
            if rec.bought[g, i, b] > 0:
                if kp.buy[BUY_SKILL, b] >= 0:
                    r_cam_9a_add_skill(kp, w, i, kp.buy[BUY_SKILL, b])
                else:
                    w.team[i] = kp.buy[BUY_TEAM, b]


@step
def r_cam_9a_purchases(kp, w, rec, g, t, i):
    """R-CAM-9a: free PC i walks the buy list in order and buys each item as soon as it can afford it, before
    the rest is spent by the growth policy. An item it has, or cannot take (a team when it is in one, a team
    with team_max members in the game), is passed over; the walk stops at the first item it cannot afford.
    Returns whether it stopped there (an item is waiting)."""
    for b in range(kp.B):
        if rec.bought[g, i, b] > 0:
            continue
        k = kp.buy[BUY_SKILL, b]
        if k >= 0:
            cost = kp.sk[SK_COST, k]
        else:
            team = kp.buy[BUY_TEAM, b]
            if w.team[i] >= 0:
                continue  # one team per PC
            members = 0
            for j in range(kp.P):
                st = rec.status[g, j]
                if w.team[j] == team and (st == FREE or st == CAPTURED):
                    members += 1
            if members >= kp.team_max:
                continue
            cost = kp.team_cost
        if rec.gp[g, i] < cost:
            return True
        rec.gp[g, i] -= cost
        rec.bought[g, i, b] = t
        if k >= 0:
            r_cam_9a_add_skill(kp, w, i, k)
        else:
            w.team[i] = kp.buy[BUY_TEAM, b]
    return False


@step
def r_cam_40_growth(kp, w, rec, g, t):
    """R-CAM-5 step 3, free PCs only, in party order: purchases (R-CAM-9a), then R-CAM-40 growth: ``lowest``
    (each gp to the lowest base ability, ties fight, flee, hide) or ``best`` (all gp to the ability of the best
    stance)."""
    if kp.growth == 0 and kp.B == 0:
        return
    for i in range(kp.P):
        if not w.free0[i]:
            continue
        waiting = False
        if kp.B > 0:
            waiting = r_cam_9a_purchases(kp, w, rec, g, t, i)
        if kp.growth == 0 or rec.gp[g, i] <= 0 or (waiting and kp.save_for_buy):
            continue  # policy.save_for_buy: it keeps its gp for the item it cannot afford yet
        if kp.growth == 1:
            b0, b1, b2 = rec.base[g, i, 0], rec.base[g, i, 1], rec.base[g, i, 2]  # in registers, not memory
            for _ in range(rec.gp[g, i]):
                if b1 < b0 and b1 <= b2:
                    b1 += 1
                elif b2 < b0 and b2 < b1:
                    b2 += 1
                else:
                    b0 += 1
            rec.base[g, i, 0], rec.base[g, i, 1], rec.base[g, i, 2] = b0, b1, b2
        else:
            s = r_cam_40_best_stance(kp, w, rec.base[g, i], i)
            rec.base[g, i, s] += rec.gp[g, i]
        rec.gp[g, i] = 0


@step
def pc_wins(kp, w, rec, g, i, s, a, s2):
    """R-CAM-2..4: PC i in stance s beats adversary a in stance s2 (a tie is no win)."""
    return pc_value(kp, w, rec, g, i, s, s2, 0) > adv_value(kp, w, a, s2, s, 0)


@step
def adv_weights(kp, w, a, s2):
    """Stance probabilities as integers over weight_den (a miso bomb: all on its own best, R-CAM-57)."""
    if a >= kp.S:
        return kp.weight_den if s2 == r_cam_40_best_stance(kp, w, w.adv_base[a], a - kp.S) else 0
    return kp.adv[ADV_WNUM + s2, a]


def _equilibrium_thresholds(codes, n, prefer):
    return equilibrium_thresholds([int(c) for c in codes[:n]], [int(v) for v in prefer])


# not inlined: it holds the objmode call to the exact solver; no Python wrapper (it would unbox the ~1000 scalars
# of kp, w and rec: seconds of cold compile for a function only compiled code calls)
@nb.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def r_cam_40_equilibrium(kp, w, rec, g, t, i, ears, best, u, cur):
    """Stance policy ``equilibrium`` (issue 7): the reference's ``equilibrium_stance``; the exact mix is
    solved (and cached) in Python by :func:`sim.campus.stances.equilibrium_thresholds`."""
    n = 0
    w.prefer[:] = 0
    d = w.dest[i]
    fallback = True
    if ears:
        for a in range(kp.A):
            if w.adv_present[a] and w.adv_loc[a] == d:
                fallback = False
    for q in range(kp.A if not fallback else kp.eq[EQ_N, t - 1]):
        if fallback:
            a = kp.eq[EQ_SLOTS + q, t - 1]
            for s in range(3):
                w.adv_base[a, s] = kp.adv[ADV_BASE + s, a]
        else:
            a = q
            if not (w.adv_present[a] and w.adv_loc[a] == d):
                continue
        code = 0
        for s in range(3):
            for s2 in range(3):
                if pc_wins(kp, w, rec, g, i, s, a, s2):
                    code |= 1 << (3 * s + s2)
                    w.prefer[s] += adv_weights(kp, w, a, s2)
        w.codes[n] = code
        n += 1
    if n == 0:
        return best
    codes, prefer = w.codes, w.prefer
    with nb.objmode(c1="float64", c2="float64"):
        c1, c2 = _equilibrium_thresholds(codes, n, prefer)
    x = draw(u, cur)
    return (1 if x >= c1 else 0) + (1 if x >= c2 else 0)


@step
def r_cam_40_stances(kp, w, rec, g, t, ears, u, cur):
    """R-CAM-40 stance policies (R-CAM-51: after growth): fixed, random, best, counter (the most
    weight-averaged wins against the adversaries seen at the destination; without any, best), equilibrium."""
    for i in range(kp.P):
        if not w.free0[i]:
            continue
        if kp.stance_policy == 0:
            w.stance[i] = kp.stance_value
            continue
        if kp.stance_policy == 1:
            w.stance[i] = pick(u, cur, 3)
            continue
        best = r_cam_40_best_stance(kp, w, rec.base[g, i], i)
        w.stance[i] = best
        if kp.stance_policy == 4:
            w.stance[i] = r_cam_40_equilibrium(kp, w, rec, g, t, i, ears, best, u, cur)
        elif kp.stance_policy == 3 and ears and w.adv_at[w.dest[i]] > 0:
            score = w.score
            for s in range(3):
                score[s] = 0
            for a in range(kp.A):
                if not (w.adv_present[a] and w.adv_loc[a] == w.dest[i]):
                    continue
                for s2 in range(3):
                    wt = adv_weights(kp, w, a, s2)
                    if wt == 0:
                        continue
                    for s in range(3):
                        if pc_wins(kp, w, rec, g, i, s, a, s2):
                            score[s] += wt
            k = 0  # w.adv_at says an adversary is there: the most wins, ties fight, flee, hide
            if score[1] > score[0]:
                k = 1
            if score[2] > score[k]:
                k = 2
            w.stance[i] = k


# ------------------------------------------------------------------ 4. missions and confrontations
@step
def r_cam_25_missions(kp, w, rec, g, t, ears, u, cur):
    """R-CAM-25 / R-CAM-56: the sum (or each) of the present free PCs' values against the target; success pays
    every participant, failure hits every participant; no free PC present: no effect (and no draw).
    R-CAM-25a: a mission found by early ears occurs only while a PC with early ears is in the game; miso bombs
    at the location take part when allowed and lower the total (each value in mode each) by their value."""
    miso_ears = False  # R-CAM-25a: the adversary side has early ears (a miso bomb placed this turn holds them)
    if kp.miso:
        for i in range(kp.P):
            miso_ears |= w.adv_present[kp.S + i] & w.ears[i]
    for m in range(kp.M):
        if not kp.mis[MIS_FIRST, m] <= t <= kp.mis[MIS_LAST, m]:
            continue
        if kp.mis[MIS_FOUND, m] and not ears:
            continue
        loc = kp.mis[MIS_LOC, m]
        any_here = False
        for i in range(kp.P):
            if w.free0[i] and w.dest[i] == loc:
                any_here = True
        if not any_here or not chance(u, cur, kp.prob[PROB_MIS_CHANCE, m]):
            continue
        s = kp.mis[MIS_STANCE, m]
        lower = 0
        if kp.miso and kp.miso_in_missions and (miso_ears or not kp.mis[MIS_FOUND, m]):
            for i in range(kp.P):
                a = kp.S + i
                if w.adv_present[a] and w.adv_loc[a] == loc:
                    v = r_cam_3_value(w.adv_base[a, s], 0, w.a_bonus[a, s], w.a_num[a, s, 0], w.a_den[a, s, 0],
                                      kp.unit_den)
                    lower += max(v, 0)
        total = -lower
        ok = True
        for i in range(kp.P):
            if w.free0[i] and w.dest[i] == loc:
                v = plain_value(kp, w, rec.base[g, i], i, s)
                total += v
                if v - lower < kp.mis[MIS_TARGET, m]:
                    ok = False
        if not kp.mis[MIS_EACH, m]:
            ok = total >= kp.mis[MIS_TARGET, m]
        for i in range(kp.P):
            if not (w.free0[i] and w.dest[i] == loc):
                continue
            if ok:
                rec.gp[g, i] += kp.mis[MIS_REWARD, m]
            else:
                rec.vit[g, i] -= kp.mis[MIS_PEN_VIT, m]
                k = kp.mis[MIS_PEN_ABILITY, m]
                if k >= 0:
                    rec.base[g, i, k] -= kp.mis[MIS_PEN_AMOUNT, m]
                    if rec.base[g, i, k] < 0:  # R-CAM-16: gp lift it back to 0, gp may go negative
                        rec.gp[g, i] += rec.base[g, i, k]
                        rec.base[g, i, k] = 0


@step
def r_cam_6_rotation(kp, w, rec, g, loc, u, cur):
    """R-CAM-6: the groups at ``loc``: every team with two or more members present (R-CAM-9; more than
    team_max: a random team_max of them, the rest alone, R-CAM-52), larger teams first, ties in random order;
    then the other PCs one at a time in random order. Returns the number of groups (``w.grp_first``,
    ``w.grp_pc``)."""
    P = kp.P
    n_single = 0
    singles = w.here
    n_groups = 0
    n_pcs = 0
    tmp = w.team_tmp
    for i in range(P):  # PCs without a team fight alone
        if w.free0[i] and rec.status[g, i] == FREE and w.dest[i] == loc and w.team[i] < 0:
            singles[n_single] = i
            n_single += 1
    for k in range(kp.n_teams):  # the teams present, in team order
        m = 0
        for i in range(P):
            if w.free0[i] and rec.status[g, i] == FREE and w.dest[i] == loc and w.team[i] == k:
                tmp[m] = i
                m += 1
        w.team_size[k] = 0
        if m < 2:
            for q in range(m):
                singles[n_single] = tmp[q]
                n_single += 1
            continue
        if m > kp.team_max:  # R-CAM-52: a random team_max of them form the team, the rest fight alone
            shuffle(u, cur, tmp, 0, m)
            for q in range(kp.team_max, m):
                singles[n_single] = tmp[q]
                n_single += 1
            m = kp.team_max
            sort_prefix(tmp, m)
        w.team_start[k] = n_pcs
        w.team_size[k] = m
        for q in range(m):
            w.team_pcs[n_pcs + q] = tmp[q]
        n_pcs += m
    # order the teams: larger first; each size's teams (in team order) shuffled
    order = w.team_order
    n_t = 0
    for size in range(kp.team_max, 1, -1):
        first = n_t
        for k in range(kp.n_teams):
            if w.team_size[k] == size:
                order[n_t] = k
                n_t += 1
        shuffle(u, cur, order, first, n_t - first)
    pos = 0
    for q in range(n_t):
        k = order[q]
        w.grp_first[n_groups] = pos
        for r in range(w.team_size[k]):
            w.grp_pc[pos] = w.team_pcs[w.team_start[k] + r]
            pos += 1
        n_groups += 1
    # then the single PCs in random order (sorted, then shuffled)
    sort_prefix(singles, n_single)
    shuffle(u, cur, singles, 0, n_single)
    for q in range(n_single):
        w.grp_first[n_groups] = pos
        w.grp_pc[pos] = singles[q]
        pos += 1
        n_groups += 1
    w.grp_first[n_groups] = pos
    return n_groups


@step
def r_cam_7_opponents(kp, w, loc, k):
    """R-CAM-7: the adversaries still at ``loc`` that group k may fight (a boss at most once a turn per
    group), in slot order into ``w.opp``; returns their number."""
    n = 0
    for a in range(kp.A):
        if w.adv_present[a] and w.adv_loc[a] == loc and not (is_boss(kp, a) and w.fought_boss[k, a]):
            w.opp[n] = a
            n += 1
    return n


@step
def r_cam_7_after_confrontation(kp, w, k, a):
    """R-CAM-7 / R-CAM-54: an ordinary adversary leaves, won or lost; a boss stays (a tie too) and is done
    with this group for the turn."""
    if is_boss(kp, a):
        w.fought_boss[k, a] = True
    else:
        w.adv_present[a] = False
        w.adv_at[w.adv_loc[a]] -= 1


@step
def r_cam_8_one_on_one(kp, w, rec, g, t, k, i, n_opp, u, cur):
    """R-CAM-6 / R-CAM-8: a single PC against one of its opponents drawn at random; a win pays the reward,
    a loss or a tie (R-CAM-4) is a capture."""
    a = w.opp[pick(u, cur, n_opp)]
    sa = r_cam_21_adversary_stance(kp, w, a, u, cur)
    sp = w.stance[i]
    pv = pc_value(kp, w, rec, g, i, sp, sa, 0)
    av = adv_value(kp, w, a, sa, sp, 0)
    win = pv > av
    record_duel(kp, rec, g, a, sp, win)
    if win:
        rec.gp[g, i] += kp.adv[ADV_REWARD, a]
    else:
        r_cam_8_capture(kp, rec, g, t, i, r_cam_53_capture_room(kp, a, u, cur))
    r_cam_7_after_confrontation(kp, w, k, a)


@step
def r_cam_9_team_battle(kp, w, rec, g, t, k, n_opp, u, cur):
    """R-CAM-9 / R-CAM-52: the team against every opponent present, each side in random order. The first of
    each side duel; the loser is out and the winner's base in its stance is lowered by the loser's value; a
    tie puts both out; the team loses when its side is empty (a last duel emptying both sides too). Each
    adversary draws its stance once per battle, when it first steps up. Rewards of won duels are shared,
    floored; a losing team is captured whole; every ordinary adversary that took part leaves."""
    lo = w.grp_first[k]
    m = w.grp_first[k + 1] - lo
    for q in range(m):
        w.side_pc[q] = w.grp_pc[lo + q]
        w.red_pc[q] = 0
    shuffle(u, cur, w.side_pc, 0, m)
    for q in range(n_opp):
        w.side_adv[q] = w.opp[q]
        w.red_adv[q] = 0
        w.adv_st[q] = -1
    shuffle(u, cur, w.side_adv, 0, n_opp)
    ip = 0
    ja = 0
    reward = 0
    while ip < m and ja < n_opp:
        i = w.side_pc[ip]
        a = w.side_adv[ja]
        if w.adv_st[ja] < 0:
            w.adv_st[ja] = r_cam_21_adversary_stance(kp, w, a, u, cur)
        sa = w.adv_st[ja]
        sp = w.stance[i]
        pv = pc_value(kp, w, rec, g, i, sp, sa, w.red_pc[ip])
        av = adv_value(kp, w, a, sa, sp, w.red_adv[ja])
        record_duel(kp, rec, g, a, sp, pv > av)
        if pv > av:
            w.red_pc[ip] += max(av, 0)
            reward += kp.adv[ADV_REWARD, a]
            ja += 1
        elif av > pv:
            w.red_adv[ja] += max(pv, 0)
            w.out_by[ip] = a
            ip += 1
        else:
            w.out_by[ip] = a
            ip += 1
            ja += 1
    share = reward // m
    for q in range(m):
        rec.gp[g, w.side_pc[q]] += share
    if ip >= m:  # the team's side is empty: every member is captured
        for q in range(m):
            r_cam_8_capture(kp, rec, g, t, w.side_pc[q], r_cam_53_capture_room(kp, w.out_by[q], u, cur))
    for q in range(n_opp):
        r_cam_7_after_confrontation(kp, w, k, w.side_adv[q])


@step
def r_cam_6_confrontations(kp, w, rec, g, t, loc, u, cur):
    """R-CAM-6: walk the rotation round and round; at each step the next group still free with an opponent
    left fights, until no adversary or no free PC is left (so a group fights twice in a row only when it is
    the only one that can). ``fights = "once"``: one walk, each group at most once."""
    if (w.adv_at[loc] == 0) | (w.pcs_at[loc] == 0):
        return  # no adversary here, or no PC (all PCs there are still free: only this step captures them)
    n = r_cam_6_rotation(kp, w, rec, g, loc, u, cur)
    for k in range(n):
        for a in range(kp.A):
            w.fought_boss[k, a] = False
    nxt = 0
    while True:
        chosen = -1
        n_opp = 0
        for step in range(n):
            k = (nxt + step) % n
            if not kp.until_cleared and k < nxt:
                break  # "once": no second walk
            free = True
            for q in range(w.grp_first[k], w.grp_first[k + 1]):
                if rec.status[g, w.grp_pc[q]] != FREE:
                    free = False
            if not free:
                continue
            n_opp = r_cam_7_opponents(kp, w, loc, k)
            if n_opp > 0:
                chosen = k
                break
        if chosen < 0:
            return
        if w.grp_first[chosen + 1] - w.grp_first[chosen] >= 2:
            r_cam_9_team_battle(kp, w, rec, g, t, chosen, n_opp, u, cur)
        else:
            r_cam_8_one_on_one(kp, w, rec, g, t, chosen, w.grp_pc[w.grp_first[chosen]], n_opp, u, cur)
        nxt = chosen + 1
        if not kp.until_cleared and nxt >= n:
            return


# ------------------------------------------------------------------ exits, nursing, escape checks
@step
def r_cam_26_exits(kp, w, rec, g, t):
    """R-CAM-26 / R-CAM-58: a free PC at an open exit after its confrontations leaves, cleared."""
    for i in range(kp.P):
        d = w.dest[i]
        if w.free0[i] and rec.status[g, i] == FREE and kp.loc[LOC_IS_EXIT, d] and t >= kp.loc[LOC_OPENS_ON, d]:
            rec.status[g, i] = CLEARED
            rec.end_turn[g, i] = t


@step
def r_cam_30_nursing(kp, w, rec, g, u, cur):
    """R-CAM-30 / R-CAM-55: a free nurse gives +1 vitality (up to its starting value) to the other free PC at
    its location with the lowest vitality, one at random among ties."""
    tied = w.tmp
    for i in range(kp.P):
        if not (w.nurse[i] and rec.status[g, i] == FREE):
            continue
        low = 1 << 62
        m = 0
        d = w.dest[i]
        for j in range(kp.P):  # free now means free at the start of the turn: only step 6 frees captives
            if (j != i) & (rec.status[g, j] == FREE) & (w.dest[j] == d):
                v = rec.vit[g, j]
                if v < low:
                    low = v
                    m = 0
                if v == low:
                    tied[m] = j
                    m += 1
        if m == 0:
            continue
        j = tied[pick(u, cur, m)]
        if rec.vit[g, j] < kp.pc[PC_VIT, j]:
            rec.vit[g, j] += 1


@step
def r_cam_11_escape_checks(kp, w, rec, g, t, u, cur):
    """R-CAM-11..14, R-CAM-53: captives taken before this turn check against t + offset; each rescuer (a free
    PC whose destination is a capture room) supports the captive it named, else one at random (minus its
    exclusions; none left: its support fails); success when the target <= min(captive) + the rescuers' mins."""
    P = kp.P
    for i in range(P):
        w.sup_of[i] = -1
        w.failed[i] = False
    cand = w.tmp
    for i in range(P):
        d = w.dest[i]
        if not (w.free0[i] and rec.status[g, i] == FREE and kp.loc[LOC_IS_ROOM, d]):
            continue
        n_in = 0
        m = 0
        named_in = False
        for j in range(P):
            if rec.status[g, j] == CAPTURED and rec.cap_turn[g, j] < t and rec.room[g, j] == d:
                n_in += 1
                if j == w.named[i]:
                    named_in = True
                if not kp.pc[PC_EXCL + i, j]:
                    cand[m] = j
                    m += 1
        if n_in == 0:
            continue  # nobody checks here: the rescuer does nothing
        rec.rescues_tried[g] += 1
        if named_in:
            w.sup_of[i] = w.named[i]
        elif m == 0:
            w.failed[i] = True  # R-CAM-12: exclusions leave no one
        else:
            w.sup_of[i] = cand[pick(u, cur, m)]
    # R-CAM-13: every check is decided on the abilities before any result of this step
    ok = w.team_tmp
    for j in range(P):
        ok[j] = 0
        if rec.status[g, j] == CAPTURED and rec.cap_turn[g, j] < t:
            total = min3(rec, g, j)
            for i in range(P):
                if w.sup_of[i] == j:
                    total += min3(rec, g, i)
            ok[j] = 1 if t + kp.loc[LOC_ROOM_OFFSET, rec.room[g, j]] <= total else 2
    for j in range(P):
        if ok[j] == 0:
            continue
        rec.checks_t[g, t - 1] += 1
        if ok[j] == 1:
            rec.escapes_t[g, t - 1] += 1
            rec.status[g, j] = FREE
            for i in range(P):
                if w.sup_of[i] == j:
                    rec.gp[g, i] += t // 2 + 1
                    rec.rescues_won[g] += 1
        else:  # R-CAM-14
            rec.vit[g, j] -= 1
            for i in range(P):
                if w.sup_of[i] == j:
                    r_cam_8_capture(kp, rec, g, t, i, rec.room[g, j])
    for i in range(P):
        if w.failed[i]:
            r_cam_8_capture(kp, rec, g, t, i, w.dest[i])


# ------------------------------------------------------------------ the turn and the game
@step
def r_cam_51_early_ears(kp, w, rec, g):
    """R-CAM-51: early ears count while their holder is in the game (free or captured). (A step of its own so
    that ``ears`` is never the constant False: numba would compile every step it is passed to twice.)"""
    ears = False
    for i in range(kp.P):
        st = rec.status[g, i]
        ears |= ((st == FREE) | (st == CAPTURED)) & w.ears[i]
    return ears


# inlined by numba (not LLVM) into the entry point, its one caller: compiled separately it would be optimised and
# turned into machine code whole (every step inlined) once more, a tenth of the cold compile time
@nb.njit(inline="always", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def r_cam_5_turn(kp, w, rec, g, t, u, cur):
    """R-CAM-5: one turn of game g (steps 1-8)."""
    P = kp.P
    n_free = 0
    alive = False
    for i in range(P):  # branch-free: the statuses are unpredictable
        st = rec.status[g, i]
        free = st == FREE
        w.free0[i] = free
        w.dest[i] = -1
        w.named[i] = -1
        n_free += free
        alive |= free | (st == CAPTURED)
    rec.free_t[g, t - 1] = n_free
    if kp.B > 0:  # R-CAM-9a: the skills this game's PCs bought
        r_cam_9a_terms(kp, w, rec, g)
    ears = r_cam_51_early_ears(kp, w, rec, g)
    if alive:
        r_cam_20_place_adversaries(kp, w, rec, g, t, u, cur)  # 1. preview
        n_opt = r_cam_50_options(kp, w, u, cur)
        if kp.rescue:  # 2. declaration
            r_cam_40_rescue(kp, w, rec, g, t)
        r_cam_40_move(kp, w, rec, g, n_opt, ears, u, cur)
        r_cam_40_growth(kp, w, rec, g, t)  # 3. growth spending (R-CAM-9a purchases first)
        r_cam_40_stances(kp, w, rec, g, t, ears, u, cur)
        r_cam_25_missions(kp, w, rec, g, t, ears, u, cur)  # 4. missions, then confrontations
        for loc in range(kp.L):
            r_cam_6_confrontations(kp, w, rec, g, t, loc, u, cur)
        r_cam_26_exits(kp, w, rec, g, t)
        r_cam_30_nursing(kp, w, rec, g, u, cur)  # 5.
        r_cam_11_escape_checks(kp, w, rec, g, t, u, cur)  # 6.
        for i in range(P):
            st = rec.status[g, i]
            in_game = (st == FREE) | (st == CAPTURED)
            rec.gp[g, i] += in_game * (1 + w.gpt[i])  # 7. R-CAM-58 growth points (branch-free)
            if in_game & (rec.vit[g, i] <= 0):  # 8. R-CAM-15 game over
                rec.status[g, i] = GAME_OVER
                rec.end_turn[g, i] = t
    for i in range(P):
        rec.status_by_turn[g, t - 1, i] = rec.status[g, i]


@step
def new_game(kp, rec, g):
    """Game g's starting state (R-CAM-1): base abilities, vitality, gp 0, free; its record cleared."""
    for i in range(kp.P):
        for s in range(3):
            rec.base[g, i, s] = kp.pc[PC_BASE + s, i]
        rec.vit[g, i] = kp.pc[PC_VIT, i]
        rec.gp[g, i] = 0
        rec.status[g, i] = FREE
        rec.room[g, i] = -1
        rec.cap_turn[g, i] = 0
        rec.end_turn[g, i] = 0
    rec.status_by_turn[g] = 0
    for a in (rec.captures_t, rec.checks_t, rec.escapes_t, rec.free_t, rec.duels_tmpl, rec.wins_tmpl,
              rec.duels_stance, rec.wins_stance):
        a[g] = 0
    rec.rescues_tried[g] = 0
    rec.rescues_won[g] = 0
    rec.bought[g] = 0


@nb.njit(cache=True, _nrt=False, nogil=True)  # the one compiled entry point; threads may run it at once
def play_games(kp, w, rec, u, cur, g0, g1, t0, t1, whole):
    """Games g0..g1-1 in run order from the stream ``u`` at ``cur[0]``, turns t0..t1; ``whole``: each game
    from its start to its end (the engine), else turns of a state the caller set (tests). Returns the first
    game not played (g1, or one that ran past the end of the stream; ``cur[0]`` is then its first draw)."""
    for g in range(g0, g1):
        start = cur[0]
        if whole:
            new_game(kp, rec, g)
        for t in range(t0, t1 + 1):
            r_cam_5_turn(kp, w, rec, g, t, u, cur)
        if cur[1]:
            if not whole:
                return g
            cur[0] = start
            cur[1] = 0
            return g
        if whole:
            for i in range(kp.P):  # after turn T a PC still free has cleared (R-CAM-5)
                if rec.status[g, i] == FREE:
                    rec.status[g, i] = CLEARED
                    rec.end_turn[g, i] = kp.T
    return g1


def run_kernel(p: Params, n: int, rng: np.random.Generator, block: int = 1 << 16) -> dict[str, np.ndarray]:
    """n games of one chunk, drawing from ``rng``'s stream of doubles in run order (R-GEN-7). The stream is read
    through a buffer of ``block`` doubles (small enough to stay in cache), refilled from ``rng`` as the games
    use it: the game that ran past its end keeps its draws and is played again from its first one, and a game
    that needs more than the whole buffer doubles it (any block size gives the same games)."""
    kp, w, rec = kernel_params(p), new_work(p), new_record(p, n)
    u = rng.random(max(int(block), 1))
    cur = np.zeros(2, np.int64)
    g = 0
    while True:
        g = play_games(kp, w, rec, u, cur, g, n, 1, p.T, True)
        if g >= n:
            break
        start = int(cur[0])  # the unfinished game's first draw
        if start == 0:
            u = np.concatenate([u, rng.random(u.shape[0])])
        else:
            keep = u.shape[0] - start
            u[:keep] = u[start:]
            rng.random(out=u[keep:])
        cur[0] = 0
    return record_arrays(rec)


def record_arrays(rec: Record) -> dict[str, np.ndarray]:
    """The per-game record under the keys of :mod:`sim.campus.columns` (the reference's ``games_to_arrays``)."""
    return columns_from_record(rec)


def play_turn(p: Params, rec: Record, g: int, t: int, u) -> int:
    """Turn t of game g of ``rec`` (a state set by the caller) from the uniforms ``u``; returns how many it
    drew (tests compare one turn with the reference's)."""
    cur = np.zeros(2, np.int64)
    play_games(kernel_params(p), new_work(p), rec, np.asarray(u, np.float64), cur, g, g + 1, t, t, False)
    if cur[1]:
        raise ValueError("the kernel drew more uniforms than the reference")
    return int(cur[0])
