"""Campus kernel throughput and its ratio to the scalar reference, in one process (STYLE.md 13).

The issue's bench: 6 PCs, 10 locations, 2 capture rooms, a boss, teams, 12 turns, 20,000 games
(scenarios/campus/six_pcs_two_teams.toml). The reference is timed on a subset of the same games
and its per-game results are checked against the kernel's on the same runs and seed.

    python bench/campus.py [--runs 20000] [--reference-runs 400] [--seed 1]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import sim
from sim.campus.params import compile_params
from sim.campus.simulate import run_arrays

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "campus" / "six_pcs_two_teams.toml"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20_000)
    ap.add_argument("--reference-runs", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    scenario = sim.load_scenario(SCENARIO)
    params = compile_params(scenario)
    s = scenario
    print(f"scenario: {s.name}: {len(s.party)} PCs, {len(s.locations)} locations "
          f"({int(params.is_room.sum())} capture rooms), {params.S} adversary slots "
          f"({int(params.adv_boss.sum())} boss), teams {list(params.team_names)}, {params.T} turns; "
          f"K = {params.layout.K}")
    run_arrays(params, 500, args.seed)  # warm-up
    t0 = time.perf_counter()
    kern = run_arrays(params, args.runs, args.seed, engine="kernel")
    tk = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = run_arrays(params, args.reference_runs, args.seed, engine="reference")
    tr = time.perf_counter() - t0
    small = run_arrays(params, args.reference_runs, args.seed, engine="kernel")  # same chunk stream as ref
    same = all(np.array_equal(small[k], ref[k]) for k in ref)
    assert kern["final_status"].shape[0] == args.runs
    k_rate = args.runs / tk
    r_rate = args.reference_runs / tr
    print(f"kernel:    {args.runs:>7} games in {tk:7.3f} s = {k_rate:10.0f} games/s")
    print(f"reference: {args.reference_runs:>7} games in {tr:7.3f} s = {r_rate:10.0f} games/s")
    print(f"ratio kernel/reference: {k_rate / r_rate:.1f}x   (identical per-game results on the subset: {same})")


if __name__ == "__main__":
    main()
