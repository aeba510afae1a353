"""Escape engine throughput against a plain scalar loop of the same rules, in one process (STYLE.md 13).

Two parties: the light one (bench/escape_party.toml: four characters, three or four restraints each, assists
on, 20 rounds) and, with ``--heavy``, the heavy one (bench/escape_heavy.toml: the same party with a search pool of
bonus and release items, guides and an attention limit, a 1d2 stimulus every round).

Three engines play the same scenario:
- the compiled engine (sim/escape/kernel.py), RUNS runs;
- the **plain scalar loop**, the baseline of the ratios: the scalar reference's rules (sim/escape/reference.py,
  one run at a time) drawing every die from numpy's Generator, one ``Generator.random()`` call per die, nothing
  hashed (:class:`PlainDraws`);
- the keyed reference, the same rules reading the engine's keyed layout (two SplitMix64 rounds per uniform, in
  Python): it agrees with the engine run for run, which the script checks, but its draw source slows it down
  about 2x, so a ratio against it flatters the engine. It is printed beside the plain ratio for comparison.
Then ``sim.simulate`` end to end on RUNS runs (CPU time of this process, --jobs 1), keeping the runs (the runs
frame is made when ``result.runs`` is first read: rated without and with reading it) and streamed
(``keep_runs=False``, as ``python -m sim run --no-runs``), with the share of the run spent outside the engine
(frame building, aggregation, summary); --jobs 1 against --jobs 2 on JOBS_RUNS runs;
and, with --cold-start, the first call of a fresh process with an empty and with a filled numba cache. Beside the
engine's rate: numpy's d20 draws per CPU second on this host (bench/host.py), the unit issue 27's 20 M target was
set in, and that target scaled to this host.

Each measurement is repeated ``--repeat`` times and the fastest is rated (as ``timeit`` does: slower repeats
measure the machine's other work, not the engine).

    python bench/escape.py [--heavy] [--runs 200000] [--reference-runs 2000] [--jobs-runs 1000000] [--repeat 3]
                           [--cold-start]
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
from host import d20_rate, host_line  # bench/, beside this script

import sim
from sim.batch import chunks
from sim.escape.params import compile_params
from sim.escape.policy import load_policy
from sim.escape.reference import DrawSource, play_round
from sim.escape.simulate import kernel_chunk, reference_chunk
from sim.escape.state import initial_state

HERE = Path(__file__).parent
SCENARIO = HERE / "escape_party.toml"
HEAVY = HERE / "escape_heavy.toml"


class PlainDraws(DrawSource):
    """The reference's random events drawing from numpy's Generator, one ``random()`` call per die and nothing
    hashed: what a plain scalar loop of these rules would do. (Every event of :class:`DrawSource` reads
    :meth:`uniform`, so the same events roll the same dice, from another stream.)"""

    def __init__(self, params, rng: np.random.Generator):
        super().__init__(params, (0, 0))
        self.random = rng.random

    def at(self, run: int, rnd: int) -> None:
        pass

    def uniform(self) -> float:
        return self.random()


def plain_chunk(p, n: int, rng: np.random.Generator) -> dict:
    """``n`` runs of the plain scalar loop under the scenario's policy; returns the rounds played (the columns the
    rate needs)."""
    policy = load_policy(p.policy)
    src = PlainDraws(p, rng)
    rounds = np.empty(n, dtype=np.int32)
    for j in range(n):
        state = initial_state(p)
        while not state.outcome:
            play_round(p, state, policy, src)
        rounds[j] = state.round
    return {"rounds": rounds}

def engine_chunk(p, n: int, rng: np.random.Generator) -> dict:
    """The compiled engine under the scenario's policy (the heavy party plays ``team``)."""
    return kernel_chunk(p, n, rng, p.policy)


def keyed_chunk(p, n: int, rng: np.random.Generator) -> dict:
    """The reference on its keyed draw source under the scenario's policy."""
    return reference_chunk(p, n, rng, p.policy)


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


def jobs_seconds(scenario, runs: int, seed: int, n_jobs: int, keep_runs: bool = False) -> float:
    start = time.perf_counter()
    sim.simulate(scenario, runs=runs, seed=seed, n_jobs=n_jobs, keep_runs=keep_runs)
    return time.perf_counter() - start


