"""The escape challenge (kind = "escape", RULES.md section 1)."""

from sim.escape.audit import audit_evaluator, audit_options
from sim.escape.designer import (
    balance_metrics,
    exact_answer,
    one_character,
    optimal_comparison,
    rule_default,
    rules_table,
    sensitivity_parameters,
    tier_ladder,
)
from sim.escape.exact import AUTO_MAX_STATES, exact, supports_exact
from sim.escape.limits import limit_rows  # the rows of docs/limits.md (sim/docs_gen.py)
from sim.escape.model import Scenario, check
from sim.escape.report import write_report
from sim.escape.simulate import simulate

check_scenario = check
STREAMS = True  # simulate(keep_runs=False, runs_sink=...) streams chunk by chunk (sim/escape/aggregate.py)

__all__ = ["AUTO_MAX_STATES", "Scenario", "balance_metrics", "check_scenario", "exact", "exact_answer", "one_character",
           "optimal_comparison",
           "rule_default", "rules_table", "sensitivity_parameters", "simulate", "supports_exact", "tier_ladder",
           "write_report"]
__all__ += ["audit_evaluator", "audit_options"]

__all__ += ["limit_rows"]
