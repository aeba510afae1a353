"""Speed of the formation engine (numba kernel) against the plain scalar reference, in one process.

    python bench/formation.py [scenario.toml] [--kernel-runs N] [--reference-runs M]

Both engines play the same scenario on the same seed through ``sim.simulate`` (draws, engine,
aggregate and summary). Prints runs/s of each, wall clock and CPU time of this process (CPU time is
steadier on a shared machine), and their ratio, and the share of ``sim.simulate`` (runs kept) spent outside
the engine (aggregate and runs frame), in CPU time. Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # measure this checkout's sim

import sim  # noqa: E402
from sim.batch import chunks  # noqa: E402
from sim.formation.kernel import run_chunk_kernel  # noqa: E402
from sim.formation.model import compile_params  # noqa: E402


def rate(scenario, runs: int, engine: str, seed: int = 1) -> tuple[float, float]:
    """(runs per wall second, runs per CPU second); a small warm-up run loads the compiled code first."""
    sim.simulate(scenario, runs=min(runs, 200), seed=seed, engine=engine)
    wall, cpu = time.perf_counter(), time.process_time()
    sim.simulate(scenario, runs=runs, seed=seed, engine=engine)
    return runs / (time.perf_counter() - wall), runs / (time.process_time() - cpu)


def outside_share(scenario, runs: int, repeat: int = 3) -> tuple[float, float]:
    """(CPU seconds of ``sim.simulate`` keeping its runs, CPU seconds of its engine alone: the same chunks through
    the kernel), best of ``repeat``, the two alternated."""
    p = compile_params(scenario)

    def engine():
        for c in chunks(runs):
            run_chunk_kernel(p, c.n_runs, c.generator(seed=1))

    whole, alone = float("inf"), float("inf")
    for _ in range(repeat):
        cpu = time.process_time()
        engine()
        alone = min(alone, time.process_time() - cpu)
        cpu = time.process_time()
        sim.simulate(scenario, runs=runs, seed=1)
        whole = min(whole, time.process_time() - cpu)
    return whole, alone


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", nargs="?", default="scenarios/formation/summoner_vs_horde.toml")
    parser.add_argument("--kernel-runs", type=int, default=50_000)
    parser.add_argument("--reference-runs", type=int, default=1_000)
    parser.add_argument("--share-runs", type=int, default=100_000, help="runs of the outside-the-engine share")
    args = parser.parse_args()
    scenario = sim.load_scenario(args.scenario)
    k_wall, k_cpu = rate(scenario, args.kernel_runs, "kernel")
    r_wall, r_cpu = rate(scenario, args.reference_runs, "reference")
    print(f"scenario: {args.scenario}")
    print(f"kernel:    {k_wall:12,.0f} runs/s wall  {k_cpu:12,.0f} runs/s CPU  ({args.kernel_runs} runs)")
    print(f"reference: {r_wall:12,.0f} runs/s wall  {r_cpu:12,.0f} runs/s CPU  ({args.reference_runs} runs)")
    print(f"ratio:     {k_wall / r_wall:12.1f} x wall  {k_cpu / r_cpu:12.1f} x CPU")
    whole, alone = outside_share(scenario, args.share_runs)
    print(f"simulate() CPU, runs kept ({args.share_runs} runs): {whole:.3f} s, engine alone {alone:.3f} s: "
          f"{(whole - alone) / whole:.1%} outside the engine (aggregate, runs frame)")


if __name__ == "__main__":
    main()
