"""Peak memory of long escape runs through the CLI (streaming aggregation and chunked output).

Runs `python -m sim run bench/escape_party.toml --runs N --no-runs --quiet` in a fresh process for
1,000,000 and 10,000,000 runs and prints each run's peak resident set size (the largest of the
process and its workers) and wall time. Add `--with-runs` to also write the partitioned runs.parquet.

    python bench/memory.py [--runs 1000000 10000000] [--jobs 1] [--with-runs]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent

WRAPPER = """
import resource, subprocess, sys
proc = subprocess.run(sys.argv[1:])
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, proc.returncode)
"""


def measure(runs: int, jobs: int, with_runs: bool) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "sim", "run", str(HERE / "escape_party.toml"), "--runs", str(runs),
               "--seed", "1", "--jobs", str(jobs), "--out", tmp, "--quiet"]
        if not with_runs:
            cmd.append("--no-runs")
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", WRAPPER, *cmd], capture_output=True, text=True, check=True)
        elapsed = time.perf_counter() - start
        max_kb, code = (int(x) for x in out.stdout.split())
        if code != 0:
            raise SystemExit(f"run failed with exit status {code}")
        return max_kb / 1024, elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--with-runs", action="store_true")
    args = ap.parse_args()
    print(f"this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB before the runs")
    for runs in args.runs:
        mib, seconds = measure(runs, args.jobs, args.with_runs)
        print(f"{runs:>12,} runs: peak RSS {mib:8.1f} MiB, {seconds:7.1f} s ({runs / seconds:,.0f} runs/s), "
              f"jobs {args.jobs}, runs.parquet {'written' if args.with_runs else 'skipped'}")


if __name__ == "__main__":
    main()
