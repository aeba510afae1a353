"""Exact escape analysis: time and states for the single-rogue case and a ladder of party sizes.

The rogue: one level-5 rogue (dex 17, int 14) in severe arms, heavy legs, moderate fingers and a light
gag, 20 rounds; once as is and once with 1d4 composure damage a round (which multiplies the states).
The ladder: parties of 1..4 of a fighter, a rogue, a monk and a paladin, two restraints each, guards
with an attention limit, 10 rounds, under each built-in policy. Then the party of four over 5 rounds.
Each case runs once after a warm-up of the rogue (wall-clock and CPU seconds: the CPU time is the steadier
number on a shared machine); a case over the state budget prints the count reached.

    python bench/exact.py [--max-states N] [--policies greedy,arms_first,team] [--sizes 1,2,3,4]

Runs on an engine without parties or ``max_states`` too (it prints "unsupported"), so the numbers of an
earlier version can be taken with the same script.
"""

from __future__ import annotations

import argparse
import time

import sim
from sim.errors import ExactUnsupported
from sim.scenario import parse_scenario

SCORES = {"str": 10, "dex": 10, "con": 10, "int": 10, "wis": 10, "cha": 10}
ROGUE_RESTRAINTS = {"arms": "severe", "legs": "heavy", "fingers": "moderate", "gag": "light"}
LADDER = [
    ("A", "fighter", {"str": 16}, {"arms": "heavy", "legs": "moderate"}),
    ("B", "rogue", {"dex": 17, "int": 14}, {"arms": "severe", "fingers": "light"}),
    ("C", "monk", {"dex": 16, "wis": 15}, {"arms": "heavy", "legs": "heavy"}),
    ("D", "paladin", {"str": 15, "cha": 16}, {"arms": "severe", "legs": "moderate"}),
]


def character(name, cls, scores, restraints, level=5):
    return {"name": name, "class": cls, "level": level, "scores": {**SCORES, **scores}, "restraints": restraints}


def rogue(stimulus: bool):
    data = {"kind": "escape", "name": "rogue" + (" + stimulus" if stimulus else ""), "run": {"max_rounds": 20},
            "party": [character("Mei", "rogue", {"dex": 17, "int": 14}, ROGUE_RESTRAINTS)]}
    if stimulus:
        data["stimulus"] = {"damage": "1d4"}
    return parse_scenario(data, "bench")


def party(size: int, policy: str, rounds: int = 10):
    data = {"kind": "escape", "name": f"party of {size}", "run": {"max_rounds": rounds}, "policy": {"name": policy},
            "attention": {"limit": 30, "assist": 2, "guide": 1, "per_round": 1},
            "party": [character(*row) for row in LADDER[:size]]}
    return parse_scenario(data, "bench")


def solve(scenario, max_states):
    start, cpu = time.perf_counter(), time.process_time()
    try:
        try:
            e = sim.exact(scenario, max_states=max_states)
        except TypeError:  # an engine without a state budget
            e = sim.exact(scenario)
    except ExactUnsupported as exc:
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        states = getattr(exc, "states", None)
        if states is not None:
            return f"over budget: {states:>9,} states in {seconds:7.2f} s (cpu {cpu:6.2f} s)"
        return f"unsupported ({seconds:.2f} s): {str(exc)[:60]}"
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    engine = e.get("exact_engine", {})
    states = engine.get("states")
    shown = f"{states:>9,}" if states is not None else f"{'?':>9}"
    peak = engine.get("peak_states")
    extra = f" (largest round {peak:,})" if peak is not None else ""
    return f"{shown} states in {seconds:7.3f} s (cpu {cpu:6.3f} s){extra}  escape_rate {e['escape_rate']:.6f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-states", type=int, default=None, help="state budget (default: the engine's)")
    ap.add_argument("--policies", default="greedy,arms_first,team")
    ap.add_argument("--sizes", default="1,2,3,4")
    args = ap.parse_args()
    sim.exact(rogue(False))  # warm-up: imports and caches
    print("single rogue, 4 restraints, 20 rounds")
    for stimulus in (False, True):
        s = rogue(stimulus)
        print(f"  {s.name:<18} {solve(s, args.max_states)}")
    print("party ladder, 10 rounds, attention limit 30")
    for policy in args.policies.split(","):
        for size in map(int, args.sizes.split(",")):
            print(f"  {policy:<10} {size} {solve(party(size, policy), args.max_states)}")
    print("party of 4, 5 rounds")
    for policy in args.policies.split(","):
        print(f"  {policy:<10} 4 {solve(party(4, policy, rounds=5), args.max_states)}")


if __name__ == "__main__":
    main()
