"""Would lane-parallel planning pay (issue 27)? Three steps of the escape round computed for W runs at once
(structure of arrays, the run index the innermost loop, branch-free selects so that LLVM vectorises over the
lanes), each checked equal to the engine's own scalar step and timed against it.

States: the heavy party (bench/escape_heavy.toml, policy ``team``), RUNS runs played by the engine's own compiled
round (``kernel.run_engine`` in ONE_ROUND mode) and snapshotted at the start of rounds 2, 4, 7 and 10; only runs
still in play are kept (truncated to a multiple of 64 runs, so every W divides them).

- R-ESC-20 step 2, the best struggle (R-ESC-31 ties): scalar = an njit loop calling
  ``kernel.best_struggle(R, st, j, i, -1)`` for every (run, character); lanes = :func:`lane_block`, W runs of one
  character at a time, every (slot, ability) pair weighed in every lane, slots that are 0 in every lane of the
  block skipped. The lanes read the state in one of three layouts: ``strided`` (the Batch arrays as they are,
  (n, C, S), through transposed views), ``gather`` (each block first copied into (S, W) buffers), ``lane-major``
  (a (C, S, n) copy made once: the layout a lane engine would keep), int32 or int64.
- R-ESC-21 / R-ESC-37, the team pass, on the greedy plans the engine declares at each snapshot: scalar =
  ``kernel.team_pass`` run after run; lanes = :func:`lanes_team` (final kind and target compared).
- R-GEN-1 / R-GEN-4 / R-ESC-14, the check roll of each declared struggle with the keyed uniforms: scalar =
  ``kernel.roll_check``; lanes = :func:`check_lane`, which computes all five uniforms a check may need and keeps
  the ones the scalar draws (success and the count of uniforms compared).

Every lane result is asserted equal to the scalar one on every (run, character) of every snapshot before any
timing. Times are CPU time (``time.process_time``), the fastest of REPEAT alternating repeats of INNER calls, in
ns per (run, character).

    PYTHONPATH=. python bench/escape_lanes.py [--runs 20000] [--repeat 7] [--inner 5] [--asm]

LLVM's tuning for this CPU (rocketlake) prefers 256-bit vectors, so the lanes run 4 int64 (8 int32) wide. To let
it use 512-bit vectors (numba has no per-function ``prefer-vector-width``), name a CPU without that preference and
keep the host's features, with a cache of its own:

    NUMBA_CPU_NAME=knl NUMBA_CPU_FEATURES=$(python -c "import llvmlite.binding as b; b.initialize_native_target(); \
    print(b.get_host_cpu_features().flatten())") NUMBA_CACHE_DIR=/tmp/nc-knl python bench/escape_lanes.py
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import llvmlite.binding as llvm
import numba
import numpy as np
from numba import njit
from numba.core.compiler import Compiler

import sim
from sim.escape import kernel as K
from sim.escape.params import (
    ARMS,
    BLINDFOLD,
    BODY,
    COMPLETE,
    EARPLUGS,
    FINGERS,
    GAG,
    LEGS,
    MARK_STAR,
    MASK,
    MODERATE,
    N_SLOTS,
    UTTER,
    compile_params,
)

HERE = Path(__file__).parent
SNAP_ROUNDS = (1, 3, 6, 9)  # rounds played before each snapshot (runs end in rounds 8-13)
WIDTHS = (8, 16, 32)
TEAM_WIDTHS = (16, 32, 64)  # the team pass pays a loop set-up per character pair: wider blocks
LANE = 64  # every snapshot's run count is a multiple of this
N_CF = len(K.CHAR_FIELDS)




class NoAlias(Compiler):
    """numba's pipeline with its ``noalias`` flag set (numba sets it only for parallel loops): every array argument
    of the entry point is marked ``noalias`` for LLVM. Without it LLVM cannot vectorise a loop that stores to one
    array and gathers from another (it cannot bound the gather's addresses for a run-time overlap check), and the
    lane loops stay scalar (measured: 3x slower than the engine's scalar best struggle). The promise holds here:
    no two arguments share memory."""

    def __init__(self, typingctx, targetctx, library, args, return_type, flags, locals):
        flags.noalias = True
        super().__init__(typingctx, targetctx, library, args, return_type, flags, locals)


entry = njit(_nrt=False, pipeline_class=NoAlias)


# =============================================================================================
# states


def snapshots(p, rules, n_runs: int, seed: int = 7):
    """Batches of the runs still in play after 1, 3 and 6 rounds of the engine (policy team)."""
    st = K.initial_batch(p, n_runs)
    key = np.random.default_rng(seed).integers(0, 2**64, size=2, dtype=np.uint64)
    out, played = [], 0
    for rounds in SNAP_ROUNDS:
        while played < rounds:
            K.run_engine(rules, st, K.new_scratch(p), key, K.TEAM, K.ONE_ROUND, K.NO_PLAN)
            played += 1
        alive = np.flatnonzero(st.runs[:, K.OUTCOME] == K.RUNNING)
        alive = alive[: len(alive) // LANE * LANE]
        out.append(K.Batch(*(np.ascontiguousarray(a[alive]) for a in st)))
    return out


def lane_major(st, dtype):
    """The (C, S, n) and (C, F, n) copy of a snapshot's state a lane engine would keep."""
    def lm(a):
        return np.ascontiguousarray(np.transpose(a, (1, 2, 0)), dtype=dtype)
    return lm(st.tiers), lm(st.acc), lm(st.streak), lm(st.chars)


# =============================================================================================
# R-ESC-20 step 2: the best struggle, scalar and in lanes


def scalar_best_py(R, st, out):
    """The engine's own best struggle for every (run, character); ``out[j, i] = (num, slot, ability)``."""
    total = 0
    for j in range(st.tiers.shape[0]):
        for i in range(R.game[K.N_CHARS]):
            num, slot, ability = K.best_struggle(R, st, j, i, -1)
            out[j, i, 0] = num
            out[j, i, 1] = slot
            out[j, i, 2] = ability
            total += num
    return total


scalar_best = njit(_nrt=False)(scalar_best_py)
scalar_best_na = entry(scalar_best_py)  # the same with noalias arguments (as the lanes)


@njit(inline="always")
def lane(j0, w):
    """The run of lane w as an unsigned index: numba adds no negative-index wrap-around (a select LLVM cannot see
    through), so the lanes' loads stay consecutive (vector loads, not gathers)."""
    return np.uint64(j0 + w)


@njit(inline="always")
def net_sel(bonus, penalty, pool):
    """R-GEN-4 net dice (``kernel.net_dice``) as selects."""
    cancel = (1 if bonus > 0 else 0) - (1 if penalty > 0 else 0)
    return bonus - penalty if pool else cancel


@njit(inline="always")
def row_sel(sides, blessed, net):
    """``kernel.chance_row(sides, blessed, False, net)``."""
    b = 1 if blessed != 0 else 0
    return ((sides * 2 + b) * 2 * K.N_NETS + net + K.MAX_NET_DICE) * K.NEED_SPAN


@njit(inline="always")
def lane_rows(R, T, CH, j0, W, wk):
    """Per lane: the chance table's rows of str, dex (not on fingers) and int/dex on fingers (R-ESC-11 fingers and
    mask penalty dice, R-ESC-14a rage on str, R-ESC-14b held die, blessing), and whether only str is allowed."""
    pool = R.game[K.POOL] != 0
    for w in range(W):
        j = lane(j0, w)
        fingers = T[FINGERS, j]
        rage_left = CH[K.RAGE, j]
        rage = 1 if (rage_left > 0) | (rage_left == -1) else 0
        sides = CH[K.INSP_DIE, j]
        blessed = CH[K.BLESSED, j]
        wk[4][w] = row_sel(sides, blessed, net_sel(rage, 1 if T[MASK, j] >= 1 else 0, pool))
        wk[5][w] = row_sel(sides, blessed, net_sel(0, 1 if fingers >= 1 else 0, pool))
        wk[6][w] = row_sel(sides, blessed, net_sel(0, 0, pool))
        wk[7][w] = 1 if (T[BODY, j] >= 1) | (fingers >= MODERATE) else 0
        wk[0][w] = -1  # best numerator, slot, ability, whether the best is the last slot
        wk[1][w] = -1
        wk[2][w] = -1
        wk[3][w] = 0


@njit(inline="always")
def better(num, ok, last, wk, w):
    """R-ESC-31 tie rule as a select: strictly better, or as good and on the slot struggled last round."""
    bn = wk[0][w]
    return ok & ((num > bn) | ((num == bn) & last & (wk[3][w] == 0)))


@njit(inline="always")
def lane_block(R, table, T, A, KS, CH, i, j0, W, wk):
    """R-ESC-20 step 2 for character ``i`` of runs j0 .. j0 + W - 1: ``wk[0:3, w]`` = (num, slot, ability) as
    ``kernel.best_struggle(R, st, j0 + w, i, -1)``. T, A, KS: (slot, run) tiers, acc, streak; CH: (field, run)."""
    lane_rows(R, T, CH, j0, W, wk)
    mod0, mod1, mod2 = R.char[i, K.CHECK_MOD], R.char[i, K.CHECK_MOD + 1], R.char[i, K.CHECK_MOD + 2]
    for s in range(N_SLOTS):
        if R.game[K.GOAL + s] == 0 or not any_live(T, s, j0, W):  # the same for every lane of the block
            continue
        for w in range(W):
            j = lane(j0, w)
            tier = T[s, j]
            body = T[BODY, j] >= 1
            ok = (tier >= 1) & (tier < UTTER) & ((not body) | (s == BODY))  # may_struggle (R-ESC-2, R-ESC-11)
            t = tier  # 0 .. UTTER: a row of R.tier
            last = s == CH[K.LAST_SLOT, j]
            auto = (R.tier[t, K.MARK] == MARK_STAR) & (KS[s, j] == 1)  # R-ESC-3 auto-release
            base = R.tier[t, K.DC] - A[s, j] - CH[K.ITEM_BONUS, j]
            r_str = K.AUTO_ROW if auto else wk[4][w]
            r_dex = K.AUTO_ROW if auto else (wk[6][w] if s == FINGERS else wk[5][w])
            r_int = K.AUTO_ROW if auto else wk[6][w]
            str_only = wk[7][w] != 0
            n0 = table[r_str + clamp_need(base - mod0)]
            n1 = table[r_dex + clamp_need(base - mod1)]
            n2 = table[r_int + clamp_need(base - mod2)]
            take(wk, w, n0, ok, last, s, 0)
            take(wk, w, n1, ok & (not str_only), last, s, 1)
            take(wk, w, n2, ok & (not str_only), last, s, 2)


@njit(inline="always")
def any_live(T, s, j0, W):
    """Whether slot s is above 0 in any lane of the block (a reduction over the lanes, then one branch that is
    the same for every lane): a restraint never rises, so each character's free slots are skipped block-wide."""
    live = 0
    for w in range(W):
        live |= T[s, lane(j0, w)]
    return live != 0


@njit(inline="always")
def clamp_need(need):
    """``min(max(need, 0), NEED_TOP)`` as two selects (numba's min and max are calls LLVM does not vectorise)."""
    need = need if need > 0 else 0
    return need if need < K.NEED_TOP else K.NEED_TOP


@njit(inline="always")
def take(wk, w, num, ok, last, s, a):
    """Lane w's running best becomes (num, s, a) if ``better`` (a select, not a branch)."""
    up = better(num, ok, last, wk, w)
    wk[0][w] = num if up else wk[0][w]
    wk[1][w] = s if up else wk[1][w]
    wk[2][w] = a if up else wk[2][w]
    wk[3][w] = (1 if last else 0) if up else wk[3][w]


@njit(inline="always")
def store_block(wk, out, i, j0, W):
    total = 0
    for w in range(W):
        j = lane(j0, w)
        out[j, i, 0] = wk[0][w]
        out[j, i, 1] = wk[1][w]
        out[j, i, 2] = wk[2][w]
        total += wk[0][w]
    return total


@entry
def lanes_strided(R, table, st, W, wk, out):
    """Lanes reading the Batch arrays in place: (slot, run) views of (n, C, S), the run the inner index."""
    total = 0
    for i in range(R.game[K.N_CHARS]):
        T, A, KS, CH = st.tiers[:, i, :].T, st.acc[:, i, :].T, st.streak[:, i, :].T, st.chars[:, i, :].T
        for j0 in range(0, st.tiers.shape[0], W):
            lane_block(R, table, T, A, KS, CH, i, j0, W, wk)
            total += store_block(wk, out, i, j0, W)
    return total


@entry
def lanes_gather(R, table, st, W, wk, bt, ba, bk, bc, out):
    """Lanes on small buffers: each block of W runs of character i gathered from (n, C, S) first."""
    total = 0
    for i in range(R.game[K.N_CHARS]):
        for j0 in range(0, st.tiers.shape[0], W):
            for s in range(N_SLOTS):
                for w in range(W):
                    bt[s, w] = st.tiers[lane(j0, w), i, s]
                    ba[s, w] = st.acc[lane(j0, w), i, s]
                    bk[s, w] = st.streak[lane(j0, w), i, s]
            for w in range(W):
                for f in (K.LAST_SLOT, K.RAGE, K.INSP_DIE, K.BLESSED, K.ITEM_BONUS):
                    bc[f, w] = st.chars[lane(j0, w), i, f]
            lane_block(R, table, bt, ba, bk, bc, i, 0, W, wk)
            total += store_block(wk, out, i, j0, W)
    return total


@entry
def lanes_major(R, table, TL, AL, KL, CL, W, wk, out):
    """Lanes on the lane-major copy (C, S, n): every field of W runs is one contiguous load."""
    total = 0
    for i in range(R.game[K.N_CHARS]):
        T, A, KS, CH = TL[i], AL[i], KL[i], CL[i]
        for j0 in range(0, TL.shape[2], W):
            lane_block(R, table, T, A, KS, CH, i, j0, W, wk)
            total += store_block(wk, out, i, j0, W)
    return total


# =============================================================================================
# R-ESC-21 team pass (R-ESC-37 guard), scalar and in lanes, on the greedy plans of a snapshot

TP_FIELDS = (K.ST_ROW0, K.ST_ROW1, K.ST_NEED0, K.ST_OWN)  # lane-major rows 2.. of the team pass's input
N_TB = 7  # lane buffers (C, W): kind, target, helped, assisted, guide, mage, chance with the help planned
T_KIND, T_TARGET, T_HELPED, T_ASSISTED, T_GUIDE, T_MAGE, T_BEFORE = range(N_TB)


@njit(_nrt=False)
def greedy_plans(R, st, sc, plans, strugs):
    """The greedy declarations (R-ESC-20 steps 0-6) of every run: plan and Scratch.strug, as the team pass finds
    them in the engine (kernel.declare_actions with policy team, before its team_pass)."""
    for j in range(st.tiers.shape[0]):
        for i in range(R.game[K.N_CHARS]):
            sc.dazed[i] = st.chars[j, i, K.DAZED_LEFT] > 0
        K.declare_actions(R, st, j, sc, K.GREEDY)
        for i in range(R.game[K.N_CHARS]):
            for f in range(K.N_PLAN):
                plans[j, i, f] = sc.plan[i, f]
            for f in range(K.N_STRUG):
                strugs[j, i, f] = sc.strug[i, f]


@njit(_nrt=False)
def scalar_team(R, st, sc0, plans, work, strugs):
    """The engine's own team pass for every run, on its greedy plan (``work``: kind and target restored first)."""
    total = 0
    for j in range(st.tiers.shape[0]):
        for i in range(R.game[K.N_CHARS]):
            work[j, i, K.P_KIND] = plans[j, i, K.P_KIND]
            work[j, i, K.P_TARGET] = plans[j, i, K.P_TARGET]
        sc = K.Scratch(work[j], sc0.dazed, sc0.flags, sc0.helpers, sc0.weights, sc0.counts, strugs[j])
        K.team_pass(R, st, j, sc, st.runs[j, K.ROUNDS])
        total += work[j, 0, K.P_KIND]
    return total


def team_inputs(R, st, p):
    """Greedy plans of a snapshot, and their lane-major copy: TP (6, C, n) kind, target, ST_ROW0, ST_ROW1,
    ST_NEED0, ST_OWN; RL (2, n) attention, round."""
    n, C = st.tiers.shape[:2]
    plans = np.zeros((n, C, K.N_PLAN), dtype=np.int64)
    strugs = np.zeros((n, C, K.N_STRUG), dtype=np.int64)
    greedy_plans(R, st, K.new_scratch(p), plans, strugs)
    cols = [plans[:, :, K.P_KIND], plans[:, :, K.P_TARGET]] + [strugs[:, :, f] for f in TP_FIELDS]
    TP = np.ascontiguousarray(np.stack([c.T for c in cols]))
    RL = np.ascontiguousarray(st.runs[:, [K.ATTENTION, K.ROUNDS]].T)
    return plans, strugs, TP, RL


@njit(inline="always")
def mage_sel(R, TL, k, j):
    """``kernel.mage_hand_bonus`` (R-ESC-33) as a select on the lane-major tiers."""
    ok = (R.char[k, K.IS_MAGE_HAND] != 0) & (TL[k, ARMS, j] == 0) & (TL[k, FINGERS, j] == 0) & (TL[k, GAG, j] == 0)
    return R.char[k, K.MAGE_BONUS] if ok else 0


@njit(inline="always")
def helped_sel(table, TP, c, j, assisted, bonus):
    """``kernel.helped_chance``: c's declared check with an assist or not and guide + mage hand ``bonus``."""
    row0, row1 = TP[2, c, j], TP[3, c, j]
    return table[(row1 if assisted else row0) + clamp_need(TP[4, c, j] - bonus)]


@njit(inline="always")
def vmax(a, b):
    return a if a > b else b


@njit(inline="always")
def add_help_lanes(R, table, TL, TP, B, k, j0, W):
    """``kernel.add_planned_help`` of helper k in every lane (R-ESC-8 assisted, R-ESC-9 the largest guide,
    R-ESC-14 the largest mage hand; the target's chance weighed again). Idempotent, so it needs no mask of the
    lanes where k switched: where k's plan is not a help it changes nothing."""
    for c in range(R.game[K.N_CHARS]):
        if c == k:
            continue
        for w in range(W):  # every load unconditional, then selects (a select of two addresses blocks LLVM)
            j = lane(j0, w)
            kind, target = B[T_KIND][k, w], B[T_TARGET][k, w]
            helped, assisted, mage, guide = B[T_HELPED][c, w], B[T_ASSISTED][c, w], B[T_MAGE][c, w], B[T_GUIDE][c, w]
            m = ((kind == K.ASSIST) | (kind == K.GUIDE)) & (target == c)
            assist = m & (kind == K.ASSIST)
            helped = 1 if m else helped
            assisted = 1 if assist else assisted
            mage = vmax(mage, mage_sel(R, TL, k, j)) if assist else mage
            guide = vmax(guide, R.char[k, K.GUIDE_BONUS]) if m & (kind == K.GUIDE) else guide
            chance = helped_sel(table, TP, c, j, assisted != 0, guide + mage)
            B[T_HELPED][c, w], B[T_ASSISTED][c, w], B[T_MAGE][c, w], B[T_GUIDE][c, w] = helped, assisted, mage, guide
            before = B[T_BEFORE][c, w]
            B[T_BEFORE][c, w] = chance if m else before


@njit(inline="always")
def weigh_lanes(R, table, TL, TP, B, L, i, j0, W):
    """R-ESC-21: for struggler i in every lane, the help of largest gain (assist or guide, party order, strictly
    larger) over the struggling teammates: L[0] gain, L[1] kind, L[2] target (R-ESC-7, R-ESC-9, R-ESC-11)."""
    my_guide = R.char[i, K.GUIDE_BONUS]
    for w in range(W):
        j = lane(j0, w)
        physical = (TL[i, FINGERS, j] == 0) & (TL[i, ARMS, j] < COMPLETE) & (TL[i, LEGS, j] < COMPLETE) & (
            TL[i, BODY, j] == 0)
        hand = (R.char[i, K.IS_MAGE_HAND] != 0) & (TL[i, ARMS, j] == 0) & (TL[i, FINGERS, j] == 0)
        L[3][w] = 1 if physical | hand else 0  # can_assist
        L[4][w] = 1 if (TL[i, GAG, j] == 0) & (TL[i, BLINDFOLD, j] == 0) else 0  # can_guide
        L[5][w] = mage_sel(R, TL, i, j)
        L[0][w], L[1][w], L[2][w] = -1, K.NONE, -1
    for c in range(R.game[K.N_CHARS]):
        if c == i:
            continue
        for w in range(W):
            j = lane(j0, w)
            valid = B[T_KIND][c, w] == K.STRUGGLE
            guide, mage, before = B[T_GUIDE][c, w], B[T_MAGE][c, w], B[T_BEFORE][c, w]
            gain = helped_sel(table, TP, c, j, True, guide + vmax(mage, L[5][w])) - before
            up = valid & (L[3][w] != 0) & (gain > L[0][w])
            L[0][w], L[1][w], L[2][w] = (gain, K.ASSIST, c) if up else (L[0][w], L[1][w], L[2][w])
            gain = helped_sel(table, TP, c, j, B[T_ASSISTED][c, w] != 0, vmax(guide, my_guide) + mage) - before
            up = valid & (L[4][w] != 0) & (TL[c, EARPLUGS, j] == 0) & (gain > L[0][w])
            L[0][w], L[1][w], L[2][w] = (gain, K.GUIDE, c) if up else (L[0][w], L[1][w], L[2][w])


@njit(inline="always")
def attention_cost(R, kind, target, c):
    """What c's planned action draws (``kernel.plan_attention``, R-ESC-9a, R-ESC-10b), as selects."""
    other = ((kind == K.UNTIE) | (kind == K.USE_ITEM)) & (target != c)
    cost = R.game[K.ATT_ASSIST] if (kind == K.ASSIST) | other else 0
    cost = R.game[K.ATT_GUIDE] if (kind == K.GUIDE) | (kind == K.INSPIRE) else cost
    return R.game[K.ATT_SEARCH] if kind == K.SEARCH else cost


@njit(inline="always")
def switch_lanes(R, TP, RL, B, L, i, j0, W):
    """R-ESC-21: i, struggling without planned help, switches where the best gain exceeds its own chance and the
    attention guard of R-ESC-37 allows it."""
    for w in range(W):
        L[6][w] = 0
    for c in range(R.game[K.N_CHARS]):
        for w in range(W):
            L[6][w] += attention_cost(R, B[T_KIND][c, w], B[T_TARGET][c, w], c)
    limit, per_round = R.game[K.ATTENTION_LIMIT], R.game[K.ATT_PER_ROUND]
    att_assist, att_guide = R.game[K.ATT_ASSIST], R.game[K.ATT_GUIDE]
    for w in range(W):
        j = lane(j0, w)
        kind, target, helped, own = B[T_KIND][i, w], B[T_TARGET][i, w], B[T_HELPED][i, w], TP[5, i, j]
        gain, best_kind, best_target = L[0][w], L[1][w], L[2][w]
        go = (kind == K.STRUGGLE) & (helped == 0) & (best_kind != K.NONE) & (gain > own)
        cost = att_assist if best_kind == K.ASSIST else att_guide
        projected = RL[0, j] + L[6][w] + per_round + cost + per_round * vmax(0, R.game[K.MAX_ROUNDS] - RL[1, j])
        go = go & ((limit == 0) | (projected < limit))
        B[T_KIND][i, w] = best_kind if go else kind
        B[T_TARGET][i, w] = best_target if go else target


@njit(inline="always")
def any_help(B, k, W):
    """Whether k assists or guides in any lane of the block (a reduction, then one branch for the block)."""
    n = 0
    for w in range(W):
        kind = B[T_KIND][k, w]
        n += 1 if (kind == K.ASSIST) | (kind == K.GUIDE) else 0
    return n > 0


@njit(inline="always")
def any_unhelped_struggle(B, i, W):
    """Whether i struggles without planned help in any lane of the block (R-ESC-21 weighs only those)."""
    n = 0
    for w in range(W):
        n += 1 if (B[T_KIND][i, w] == K.STRUGGLE) & (B[T_HELPED][i, w] == 0) else 0
    return n > 0


@entry
def lanes_team(R, table, TL, TP, RL, W, B, L, out):
    """The team pass (R-ESC-21, R-ESC-37) for W runs at a time on lane-major inputs; out (2, C, n): kind, target."""
    C = R.game[K.N_CHARS]
    total = 0
    for j0 in range(0, TP.shape[2], W):
        for c in range(C):
            for w in range(W):
                j = lane(j0, w)
                B[T_KIND][c, w] = TP[0, c, j]
                B[T_TARGET][c, w] = TP[1, c, j]
                B[T_BEFORE][c, w] = TP[5, c, j]
                B[T_HELPED][c, w] = 0
                B[T_ASSISTED][c, w] = 0
                B[T_GUIDE][c, w] = 0
                B[T_MAGE][c, w] = 0
        for k in range(C):  # block-wide skips: helps are rare (about 3.4 a run), so most blocks of k have none
            if any_help(B, k, W):
                add_help_lanes(R, table, TL, TP, B, k, j0, W)
        for i in range(C):
            if not any_unhelped_struggle(B, i, W):
                continue
            weigh_lanes(R, table, TL, TP, B, L, i, j0, W)
            switch_lanes(R, TP, RL, B, L, i, j0, W)
            if any_help(B, i, W):
                add_help_lanes(R, table, TL, TP, B, i, j0, W)
        for c in range(C):
            for w in range(W):
                out[0, c, lane(j0, w)] = B[T_KIND][c, w]
                out[1, c, lane(j0, w)] = B[T_TARGET][c, w]
                total += B[T_KIND][c, w]
    return total


def check_team(R, p, snaps):
    """Asserts the lane team pass equals the engine's on every (run, character) of every snapshot (kind and
    target of the final plan); returns the calls to time and the pairs per snapshot."""
    calls, n_chars = {"scalar": []}, []
    for st in snaps:
        plans, strugs, TP, RL = team_inputs(R, st, p)
        TL = lane_major(st, np.int64)[0]
        work = plans.copy()
        sc0 = K.new_scratch(p)
        scalar_team(R, st, sc0, plans, work, strugs)
        ref = np.stack([work[:, :, K.P_KIND].T, work[:, :, K.P_TARGET].T])
        n_chars.append(plans.shape[0] * plans.shape[1])
        calls["scalar"].append(lambda a=(R, st, sc0, plans, work, strugs): scalar_team(*a))
        for W in TEAM_WIDTHS:
            C = plans.shape[1]
            B = tuple(np.zeros((C, W), dtype=np.int64) for _ in range(N_TB))
            L = tuple(np.zeros(W, dtype=np.int64) for _ in range(7))
            got = np.full_like(ref, -7)
            lanes_team(R, R.table, TL, TP, RL, W, B, L, got)
            assert np.array_equal(got, ref), W
            calls.setdefault(f"lane-major int64 W={W}", []).append(
                lambda a=(R, R.table, TL, TP, RL, W, B, L, got): lanes_team(*a))
    return calls, n_chars


# =============================================================================================
# R-GEN-1, R-GEN-4, R-ESC-14: the check roll of resolve_struggles, scalar and in lanes (keyed uniforms)


@njit(_nrt=False)
def scalar_checks(R, st, sc, key, plans, strugs, out):
    """``kernel.roll_check`` of every declared struggle (no help), as resolve_struggles rolls it:
    out[j, i] = success + 2 * uniforms drawn, -1 where i does not struggle."""
    keys = (key[0], key[1])
    total = 0
    for j in range(st.tiers.shape[0]):
        u = K.round_keys(keys, j, st.runs[j, K.ROUNDS])
        for i in range(R.game[K.N_CHARS]):
            sc.counts[i] = 0
            if plans[j, i, K.P_KIND] != K.STRUGGLE:
                out[j, i] = -1
                continue
            ok = K.roll_check(u, sc, i, strugs[j, i, K.ST_NET0], strugs[j, i, K.ST_NEED0],
                              st.chars[j, i, K.BLESSED], plans[j, i, K.P_BREATH] == 1)
            out[j, i] = (1 if ok else 0) + 2 * sc.counts[i]
            total += out[j, i]
    return total


@njit(inline="always")
def uniform_lane(u, i, k):
    """``kernel.next_uniform`` with the draw index ``k`` given (a lane computes every index it may need)."""
    counter = u[2] | (np.uint64(i) << np.uint64(24)) | np.uint64(k)
    bits = K.mix64(K.mix64(u[0] ^ counter) ^ u[1]) >> np.uint64(11)
    return float(np.int64(bits)) * (1.0 / 9007199254740992.0)


@njit(inline="always")
def face_lane(x, sides):
    """``kernel.face``: floor(x * sides) + 1, the truncation as numpy's cast (numba's ``int()`` of a float is a
    call LLVM does not vectorise)."""
    return np.int64(x * sides) + 1


@njit(inline="always")
def check_lane(u, i, net, need, blessed, breath):
    """R-GEN-4: keep the highest (net > 0) or lowest (net < 0) of |net| + 1 d20 (|net| <= MAX_NET_DICE = 2), the
    blessing d4 and the breath d20 after them (R-ESC-14): all five uniforms computed, the unused ones dropped by
    selects. Returns success + 2 * uniforms drawn, as the scalar."""
    a = net if net > 0 else -net
    d0, d1, d2 = face_lane(uniform_lane(u, i, 0), 20), face_lane(uniform_lane(u, i, 1), 20), face_lane(
        uniform_lane(u, i, 2), 20)
    hi = vmax(d0, d1) if a >= 1 else d0
    hi = vmax(hi, d2) if a >= 2 else hi
    lo = d0 if (a < 1) | (d0 < d1) else d1
    lo = lo if (a < 2) | (lo < d2) else d2
    total = hi if net > 0 else (lo if net < 0 else d0)
    b = 1 if blessed != 0 else 0
    total += face_lane(uniform_lane(u, i, a + 1), 4) if b else 0
    total += face_lane(uniform_lane(u, i, a + 1 + b), 20) if breath else 0
    return (1 if total >= need else 0) + 2 * (1 + a + b + (1 if breath else 0))


@entry
def lanes_checks(R, key, CK, RL, W, out):
    """The check of every declared struggle for W runs of one character at a time; CK (5, C, n): struggles, net,
    need, blessed, breath (lane-major); out (C, n) as :func:`scalar_checks`."""
    keys = (key[0], key[1])
    total = 0
    for i in range(R.game[K.N_CHARS]):
        for j0 in range(0, CK.shape[2], W):
            for w in range(W):
                j = lane(j0, w)
                u = K.round_keys(keys, j, RL[1, j])
                got = check_lane(u, i, CK[1, i, j], CK[2, i, j], CK[3, i, j], CK[4, i, j] != 0)
                out[i, j] = got if CK[0, i, j] != 0 else -1
                total += out[i, j]
    return total


def check_checks(R, p, snaps):
    """Asserts the lane check roll equals ``kernel.roll_check`` (success and uniforms drawn) on every declared
    struggle of every snapshot; returns the calls to time and the pairs per snapshot."""
    calls, n_chars = {"scalar": []}, []
    key = np.array([12345, 67890], dtype=np.uint64)
    for st in snaps:
        plans, strugs, TP, RL = team_inputs(R, st, p)
        assert np.abs(strugs[:, :, K.ST_NET0]).max() <= K.MAX_NET_DICE
        ref = np.zeros(plans.shape[:2], dtype=np.int64)
        sc = K.new_scratch(p)
        scalar_checks(R, st, sc, key, plans, strugs, ref)
        CK = np.ascontiguousarray(np.stack([
            (plans[:, :, K.P_KIND] == K.STRUGGLE).T, strugs[:, :, K.ST_NET0].T, strugs[:, :, K.ST_NEED0].T,
            st.chars[:, :, K.BLESSED].T, plans[:, :, K.P_BREATH].T]).astype(np.int64))
        n_chars.append(ref.size)
        o = ref.copy()
        calls["scalar"].append(lambda a=(R, st, sc, key, plans, strugs, o): scalar_checks(*a))
        for W in WIDTHS:
            got = np.full(ref.T.shape, -7, dtype=np.int64)
            lanes_checks(R, key, CK, RL, W, got)
            assert np.array_equal(got.T, ref), W
            calls.setdefault(f"lane-major int64 W={W}", []).append(lambda a=(R, key, CK, RL, W, got): lanes_checks(*a))
    share = np.mean([(team_inputs(R, st, p)[0][:, :, K.P_KIND] == K.STRUGGLE).mean() for st in snaps])
    return calls, n_chars, share


def best_variants(R, st, lm32, lm64):
    """name -> (W, call(out)) for every lane variant of the best struggle on one snapshot."""
    t32 = R.table.astype(np.int32)
    out = {}
    for W in WIDTHS:
        wk = tuple(np.zeros(W, dtype=np.int64) for _ in range(8))
        wk32 = tuple(np.zeros(W, dtype=np.int32) for _ in range(8))
        bufs = (np.zeros((N_SLOTS, W), np.int64), np.zeros((N_SLOTS, W), np.int64),
                np.zeros((N_SLOTS, W), np.int64), np.zeros((N_CF, W), np.int64))
        out[f"strided W={W}"] = lambda o, W=W, wk=wk: lanes_strided(R, R.table, st, W, wk, o)
        out[f"gather W={W}"] = lambda o, W=W, wk=wk, b=bufs: lanes_gather(R, R.table, st, W, wk, *b, o)
        out[f"lane-major int64 W={W}"] = lambda o, W=W, wk=wk: lanes_major(R, R.table, *lm64, W, wk, o)
        out[f"lane-major int32 W={W}"] = lambda o, W=W, wk=wk32: lanes_major(R, t32, *lm32, W, wk, o)
    return out


def fastest(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def time_table(calls, n_chars, repeat, inner):
    """Fastest of ``repeat`` alternating rounds (each call ``inner`` times), for every name -> list over snapshots
    of a no-argument call: ns per character on each snapshot, then over all of them (total time / total pairs)."""
    best = {name: [float("inf")] * len(fs) for name, fs in calls.items()}
    for _ in range(repeat):
        for name, fs in calls.items():
            for k, f in enumerate(fs):
                t = time.process_time()
                for _ in range(inner):
                    f()
                best[name][k] = min(best[name][k], (time.process_time() - t) / inner)
    return {name: [t / n * 1e9 for t, n in zip(ts, n_chars, strict=True)] + [sum(ts) / sum(n_chars) * 1e9]
            for name, ts in best.items()}


def print_table(title, ns):
    """Markdown: ns per character on each snapshot and overall, and the scalar's time over each."""
    heads = [f"round {r + 1}" for r in SNAP_ROUNDS] + ["all"]
    print(f"| {title} | " + " | ".join(heads) + " | scalar / this (all) |")
    print("|---|" + "---|" * (len(heads) + 1))
    for name, v in ns.items():
        print(f"| {name} | " + " | ".join(f"{x:.1f}" for x in v) + f" | {ns['scalar'][-1] / v[-1]:.2f}x |")


def check_best(R, snaps):
    """Asserts every lane variant equals the scalar best struggle on every (run, character); returns the calls to
    time (name -> one call per snapshot) and the count of (run, character) pairs per snapshot."""
    calls, n_chars = {"scalar": []}, []
    for st in snaps:
        ref = np.zeros(st.tiers.shape[:2] + (3,), dtype=np.int64)
        scalar_best(R, st, ref)
        n_chars.append(ref.shape[0] * ref.shape[1])
        o = ref.copy()
        calls["scalar"].append(lambda st=st, o=o: scalar_best(R, st, o))
        calls.setdefault("scalar, noalias", []).append(lambda st=st, o=o: scalar_best_na(R, st, o))
        lm32, lm64 = lane_major(st, np.int32), lane_major(st, np.int64)
        for name, f in best_variants(R, st, lm32, lm64).items():
            got = np.full_like(ref, -7)
            f(got)
            assert np.array_equal(got, ref), name
            calls.setdefault(name, []).append(lambda f=f, o=got: f(o))
    return calls, n_chars


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--inner", type=int, default=10, help="calls per timing")
    ap.add_argument("--asm", action="store_true", help="count zmm / ymm instructions of the lane functions")
    args = ap.parse_args()
    p = compile_params(sim.load_scenario(HERE / "escape_heavy.toml"))
    R = K.rules_of(p)
    snaps = snapshots(p, R, args.runs)
    print(f"numba {numba.__version__}, LLVM CPU {numba.config.CPU_NAME or 'host'} "
          f"({llvm.get_host_cpu_name()} host)")
    print(f"heavy party, {args.runs:,} runs; runs in play at the snapshots (rounds {SNAP_ROUNDS} played): "
          f"{[len(s.runs) for s in snaps]}; load average {os.getloadavg()[0]:.2f}")
    calls, n_chars = check_best(R, snaps)
    print(f"R-ESC-20 step 2 best struggle: every lane variant equals the scalar one on all {sum(n_chars):,} "
          "(run, character) pairs")
    print_table("best struggle, ns per character", time_table(calls, n_chars, args.repeat, args.inner))
    for dt in (np.int32, np.int64):  # a lane engine would keep this layout: once a chunk, not once a round
        ns = time_table({"copy": [lambda st=st, dt=dt: lane_major(st, dt) for st in snaps]}, n_chars, args.repeat, 1)
        print(f"copying the state to lane-major {dt.__name__} (numpy transpose of tiers, acc, streak, chars): "
              f"{ns['copy'][-1]:.1f} ns per character")
    calls, n_chars = check_team(R, p, snaps)
    print(f"R-ESC-21 team pass: the lane team pass equals the scalar one (final kind and target) on all "
          f"{sum(n_chars):,} (run, character) pairs")
    print_table("team pass, ns per character", time_table(calls, n_chars, args.repeat, args.inner))
    calls, n_chars, share = check_checks(R, p, snaps)
    print(f"R-GEN-4 check roll: the lane roll equals kernel.roll_check (success, uniforms drawn) on every declared "
          f"struggle ({share:.0%} of the {sum(n_chars):,} (run, character) pairs struggle)")
    print_table("check roll, ns per character", time_table(calls, n_chars, args.repeat, args.inner))
    if args.asm:
        print_asm()


def print_asm() -> None:
    for fn in (scalar_best, scalar_best_na, lanes_strided, lanes_gather, lanes_major, scalar_team, lanes_team,
               scalar_checks, lanes_checks):
        for sig in fn.signatures:
            asm = fn.inspect_asm(sig)
            print(f"{fn.__name__} {str(sig)[:60]}...: zmm {asm.count('zmm')}, ymm {asm.count('ymm')}, "
                  f"xmm {asm.count('xmm')}, gathers {asm.count('gather')}")


if __name__ == "__main__":
    main()
