"""Campus engine throughput against a plain scalar loop, and end-to-end ``sim.simulate``, in one process (issue 27).

The bench scenario (the heavy map): 6 PCs, 10 locations, 2 capture rooms, a boss, two teams, a mission, rescues,
12 turns (scenarios/campus/six_pcs_two_teams.toml; ``--scenario`` for another). Rates timed here:

- engine: the compiled kernel alone on one core (``run_arrays``, ``n_jobs = 1``: chunks, draws and the kernel);
- plain scalar loop: the reference rules (:mod:`sim.campus.reference`, one game at a time) drawing each uniform
  with one call of numpy's Generator (no block buffer, nothing hashed): the honest baseline;
- buffered reference: the same rules reading the reference's own :class:`~sim.campus.reference.Stream` (a block of
  doubles converted to a list), the baseline quoted before issue 27;
- ``sim.simulate`` end to end, runs kept (the runs frame built) and streamed (``keep_runs=False``), and the share
  of each that is spent outside the engine (frame building, aggregation, summary);
- numpy's d20 draws per CPU second on this host (bench/host.py): the engine's 12 M target scaled to this host.

Both reference loops and the engine read the same doubles in the same order, so their per-game results are
checked equal. A PC-turn is one PC in one turn of one game (P x T per game, finished PCs included). Every timing is
repeated ``--repeat`` times, the engine and simulate variants alternating, and the fastest run of each is used
(wall and CPU time separately), as ``timeit`` does: on a shared machine other processes only slow a run down.

    python bench/campus.py [--runs 100000] [--reference-runs 300] [--seed 1] [--repeat 3] [--jobs-runs 0]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from host import d20_rate, host_line  # bench/, beside this script

import sim
from sim.campus.params import compile_params
from sim.campus.reference import Stream, games_to_arrays, play_game
from sim.campus.simulate import run_arrays

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "campus" / "six_pcs_two_teams.toml"


class PlainStream:
    """A plain draw source: one call of numpy's Generator per uniform (the same doubles as the chunk's stream)."""

    def __init__(self, rng: np.random.Generator):
        self.random = rng.random
        self.used = 0

    def u(self, label=None) -> float:
        self.used += 1
        return self.random()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", type=Path, default=SCENARIO)
    ap.add_argument("--runs", type=int, default=100_000, help="games for the engine and sim.simulate")
    ap.add_argument("--reference-runs", type=int, default=300, help="games for each scalar loop")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs-runs", type=int, default=0, help="games for --jobs 1 vs 2 (0: skip)")
    args = ap.parse_args()
    scenario = sim.load_scenario(args.scenario)
    params = compile_params(scenario)
    s, runs, rruns, rep = scenario, args.runs, args.reference_runs, max(1, args.repeat)
    per_game = params.P * params.T
    print(f"scenario: {s.name}: {len(s.party)} PCs, {len(s.locations)} locations "
          f"({int(params.is_room.sum())} capture rooms), {params.S} adversary slots "
          f"({int(params.adv_boss.sum())} boss), teams {list(params.team_names)}, {len(s.missions)} mission(s), "
          f"rescue {s.policy.rescue}, buy list {list(params.buy_names)}, {params.T} turns")
    t0 = time.perf_counter()
    run_arrays(params, 200, args.seed)  # compiles the kernel, or loads it from numba's cache
    print(f"first call (compile or cache load + 200 games): {time.perf_counter() - t0:.2f} s")

    def clock(fn):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        return out, time.perf_counter() - t0, time.process_time() - c0

    # the two scalar loops play the same games: one stream from default_rng(seed), as the kernel below
    def scalar(make_stream):
        stream = make_stream(np.random.default_rng(args.seed))
        games = [play_game(params, stream) for _ in range(rruns)]
        return games_to_arrays(params, games), stream.used

    best: dict[str, list[float]] = {}

    def note(name, wall, cpu):
        w, c = best.setdefault(name, [float("inf"), float("inf")])
        best[name] = [min(w, wall), min(c, cpu)]

    ref_arrays = {}
    for _ in range(rep):  # alternate: the machine's drift hits both loops alike
        for name, make in (("plain", PlainStream), ("buffered", Stream)):
            (arrays, used), wall, cpu = clock(lambda make=make: scalar(make))
            note(name, wall, cpu)
            ref_arrays[name] = arrays
    print(f"uniforms drawn per game-turn: {used / (rruns * params.T):.1f}")
    kern_small = run_arrays_one_chunk(params, rruns, args.seed)
    same = all(np.array_equal(kern_small[k], ref_arrays["plain"][k]) and
               np.array_equal(kern_small[k], ref_arrays["buffered"][k]) for k in ref_arrays["plain"])

    for _ in range(rep):  # engine alone, simulate keeping runs, simulate streamed: alternating
        _, wall, cpu = clock(lambda: run_arrays(params, runs, args.seed))
        note("engine", wall, cpu)
        _, wall, cpu = clock(lambda: sim.simulate(scenario, runs=runs, seed=args.seed))
        note("simulate kept", wall, cpu)
        _, wall, cpu = clock(lambda: sim.simulate(scenario, runs=runs, seed=args.seed, keep_runs=False))
        note("simulate streamed", wall, cpu)

    n_of = {"plain": rruns, "buffered": rruns}
    print(f"fastest of {rep} (games/s; M PC-turns/s; wall clock | CPU time of this process):")
    rate = {}
    for name, (wall, cpu) in best.items():
        n = n_of.get(name, runs)
        rate[name] = (n / wall, n / cpu)
        print(f"  {name:18s} {n:>8} games: wall {wall:7.3f} s = {n / wall:9.0f} games/s = "
              f"{n / wall * per_game / 1e6:6.3f} M | CPU {cpu:7.3f} s = {n / cpu:9.0f} games/s = "
              f"{n / cpu * per_game / 1e6:6.3f} M")
    print(f"identical per-game results (engine, plain loop, buffered reference; {rruns} games): {same}")
    for j, clk in enumerate(("wall", "CPU")):
        e, pl, bu = rate["engine"][j], rate["plain"][j], rate["buffered"][j]
        kept, strm = rate["simulate kept"][j], rate["simulate streamed"][j]
        print(f"{clk:4s}: engine / plain loop {e / pl:5.0f}x (/ buffered reference {e / bu:5.0f}x); "
              f"simulate / plain loop: kept {kept / pl:5.0f}x, streamed {strm / pl:5.0f}x; "
              f"outside the engine: kept {1 - kept / e:5.1%}, streamed {1 - strm / e:5.1%}")
    print("targets (issue 27): engine >= 12 M PC-turns/s on one core, >= 200x the plain scalar loop; "
          "frame building and aggregation <= 10% of a simulate run")
    print(host_line(d20_rate(), 12e6, "PC-turns") + f"; the engine here: {rate['engine'][1] * per_game / 1e6:.1f} M")
    if args.jobs_runs:  # sim.simulate streamed (python -m sim run --no-runs), fastest of --repeat
        def jobs_seconds(n_jobs: int) -> float:
            t0 = time.perf_counter()
            sim.simulate(scenario, runs=args.jobs_runs, seed=args.seed, n_jobs=n_jobs, keep_runs=False)
            return time.perf_counter() - t0

        t1 = min(jobs_seconds(1) for _ in range(rep))
        t2 = min(jobs_seconds(2) for _ in range(rep))
        print(f"sim.simulate {args.jobs_runs:,} games: --jobs 1 {t1:6.2f} s, --jobs 2 {t2:6.2f} s, "
              f"speed-up {t1 / t2:.2f}x (target: >= 1.8x)")


def run_arrays_one_chunk(params, n: int, seed: int) -> dict:
    """The kernel's games drawn from ``default_rng(seed)`` as one chunk, as the scalar loops draw them."""
    from sim.campus.kernel import run_kernel
    return run_kernel(params, n, np.random.default_rng(seed))


if __name__ == "__main__":
    main()
