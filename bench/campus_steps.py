"""Where the campus engine spends its time, by rule step (issue 27): the engine's own turn (R-CAM-5) with the
processor's cycle counter read between its compiled steps, in the manner of ``bench/escape_steps.py``.

The profiled turn calls the same compiled step functions as :func:`sim.campus.kernel.r_cam_5_turn`, in the same
order, with the cycle counter (LLVM's ``readcyclecounter``) read between them; the cycles of each step are summed
over every turn of every game. Reading the counter costs a few cycles and keeps the compiler from moving work
across the steps, so the total is a little above the engine's own time: the shares are the result, and the script
prints the engine's unprofiled time beside them. The profiled games are checked equal to the engine's.

    python bench/campus_steps.py [--scenario PATH] [--runs 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from cycle_counter import cycles  # bench/, beside this script
from numba import njit

import sim
from sim.campus import kernel as K
from sim.campus.params import CAPTURED, CLEARED, FREE, compile_params

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "campus" / "six_pcs_two_teams.toml"
STEPS = ("new game, game stored", "turn start (statuses, R-CAM-51 ears)", "R-CAM-9a skill terms",
         "1. R-CAM-20 place adversaries",
         "1. R-CAM-50 options", "2. R-CAM-40 rescue", "2. R-CAM-40 move", "3. R-CAM-40 growth",
         "3. R-CAM-40 stances", "4. R-CAM-25 missions", "4. R-CAM-6 confrontations", "4. R-CAM-26 exits",
         "5. R-CAM-30 nursing", "6. R-CAM-11 escape checks", "7-8. gp, game over, record")
N = len(STEPS)


@njit(_nrt=False)
def profiled_turn(kp, w, rec, g, t, u, cur, acc):
    """:func:`sim.campus.kernel.r_cam_5_turn` with the cycles of each step summed into ``acc``."""
    c0 = cycles()
    P = kp.P
    n_free = 0
    alive = False
    for i in range(P):
        st = w[K.G_STATUS + i]
        free = st == FREE
        w[K.W_FREE0 + i] = free
        w[K.W_DEST + i] = -1
        w[K.W_NAMED + i] = -1
        n_free += free
        alive |= free | (st == CAPTURED)
    w[K.G_FREE_T + 4 * (t - 1)] = n_free
    ears = K.r_cam_51_early_ears(kp, w)
    c1 = cycles()
    acc[1] += c1 - c0
    if kp.B > 0:
        K.r_cam_9a_terms(kp, w)
    c2 = cycles()
    acc[2] += c2 - c1
    if alive:
        K.r_cam_20_place_adversaries(kp, w, t, u, cur)
        c3 = cycles()
        n_opt = K.r_cam_50_options(kp, w, u, cur)
        c4 = cycles()
        if kp.rescue:
            K.r_cam_40_rescue(kp, w, t)
        c5 = cycles()
        K.r_cam_40_move(kp, w, n_opt, ears, u, cur)
        c6 = cycles()
        K.r_cam_40_growth(kp, w, t)
        c7 = cycles()
        K.r_cam_40_stances(kp, w, t, ears, u, cur)
        c8 = cycles()
        K.r_cam_25_missions(kp, w, t, ears, u, cur)
        c9 = cycles()
        for loc in range(kp.L):
            K.r_cam_6_confrontations(kp, w, t, loc, u, cur)
        c10 = cycles()
        K.r_cam_26_exits(kp, w, t)
        c11 = cycles()
        K.r_cam_30_nursing(kp, w, u, cur)
        c12 = cycles()
        K.r_cam_11_escape_checks(kp, w, t, u, cur)
        c13 = cycles()
        K.r_cam_15_turn_end(kp, w, t)
        acc[3] += c3 - c2
        acc[4] += c4 - c3
        acc[5] += c5 - c4
        acc[6] += c6 - c5
        acc[7] += c7 - c6
        acc[8] += c8 - c7
        acc[9] += c9 - c8
        acc[10] += c10 - c9
        acc[11] += c11 - c10
        acc[12] += c12 - c11
        acc[13] += c13 - c12
        c2 = c13
    for i in range(P):
        rec.status_by_turn[g, t - 1, i] = w[K.G_STATUS + i]
    acc[14] += cycles() - c2


@njit(_nrt=False)
def profiled_games(kp, w, rec, u, cur, g0, g1, acc):
    """:func:`sim.campus.kernel.play_games` (whole games) with the profiled turn, on a cursor on the stack as the
    engine's (:func:`sim.campus.kernel._local_cursor`); storing a game's record counts as its new game step."""
    here = K._local_cursor()
    here[0], here[1] = cur[0], cur[1]
    g = profiled_games_at(kp, w, rec, u, here, g0, g1, acc)
    cur[0], cur[1] = here[0], here[1]
    return g


@njit(_nrt=False)
def profiled_games_at(kp, w, rec, u, cur, g0, g1, acc):
    """:func:`profiled_games` on the cursor ``cur``."""
    for g in range(g0, g1):
        start = cur[0]
        c0 = cycles()
        K.new_game(kp, w)
        acc[0] += cycles() - c0
        for t in range(1, kp.T + 1):
            profiled_turn(kp, w, rec, g, t, u, cur, acc)
        if cur[1]:
            cur[0] = start
            cur[1] = 0
            return g
        c0 = cycles()
        for i in range(kp.P):
            if w[K.G_STATUS + i] == FREE:
                w[K.G_STATUS + i] = CLEARED
                w[K.G_END_TURN + i] = kp.T
        K.store_game(kp, w, rec, g)
        acc[0] += cycles() - c0
    return g1


def run(p, n: int, seed: int, profiled: bool, acc=None):
    """:func:`sim.campus.kernel.run_kernel` (one chunk from ``default_rng(seed)``), profiled or not."""
    if not profiled:
        return K.run_kernel(p, n, np.random.default_rng(seed))
    rng = np.random.default_rng(seed)
    kp, w, rec = K.kernel_params(p), K.new_work(p), K.new_record(p, n)
    u = rng.random(1 << 16)
    cur = np.zeros(2, np.int64)
    g = 0
    while True:
        g = profiled_games(kp, w, rec, u, cur, g, n, acc)
        if g >= n:
            break
        u = K.refill_stream(u, cur, rng)
    return K.record_arrays(rec)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", type=Path, default=SCENARIO)
    ap.add_argument("--runs", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    p = compile_params(sim.load_scenario(args.scenario))
    run(p, 100, args.seed, False)  # compile (or load from the cache)
    run(p, 100, args.seed, True, np.zeros(N, np.uint64))
    plain = prof = float("inf")
    acc = None
    for _ in range(max(1, args.repeat)):  # alternating; the fastest of each is rated (the machine is shared)
        t = time.process_time()
        a = run(p, args.runs, args.seed, False)
        plain = min(plain, time.process_time() - t)
        trial = np.zeros(N, np.uint64)
        t = time.process_time()
        b = run(p, args.runs, args.seed, True, trial)
        spent = time.process_time() - t
        if spent < prof:
            prof, acc = spent, trial
    same = all(np.array_equal(a[k], b[k]) for k in a)
    turns = args.runs * p.T
    total = float(acc.sum())
    print(f"{args.runs:,} games, {turns * p.P:,} PC-turns; load average {os.getloadavg()[0]:.1f}; "
          f"profiled games identical: {same}")
    print(f"engine unprofiled: {plain:.3f} s CPU = {turns * p.P / plain / 1e6:.2f} M PC-turns/s; "
          f"profiled {prof:.3f} s")
    print("| step | share | ns per game-turn (scaled to the unprofiled time) |")
    print("|---|---|---|")
    for name, c in zip(STEPS, acc, strict=True):
        share = float(c) / total
        print(f"| {name} | {share:.1%} | {share * plain / turns * 1e9:.1f} |")


if __name__ == "__main__":
    main()
