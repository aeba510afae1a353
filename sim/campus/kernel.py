"""Batch campus engine: numba-compiled (``cache=True``), one game at a time over a batch of games (issue 11).

The batch axis is outermost: :func:`play_games` plays games ``g0, g0 + 1, ...`` of a chunk in run order, each
through its turns (R-CAM-5), every step one compiled function named after its rule. Every game draws only
what it uses from the chunk's uniform stream, in the order the steps need it (the conventions of
:mod:`sim.campus.params`), so the scalar reference (:mod:`sim.campus.reference`) reading the same doubles in
the same order plays the same games. A game is played on the state fields of one flat scratch table reused by
every game (:func:`new_work`) and stored into the per-game record (numpy arrays with the batch axis first,
:func:`new_record`) when it ends, so nothing is allocated per game. The scenario's terms are a few tables too
(:func:`kernel_params`): a field of a flat table is NC cells at an offset the compiler knows, so a step takes a
few arrays (issue 27: the eighty separate arrays before cost a spill per access and a dozen scalars each per
compiled call, most of the cold compile).

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
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from sim.campus.columns import RUN_STATS, allocate, columns_from_record
from sim.campus.model import MAX_PARTY
from sim.campus.params import CAPTURED, CLEARED, FREE, GAME_OVER, Params
from sim.campus.stances import equilibrium_thresholds

GROWTH = {"none": 0, "lowest": 1, "best": 2}

def _first_rows(*heights: int) -> tuple[int, ...]:
    """The first row of each field of a packed table (fields of these heights, in order), then the row after the
    last (where a field of a size known only per scenario starts)."""
    return tuple(int(x) for x in np.cumsum((0, *heights)))


# The flat tables (issue 27): a field is a row of NC cells indexed by location, PC, adversary slot, skill or buy-list
# item, so that a cell is ``t[FIELD + i]`` (a field of several rows: ``t[FIELD + r * NC + i]``) at an offset the
# compiler knows. NC exceeds every count a scenario may have (the limits of sim.campus.model: 200 locations, 200
# spawn slots plus a miso slot per PC of 32, 51 buy-list items; teams); 264 cells are an odd number of 64-byte
# cache lines, which spreads the rows' first cells over the cache's sets.
NC = 264


def _fields(first: int, *heights: int) -> tuple[int, ...]:
    """The flat offset of each field of a table from offset ``first`` (fields of these heights in rows, in order),
    then the offset after the last."""
    return tuple(first + r * NC for r in _first_rows(*heights))


# The scenario's terms (kp.t, int64; bools 0 / 1): a compiled step takes a few arrays rather than eighty (every
# array a compiled call passes is a dozen scalars).
# R-CAM-11, R-CAM-26, R-CAM-50, R-CAM-53 by location (ROOMS, PLAIN: the first n_rooms / n_plain cells list them)
LOC_IS_ROOM, LOC_IS_EXIT, LOC_OPENS_ON, LOC_ROOM_OFFSET, LOC_ROOMS, LOC_PLAIN, _PC = _fields(0, 1, 1, 1, 1, 1, 1)
# R-CAM-1, R-CAM-30 by PC (NUM, DEN: row 2 x stance + [no advantage, advantage])
PC_BASE, PC_BONUS, PC_NUM, PC_DEN, PC_VIT, PC_TEAM, PC_EARS, PC_NURSE, PC_GPT, _ADV = _fields(
    _PC, 3, 3, 6, 6, 1, 1, 1, 1, 1)
# R-CAM-20, R-CAM-21, R-CAM-53, R-CAM-54 by adversary slot
(ADV_TEMPLATE, ADV_BOSS, ADV_REWARD, ADV_ROOM, ADV_BASE, ADV_BONUS, ADV_NUM, ADV_DEN, ADV_WNUM, ADV_FIRST, ADV_LAST,
 ADV_N_CANDS, ADV_FIXED_STANCE, _SK) = _fields(_ADV, 1, 1, 1, 1, 3, 3, 6, 6, 3, 1, 1, 1, 1)
# the skills a buy list can buy (R-CAM-9a), by skill; the buy list (a skill or a team, the other -1), by item;
# then PC_EXCL + i * NC: PC i's exclusions (R-CAM-12), by PC
SK_COST, SK_BONUS, SK_NUM, SK_DEN, SK_EARS, SK_NURSE, SK_GPT, _BUY = _fields(_SK, 1, 3, 6, 6, 1, 1, 1)
BUY_SKILL, BUY_TEAM, PC_EXCL = _fields(_BUY, 1, 1)
# kp.cand: a row per adversary slot, its candidate locations (R-CAM-20)
# kp.prob (float64): an adversary slot's stance thresholds and spawn chance (R-CAM-20, R-CAM-21), a mission's chance
PROB_ADV_C1, PROB_ADV_C2, PROB_ADV_CHANCE, PROB_MIS_CHANCE, PROB_ROWS = _first_rows(1, 1, 1, 1)
# kp.mis: R-CAM-25, R-CAM-25a, R-CAM-56, a column per mission
(MIS_LOC, MIS_FIRST, MIS_LAST, MIS_STANCE, MIS_EACH, MIS_TARGET, MIS_REWARD, MIS_PEN_VIT, MIS_PEN_ABILITY,
 MIS_PEN_AMOUNT, MIS_FOUND, MIS_ROWS) = _first_rows(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
# kp.eq: a column per turn: how many spawn slots the equilibrium policy falls back to, then the slots (issue 7)
EQ_N, EQ_SLOTS = _first_rows(1)

KParams = namedtuple("KParams", [
    "P", "L", "T", "S", "A", "team_max", "n_teams", "miso", "k_options", "until_cleared", "move_avoid",
    "stance_policy", "stance_value", "growth", "rescue", "unit_den", "weight_den", "M", "B", "team_cost",
    "miso_in_missions", "save_for_buy", "n_rooms", "n_plain", "g_tmpl", "g_bought",
    "t", "cand", "prob", "mis", "eq", "stance_allowed",
])

# The scratch of a game-turn and the state of the game being played (new_work): one flat int64 table of fields
# (bools 0 / 1) as above, indexed by PC, adversary slot or location (or group, team, slot of a list), reused by
# every game of a call.
_W_ROWS = _first_rows(*[1] * 22, 3, 6, 6, *[1] * 7, 3, 3, 6, 6, *[1] * 7, *[1] * 6, 3, *[1] * 5)
# by PC (or by group / team / list position):
(W_DEST, W_NAMED, W_STANCE, W_FREE0, W_COVER, W_GRP_PC, W_GRP_FIRST, W_HERE, W_SIDE_PC, W_RED_PC, W_OUT_BY, W_SUP_OF,
 W_FAILED, W_TEAM_TMP, W_TEAM_PCS, W_TEAM_START, W_TEAM_SIZE, W_TEAM_ORDER,
 # the PCs' skill terms (R-CAM-30, R-CAM-9a; as in kp.pc)
 W_EARS, W_NURSE, W_GPT, W_TEAM, W_BONUS, W_NUM, W_DEN,
 # by adversary slot: the adversaries present, their opponents and duels, their terms (a miso bomb's: when placed)
 W_ADV_PRESENT, W_ADV_LOC, W_OPP, W_SIDE_ADV, W_RED_ADV, W_ADV_ST, W_CODES, W_A_BASE, W_A_BONUS, W_A_NUM, W_A_DEN,
 # by location; then a list scratch, the equilibrium's and counter's three stance sums
 W_OPT, W_OPT_LIST, W_ADV_AT, W_PCS_AT, W_TMP, W_PREFER, W_SCORE,
 # the game's state and counts (R-CAM-41; stored into its record when it ends): by PC; RESCUES_*: cell 0; by stance
 G_STATUS, G_VIT, G_GP, G_ROOM, G_CAP_TURN, G_END_TURN, G_BASE, G_RESCUES_TRIED, G_RESCUES_WON, G_DUELS_STANCE,
 G_WINS_STANCE,
 # the stream cursor handed to the equilibrium solver (r_cam_40_stances)
 W_CUR,
 # FOUGHT + k * NC: the bosses group k fought this turn (R-CAM-54), a row per group (at most a group per PC)
 W_FOUGHT) = (r * NC for r in _W_ROWS)
# then the counts by turn t (+ 4 * (t - 1)), from kp.g_tmpl those by adversary template (duels, wins), from
# kp.g_bought the turn each PC bought each buy-list item (+ i * B + b; 0: not yet, R-CAM-9a)
G_CAPTURES_T, G_CHECKS_T, G_ESCAPES_T, G_FREE_T = (W_FOUGHT + MAX_PARTY * NC + k for k in range(4))

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


def _put(t: np.ndarray, fields) -> None:
    """Into the flat table ``t``: each (field's offset, per-cell values of shape (n, ...)), each cell's values in C
    order down the field's rows."""
    for first, x in fields:
        x = np.asarray(x, np.int64)
        n = x.shape[0]
        h = x.size // n if n else 0
        t[first:first + h * NC].reshape(h, NC)[:, :n] = x.reshape(n, h).T


def kernel_params(p: Params) -> KParams:
    """The compiled scenario: plain scalars, the flat table ``t`` and the packed tables (C-contiguous int64,
    ``prob`` float64)."""
    P, L, A, M = p.P, p.L, p.A, p.M
    if max(L, A, p.B, p.K, len(p.team_names)) >= NC or P > MAX_PARTY:
        raise ValueError(f"the campus engine's tables hold {NC - 1} locations, slots, items and teams")
    eq_n = np.array([len(x) for x in p.eq_fallback_slots], np.int64)
    eq_slots = np.zeros((p.T, max(1, int(eq_n.max()) if len(eq_n) else 1)), np.int64)
    for t, x in enumerate(p.eq_fallback_slots):
        eq_slots[t, : len(x)] = x
    t = np.zeros(PC_EXCL + MAX_PARTY * NC, np.int64)
    _put(t, [(LOC_IS_ROOM, p.is_room), (LOC_IS_EXIT, p.is_exit), (LOC_OPENS_ON, p.opens_on),
             (LOC_ROOM_OFFSET, p.room_offset), (LOC_ROOMS, p.rooms), (LOC_PLAIN, p.plain),
             (PC_BASE, p.pc_base), (PC_BONUS, p.pc_bonus), (PC_NUM, p.pc_num), (PC_DEN, p.pc_den),
             (PC_VIT, p.pc_vit), (PC_TEAM, p.pc_team), (PC_EARS, p.pc_ears), (PC_NURSE, p.pc_nurse), (PC_GPT, p.pc_gpt),
             (PC_EXCL, np.transpose(p.pc_excl)),
             (ADV_TEMPLATE, p.adv_template), (ADV_BOSS, p.adv_boss), (ADV_REWARD, p.adv_reward), (ADV_ROOM, p.adv_room),
             (ADV_BASE, p.adv_base), (ADV_BONUS, p.adv_bonus), (ADV_NUM, p.adv_num), (ADV_DEN, p.adv_den),
             (ADV_WNUM, p.adv_wnum), (ADV_FIRST, p.adv_first), (ADV_LAST, p.adv_last), (ADV_N_CANDS, p.adv_n_cands),
             (ADV_FIXED_STANCE, p.adv_fixed_stance),
             (SK_COST, p.sk_cost), (SK_BONUS, p.sk_bonus), (SK_NUM, p.sk_num), (SK_DEN, p.sk_den),
             (SK_EARS, p.sk_ears), (SK_NURSE, p.sk_nurse), (SK_GPT, p.sk_gpt),
             (BUY_SKILL, p.buy_skill), (BUY_TEAM, p.buy_team)])
    prob = np.zeros((PROB_ROWS, max(A, M, 1)), np.float64)
    prob[PROB_ADV_C1, :A], prob[PROB_ADV_C2, :A], prob[PROB_ADV_CHANCE, :A] = p.adv_c1, p.adv_c2, p.adv_chance
    prob[PROB_MIS_CHANCE, :M] = p.mis_chance
    mis = _pack(MIS_ROWS, M, [
        (MIS_LOC, p.mis_loc), (MIS_FIRST, p.mis_first), (MIS_LAST, p.mis_last), (MIS_STANCE, p.mis_stance),
        (MIS_EACH, p.mis_each), (MIS_TARGET, p.mis_target), (MIS_REWARD, p.mis_reward), (MIS_PEN_VIT, p.mis_pen_vit),
        (MIS_PEN_ABILITY, p.mis_pen_ability), (MIS_PEN_AMOUNT, p.mis_pen_amount), (MIS_FOUND, p.mis_found)])
    return KParams(
        P=int(P), L=int(L), T=int(p.T), S=int(p.S), A=int(A), team_max=int(p.team_max),
        n_teams=len(p.team_names), miso=bool(p.miso), k_options=int(p.k_options),
        until_cleared=bool(p.until_cleared), move_avoid=bool(p.move_avoid), stance_policy=int(p.stance_policy),
        stance_value=int(p.stance_value), growth=GROWTH[p.growth], rescue=bool(p.rescue), unit_den=bool(p.unit_den),
        weight_den=int(p.weight_den), M=int(M), B=int(p.B), team_cost=int(p.team_cost),
        miso_in_missions=bool(p.miso_in_missions), save_for_buy=bool(p.save_for_buy), n_rooms=len(p.rooms),
        n_plain=len(p.plain), g_tmpl=G_CAPTURES_T + 4 * p.T,
        g_bought=G_CAPTURES_T + 4 * p.T + 2 * len(p.template_names), t=t,
        cand=np.ascontiguousarray(p.adv_cand_table, np.int64).reshape(A, L), prob=prob, mis=mis,
        eq=_pack(EQ_SLOTS + eq_slots.shape[1], p.T, [(EQ_N, eq_n), (EQ_SLOTS, eq_slots)]),
        stance_allowed=int(p.stance_allowed),
    )


def new_work(p: Params) -> np.ndarray:
    """Scratch for one game-turn (the ``W_`` fields) and the state of the game being played (the ``G_`` fields),
    reused by every game of a call. ``W_A_BASE`` holds the abilities of the adversaries present: a spawn slot's
    never change, so they are set here once; a miso bomb's are set when it is placed. ``W_EARS`` .. ``W_DEN`` are
    the PCs' skill terms (R-CAM-30): their own skills, set here once; with a buy list they are set again from the
    game's purchases every turn (R-CAM-9a). ``W_A_BONUS``, ``W_A_NUM``, ``W_A_DEN`` are the adversaries' (a miso
    bomb's: set when it is placed)."""
    P, S = p.P, p.S
    tail = 4 * p.T + 2 * len(p.template_names) + P * p.B  # by turn, by template, bought
    w = np.zeros(G_CAPTURES_T + tail, np.int64)
    w[W_A_NUM:W_A_DEN + 6 * NC] = 1
    _put(w, [(W_EARS, p.pc_ears), (W_NURSE, p.pc_nurse), (W_GPT, p.pc_gpt), (W_TEAM, p.pc_team),
             (W_BONUS, p.pc_bonus), (W_NUM, p.pc_num), (W_DEN, p.pc_den), (W_A_BASE, p.adv_base[:S]),
             (W_A_BONUS, p.adv_bonus), (W_A_NUM, p.adv_num), (W_A_DEN, p.adv_den)])
    return w


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
def pc_value(kp, w, i, s, s2, red):
    """PC i's value in stance s against stance s2 (R-CAM-2: the stance that beats the other doubles)."""
    adv = 1 if s == (s2 + 1) % 3 else 0
    return r_cam_3_value(w[G_BASE + s * NC + i], red, w[W_BONUS + s * NC + i], w[W_NUM + (2 * s + adv) * NC + i],
                         w[W_DEN + (2 * s + adv) * NC + i], kp.unit_den)


@step
def adv_value(kp, w, a, s, s2, red):
    adv = 1 if s == (s2 + 1) % 3 else 0
    return r_cam_3_value(w[W_A_BASE + s * NC + a], red, w[W_A_BONUS + s * NC + a], w[W_A_NUM + (2 * s + adv) * NC + a],
                         w[W_A_DEN + (2 * s + adv) * NC + a], kp.unit_den)


@step
def plain_value(kp, w, base, i, s):
    """A value without an opponent (``best``, missions) from base ``base`` in stance s: no stance advantage
    (R-CAM-30, R-CAM-56)."""
    return r_cam_3_value(base, 0, w[W_BONUS + s * NC + i], w[W_NUM + 2 * s * NC + i], w[W_DEN + 2 * s * NC + i],
                         kp.unit_den)


@step
def pc_bases(w, i):
    """PC i's base abilities (fight, flee, hide) in the game, as a tuple."""
    return w[G_BASE + i], w[G_BASE + NC + i], w[G_BASE + 2 * NC + i]


@step
def adv_bases(w, a):
    """Adversary a's base abilities (fight, flee, hide), as a tuple."""
    return w[W_A_BASE + a], w[W_A_BASE + NC + a], w[W_A_BASE + 2 * NC + a]


@step
def r_cam_40_best_stance(kp, w, bases, i):
    """R-CAM-40 ``best``: the highest own value before the stance advantage; ties fight, flee, hide."""
    best = 0
    v0 = 0
    for s in range(3):  # a loop, not a call with a constant stance: numba compiles once per literal argument
        v = plain_value(kp, w, bases[s], i, s)
        if s == 0 or v > v0:
            best, v0 = s, v
    return best


@step
def r_cam_40_best_allowed(kp, w, bases, i):
    """``best`` over the stances PC i may declare (policy.forbid, issue 36): the highest own value among them;
    ties fight, flee, hide. All three allowed: :func:`r_cam_40_best_stance`."""
    best = -1
    v0 = 0
    for s in range(3):
        if not (kp.stance_allowed >> s) & 1:
            continue
        v = plain_value(kp, w, bases[s], i, s)
        if best < 0 or v > v0:
            best, v0 = s, v
    return best


@step
def r_cam_40_allowed_pick(kp, u, cur):
    """Stance policy ``random`` with stances forbidden: one draw (as with all three), uniform among the allowed."""
    m = 0
    for s in range(3):
        m += (kp.stance_allowed >> s) & 1
    k = int(draw(u, cur) * m)
    if k >= m:
        k = m - 1
    for s in range(3):
        if (kp.stance_allowed >> s) & 1:
            if k == 0:
                return s
            k -= 1
    return 0


@step
def is_boss(kp, a):
    return a < kp.S and kp.t[ADV_BOSS + a] != 0


@step
def r_cam_21_adversary_stance(kp, w, a, u, cur):
    """R-CAM-21: drawn from the weights for each confrontation (no draw when one stance has all the weight);
    R-CAM-57: a miso bomb uses the scenario's stance policy (best and counter: its own best)."""
    if a >= kp.S:
        if kp.stance_policy == 0:
            return kp.stance_value
        if kp.stance_policy == 1:
            return pick(u, cur, 3)
        return r_cam_40_best_stance(kp, w, adv_bases(w, a), a - kp.S)
    if kp.t[ADV_FIXED_STANCE + a] >= 0:
        return kp.t[ADV_FIXED_STANCE + a]
    x = draw(u, cur)
    return (1 if x >= kp.prob[PROB_ADV_C1, a] else 0) + (1 if x >= kp.prob[PROB_ADV_C2, a] else 0)


@step
def r_cam_8_capture(kp, w, t, i, room):
    """R-CAM-8 / R-CAM-14: vitality -1, captured (moved to the room at the end of the turn)."""
    w[G_STATUS + i] = CAPTURED
    w[G_VIT + i] -= 1
    w[G_ROOM + i] = room
    w[G_CAP_TURN + i] = t
    w[G_CAPTURES_T + 4 * (t - 1)] += 1


@step
def r_cam_53_capture_room(kp, a, u, cur):
    """R-CAM-8 / R-CAM-53: the adversary's room, else the only room, else one at random."""
    if a < kp.S and kp.t[ADV_ROOM + a] >= 0:
        return kp.t[ADV_ROOM + a]
    return kp.t[LOC_ROOMS + pick(u, cur, kp.n_rooms)]


@step
def record_duel(kp, w, a, pc_stance, win):
    tm = kp.t[ADV_TEMPLATE + a]
    w[kp.g_tmpl + 2 * tm] += 1
    w[G_DUELS_STANCE + pc_stance] += 1
    if win:
        w[kp.g_tmpl + 2 * tm + 1] += 1
        w[G_WINS_STANCE + pc_stance] += 1


# ------------------------------------------------------------------ 1. preview
@step
def r_cam_20_place_adversaries(kp, w, t, u, cur):
    """R-CAM-20 / R-CAM-50: each spawn slot of this turn placed with its chance at a uniform candidate;
    R-CAM-15 / R-CAM-57: a miso bomb per game-over PC at a location that is no capture room. ``w[W_ADV_AT]``
    counts the adversaries present at each location."""
    for loc in range(kp.L):
        w[W_ADV_AT + loc] = 0
    for a in range(kp.S):
        w[W_ADV_PRESENT + a] = False
        if kp.t[ADV_FIRST + a] <= t <= kp.t[ADV_LAST + a] and chance(u, cur, kp.prob[PROB_ADV_CHANCE, a]):
            w[W_ADV_PRESENT + a] = True
            loc = kp.cand[a, pick(u, cur, kp.t[ADV_N_CANDS + a])]
            w[W_ADV_LOC + a] = loc
            w[W_ADV_AT + loc] += 1  # its abilities are in w (W_A_BASE) from new_work on
    if kp.miso:
        for i in range(kp.P):
            a = kp.S + i
            w[W_ADV_PRESENT + a] = False
            if w[G_STATUS + i] == GAME_OVER:
                w[W_ADV_PRESENT + a] = True
                loc = kp.t[LOC_PLAIN + pick(u, cur, kp.n_plain)]
                w[W_ADV_LOC + a] = loc
                w[W_ADV_AT + loc] += 1
                for s in range(3):  # R-CAM-57: its final abilities and skills (bought ones too, R-CAM-9a)
                    w[W_A_BASE + s * NC + a] = w[G_BASE + s * NC + i]
                    w[W_A_BONUS + s * NC + a] = w[W_BONUS + s * NC + i]
                    for c in range(2):
                        w[W_A_NUM + (2 * s + c) * NC + a] = w[W_NUM + (2 * s + c) * NC + i]
                        w[W_A_DEN + (2 * s + c) * NC + a] = w[W_DEN + (2 * s + c) * NC + i]


@step
def r_cam_50_options(kp, w, u, cur):
    """R-CAM-50: `options = k` is a uniform k-subset (the first k of a partial shuffle), once for the party.
    Returns the number of options; ``w[W_OPT_LIST]`` holds them in location order."""
    L = kp.L
    if kp.k_options >= L:
        for loc in range(L):
            w[W_OPT + loc] = True
            w[W_OPT_LIST + loc] = loc
        return L
    order = w[W_TMP:W_TMP + NC]
    for loc in range(L):
        order[loc] = loc
        w[W_OPT + loc] = False
    for j in range(kp.k_options):
        k = j + pick(u, cur, L - j)
        x = order[j]
        order[j] = order[k]
        order[k] = x
    for j in range(kp.k_options):
        w[W_OPT + order[j]] = True
    n = 0
    for loc in range(L):  # branch-free: the draws make the options unpredictable
        w[W_OPT_LIST + n] = loc
        n += w[W_OPT + loc]
    return n


# ------------------------------------------------------------------ 2-3. declaration and growth
@step
def min3(w, i):
    return min(w[G_BASE + i], min(w[G_BASE + NC + i], w[G_BASE + 2 * NC + i]))


@step
def r_cam_40_rescue(kp, w, t):
    """R-CAM-40 ``rescue = true``: free PCs in party order take the first captive (party order, held before
    this turn, room among the options) not yet covered whose check their own min completes."""
    P = kp.P
    for j in range(P):
        w[W_COVER + j] = min3(w, j)
    for i in range(P):
        if not w[W_FREE0 + i]:
            continue
        own = min3(w, i)  # before this turn's growth
        for j in range(P):
            if w[G_STATUS + j] != CAPTURED or not w[W_OPT + w[G_ROOM + j]] or kp.t[PC_EXCL + i * NC + j]:
                continue
            target = t + kp.t[LOC_ROOM_OFFSET + w[G_ROOM + j]]
            if w[W_COVER + j] < target and w[W_COVER + j] + own >= target:
                w[W_DEST + i] = w[G_ROOM + j]
                w[W_NAMED + i] = j
                w[W_COVER + j] += own
                break


@step
def r_cam_40_move(kp, w, n_opt, ears, u, cur):
    """R-CAM-40 move ``random`` (uniform among the options) or ``avoid`` (with early ears: options with no
    adversary and no capture room; without: options that are no capture room; none: all options)."""
    choices = w[W_TMP:W_TMP + NC]
    m = 0
    if kp.move_avoid:
        for q in range(n_opt):  # branch-free: which options qualify is unpredictable
            loc = w[W_OPT_LIST + q]
            choices[m] = loc
            m += (not kp.t[LOC_IS_ROOM + loc]) & (not (ears and w[W_ADV_AT + loc] > 0))
    if m == 0:
        for q in range(n_opt):
            choices[q] = w[W_OPT_LIST + q]
        m = n_opt
    for i in range(kp.P):
        if w[W_FREE0 + i] and w[W_DEST + i] < 0:
            w[W_DEST + i] = choices[pick(u, cur, m)]
    for loc in range(kp.L):  # the free PCs at each destination
        w[W_PCS_AT + loc] = 0
    for i in range(kp.P):
        if w[W_FREE0 + i]:
            w[W_PCS_AT + w[W_DEST + i]] += 1


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
        w[W_BONUS + s * NC + i] += kp.t[SK_BONUS + s * NC + k]
        for c in range(2):
            n = w[W_NUM + (2 * s + c) * NC + i] * kp.t[SK_NUM + (2 * s + c) * NC + k]
            d = w[W_DEN + (2 * s + c) * NC + i] * kp.t[SK_DEN + (2 * s + c) * NC + k]
            r = gcd(n, d)
            w[W_NUM + (2 * s + c) * NC + i] = n // r
            w[W_DEN + (2 * s + c) * NC + i] = d // r
    w[W_EARS + i] |= kp.t[SK_EARS + k] != 0
    w[W_NURSE + i] |= kp.t[SK_NURSE + k] != 0
    w[W_GPT + i] += kp.t[SK_GPT + k]


@step
def r_cam_9a_terms(kp, w):
    """R-CAM-9a: every PC's terms in game g: its own skills, then what it bought (in buy-list order)."""
    for i in range(kp.P):
        for s in range(3):
            w[W_BONUS + s * NC + i] = kp.t[PC_BONUS + s * NC + i]
            for c in range(2):
                w[W_NUM + (2 * s + c) * NC + i] = kp.t[PC_NUM + (2 * s + c) * NC + i]
                w[W_DEN + (2 * s + c) * NC + i] = kp.t[PC_DEN + (2 * s + c) * NC + i]
        w[W_EARS + i] = kp.t[PC_EARS + i]
        w[W_NURSE + i] = kp.t[PC_NURSE + i]
        w[W_GPT + i] = kp.t[PC_GPT + i]
        w[W_TEAM + i] = kp.t[PC_TEAM + i]
        for b in range(kp.B):
            if w[kp.g_bought + i * kp.B + b] > 0:
                if kp.t[BUY_SKILL + b] >= 0:
                    r_cam_9a_add_skill(kp, w, i, kp.t[BUY_SKILL + b])
                else:
                    w[W_TEAM + i] = kp.t[BUY_TEAM + b]


@step
def r_cam_9a_purchases(kp, w, t, i):
    """R-CAM-9a: free PC i walks the buy list in order and buys each item as soon as it can afford it, before
    the rest is spent by the growth policy. An item it has, or cannot take (a team when it is in one, a team
    with team_max members in the game), is passed over; the walk stops at the first item it cannot afford.
    Returns whether it stopped there (an item is waiting)."""
    for b in range(kp.B):
        if w[kp.g_bought + i * kp.B + b] > 0:
            continue
        k = kp.t[BUY_SKILL + b]
        if k >= 0:
            cost = kp.t[SK_COST + k]
        else:
            team = kp.t[BUY_TEAM + b]
            if w[W_TEAM + i] >= 0:
                continue  # one team per PC
            members = 0
            for j in range(kp.P):
                st = w[G_STATUS + j]
                if w[W_TEAM + j] == team and (st == FREE or st == CAPTURED):
                    members += 1
            if members >= kp.team_max:
                continue
            cost = kp.team_cost
        if w[G_GP + i] < cost:
            return True
        w[G_GP + i] -= cost
        w[kp.g_bought + i * kp.B + b] = t
        if k >= 0:
            r_cam_9a_add_skill(kp, w, i, k)
        else:
            w[W_TEAM + i] = kp.t[BUY_TEAM + b]
    return False


@step
def r_cam_40_growth(kp, w, t):
    """R-CAM-5 step 3, free PCs only, in party order: purchases (R-CAM-9a), then R-CAM-40 growth: ``lowest``
    (each gp to the lowest base ability, ties fight, flee, hide) or ``best`` (all gp to the ability of the best
    stance)."""
    if kp.growth == 0 and kp.B == 0:
        return
    for i in range(kp.P):
        if not w[W_FREE0 + i]:
            continue
        waiting = False
        if kp.B > 0:
            waiting = r_cam_9a_purchases(kp, w, t, i)
        if kp.growth == 0 or w[G_GP + i] <= 0 or (waiting and kp.save_for_buy):
            continue  # policy.save_for_buy: it keeps its gp for the item it cannot afford yet
        if kp.growth == 1:
            b0, b1, b2 = w[G_BASE + i], w[G_BASE + NC + i], w[G_BASE + 2 * NC + i]  # in registers, not memory
            for _ in range(w[G_GP + i]):
                if b1 < b0 and b1 <= b2:
                    b1 += 1
                elif b2 < b0 and b2 < b1:
                    b2 += 1
                else:
                    b0 += 1
            w[G_BASE + i], w[G_BASE + NC + i], w[G_BASE + 2 * NC + i] = b0, b1, b2
        else:
            s = r_cam_40_best_allowed(kp, w, pc_bases(w, i), i)
            w[G_BASE + s * NC + i] += w[G_GP + i]
        w[G_GP + i] = 0


@step
def pc_wins(kp, w, i, s, a, s2):
    """R-CAM-2..4: PC i in stance s beats adversary a in stance s2 (a tie is no win)."""
    return pc_value(kp, w, i, s, s2, 0) > adv_value(kp, w, a, s2, s, 0)


@step
def adv_weights(kp, w, a, s2):
    """Stance probabilities as integers over weight_den (a miso bomb: all on its own best, R-CAM-57)."""
    if a >= kp.S:
        return kp.weight_den if s2 == r_cam_40_best_stance(kp, w, adv_bases(w, a), a - kp.S) else 0
    return kp.t[ADV_WNUM + s2 * NC + a]


def _equilibrium_thresholds(w, n, allowed):
    """The exact mix for the first n codes of ``W_CODES`` and the sums of ``W_PREFER`` over the ``allowed``
    stances (in Python: ``w`` is the scratch table itself; a row of it would be boxed as the whole table)."""
    return equilibrium_thresholds([int(c) for c in w[W_CODES:W_CODES + n]],
                                  [int(v) for v in w[W_PREFER:W_PREFER + 3]], allowed)


# not inlined: it holds the objmode call to the exact solver; no Python wrapper (it would unbox the ~1000 scalars
# of kp, w and rec: seconds of cold compile for a function only compiled code calls)
@nb.njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def r_cam_40_equilibrium(kp, w, t, i, ears, best, u, cur):
    """Stance policy ``equilibrium`` (issue 7): the reference's ``equilibrium_stance``; the exact mix is
    solved (and cached) in Python by :func:`sim.campus.stances.equilibrium_thresholds`."""
    n = 0
    for s in range(3):
        w[W_PREFER + s] = 0
    d = w[W_DEST + i]
    fallback = True
    if ears:
        for a in range(kp.A):
            if w[W_ADV_PRESENT + a] and w[W_ADV_LOC + a] == d:
                fallback = False
    for q in range(kp.A if not fallback else kp.eq[EQ_N, t - 1]):
        if fallback:
            a = kp.eq[EQ_SLOTS + q, t - 1]
            for s in range(3):
                w[W_A_BASE + s * NC + a] = kp.t[ADV_BASE + s * NC + a]
        else:
            a = q
            if not (w[W_ADV_PRESENT + a] and w[W_ADV_LOC + a] == d):
                continue
        code = 0
        for s in range(3):
            for s2 in range(3):
                if pc_wins(kp, w, i, s, a, s2):
                    code |= 1 << (3 * s + s2)
                    w[W_PREFER + s] += adv_weights(kp, w, a, s2)
        w[W_CODES + n] = code
        n += 1
    if n == 0:
        return best
    allowed = kp.stance_allowed
    with nb.objmode(c1="float64", c2="float64"):
        c1, c2 = _equilibrium_thresholds(w, n, allowed)
    x = draw(u, cur)
    return (1 if x >= c1 else 0) + (1 if x >= c2 else 0)


@step
def r_cam_40_stances(kp, w, t, ears, u, cur):
    """R-CAM-40 stance policies (R-CAM-51: after growth): fixed, random, best, counter (the most
    weight-averaged wins against the adversaries seen at the destination; without any, best), equilibrium."""
    for i in range(kp.P):
        if not w[W_FREE0 + i]:
            continue
        if kp.stance_policy == 0:  # policy.forbid: the first allowed of fight, flee, hide
            s = kp.stance_value
            if not (kp.stance_allowed >> s) & 1:
                s = 0 if kp.stance_allowed & 1 else (1 if kp.stance_allowed & 2 else 2)
            w[W_STANCE + i] = s
            continue
        if kp.stance_policy == 1:
            w[W_STANCE + i] = pick(u, cur, 3) if kp.stance_allowed == 7 else r_cam_40_allowed_pick(kp, u, cur)
            continue
        best = r_cam_40_best_allowed(kp, w, pc_bases(w, i), i)
        w[W_STANCE + i] = best
        if kp.stance_policy == 4:
            w[W_CUR], w[W_CUR + 1] = cur[0], cur[1]  # the stream cursor through the scratch: see play_games
            w[W_STANCE + i] = r_cam_40_equilibrium(kp, w, t, i, ears, best, u, w[W_CUR:W_CUR + 2])
            cur[0], cur[1] = w[W_CUR], w[W_CUR + 1]
        elif kp.stance_policy == 3 and ears and w[W_ADV_AT + w[W_DEST + i]] > 0:
            score = w[W_SCORE:W_SCORE + NC]
            for s in range(3):
                score[s] = 0
            for a in range(kp.A):
                if not (w[W_ADV_PRESENT + a] and w[W_ADV_LOC + a] == w[W_DEST + i]):
                    continue
                for s2 in range(3):
                    wt = adv_weights(kp, w, a, s2)
                    if wt == 0:
                        continue
                    for s in range(3):
                        if pc_wins(kp, w, i, s, a, s2):
                            score[s] += wt
            k = -1  # w[W_ADV_AT] says an adversary is there: the most wins, ties fight, flee, hide (allowed only)
            for s in range(3):
                if (kp.stance_allowed >> s) & 1 and (k < 0 or score[s] > score[k]):
                    k = s
            w[W_STANCE + i] = k


# ------------------------------------------------------------------ 4. missions and confrontations
@step
def r_cam_25_missions(kp, w, t, ears, u, cur):
    """R-CAM-25 / R-CAM-56: the sum (or each) of the present free PCs' values against the target; success pays
    every participant, failure hits every participant; no free PC present: no effect (and no draw).
    R-CAM-25a: a mission found by early ears occurs only while a PC with early ears is in the game; miso bombs
    at the location take part only when the adversary side has early ears (any mission, found or not) and lower
    the total (each value in mode each) by their value."""
    miso_ears = False  # R-CAM-25a: the adversary side has early ears (a miso bomb placed this turn holds them)
    if kp.miso:
        for i in range(kp.P):
            miso_ears |= (w[W_ADV_PRESENT + kp.S + i] & w[W_EARS + i]) != 0
    for m in range(kp.M):
        if not kp.mis[MIS_FIRST, m] <= t <= kp.mis[MIS_LAST, m]:
            continue
        if kp.mis[MIS_FOUND, m] and not ears:
            continue
        loc = kp.mis[MIS_LOC, m]
        any_here = False
        for i in range(kp.P):
            if w[W_FREE0 + i] and w[W_DEST + i] == loc:
                any_here = True
        if not any_here or not chance(u, cur, kp.prob[PROB_MIS_CHANCE, m]):
            continue
        s = kp.mis[MIS_STANCE, m]
        lower = 0
        if kp.miso and kp.miso_in_missions and miso_ears:  # R-CAM-25a: no adversary-side ears, no bomb in it
            for i in range(kp.P):
                a = kp.S + i
                if w[W_ADV_PRESENT + a] and w[W_ADV_LOC + a] == loc:
                    v = r_cam_3_value(w[W_A_BASE + s * NC + a], 0, w[W_A_BONUS + s * NC + a],
                                      w[W_A_NUM + 2 * s * NC + a], w[W_A_DEN + 2 * s * NC + a], kp.unit_den)
                    lower += max(v, 0)
        total = -lower
        ok = True
        for i in range(kp.P):
            if w[W_FREE0 + i] and w[W_DEST + i] == loc:
                v = plain_value(kp, w, w[G_BASE + s * NC + i], i, s)
                total += v
                if v - lower < kp.mis[MIS_TARGET, m]:
                    ok = False
        if not kp.mis[MIS_EACH, m]:
            ok = total >= kp.mis[MIS_TARGET, m]
        for i in range(kp.P):
            if not (w[W_FREE0 + i] and w[W_DEST + i] == loc):
                continue
            if ok:
                w[G_GP + i] += kp.mis[MIS_REWARD, m]
            else:
                w[G_VIT + i] -= kp.mis[MIS_PEN_VIT, m]
                k = kp.mis[MIS_PEN_ABILITY, m]
                if k >= 0:
                    w[G_BASE + k * NC + i] -= kp.mis[MIS_PEN_AMOUNT, m]
                    if w[G_BASE + k * NC + i] < 0:  # R-CAM-16: gp lift it back to 0, gp may go negative
                        w[G_GP + i] += w[G_BASE + k * NC + i]
                        w[G_BASE + k * NC + i] = 0


@step
def r_cam_52_teams_present(kp, w, loc, u, cur):
    """R-CAM-9 / R-CAM-52: the free PCs at ``loc`` by team: each team with two or more members present into
    ``W_TEAM_PCS`` (``W_TEAM_START``, ``W_TEAM_SIZE``; more than team_max: a random team_max of them, the rest
    alone); the PCs that fight alone into ``W_HERE``, in no order. Returns how many fight alone."""
    P = kp.P
    n_single = 0
    singles = w[W_HERE:W_HERE + NC]
    n_pcs = 0
    tmp = w[W_TEAM_TMP:W_TEAM_TMP + NC]
    for i in range(P):  # PCs without a team fight alone
        if w[W_FREE0 + i] and w[G_STATUS + i] == FREE and w[W_DEST + i] == loc and w[W_TEAM + i] < 0:
            singles[n_single] = i
            n_single += 1
    for k in range(kp.n_teams):  # the teams present, in team order
        m = 0
        for i in range(P):
            if w[W_FREE0 + i] and w[G_STATUS + i] == FREE and w[W_DEST + i] == loc and w[W_TEAM + i] == k:
                tmp[m] = i
                m += 1
        w[W_TEAM_SIZE + k] = 0
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
        w[W_TEAM_START + k] = n_pcs
        w[W_TEAM_SIZE + k] = m
        for q in range(m):
            w[W_TEAM_PCS + n_pcs + q] = tmp[q]
        n_pcs += m
    return n_single


@step
def r_cam_6_rotation(kp, w, loc, u, cur):
    """R-CAM-6: the groups at ``loc``: every team with two or more members present (R-CAM-9; more than
    team_max: a random team_max of them, the rest alone, R-CAM-52), larger teams first, ties in random order;
    then the other PCs one at a time in random order. Returns the number of groups (``w[W_GRP_FIRST]``,
    ``w[W_GRP_PC]``)."""
    n_single = r_cam_52_teams_present(kp, w, loc, u, cur)
    singles = w[W_HERE:W_HERE + NC]
    n_groups = 0
    # order the teams: larger first; each size's teams (in team order) shuffled
    order = w[W_TEAM_ORDER:W_TEAM_ORDER + NC]
    n_t = 0
    for size in range(kp.team_max, 1, -1):
        first = n_t
        for k in range(kp.n_teams):
            if w[W_TEAM_SIZE + k] == size:
                order[n_t] = k
                n_t += 1
        shuffle(u, cur, order, first, n_t - first)
    pos = 0
    for q in range(n_t):
        k = order[q]
        w[W_GRP_FIRST + n_groups] = pos
        for r in range(w[W_TEAM_SIZE + k]):
            w[W_GRP_PC + pos] = w[W_TEAM_PCS + w[W_TEAM_START + k] + r]
            pos += 1
        n_groups += 1
    # then the single PCs in random order (sorted, then shuffled)
    sort_prefix(singles, n_single)
    shuffle(u, cur, singles, 0, n_single)
    for q in range(n_single):
        w[W_GRP_FIRST + n_groups] = pos
        w[W_GRP_PC + pos] = singles[q]
        pos += 1
        n_groups += 1
    w[W_GRP_FIRST + n_groups] = pos
    return n_groups


@step
def r_cam_7_opponents(kp, w, loc, k):
    """R-CAM-7: the adversaries still at ``loc`` that group k may fight (a boss at most once a turn per
    group), in slot order into ``w[W_OPP]``; returns their number."""
    n = 0
    for a in range(kp.A):
        if w[W_ADV_PRESENT + a] and w[W_ADV_LOC + a] == loc and not (is_boss(kp, a) and w[W_FOUGHT + k * NC + a]):
            w[W_OPP + n] = a
            n += 1
    return n


@step
def r_cam_7_after_confrontation(kp, w, k, a):
    """R-CAM-7 / R-CAM-54: an ordinary adversary leaves, won or lost; a boss stays (a tie too) and is done
    with this group for the turn."""
    if is_boss(kp, a):
        w[W_FOUGHT + k * NC + a] = True
    else:
        w[W_ADV_PRESENT + a] = False
        w[W_ADV_AT + w[W_ADV_LOC + a]] -= 1


@step
def r_cam_8_one_on_one(kp, w, t, k, i, n_opp, u, cur):
    """R-CAM-6 / R-CAM-8: a single PC against one of its opponents drawn at random; a win pays the reward,
    a loss or a tie (R-CAM-4) is a capture."""
    a = w[W_OPP + pick(u, cur, n_opp)]
    sa = r_cam_21_adversary_stance(kp, w, a, u, cur)
    sp = w[W_STANCE + i]
    pv = pc_value(kp, w, i, sp, sa, 0)
    av = adv_value(kp, w, a, sa, sp, 0)
    win = pv > av
    record_duel(kp, w, a, sp, win)
    if win:
        w[G_GP + i] += kp.t[ADV_REWARD + a]
    else:
        r_cam_8_capture(kp, w, t, i, r_cam_53_capture_room(kp, a, u, cur))
    r_cam_7_after_confrontation(kp, w, k, a)


@step
def r_cam_9_team_battle(kp, w, t, k, n_opp, u, cur):
    """R-CAM-9 / R-CAM-52: the team against every opponent present, each side in random order. The first of
    each side duel; the loser is out and the winner's base in its stance is lowered by the loser's value; a
    tie puts both out; the team loses when its side is empty (a last duel emptying both sides too). Each
    adversary draws its stance once per battle, when it first steps up. Rewards of won duels are shared,
    floored; a losing team is captured whole; every ordinary adversary that took part leaves."""
    lo = w[W_GRP_FIRST + k]
    m = w[W_GRP_FIRST + k + 1] - lo
    for q in range(m):
        w[W_SIDE_PC + q] = w[W_GRP_PC + lo + q]
        w[W_RED_PC + q] = 0
    shuffle(u, cur, w[W_SIDE_PC:W_SIDE_PC + NC], 0, m)
    for q in range(n_opp):
        w[W_SIDE_ADV + q] = w[W_OPP + q]
        w[W_RED_ADV + q] = 0
        w[W_ADV_ST + q] = -1
    shuffle(u, cur, w[W_SIDE_ADV:W_SIDE_ADV + NC], 0, n_opp)
    ip = 0
    ja = 0
    reward = 0
    while ip < m and ja < n_opp:
        i = w[W_SIDE_PC + ip]
        a = w[W_SIDE_ADV + ja]
        if w[W_ADV_ST + ja] < 0:
            w[W_ADV_ST + ja] = r_cam_21_adversary_stance(kp, w, a, u, cur)
        sa = w[W_ADV_ST + ja]
        sp = w[W_STANCE + i]
        pv = pc_value(kp, w, i, sp, sa, w[W_RED_PC + ip])
        av = adv_value(kp, w, a, sa, sp, w[W_RED_ADV + ja])
        record_duel(kp, w, a, sp, pv > av)
        if pv > av:
            w[W_RED_PC + ip] += max(av, 0)
            reward += kp.t[ADV_REWARD + a]
            ja += 1
        elif av > pv:
            w[W_RED_ADV + ja] += max(pv, 0)
            w[W_OUT_BY + ip] = a
            ip += 1
        else:
            w[W_OUT_BY + ip] = a
            ip += 1
            ja += 1
    share = reward // m
    for q in range(m):
        w[G_GP + w[W_SIDE_PC + q]] += share
    if ip >= m:  # the team's side is empty: every member is captured
        for q in range(m):
            r_cam_8_capture(kp, w, t, w[W_SIDE_PC + q], r_cam_53_capture_room(kp, w[W_OUT_BY + q], u, cur))
    for q in range(n_opp):
        r_cam_7_after_confrontation(kp, w, k, w[W_SIDE_ADV + q])


@step
def r_cam_6_confrontations(kp, w, t, loc, u, cur):
    """R-CAM-6: walk the rotation round and round; at each step the next group still free with an opponent
    left fights, until no adversary or no free PC is left (so a group fights twice in a row only when it is
    the only one that can). ``fights = "once"``: one walk, each group at most once."""
    if (w[W_ADV_AT + loc] == 0) | (w[W_PCS_AT + loc] == 0):
        return  # no adversary here, or no PC (all PCs there are still free: only this step captures them)
    n = r_cam_6_rotation(kp, w, loc, u, cur)
    for k in range(n):
        for a in range(kp.A):
            w[W_FOUGHT + k * NC + a] = False
    nxt = 0
    while True:
        chosen = -1
        n_opp = 0
        for step in range(n):
            k = (nxt + step) % n
            if not kp.until_cleared and k < nxt:
                break  # "once": no second walk
            free = True
            for q in range(w[W_GRP_FIRST + k], w[W_GRP_FIRST + k + 1]):
                if w[G_STATUS + w[W_GRP_PC + q]] != FREE:
                    free = False
            if not free:
                continue
            n_opp = r_cam_7_opponents(kp, w, loc, k)
            if n_opp > 0:
                chosen = k
                break
        if chosen < 0:
            return
        if w[W_GRP_FIRST + chosen + 1] - w[W_GRP_FIRST + chosen] >= 2:
            r_cam_9_team_battle(kp, w, t, chosen, n_opp, u, cur)
        else:
            r_cam_8_one_on_one(kp, w, t, chosen, w[W_GRP_PC + w[W_GRP_FIRST + chosen]], n_opp, u, cur)
        nxt = chosen + 1
        if not kp.until_cleared and nxt >= n:
            return


# ------------------------------------------------------------------ exits, nursing, escape checks
@step
def r_cam_26_exits(kp, w, t):
    """R-CAM-26 / R-CAM-58: a free PC at an open exit after its confrontations leaves, cleared."""
    for i in range(kp.P):
        d = w[W_DEST + i]
        if w[W_FREE0 + i] and w[G_STATUS + i] == FREE and kp.t[LOC_IS_EXIT + d] and t >= kp.t[LOC_OPENS_ON + d]:
            w[G_STATUS + i] = CLEARED
            w[G_END_TURN + i] = t


@step
def r_cam_30_nursing(kp, w, u, cur):
    """R-CAM-30 / R-CAM-55: a free nurse gives +1 vitality (up to its starting value) to the other free PC at
    its location with the lowest vitality, one at random among ties."""
    tied = w[W_TMP:W_TMP + NC]
    for i in range(kp.P):
        if not (w[W_NURSE + i] and w[G_STATUS + i] == FREE):
            continue
        low = 1 << 62
        m = 0
        d = w[W_DEST + i]
        for j in range(kp.P):  # free now means free at the start of the turn: only step 6 frees captives
            if (j != i) & (w[G_STATUS + j] == FREE) & (w[W_DEST + j] == d):
                v = w[G_VIT + j]
                if v < low:
                    low = v
                    m = 0
                if v == low:
                    tied[m] = j
                    m += 1
        if m == 0:
            continue
        j = tied[pick(u, cur, m)]
        if w[G_VIT + j] < kp.t[PC_VIT + j]:
            w[G_VIT + j] += 1


@step
def r_cam_12_supports(kp, w, t, u, cur):
    """R-CAM-11 / R-CAM-12: each rescuer (a free PC whose destination is a capture room where a captive taken
    before this turn checks) supports the captive it named, else one at random (minus its exclusions; none left:
    its support fails): ``W_SUP_OF`` (the captive, or -1) and ``W_FAILED``."""
    P = kp.P
    for i in range(P):
        w[W_SUP_OF + i] = -1
        w[W_FAILED + i] = False
    cand = w[W_TMP:W_TMP + NC]
    for i in range(P):
        d = w[W_DEST + i]
        if not (w[W_FREE0 + i] and w[G_STATUS + i] == FREE and kp.t[LOC_IS_ROOM + d]):
            continue
        n_in = 0
        m = 0
        named_in = False
        for j in range(P):
            if w[G_STATUS + j] == CAPTURED and w[G_CAP_TURN + j] < t and w[G_ROOM + j] == d:
                n_in += 1
                if j == w[W_NAMED + i]:
                    named_in = True
                if not kp.t[PC_EXCL + i * NC + j]:
                    cand[m] = j
                    m += 1
        if n_in == 0:
            continue  # nobody checks here: the rescuer does nothing
        w[G_RESCUES_TRIED] += 1
        if named_in:
            w[W_SUP_OF + i] = w[W_NAMED + i]
        elif m == 0:
            w[W_FAILED + i] = True  # R-CAM-12: exclusions leave no one
        else:
            w[W_SUP_OF + i] = cand[pick(u, cur, m)]


@step
def r_cam_11_escape_checks(kp, w, t, u, cur):
    """R-CAM-11..14, R-CAM-53: captives taken before this turn check against t + offset, supported by the
    rescuers (:func:`r_cam_12_supports`); success when the target <= min(captive) + the rescuers' mins."""
    P = kp.P
    r_cam_12_supports(kp, w, t, u, cur)
    # R-CAM-13: every check is decided on the abilities before any result of this step
    ok = w[W_TEAM_TMP:W_TEAM_TMP + NC]
    for j in range(P):
        ok[j] = 0
        if w[G_STATUS + j] == CAPTURED and w[G_CAP_TURN + j] < t:
            total = min3(w, j)
            for i in range(P):
                if w[W_SUP_OF + i] == j:
                    total += min3(w, i)
            ok[j] = 1 if t + kp.t[LOC_ROOM_OFFSET + w[G_ROOM + j]] <= total else 2
    for j in range(P):
        if ok[j] == 0:
            continue
        w[G_CHECKS_T + 4 * (t - 1)] += 1
        if ok[j] == 1:
            w[G_ESCAPES_T + 4 * (t - 1)] += 1
            w[G_STATUS + j] = FREE
            for i in range(P):
                if w[W_SUP_OF + i] == j:
                    w[G_GP + i] += t // 2 + 1
                    w[G_RESCUES_WON] += 1
        else:  # R-CAM-14
            w[G_VIT + j] -= 1
            for i in range(P):
                if w[W_SUP_OF + i] == j:
                    r_cam_8_capture(kp, w, t, i, w[G_ROOM + j])
    for i in range(P):
        if w[W_FAILED + i]:
            r_cam_8_capture(kp, w, t, i, w[W_DEST + i])


# ------------------------------------------------------------------ the turn and the game
@step
def r_cam_51_early_ears(kp, w):
    """R-CAM-51: early ears count while their holder is in the game (free or captured). (A step of its own so
    that ``ears`` is never the constant False: numba would compile every step it is passed to twice.)"""
    ears = False
    for i in range(kp.P):
        st = w[G_STATUS + i]
        ears |= ((st == FREE) | (st == CAPTURED)) & (w[W_EARS + i] != 0)
    return ears


# inlined by numba (not LLVM) into the entry point, its one caller: compiled separately it would be optimised and
# turned into machine code whole (every step inlined) once more, a tenth of the cold compile time
@nb.njit(inline="always", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def r_cam_5_turn(kp, w, rec, g, t, u, cur):
    """R-CAM-5: one turn of game g (steps 1-8) on its state fields (``G_``); its statuses into ``rec``."""
    P = kp.P
    n_free = 0
    alive = False
    for i in range(P):  # branch-free: the statuses are unpredictable
        st = w[G_STATUS + i]
        free = st == FREE
        w[W_FREE0 + i] = free
        w[W_DEST + i] = -1
        w[W_NAMED + i] = -1
        n_free += free
        alive |= free | (st == CAPTURED)
    w[G_FREE_T + 4 * (t - 1)] = n_free
    if kp.B > 0:  # R-CAM-9a: the skills this game's PCs bought
        r_cam_9a_terms(kp, w)
    ears = r_cam_51_early_ears(kp, w)
    if alive:
        r_cam_20_place_adversaries(kp, w, t, u, cur)  # 1. preview
        n_opt = r_cam_50_options(kp, w, u, cur)
        if kp.rescue:  # 2. declaration
            r_cam_40_rescue(kp, w, t)
        r_cam_40_move(kp, w, n_opt, ears, u, cur)
        r_cam_40_growth(kp, w, t)  # 3. growth spending (R-CAM-9a purchases first)
        r_cam_40_stances(kp, w, t, ears, u, cur)
        r_cam_25_missions(kp, w, t, ears, u, cur)  # 4. missions, then confrontations
        for loc in range(kp.L):
            r_cam_6_confrontations(kp, w, t, loc, u, cur)
        r_cam_26_exits(kp, w, t)
        r_cam_30_nursing(kp, w, u, cur)  # 5.
        r_cam_11_escape_checks(kp, w, t, u, cur)  # 6.
        r_cam_15_turn_end(kp, w, t)  # 7-8.
    for i in range(P):
        rec.status_by_turn[g, t - 1, i] = w[G_STATUS + i]


@step
def r_cam_15_turn_end(kp, w, t):
    """R-CAM-5 steps 7-8: R-CAM-58 growth points to every PC in the game, then R-CAM-15 game over at vitality 0."""
    for i in range(kp.P):
        st = w[G_STATUS + i]
        in_game = (st == FREE) | (st == CAPTURED)
        w[G_GP + i] += in_game * (1 + w[W_GPT + i])  # branch-free
        if in_game & (w[G_VIT + i] <= 0):
            w[G_STATUS + i] = GAME_OVER
            w[G_END_TURN + i] = t


@step
def new_game(kp, w):
    """A game's starting state (R-CAM-1) in the state fields: base abilities, vitality, gp 0, free; counts
    cleared."""
    for i in range(kp.P):
        for s in range(3):
            w[G_BASE + s * NC + i] = kp.t[PC_BASE + s * NC + i]
        w[G_VIT + i] = kp.t[PC_VIT + i]
        w[G_STATUS + i] = FREE
        w[G_ROOM + i] = -1
        w[G_GP + i] = 0
        w[G_CAP_TURN + i] = 0
        w[G_END_TURN + i] = 0
    for s in range(3):  # the counts
        w[G_RESCUES_TRIED + s] = 0
        w[G_RESCUES_WON + s] = 0
        w[G_DUELS_STANCE + s] = 0
        w[G_WINS_STANCE + s] = 0
    for k in range(G_CAPTURES_T, kp.g_bought + kp.P * kp.B):  # by turn, by template, bought
        w[k] = 0


@step
def store_game(kp, w, rec, g):
    """R-CAM-41: the game's state and counts (its state fields) into game g's record."""
    for i in range(kp.P):
        rec.status[g, i] = w[G_STATUS + i]
        rec.end_turn[g, i] = w[G_END_TURN + i]
        rec.vit[g, i] = w[G_VIT + i]
        rec.gp[g, i] = w[G_GP + i]
        rec.room[g, i] = w[G_ROOM + i]
        rec.cap_turn[g, i] = w[G_CAP_TURN + i]
        for s in range(3):
            rec.base[g, i, s] = w[G_BASE + s * NC + i]
        for b in range(kp.B):
            rec.bought[g, i, b] = w[kp.g_bought + i * kp.B + b]
    for t in range(kp.T):
        rec.captures_t[g, t] = w[G_CAPTURES_T + 4 * t]
        rec.checks_t[g, t] = w[G_CHECKS_T + 4 * t]
        rec.escapes_t[g, t] = w[G_ESCAPES_T + 4 * t]
        rec.free_t[g, t] = w[G_FREE_T + 4 * t]
    for k in range(rec.duels_tmpl.shape[1]):
        rec.duels_tmpl[g, k] = w[kp.g_tmpl + 2 * k]
        rec.wins_tmpl[g, k] = w[kp.g_tmpl + 2 * k + 1]
    for s in range(3):
        rec.duels_stance[g, s] = w[G_DUELS_STANCE + s]
        rec.wins_stance[g, s] = w[G_WINS_STANCE + s]
    rec.rescues_tried[g] = w[G_RESCUES_TRIED]
    rec.rescues_won[g] = w[G_RESCUES_WON]


@step
def load_game(kp, w, rec, g):
    """Game g's state and counts from its record into the state fields (a state the caller set: tests)."""
    new_game(kp, w)
    for i in range(kp.P):
        w[G_STATUS + i] = rec.status[g, i]
        w[G_END_TURN + i] = rec.end_turn[g, i]
        w[G_VIT + i] = rec.vit[g, i]
        w[G_GP + i] = rec.gp[g, i]
        w[G_ROOM + i] = rec.room[g, i]
        w[G_CAP_TURN + i] = rec.cap_turn[g, i]
        for s in range(3):
            w[G_BASE + s * NC + i] = rec.base[g, i, s]
        for b in range(kp.B):
            w[kp.g_bought + i * kp.B + b] = rec.bought[g, i, b]
    for t in range(kp.T):
        w[G_CAPTURES_T + 4 * t] = rec.captures_t[g, t]
        w[G_CHECKS_T + 4 * t] = rec.checks_t[g, t]
        w[G_ESCAPES_T + 4 * t] = rec.escapes_t[g, t]
        w[G_FREE_T + 4 * t] = rec.free_t[g, t]
    for k in range(rec.duels_tmpl.shape[1]):
        w[kp.g_tmpl + 2 * k] = rec.duels_tmpl[g, k]
        w[kp.g_tmpl + 2 * k + 1] = rec.wins_tmpl[g, k]
    for s in range(3):
        w[G_DUELS_STANCE + s] = rec.duels_stance[g, s]
        w[G_WINS_STANCE + s] = rec.wins_stance[g, s]
    w[G_RESCUES_TRIED] = rec.rescues_tried[g]
    w[G_RESCUES_WON] = rec.rescues_won[g]


@intrinsic
def _local_cursor(typingctx):
    """A 2-cell int64 array on the stack of the compiled caller: the stream cursor (position, past-the-end flag).
    Its address never leaves the entry point, so the compiler keeps both cells in registers across the steps
    instead of storing and reloading them around every draw (any store to another array might have changed them)."""
    arrty = types.Array(types.int64, 1, "C")

    def codegen(context, builder, signature, args):
        ary = make_array(arrty)(context, builder)
        data = cgutils.alloca_once(builder, context.get_value_type(types.int64), size=2)
        intp = lambda v: context.get_constant(types.intp, v)  # noqa: E731
        populate_array(ary, data=data, shape=cgutils.pack_array(builder, [intp(2)]),
                       strides=cgutils.pack_array(builder, [intp(8)]), itemsize=intp(8), meminfo=None)
        return ary._getvalue()

    return arrty(), codegen


# inlined by numba into the entry point, as r_cam_5_turn
@nb.njit(inline="always", no_cpython_wrapper=True, no_cfunc_wrapper=True)
def play_games_at(kp, w, rec, u, cur, g0, g1, t0, t1, whole):
    """:func:`play_games` on the cursor ``cur``."""
    for g in range(g0, g1):
        start = cur[0]
        if whole:
            new_game(kp, w)
        else:
            load_game(kp, w, rec, g)
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
                if w[G_STATUS + i] == FREE:
                    w[G_STATUS + i] = CLEARED
                    w[G_END_TURN + i] = kp.T
        store_game(kp, w, rec, g)
    return g1


@nb.njit(cache=True, _nrt=False, nogil=True)  # the one compiled entry point; threads may run it at once
def play_games(kp, w, rec, u, cur, g0, g1, t0, t1, whole):
    """Games g0..g1-1 in run order from the stream ``u`` at ``cur[0]``, turns t0..t1; ``whole``: each game
    from its start to its end (the engine), else turns of a state the caller set in ``rec`` (tests). A game is
    played on the state fields of ``w`` and stored into ``rec`` when done. Returns the first game not played (g1,
    or one that ran past the end of the stream; ``cur[0]`` is then its first draw). The games read the cursor from
    a copy on the stack (:func:`_local_cursor`)."""
    here = _local_cursor()
    here[0], here[1] = cur[0], cur[1]
    g = play_games_at(kp, w, rec, u, here, g0, g1, t0, t1, whole)
    cur[0], cur[1] = here[0], here[1]
    return g


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
        u = refill_stream(u, cur, rng)
    return record_arrays(rec)


def refill_stream(u: np.ndarray, cur: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The buffer after a game ran past its end: the draws from the unfinished game's first one (``cur[0]``) moved
    to the front and the rest refilled from ``rng`` in place, or, when that game alone filled the buffer, the buffer
    doubled; the cursor back at 0."""
    start = int(cur[0])
    if start == 0:
        u = np.concatenate([u, rng.random(u.shape[0])])
    else:
        keep = u.shape[0] - start
        u[:keep] = u[start:]
        rng.random(out=u[keep:])
    cur[0] = 0
    return u


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
