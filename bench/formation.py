"""Speed of the formation kernel against the scalar reference, in one process (STYLE.md 13).

    python bench/formation.py [scenario.toml] [--kernel-runs N] [--reference-runs M]

Prints runs/s of each engine on the same scenario and seed, and their ratio.
"""

from __future__ import annotations

import argparse
import time

import sim


def rate(scenario, runs: int, engine: str, seed: int = 1) -> float:
    sim.simulate(scenario, runs=min(runs, 200), seed=seed, engine=engine)  # warm-up
    start = time.perf_counter()
    sim.simulate(scenario, runs=runs, seed=seed, engine=engine)
    return runs / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", nargs="?", default="scenarios/formation/summoner_vs_horde.toml")
    parser.add_argument("--kernel-runs", type=int, default=50_000)
    parser.add_argument("--reference-runs", type=int, default=2_000)
    args = parser.parse_args()
    scenario = sim.load_scenario(args.scenario)
    kernel = rate(scenario, args.kernel_runs, "kernel")
    reference = rate(scenario, args.reference_runs, "reference")
    print(f"scenario: {args.scenario}")
    print(f"kernel:    {kernel:12,.0f} runs/s  ({args.kernel_runs} runs)")
    print(f"reference: {reference:12,.0f} runs/s  ({args.reference_runs} runs)")
    print(f"ratio:     {kernel / reference:12.1f} x")


if __name__ == "__main__":
    main()
