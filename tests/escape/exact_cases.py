"""The cases whose exact answers are pinned in tests/escape/data/exact_baseline.json: every escape
example scenario and a set of small parties (the helpers' PARTIES plus a trio with a stimulus), under every
built-in policy. The JSON was written by ``python tests/escape/exact_cases.py`` with the engine as it was
before the party speed-ups (issue 25); later engines must give the same numbers to 1e-12 wherever that one
answered (tests/escape/test_exact_baseline.py)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if __name__ == "__main__":  # run as a script (writing the baseline): tests/ and tests/escape importable as in pytest
    sys.path[:0] = [str(HERE), str(HERE.parent)]

from escape_helpers import character, scenario  # noqa: E402
from examples import ROOT  # noqa: E402

import sim  # noqa: E402

BASELINE = HERE / "data" / "exact_baseline.json"
POLICIES = ("greedy", "arms_first", "team")
KEYS = ("escape_rate", "caught_rate", "timeout_rate", "mean_rounds", "escape_by_round")


def small_parties() -> dict:
    return {
        "single_rogue_stimulus": scenario(
            dict(character("Mei", "rogue", 5, {"arms": "severe", "legs": "heavy", "fingers": "moderate",
                                               "gag": "light"}, dex=17, int=14)),
            stimulus={"damage": "1d4"}, run={"max_rounds": 20}),
        "duo_untie": scenario(
            character("A", "fighter", 1, {"legs": "moderate", "arms": "light"}, str=12),
            character("B", "rogue", 1, {"arms": "severe", "legs": "heavy"}, dex=14),
            attention={"limit": 6, "assist": 2, "per_round": 1}, run={"max_rounds": 8}),
        "trio_cleric": scenario(
            character("A", "fighter", 1, {"arms": "heavy", "fingers": "moderate"}, str=14),
            character("B", "rogue", 1, {"arms": "severe", "legs": "light"}, dex=15),
            character("C", "cleric", 1, {"gag": "moderate", "arms": "light"}, wis=15),
            attention={"limit": 14, "assist": 2, "guide": 1, "per_round": 1}, run={"max_rounds": 8}),
        "trio_watch": scenario(
            character("A", "rogue", 1, {"arms": "complete"}, dex=14),
            character("B", "fighter", 1, {"legs": "heavy", "arms": "moderate"}, str=14),
            character("C", "wizard", 1, {"gag": "light", "blindfold": "moderate"}, int=16),
            attention={"limit": 14, "assist": 2, "guide": 1, "per_round": 1}, run={"max_rounds": 6}),
        "duo_stimulus": scenario(
            # level 2: one breath point, as level 1 had before R-ESC-14's revision (ki 0 at level 1, issue 24)
            dict(character("A", "monk", 2, {"arms": "severe"}, wis=15, dex=14), composure=4),
            dict(character("B", "paladin", 1, {"arms": "moderate", "legs": "heavy"}, str=13, cha=14), composure=5),
            stimulus={"damage": "1d3"}, run={"max_rounds": 4}),
        "quartet": scenario(
            character("A", "fighter", 1, {"arms": "heavy"}, str=12),
            character("B", "rogue", 1, {"arms": "moderate", "legs": "light"}, dex=13),
            character("C", "monk", 1, {"legs": "moderate"}, dex=12),
            character("D", "bard", 1, {"blindfold": "light", "fingers": "moderate"}, int=12),
            attention={"limit": 11, "assist": 2, "per_round": 1}, run={"max_rounds": 6}),
        "focus_wizard": scenario(
            dict(character("B", "wizard", 3, {"arms": "severe"}, int=10, wis=10), composure=2),
            stimulus={"damage": "1d6"}, run={"max_rounds": 6}),
        "trio_stimulus_short": scenario(
            dict(character("W", "wizard", 1, {"arms": "severe", "legs": "light"}, int=16), composure=4),
            dict(character("C", "cleric", 1, {"arms": "heavy", "fingers": "moderate"}, wis=16), composure=4),
            dict(character("F", "fighter", 1, {"legs": "heavy", "gag": "light"}, str=14), composure=4),
            stimulus={"damage": "1d2"}, attention={"limit": 20, "assist": 2, "guide": 1}, run={"max_rounds": 5}),
    }


def example_scenarios() -> dict:
    return {p.stem: sim.load_scenario(p) for p in sorted((ROOT / "scenarios" / "escape").glob("*.toml"))}


def all_cases() -> dict:
    return {**{f"example:{k}": v for k, v in example_scenarios().items()}, **small_parties()}


def with_policy(s, name):
    return s.model_copy(update={"policy": s.policy.model_copy(update={"name": name})})


SKIP = {"example:party_under_watch"}  # today's engine refuses it after ~2 minutes (issue 25)


def main() -> None:
    from sim.errors import ExactUnsupported

    out = {}
    for name, s in all_cases().items():
        for pol in POLICIES:
            key = f"{name}/{pol}"
            if name in SKIP:
                out[key] = None
                continue
            t0 = time.perf_counter()
            try:
                e = sim.exact(with_policy(s, pol))
            except ExactUnsupported as exc:
                print(f"{key}: refused ({exc})", file=sys.stderr)
                out[key] = None
                continue
            out[key] = {k: e[k] for k in KEYS}
            print(f"{key}: {e['escape_rate']:.6f} in {time.perf_counter() - t0:.2f} s "
                  f"({e['exact_engine']['states']} states)", file=sys.stderr)
    BASELINE.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()


def issue_trio(rounds: int = 12):
    """The party of issue 25: a wizard with mage hand, a cleric who blesses, a fighter who guides, a 1d2
    stimulus every round, 12 rounds (bench/exact.py's speed target: <= 10 s)."""
    return scenario(
        character("Wren", "wizard", 3, {"legs": "heavy", "gag": "light"}, int=16, dex=14),
        character("Cato", "cleric", 3, {"arms": "heavy", "legs": "moderate"}, wis=16, str=12),
        character("Fen", "fighter", 3, {"arms": "severe", "fingers": "moderate"}, str=16, int=12),
        stimulus={"damage": "1d2"}, run={"max_rounds": rounds})
