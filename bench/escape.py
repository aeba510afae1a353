"""Escape kernel throughput against the scalar reference, in one process.

A four-character party, three or four restraints each, assists on, 20 rounds (bench/escape_party.toml).
The kernel runs RUNS runs; the reference runs a smaller sample (it is ~100x slower) and its rate
is extrapolated per run. Prints runs/s and character-rounds/s of both and their ratio.

    python bench/escape.py [--runs 100000] [--reference-runs 2000]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import sim
from sim.batch import chunks
from sim.escape.params import compile_params
from sim.escape.simulate import kernel_chunk, reference_chunk

HERE = Path(__file__).parent


def measure(fn, p, n_runs: int, seed: int) -> tuple[float, int, int]:
    """Seconds, runs and character-rounds for ``n_runs`` runs of ``fn`` over the fixed chunks."""
    start = time.perf_counter()
    rounds = 0
    for c in chunks(n_runs):
        cols = fn(p, c.n_runs, c.generator(seed))
        rounds += int(cols["rounds"].sum())
    return time.perf_counter() - start, n_runs, rounds * p.n_chars


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100_000)
    ap.add_argument("--reference-runs", type=int, default=2_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    scenario = sim.load_scenario(HERE / "escape_party.toml")
    p = compile_params(scenario)
    kernel_chunk(p, 100, np.random.default_rng(0))  # warm-up
    tk, nk, crk = measure(kernel_chunk, p, args.runs, args.seed)
    tr, nr, crr = measure(reference_chunk, p, args.reference_runs, args.seed)
    k_rps, r_rps = nk / tk, nr / tr
    print(f"scenario: {scenario.name} ({p.n_chars} characters, max_rounds {p.max_rounds})")
    print(f"kernel:    {nk:>9,} runs in {tk:7.2f} s = {k_rps:12,.0f} runs/s, {crk / tk:14,.0f} character-rounds/s")
    print(f"reference: {nr:>9,} runs in {tr:7.2f} s = {r_rps:12,.0f} runs/s, {crr / tr:14,.0f} character-rounds/s")
    print(f"ratio kernel/reference (runs/s): {k_rps / r_rps:.1f}x")


if __name__ == "__main__":
    main()