def simulate_cpu(scenario, runs: int, seed: int, keep_runs: bool, read_frame: bool = False) -> float:
    """CPU seconds of this process for ``sim.simulate`` with --jobs 1 (comparable with the engine's and the plain
    loop's CPU rates when other sessions share the machine); ``read_frame``: and reading ``result.runs`` (the
    runs frame is made when first read)."""
    start = time.process_time()
    result = sim.simulate(scenario, runs=runs, seed=seed, n_jobs=1, keep_runs=keep_runs)
    if read_frame:
        assert len(result.runs) == runs
    return time.process_time() - start


def first_call(cache_dir: str) -> tuple[float, float]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", FIRST_CALL.format(path=str(SCENARIO))], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    return float(out[0]), float(out[1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--heavy", action="store_true", help="the heavy party (bench/escape_heavy.toml)")
    ap.add_argument("--runs", type=int, default=200_000)
    ap.add_argument("--reference-runs", type=int, default=2_000)
    ap.add_argument("--jobs-runs", type=int, default=1_000_000, help="runs for --jobs 1 vs 2 (0: skip)")
    ap.add_argument("--cold-start", action="store_true", help="time a fresh process with an empty numba cache")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3, help="repeats of each timing; the fastest is rated")
    args = ap.parse_args()
    scenario = sim.load_scenario(HEAVY if args.heavy else SCENARIO)
    p = compile_params(scenario)
    print(f"scenario: {scenario.name} ({p.n_chars} characters, max_rounds {p.max_rounds}); "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    kernel_chunk(p, 10, np.random.default_rng(0))  # load (or compile) the engine
    te, ce, cre, first_e = fastest(engine_chunk, p, args.runs, args.seed, args.repeat)
    tp, cp, crp, _ = fastest(plain_chunk, p, args.reference_runs, args.seed, args.repeat)
    tr, cr, crr, first_r = fastest(keyed_chunk, p, args.reference_runs, args.seed, args.repeat)
    same = all(np.array_equal(first_e[k][: args.reference_runs], first_r[k]) for k in first_r)
    for name, n, wall, cpu, cr_ in (("engine:          ", args.runs, te, ce, cre),
                                    ("plain scalar loop:", args.reference_runs, tp, cp, crp),
                                    ("keyed reference:  ", args.reference_runs, tr, cr, crr)):
        print(f"{name} {n:>9,} runs in {wall:7.2f} s wall ({cpu:7.2f} s CPU) = {n / wall:10,.0f} runs/s, "
              f"{cr_ / wall:12,.0f} character-rounds/s wall, {cr_ / cpu:12,.0f} per CPU second")
    plain_rate = crp / cp  # character-rounds per CPU second of the baseline
    print(f"ratio engine / plain scalar loop (character-rounds per CPU second): {(cre / ce) / plain_rate:.0f}x "
          f"(against the keyed reference, which flatters: {(cre / ce) / (crr / cr):.0f}x; engine and keyed "
          f"reference agree on the runs both played: {same})")
    print(host_line(d20_rate(), 20e6, "character-rounds") + f"; the engine here: {cre / ce / 1e6:.1f} M")
    # end to end: rounds per run from the engine's own sample, so both rates count the same work
    rounds_per_run = cre / args.runs
    kept = min(simulate_cpu(scenario, args.runs, args.seed, True) for _ in range(args.repeat))
    framed = min(simulate_cpu(scenario, args.runs, args.seed, True, read_frame=True) for _ in range(args.repeat))
    streamed = min(simulate_cpu(scenario, args.runs, args.seed, False) for _ in range(args.repeat))
    for name, cpu in (("runs kept", kept), ("runs kept, frame read", framed), ("streamed ", streamed)):
        rate = args.runs * rounds_per_run / cpu
        print(f"sim.simulate {args.runs:,} runs, {name}: {cpu:6.2f} s CPU = {args.runs / cpu:10,.0f} runs/s, "
              f"{rate / plain_rate:.0f}x the plain scalar loop; outside the engine {1 - ce / cpu:.0%} of the run")
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
