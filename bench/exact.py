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


def character(name, cls, scores, restraints, level=5):  # noqa: PLR0913
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


def issue_trio(rounds: int = 12):
    """Issue 25's party: a wizard with mage hand, a cleric who blesses, a fighter who guides, 1d2 stimulus."""
    data = {"kind": "escape", "name": "issue trio", "run": {"max_rounds": rounds}, "stimulus": {"damage": "1d2"},
            "party": [character("Wren", "wizard", {"int": 16, "dex": 14}, {"legs": "heavy", "gag": "light"}, 3),
                      character("Cato", "cleric", {"wis": 16, "str": 12}, {"arms": "heavy", "legs": "moderate"}, 3),
                      character("Fen", "fighter", {"str": 16, "int": 12}, {"arms": "severe", "fingers": "moderate"},
                                3)]}
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
            binds = getattr(exc, "binds", "states")
            return (f"refused ({binds} bind): {states:>9,} states in {seconds:7.2f} s (cpu {cpu:6.2f} s)"
                    + (f", projected {exc.projected_seconds:,.0f} s more" if getattr(exc, "projected_seconds", None)
                       else ""))
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
    ap.add_argument("--issue", action="store_true", help="also issue 25's cases (the watch party and the trio)")
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
    if args.issue:
        print("issue 25: party_under_watch.toml (4 characters, 16 rounds), then the trio over 12 rounds")
        from pathlib import Path

        watch = sim.load_scenario(Path(__file__).resolve().parents[1] / "scenarios/escape/party_under_watch.toml")
        print(f"  {'watch':<10} 4 {solve(watch, args.max_states)}")
        print(f"  {'trio':<10} 3 {solve(issue_trio(), args.max_states)}")


if __name__ == "__main__":
    main()
