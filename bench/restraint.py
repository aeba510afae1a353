"""Speed of the restraint kernel (numba) against the plain scalar reference, in one process (STYLE.md 13).

    python bench/restraint.py [SCENARIO] [--runs N] [--reference-runs M]

Both engines run the same scenario on the same draws (the draw itself is timed separately); the
script prints runs per second of each and their ratio, and the share of ``sim.simulate`` (runs kept) spent
outside the engine (aggregate and runs frame), in CPU time. Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # measure this checkout's sim

import sim  # noqa: E402
from sim.batch import chunks
from sim.restraint.kernel import run_kernel
from sim.restraint.reference import run_reference
from sim.restraint.rules import compile_params
from sim.restraint.state import draw_uniforms

DEFAULT = Path(__file__).resolve().parents[1] / "scenarios" / "restraint" / "raging_barbarian.toml"


def _best_of(fn, repeat: int, clock=time.perf_counter) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = clock()
        fn()
        best = min(best, clock() - start)
    return best


def outside_share(scenario, p, runs: int, repeat: int) -> tuple[float, float]:
    """(CPU seconds of ``sim.simulate`` keeping its runs, CPU seconds of its engine alone: the same chunks' draws and
    kernel), best of ``repeat``, the two alternated."""
    def engine():
        for c in chunks(runs):
            run_kernel(p, draw_uniforms(p, c.n_runs, c.generator(0)))

    whole, alone = float("inf"), float("inf")
    for _ in range(repeat):
        alone = min(alone, _best_of(engine, 1, time.process_time))
        whole = min(whole, _best_of(lambda: sim.simulate(scenario, runs=runs, seed=0), 1, time.process_time))
    return whole, alone


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", nargs="?", default=str(DEFAULT))
    parser.add_argument("--runs", type=int, default=10_000, help="kernel runs (one seed chunk)")
    parser.add_argument("--reference-runs", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--share-runs", type=int, default=100_000, help="runs of the outside-the-engine share")
    args = parser.parse_args()

    scenario = sim.load_scenario(args.scenario)
    p = compile_params(scenario)
    rng = np.random.default_rng(0)
    draw_time = _best_of(lambda: draw_uniforms(p, args.runs, rng), args.repeat)
    u = draw_uniforms(p, args.runs, rng)
    u_ref = u[:, : args.reference_runs]
    run_kernel(p, u[:, :10])  # load the compiled code
    kernel_cpu = _best_of(lambda: run_kernel(p, u), args.repeat, time.process_time)
    reference_cpu = _best_of(lambda: run_reference(p, u_ref), 1, time.process_time)
    kernel_time = _best_of(lambda: run_kernel(p, u), args.repeat)
    reference_time = _best_of(lambda: run_reference(p, u_ref), 1)
    simulate_time = _best_of(lambda: sim.simulate(scenario, runs=args.runs, seed=0), args.repeat)
    whole_cpu, engine_cpu = outside_share(scenario, p, args.share_runs, args.repeat)

    kernel_rate = args.runs / kernel_time
    reference_rate = u_ref.shape[1] / reference_time
    print(f"scenario: {scenario.name} ({p.rounds} duel rounds, {p.horizon} simulated, {p.n_cols} columns)")
    print(f"draws:      {args.runs / draw_time:12,.0f} runs/s")
    print(f"kernel:     {kernel_rate:12,.0f} runs/s  ({args.runs} runs)")
    print(f"reference:  {reference_rate:12,.0f} runs/s  ({u_ref.shape[1]} runs)")
    print(f"simulate(): {args.runs / simulate_time:12,.0f} runs/s  (draws, kernel, summary)")
    print(f"ratio kernel / reference: {kernel_rate / reference_rate:,.1f}x")
    print(f"CPU time: kernel {args.runs / kernel_cpu:,.0f} runs/s, reference {u_ref.shape[1] / reference_cpu:,.0f} "
          f"runs/s, ratio {reference_cpu / u_ref.shape[1] * args.runs / kernel_cpu:,.1f}x")
    print(f"simulate() CPU, runs kept ({args.share_runs} runs): {whole_cpu:.3f} s, engine alone (draws, kernel) "
          f"{engine_cpu:.3f} s: {(whole_cpu - engine_cpu) / whole_cpu:.1%} outside the engine (aggregate, runs frame)")


if __name__ == "__main__":
    main()
