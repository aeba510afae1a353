"""Fingerprints of the per-run results of every example scenario (a hash of every per-run column).

``python tests/fingerprint_tool.py`` adds the fingerprint of a new example to ``tests/data/fingerprints.json``;
``--rewrite`` recomputes every one from the code as it stands: only when a change is meant to move per-run results
(and say so in CHANGELOG). ``tests/test_fingerprints.py``
compares against the stored file, so a refactor that changes one run of one example fails it.

Rule switches that were added after a fingerprint was stored, and that moved the default reading, are set to their
earlier reading (``EARLIER_READING``) before the comparison: the earlier reading must give exactly the earlier runs.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
from examples import ROOT, example_scenarios

import sim
from sim.designer.params import with_values

STORE = ROOT / "tests" / "data" / "fingerprints.json"
RUNS, SEED = 3_000, 20261202

#: per kind, the scenario values that restore the reading the stored fingerprints were made with
EARLIER_READING: dict[str, dict[str, object]] = {
    # R-ESC-14a / R-ESC-14b off, R-ESC-10b untying oneself with free hands (both revised 2026-12), R-ESC-10c bound
    # legs do not hinder (second round of 2026-12)
    "escape": {"rules.volume1_features": False, "rules.self_untie": "hands_free", "rules.legs_hinder": False},
    "restraint": {"rules.recoveries": False, "rules.overload_in_duel": False},  # R-RST-32, R-RST-33 (issue 24)
    "campus": {"rules.miso_in_missions": False},  # R-CAM-25a: miso bombs took no part in missions
    "formation": {"rules.attack_types": "listed", "policy.movement": "fixed"},  # R-MDK-6, R-MDK-11 (issue 24)
}


def fingerprint(path: Path, runs: int = RUNS, seed: int = SEED) -> str:
    scenario = sim.load_scenario(path)
    earlier = EARLIER_READING.get(scenario.kind, {})
    if earlier:
        scenario = with_values(scenario, earlier)
    frame = sim.simulate(scenario, runs=runs, seed=seed).runs
    digest = hashlib.sha256()
    for name in sorted(frame.columns):
        column = frame[name]
        digest.update(name.encode())
        if column.dtype == object or str(column.dtype) in ("category", "string"):
            digest.update("\x1f".join(map(str, column.tolist())).encode())
        else:
            digest.update(np.ascontiguousarray(column.to_numpy()).tobytes())
    return digest.hexdigest()


def key(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def main(argv: list[str]) -> None:
    """Add the fingerprints of new examples; ``--rewrite`` recomputes every one (results meant to move)."""
    old = json.loads(STORE.read_text())["fingerprints"] if STORE.exists() and "--rewrite" not in argv else {}
    store = {key(p): old.get(key(p)) or fingerprint(p) for p in example_scenarios()}
    STORE.write_text(json.dumps({"runs": RUNS, "seed": SEED, "fingerprints": store}, indent=1) + "\n")
    print(f"wrote {len(store)} fingerprints to {STORE}")


if __name__ == "__main__":
    main(sys.argv[1:])
