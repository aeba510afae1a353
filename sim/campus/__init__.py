"""kind = "campus": the 12-turn campus game of seed 003 (RULES.md section 3, R-CAM-1..59).

Monte Carlo: a scalar reference (:mod:`sim.campus.reference`) and a compiled batch kernel
(:mod:`sim.campus.kernel`) read the same stream of uniforms per chunk, in run order, and give identical games.
Exact analysis of one-PC games (:mod:`sim.campus.exact`, a computation of its own from the rules) and optimal
play for them (:mod:`sim.campus.optimal`); larger parties are refused before the work. The kind's facts and hooks
are one object, :data:`sim.campus.kind.KIND` (sim/kinds.py); importing this package compiles nothing: the names
below are imported from their modules when first read.
"""

from __future__ import annotations

from sim.kinds import lazy_exports

STREAMS = True  # simulate(keep_runs=False, runs_sink=...) streams chunk by chunk (sim/campus/aggregate.py)

#: name -> the module it is imported from when first read ("module:attr" where the name differs)
_EXPORTS = {
    "AUTO_MAX_STATES": "sim.campus.exact",
    "Fighter": "sim.campus.rules",
    "Params": "sim.campus.params",
    "Scenario": "sim.campus.model",
    "TeamBattleResult": "sim.campus.rules",
    "audit_options": "sim.campus.audit",
    "audit_runs": "sim.campus.audit",
    "balance_metrics": "sim.campus.designer",
    "beats": "sim.campus.rules",
    "check_scenario": "sim.campus.model",
    "compile_params": "sim.campus.params",
    "duel": "sim.campus.rules",
    "exact": "sim.campus.exact",
    "fighter_value": "sim.campus.rules",
    "simulate": "sim.campus.simulate",
    "solve_zero_sum": "sim.campus.stances",
    "stance_matrix": "sim.campus.stances",
    "stance_table": "sim.campus.stances",
    "supports_exact": "sim.campus.exact",
    "team_battle": "sim.campus.rules",
    "value": "sim.campus.rules",
    "write_report": "sim.campus.report",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
