"""kind = "campus": the 12-turn campus game of seed 003 (RULES.md section 3, R-CAM-1..59).

Monte Carlo: a scalar reference (:mod:`sim.campus.reference`) and a compiled batch kernel
(:mod:`sim.campus.kernel`) read the same stream of uniforms per chunk, in run order, and give identical games.
Exact analysis of one-PC games (:mod:`sim.campus.exact`, a computation of its own from the rules) and optimal
play for them (:mod:`sim.campus.optimal`); larger parties are refused before the work.
"""

from __future__ import annotations

from sim.campus.audit import audit_options, audit_runs
from sim.campus.designer import balance_metrics
from sim.campus.exact import AUTO_MAX_STATES, exact, supports_exact
from sim.campus.limits import limit_rows  # the rows of docs/limits.md (sim/docs_gen.py)
from sim.campus.model import Scenario, check_scenario
from sim.campus.params import Params, compile_params
from sim.campus.report import write_report
from sim.campus.rules import Fighter, TeamBattleResult, beats, duel, fighter_value, team_battle, value
from sim.campus.simulate import simulate
from sim.campus.stances import solve_zero_sum, stance_matrix, stance_table

STREAMS = True  # simulate(keep_runs=False, runs_sink=...) streams chunk by chunk (sim/campus/aggregate.py)


__all__ = [
    "AUTO_MAX_STATES",
    "Fighter",
    "Params",
    "Scenario",
    "TeamBattleResult",
    "balance_metrics",
    "beats",
    "check_scenario",
    "compile_params",
    "duel",
    "exact",
    "fighter_value",
    "simulate",
    "solve_zero_sum",
    "stance_matrix",
    "stance_table",
    "supports_exact",
    "team_battle",
    "value",
    "write_report",
]
__all__ += ["audit_options", "audit_runs"]

__all__ += ["limit_rows"]
