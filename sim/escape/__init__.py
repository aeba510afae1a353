"""The escape challenge (kind = "escape", RULES.md section 1).

The kind's facts and hooks are one object, :data:`sim.escape.kind.KIND` (sim/kinds.py). Importing this package
compiles nothing: the names below are imported from their modules when first read."""

from __future__ import annotations

from sim.kinds import lazy_exports

STREAMS = True  # simulate(keep_runs=False, runs_sink=...) streams chunk by chunk (sim/escape/aggregate.py)

#: name -> the module it is imported from when first read ("module:attr" where the name differs)
_EXPORTS = {
    "AUTO_MAX_STATES": "sim.escape.exact",
    "Scenario": "sim.escape.model",
    "audit_evaluator": "sim.escape.audit",
    "audit_options": "sim.escape.audit",
    "balance_metrics": "sim.escape.designer",
    "check": "sim.escape.model",
    "check_scenario": "sim.escape.model:check",
    "exact": "sim.escape.exact",
    "exact_answer": "sim.escape.designer",
    "one_character": "sim.escape.designer",
    "optimal_comparison": "sim.escape.designer",
    "rule_default": "sim.escape.designer",
    "rules_table": "sim.escape.designer",
    "sensitivity_parameters": "sim.escape.designer",
    "simulate": "sim.escape.simulate",
    "supports_exact": "sim.escape.exact",
    "tier_ladder": "sim.escape.designer",
    "write_report": "sim.escape.report",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
