"""Campus engine throughput, a plain scalar loop's throughput and their ratio, in one process (issue 11).

The bench scenario: 6 PCs, 10 locations, 2 capture rooms, a boss, two teams, 12 turns
(scenarios/campus/six_pcs_two_teams.toml). The engine is the compiled kernel on one core (``n_jobs = 1``); the
plain scalar loop is the reference engine, one game at a time drawing only what it uses from the same stream,
timed on a subset of the same games, whose per-game results are checked against the kernel's. A PC-turn is
one PC in one turn of one game (P x T per game, finished PCs included, as the issue counts them). Each is
timed ``--repeat`` times; the rates use the fastest run of each (wall and CPU time separately), as ``timeit``
does, since on a shared machine other processes only ever slow a run down.

    python bench/campus.py [--runs 20000] [--reference-runs 400] [--seed 1] [--repeat 3] [--jobs-runs 1000000]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import sim
from sim.campus.params import compile_params
from sim.campus.reference import Stream, play_game
from sim.campus.simulate import run_arrays

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "campus" / "six_pcs_two_teams.toml"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20_000)
    ap.add_argument("--reference-runs", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs-runs", type=int, default=1_000_000, help="games for --jobs 1 vs 2 (0: skip)")
    args = ap.parse_args()
    scenario = sim.load_scenario(SCENARIO)
    params = compile_params(scenario)
    s = scenario
    per_game = params.P * params.T
    print(f"scenario: {s.name}: {len(s.party)} PCs, {len(s.locations)} locations "
          f"({int(params.is_room.sum())} capture rooms), {params.S} adversary slots "
          f"({int(params.adv_boss.sum())} boss), teams {list(params.team_names)}, {params.T} turns, "
          f"fights = {s.rules.fights!r}")
    t0 = time.perf_counter()
    run_arrays(params, 200, args.seed)  # compiles the kernel, or loads it from numba's cache
    print(f"first call (compile or cache load + 200 games): {time.perf_counter() - t0:.2f} s")
    stream = Stream(np.random.default_rng(args.seed))
    for _ in range(200):
        play_game(params, stream)
    print(f"uniforms drawn per game-turn: {stream.used / (200 * params.T):.1f} (the block layout before: 97)")

    def timed(runs: int, engine: str) -> tuple[dict, float, float]:
        """The result and the fastest wall and CPU times of ``--repeat`` runs."""
        walls, cpus = [], []
        for _ in range(max(1, args.repeat)):
            t0, c0 = time.perf_counter(), time.process_time()
            res = run_arrays(params, runs, args.seed, engine=engine)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        print(f"  {engine:9s} x {runs:>6}: wall " + ", ".join(f"{x:.3f}" for x in walls)
              + " s; CPU " + ", ".join(f"{x:.3f}" for x in cpus) + " s")
        return res, min(walls), min(cpus)

    print(f"timings (fastest of {max(1, args.repeat)} used):")
    kern, tk, ck = timed(args.runs, "kernel")
    ref, tr, cr = timed(args.reference_runs, "reference")
    small = run_arrays(params, args.reference_runs, args.seed, engine="kernel")  # same chunk stream as ref
    same = all(np.array_equal(small[k], ref[k]) for k in ref)
    assert kern["final_status"].shape[0] == args.runs
    k_rate = args.runs / tk
    r_rate = args.reference_runs / tr
    print(f"engine (kernel, 1 core): {args.runs:>7} games in {tk:7.3f} s = {k_rate:10.0f} games/s "
          f"= {k_rate * per_game / 1e6:6.2f} M PC-turns/s")
    print(f"plain scalar loop:       {args.reference_runs:>7} games in {tr:7.3f} s = {r_rate:10.0f} games/s "
          f"= {r_rate * per_game / 1e6:6.3f} M PC-turns/s")
    print(f"ratio engine / plain scalar loop: {k_rate / r_rate:.0f}x   "
          f"(identical per-game results on the subset: {same})")
    # on a shared machine the wall clock counts other processes' time too: the same figures in CPU time
    kc, rc = args.runs / ck, args.reference_runs / cr
    print(f"CPU time: engine {kc:.0f} games/s = {kc * per_game / 1e6:.2f} M PC-turns/s; plain scalar loop "
          f"{rc:.0f} games/s; ratio {kc / rc:.0f}x")
    print("targets (issue 11): >= 8 M PC-turns/s on one core, >= 150x the plain scalar loop")
    if args.jobs_runs:  # sim.simulate streamed (python -m sim run --no-runs), fastest of --repeat
        def jobs_seconds(n_jobs: int) -> float:
            t0 = time.perf_counter()
            sim.simulate(scenario, runs=args.jobs_runs, seed=args.seed, n_jobs=n_jobs, keep_runs=False)
            return time.perf_counter() - t0

        t1 = min(jobs_seconds(1) for _ in range(max(1, args.repeat)))
        t2 = min(jobs_seconds(2) for _ in range(max(1, args.repeat)))
        print(f"sim.simulate {args.jobs_runs:,} games: --jobs 1 {t1:6.2f} s, --jobs 2 {t2:6.2f} s, "
              f"speed-up {t1 / t2:.2f}x (target: >= 1.7x)")


if __name__ == "__main__":
    main()
