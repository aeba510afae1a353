"""Compile the numba engines once before a parallel test session starts (pytest-xdist, ``-n``).

The engines are compiled with ``cache=True``: the first process to use a kind compiles it and writes numba's
cache beside the module, later processes load it in under a second. On a fresh clone (CI) every xdist worker would
otherwise compile every kind itself, at the same time, on the same cores. ``warm_up`` runs every example scenario
for a few runs in two processes side by side (the kinds split so that each process compiles about half), and the
workers start once both are done. It changes nothing a test sees: it only fills numba's cache.

Run directly (``python tests/numba_warmup.py escape restraint``) it warms the kinds named.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# two groups of about equal compile time (README: escape ~25 s, campus 20 s, formation 18 s, restraint 8 s of CPU)
GROUPS = (("escape", "restraint"), ("campus", "formation"))


def warm(kinds: list[str]) -> None:
    from examples import examples_of  # run as a script, this folder is first on the path

    import sim

    for kind in kinds:
        for path in examples_of(kind).values():  # every example: their parameter types can differ
            sim.simulate(sim.load_scenario(path), runs=64, seed=1)


def warm_up() -> float:
    """Warm every kind in two processes side by side; return the wall time in seconds."""
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, __file__, *group], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for group in GROUPS]
    for proc in procs:
        _, err = proc.communicate()
        if proc.returncode:  # the tests themselves will show the error; say it here too
            print(f"numba warm-up failed ({proc.returncode}):\n{err[-2000:]}", file=sys.stderr)
    return time.perf_counter() - start


if __name__ == "__main__":
    warm(sys.argv[1:])
