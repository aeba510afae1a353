"""The effect of each issue-18 switch on a formation: the reading before issue 18 against the seed's.

One row per switch: R-MDK-6 choice (smallest penalty against best expected damage), R-MDK-6 attack
types (each unit's single ``attack`` against melee and ranged for every non-magic unit), R-MDK-11
movement (``fixed`` against ``best``), R-MDK-5 withdrawal (off against ``withdraw_below = 0.5``
for slave monsters), all of them together, and R-MDK-3 / R-MDK-21 enslaved stars (exact DP per
session without and with ``session.enslaved_stars``). Each skirmish row changes one switch from
the same baseline (the reading before issue 18) and plays ``runs`` runs on the same seed.
"""

from __future__ import annotations

import pandas as pd

from sim.formation.engine import simulate
from sim.formation.model import Scenario, compile_params
from sim.formation.rules import dp_per_session_exact

BASELINE = {"choice": "min_penalty", "movement": "fixed", "withdraw_below": None}
SEED_POLICY = {"choice": "expected_damage", "movement": "best", "withdraw_below": 0.5}
WITHDRAW_SEED = 0.5  # the threshold shown in the table (a designer's typical "half hp")


def _variant(scenario: Scenario, policy: dict, both_attacks: bool) -> Scenario:
    units = [u.model_copy(update={"attacks": None}) for u in scenario.units]
    rules = scenario.rules.model_copy(update={"attack_types": "both" if both_attacks else "listed"})  # R-MDK-6
    return scenario.model_copy(update={"units": units, "rules": rules,
                                       "policy": scenario.policy.model_copy(update=policy)})


def _outcome(scenario: Scenario, runs: int, seed: int) -> dict:
    s = simulate(scenario, runs=runs, seed=seed).summary
    return {"win_a": s["skirmish_win_a"], "win_b": s["skirmish_win_b"], "rounds": s["skirmish_mean_rounds"],
            "withdrawn": s["skirmish_mean_withdrawn_a"] + s["skirmish_mean_withdrawn_b"]}


def switch_effects(scenario: Scenario, runs: int = 2000, seed: int = 1) -> pd.DataFrame:
    """The table, one row per switch and measure: switch, rule, today's reading, the seed's
    reading, measure, value today, value with the seed's reading. Skirmish measures: P(A wins),
    P(B wins), mean rounds, withdrawals per run (simulated); the enslaved-stars row: the exact DP
    per session."""
    rows = []

    def add(switch, rule, today, seed_reading, measure, before, after):
        rows.append({"switch": switch, "rule": rule, "today": today, "seed": seed_reading, "measure": measure,
                     "value today": float(before), "value seed": float(after)})

    if compile_params(scenario).skirmish:
        base = _outcome(_variant(scenario, BASELINE, False), runs, seed)
        slaves = any(u.slave for u in scenario.units)
        cases = [
            ("attack choice", "R-MDK-6", "smallest penalty", "best expected damage",
             _variant(scenario, {**BASELINE, "choice": "expected_damage"}, False)),
            ("attack types", "R-MDK-6", "one attack type", "melee and ranged",
             _variant(scenario, BASELINE, True)),
            ("movement", "R-MDK-11", "fixed", "best", _variant(scenario, {**BASELINE, "movement": "best"}, False)),
            ("slave withdrawal", "R-MDK-5", "off", f"below {WITHDRAW_SEED:.0%} hp" + ("" if slaves else " (no slaves)"),
             _variant(scenario, {**BASELINE, "withdraw_below": WITHDRAW_SEED}, False)),
            ("all together", "R-MDK-5/6/11", "before issue 18", "seed", _variant(scenario, SEED_POLICY, True)),
        ]
        for switch, rule, today, seed_reading, variant in cases:
            new = _outcome(variant, runs, seed)
            for key, measure in (("win_a", "P(A wins)"), ("win_b", "P(B wins)"), ("rounds", "mean rounds"),
                                 ("withdrawn", "withdrawals per run")):
                add(switch, rule, today, seed_reading, measure, base[key], new[key])
    session = scenario.session
    add("enslaved stars", "R-MDK-3/21", "PC stars only", f"+ enslaved {list(session.enslaved_stars)}",
        "DP per session (exact)", dp_per_session_exact(session.model_copy(update={"enslaved_stars": []})),
        dp_per_session_exact(session))
    return pd.DataFrame(rows)


__all__ = ["switch_effects"]
