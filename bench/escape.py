"""Escape engine throughput against a plain scalar loop of the same rules, in one process (STYLE.md 13).

A four-character party, three or four restraints each, assists on, 20 rounds (bench/escape_party.toml).
The compiled engine (sim/escape/kernel.py) runs RUNS runs; the scalar reference (sim/escape/reference.py: one run
at a time, drawing only the uniforms it uses) runs a smaller sample on the same chunk streams, its rate measured
per run. Prints runs/s and character-rounds/s of both and their ratio, checks that the runs both played agree,
then times `sim.simulate` with --jobs 1 and --jobs 2 on JOBS_RUNS runs (streamed, as `python -m sim run --no-runs`)
and, with --cold-start, the first call of a fresh process with an empty and with a filled numba cache.

Each measurement is repeated ``--repeat`` times and the fastest is rated (as ``timeit`` does: slower repeats
measure the machine's other work, not the engine).

    python bench/escape.py [--runs 200000] [--reference-runs 2000] [--jobs-runs 1000000] [--repeat 3] [--cold-start]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import sim
from sim.batch import chunks
from sim.escape.params import compile_params
from sim.escape.simulate import kernel_chunk, reference_chunk

HERE = Path(__file__).parent
SCENARIO = HERE / "escape_party.toml"

FIRST_CALL = """
import time
t = time.perf_counter()
import numpy as np, sim
from sim.escape.params import compile_params
from sim.escape.simulate import kernel_chunk
p = compile_params(sim.load_scenario({path!r}))
t1 = time.perf_counter()
kernel_chunk(p, 10, np.random.default_rng(0))
print(t1 - t, time.perf_counter() - t1)
"""


def measure(fn, p, n_runs: int, seed: int) -> tuple[float, float, int, dict]:
    """Wall and CPU seconds, character-rounds and the first chunk's columns for ``n_runs`` runs over the fixed
    chunks (CPU seconds of this process: on a shared machine they show the one-core rate better than the wall)."""
    start, cpu = time.perf_counter(), time.process_time()
    rounds = 0
    first = None
    for c in chunks(n_runs):
        cols = fn(p, c.n_runs, c.generator(seed))
        first = cols if first is None else first
        rounds += int(cols["rounds"].sum())
    return time.perf_counter() - start, time.process_time() - cpu, rounds * p.n_chars, first


def fastest(fn, p, n_runs: int, seed: int, repeat: int) -> tuple[float, float, int, dict]:
    """:func:`measure` ``repeat`` times; the run with the least CPU time."""
    return min((measure(fn, p, n_runs, seed) for _ in range(max(1, repeat))), key=lambda m: m[1])


def jobs_seconds(scenario, runs: int, seed: int, n_jobs: int) -> float:
    start = time.perf_counter()
    sim.simulate(scenario, runs=runs, seed=seed, n_jobs=n_jobs, keep_runs=False)
    return time.perf_counter() - start


def first_call(cache_dir: str) -> tuple[float, float]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", FIRST_CALL.format(path=str(SCENARIO))], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200_000)
    ap.add_argument("--reference-runs", type=int, default=2_000)
    ap.add_argument("--jobs-runs", type=int, default=1_000_000, help="runs for --jobs 1 vs 2 (0: skip)")
    ap.add_argument("--cold-start", action="store_true", help="time a fresh process with an empty numba cache")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3, help="repeats of each timing; the fastest is rated")
    args = ap.parse_args()
    scenario = sim.load_scenario(SCENARIO)
    p = compile_params(scenario)
    print(f"scenario: {scenario.name} ({p.n_chars} characters, max_rounds {p.max_rounds}); "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    kernel_chunk(p, 10, np.random.default_rng(0))  # load (or compile) the engine
    te, ce, cre, first_e = fastest(kernel_chunk, p, args.runs, args.seed, args.repeat)
    tr, cr, crr, first_r = fastest(reference_chunk, p, args.reference_runs, args.seed, args.repeat)
    same = all(np.array_equal(first_e[k][: args.reference_runs], first_r[k]) for k in first_r)
    for name, n, wall, cpu, cr_ in (("engine:     ", args.runs, te, ce, cre),
                                    ("scalar loop:", args.reference_runs, tr, cr, crr)):
        print(f"{name} {n:>9,} runs in {wall:7.2f} s wall ({cpu:7.2f} s CPU) = {n / wall:10,.0f} runs/s, "
              f"{cr_ / wall:12,.0f} character-rounds/s wall, {cr_ / cpu:12,.0f} per CPU second")
    print(f"ratio engine/scalar loop (character-rounds per CPU second): {(cre / ce) / (crr / cr):.0f}x, "
          f"wall {(cre / te) / (crr / tr):.0f}x   (same per-run results on the runs both played: {same})")
    if args.jobs_runs:
        t1 = min(jobs_seconds(scenario, args.jobs_runs, args.seed, 1) for _ in range(args.repeat))
        t2 = min(jobs_seconds(scenario, args.jobs_runs, args.seed, 2) for _ in range(args.repeat))
        print(f"sim.simulate {args.jobs_runs:,} runs: --jobs 1 {t1:6.2f} s, --jobs 2 {t2:6.2f} s, "
              f"speed-up {t1 / t2:.2f}x")
    if args.cold_start:
        with tempfile.TemporaryDirectory() as cache:
            imp0, call0 = first_call(cache)
            imp1, call1 = first_call(cache)
        print(f"fresh process, empty numba cache: import {imp0:.2f} s, first chunk {call0:.2f} s (compiles)")
        print(f"fresh process, filled cache:      import {imp1:.2f} s, first chunk {call1:.2f} s")


if __name__ == "__main__":
    main()
