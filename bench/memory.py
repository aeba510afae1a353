"""Peak memory of long escape runs through the CLI (streaming aggregation and chunked output).

Runs `python -m sim run SCENARIO --runs N --no-runs --quiet` in a fresh process for 1,000,000 and 10,000,000 runs
and prints, for each run:

- the peak resident set size of the run's process, read by the kernel (``VmHWM``, the high-water mark, read in the
  process itself just before it exits, so nothing is missed between samples); the process runs the compiled engine
  in threads (``--jobs 2`` included), so this is the whole run's memory;
- the peak of the summed resident set of the process and every descendant (workers of a process backend),
  sampled every 20 ms (a lower bound between samples; the sum counts shared pages once per process);
- the resident set just after the imports (the fixed cost: the interpreter, numpy, pandas, numba, the compiled
  engine), so the growth with the runs is the difference;
- wall and CPU time.

``--keep`` measures the Python API instead: ``sim.simulate(..., keep_runs=True)`` (every run's columns and the runs
frame in memory), with the bytes per run that the columns and the frame hold.

    python bench/memory.py [--runs 1000000 10000000] [--jobs 1] [--with-runs] [--heavy] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

HERE = Path(__file__).parent

#: runs the CLI (or the Python API with --keep) in this process and prints its own high-water mark last
CHILD = """
import json, resource, sys, time

def hwm_kib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

mode, args = sys.argv[1], json.loads(sys.argv[2])
import sim, sim.cli  # the fixed cost: imports (the engine loads from the numba cache on its first call)
after_import = hwm_kib()
cpu = time.process_time()
code, extra = 0, {}
if mode == "cli":
    try:
        code = sim.cli.main(args) or 0
    except SystemExit as exc:
        code = exc.code or 0
else:
    res = sim.simulate(sim.load_scenario(args["scenario"]), runs=args["runs"], seed=1, n_jobs=args["jobs"])
    extra = {"columns_bytes": sum(a.nbytes for a in res.columns.values()),
             "frame_bytes": int(res.runs.memory_usage(index=False, deep=True).sum())}
print(json.dumps({"hwm_kib": hwm_kib(), "import_kib": after_import, "cpu": time.process_time() - cpu,
                  "code": code, **extra}))
"""


def tree_rss(proc: psutil.Process) -> int:
    """Resident bytes of ``proc`` and its descendants (0 for those gone meanwhile)."""
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def measure(scenario: Path, runs: int, jobs: int, with_runs: bool, keep: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        if keep:
            mode, args = "api", {"scenario": str(scenario), "runs": runs, "jobs": jobs}
        else:
            mode = "cli"
            args = ["run", str(scenario), "--runs", str(runs), "--seed", "1", "--jobs", str(jobs), "--out", tmp,
                    "--quiet", *([] if with_runs else ["--no-runs"])]
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", CHILD, mode, json.dumps(args)], stdout=subprocess.PIPE,
                                text=True)
        ps, peak_tree = psutil.Process(proc.pid), 0
        while proc.poll() is None:
            try:
                peak_tree = max(peak_tree, tree_rss(ps))
            except psutil.Error:
                pass
            time.sleep(0.02)
        out = proc.stdout.read()
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"run failed with exit status {proc.returncode}")
        got = json.loads(out.strip().splitlines()[-1])
        if got["code"] != 0:
            raise SystemExit(f"run failed with exit status {got['code']}")
        return {**got, "tree_mib": peak_tree / 2**20, "wall": elapsed}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--with-runs", action="store_true", help="also write the partitioned runs.parquet")
    ap.add_argument("--heavy", action="store_true", help="the heavy party (bench/escape_heavy.toml)")
    ap.add_argument("--keep", action="store_true", help="the Python API with runs kept (sim.simulate)")
    args = ap.parse_args()
    scenario = HERE / ("escape_heavy.toml" if args.heavy else "escape_party.toml")
    what = "sim.simulate, runs kept" if args.keep else \
        f"sim run, runs.parquet {'written' if args.with_runs else 'skipped'}"
    print(f"{scenario.name}, {what}, --jobs {args.jobs}; load average {os.getloadavg()[0]:.1f}")
    for runs in args.runs:
        m = measure(scenario, runs, args.jobs, args.with_runs, args.keep)
        line = (f"{runs:>12,} runs: peak RSS {m['hwm_kib'] / 1024:8.1f} MiB (after imports "
                f"{m['import_kib'] / 1024:6.1f} MiB; process tree sampled {m['tree_mib']:8.1f} MiB), "
                f"{m['wall']:7.1f} s wall, {m['cpu']:7.1f} s CPU ({runs / m['wall']:,.0f} runs/s)")
        if args.keep:
            line += (f"; columns {m['columns_bytes'] / runs:.0f} B/run, frame {m['frame_bytes'] / runs:.0f} B/run, "
                     f"peak {(m['hwm_kib'] - m['import_kib']) * 1024 / runs:.0f} B/run above the imports")
        print(line, flush=True)


if __name__ == "__main__":
    main()
