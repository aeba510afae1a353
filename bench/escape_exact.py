"""Issue 35's target cases of exact escape analysis, the reference-driven engine against the compiled one.

Each (case, engine) runs in its own process (after a warm-up in that process, so numba's compilation is not
counted) and reports CPU seconds, wall seconds, the states and branches of the analysis and the process's peak
resident memory (``ru_maxrss``). A refusal prints what bound and the projected time.

    python bench/escape_exact.py [--cases rogue,rogue_optimal,...] [--engines reference,compiled]
    python bench/escape_exact.py --one CASE ENGINE      # one measurement (what the driver runs per process)

Without ``--engines``, the optimal cases run on the compiled engine only: the reference-driven solver takes minutes
on them or refuses (its figures are issue 35's, quoted in bench/README.md).

    python bench/escape_exact.py --cases trio,watch,watch_team,watch3,watch3_team --engines plain,compiled
                                                        # issue 35 item 2: the round factored (compiled) or not (plain)
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sim  # noqa: E402
from sim.errors import ExactUnsupported  # noqa: E402
from sim.scenario import parse_scenario  # noqa: E402

SCORES = {"str": 10, "dex": 10, "con": 10, "int": 10, "wis": 10, "cha": 10}


def character(name, cls, level, scores, restraints):  # noqa: PLR0913
    return {"name": name, "class": cls, "level": level, "scores": {**SCORES, **scores}, "restraints": restraints}


FOUR = {"arms": "severe", "legs": "heavy", "fingers": "moderate", "gag": "light"}


def rogue():
    """lone_rogue's rogue in four restraints, 20 rounds, 1d2 stimulus (issue 35's first case)."""
    return {"kind": "escape", "name": "rogue", "run": {"max_rounds": 20}, "stimulus": {"damage": "1d2"},
            "party": [{**character("Mei", "rogue", 5, {"dex": 17, "con": 12, "int": 14, "wis": 12}, FOUR),
                       "perception": True}]}


def monk():
    """A level-6 monk in four restraints (one a harness doing 1d4), inner breath, 16 rounds."""
    return {"kind": "escape", "name": "monk", "run": {"max_rounds": 16}, "harness": {"damage": "1d4"},
            "party": [character("Ku", "monk", 6, {"dex": 16, "wis": 15, "str": 12},
                                {"arms": "severe", "legs": "heavy", "fingers": "moderate", "harness": "light"})]}


def wizard():
    """A level-5 wizard in four restraints, 1d4 stimulus, absolute focus, dazed 2 rounds after an overload, 14
    rounds."""
    return {"kind": "escape", "name": "wizard", "run": {"max_rounds": 14}, "stimulus": {"damage": "1d4"},
            "overload": {"dazed_rounds": 2},
            "party": [character("Wren", "wizard", 5, {"int": 16, "dex": 14}, FOUR)]}


def duo():
    """A rogue and a fighter, 12 rounds, one attention a round against a limit."""
    return {"kind": "escape", "name": "duo", "run": {"max_rounds": 12},
            "attention": {"limit": 20, "assist": 2, "guide": 1, "per_round": 1},
            "party": [character("Mei", "rogue", 3, {"dex": 16, "int": 12}, {"arms": "heavy", "legs": "moderate"}),
                      character("Bo", "fighter", 3, {"str": 16}, {"arms": "severe", "fingers": "light"})]}


def trio():
    """Issue 25's trio (wizard, cleric, fighter; 1d2 stimulus; 12 rounds) with attention a round and dazed 1."""
    return {"kind": "escape", "name": "trio", "run": {"max_rounds": 12}, "stimulus": {"damage": "1d2"},
            "attention": {"limit": 30, "assist": 2, "guide": 1, "per_round": 1}, "overload": {"dazed_rounds": 1},
            "party": [character("Wren", "wizard", 3, {"int": 16, "dex": 14}, {"legs": "heavy", "gag": "light"}),
                      character("Cato", "cleric", 3, {"wis": 16, "str": 12}, {"arms": "heavy", "legs": "moderate"}),
                      character("Fen", "fighter", 3, {"str": 16, "int": 12},
                                {"arms": "severe", "fingers": "moderate"})]}


def watch():
    return sim.load_scenario(ROOT / "scenarios/escape/party_under_watch.toml")


def watch3():
    """party_under_watch over its first three rounds (issue 35 item 2: the factored round's case)."""
    s = watch()
    return s.model_copy(update={"run": s.run.model_copy(update={"max_rounds": 3})})


CASES = {  # name -> (scenario builder, policy)
    "rogue": (rogue, "greedy"),
    "rogue_optimal": (rogue, "optimal"),
    "monk": (monk, "greedy"),
    "wizard": (wizard, "greedy"),
    "duo": (duo, "team"),
    "monk_optimal": (monk, "optimal"),
    "wizard_optimal": (wizard, "optimal"),
    "duo_optimal": (duo, "optimal"),
    "trio": (trio, "greedy"),
    "watch": (watch, "greedy"),
    "watch_team": (watch, "team"),
    "watch3": (watch3, "greedy"),
    "watch3_team": (watch3, "team"),
}


def scenario_of(case: str):
    build, policy = CASES[case]
    s = build()
    if isinstance(s, dict):
        s = parse_scenario(s, "bench")
    return s.model_copy(update={"policy": s.policy.model_copy(update={"name": policy})})


def one(case: str, engine: str) -> dict:
    """``engine``: reference, compiled (its round factored by groups of coupled characters, issue 35 item 2) or
    plain (the compiled engine playing every combination of a round's outcomes, as before item 2)."""
    if engine == "plain":
        from sim.escape import exact_fast

        exact_fast.FACTORED, engine = False, "compiled"
    s = scenario_of(case)
    warm = scenario_of("rogue").model_copy(update={"run": scenario_of("rogue").run.model_copy(
        update={"max_rounds": 2})})
    sim.exact(warm, engine=engine)  # compile (numba) outside the measurement
    if engine == "compiled":  # the factored round's functions too (a party of one never factors)
        sim.exact(watch().model_copy(update={"run": watch().run.model_copy(update={"max_rounds": 1})}),
                  engine=engine)
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        e = sim.exact(s, engine=engine, max_states=10**9 if case.startswith("watch3") else None,
                      max_branches=10**10 if case.startswith("watch3") else None)
        out = {"escape_rate": e["escape_rate"], **{k: e["exact_engine"].get(k) for k in ("engine", "states",
                                                                                          "branches", "replays")}}
    except ExactUnsupported as exc:
        out = {"refused": str(exc)[:300], "binds": getattr(exc, "binds", None),
               "projected_seconds": getattr(exc, "projected_seconds", None)}
    out["cpu"] = round(time.process_time() - cpu, 3)
    out["wall"] = round(time.perf_counter() - wall, 3)
    out["peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--engines", default=None)
    ap.add_argument("--one", nargs=2, metavar=("CASE", "ENGINE"))
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(*args.one)))
        return
    for case in args.cases.split(","):
        engines = args.engines or ("compiled" if CASES[case][1] == "optimal" else "reference,compiled")
        for engine in engines.split(","):
            run = subprocess.run([sys.executable, __file__, "--one", case, engine], capture_output=True, text=True,
                                 cwd=ROOT)
            line = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr.strip()[-300:]
            print(f"{case:15s} {engine:10s} {line}", flush=True)


if __name__ == "__main__":
    main()
