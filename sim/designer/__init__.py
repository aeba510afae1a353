"""Designer tools (issue 7): sweeps, tuning, sensitivity, runs to a target error, batch comparison and
balance metrics, for any kind whose summary follows SCENARIOS.md.

- :mod:`.params` scenario values by dotted key (``rules.tiers.heavy.dc``, ``party.0.scores.dex``);
- :mod:`.metrics` summary metrics by name (``escape_by_round.7``) with their 95% intervals;
- :mod:`.evaluate` one variant, simulated with common random numbers and solved exactly where possible;
- :mod:`.sweep`, :mod:`.tune`, :mod:`.sensitivity`, :mod:`.precision` (``--target-error``);
- :mod:`.scenario_comparison` batch runs and the comparison index (scenarios side by side);
- :mod:`.policy_comparison` one scenario under each of its kind's policy settings (escape has its own,
  :mod:`sim.escape.policy_comparison`); :mod:`.balance` balance metrics of a result.

See docs/designer.md.
"""

from sim.designer.balance import balance_metrics
from sim.designer.metrics import headline, main_metric, metric_interval, metric_value
from sim.designer.pages import balance_section, balance_table
from sim.designer.params import get_value, parse_axis, scenario_data, set_value, with_values
from sim.designer.policy_comparison import compare_policies, write_policy_report
from sim.designer.precision import simulate_to_error
from sim.designer.scenario_comparison import scenario_files, write_index
from sim.designer.sensitivity import sensitivity, sensitivity_parameters, write_sensitivity
from sim.designer.sweep import sweep, write_sweep
from sim.designer.tune import tune

__all__ = [
    "balance_metrics",
    "balance_section",
    "balance_table",
    "compare_policies",
    "get_value",
    "headline",
    "main_metric",
    "metric_interval",
    "metric_value",
    "parse_axis",
    "scenario_data",
    "scenario_files",
    "sensitivity",
    "sensitivity_parameters",
    "set_value",
    "simulate_to_error",
    "sweep",
    "tune",
    "with_values",
    "write_index",
    "write_policy_report",
    "write_sensitivity",
    "write_sweep",
]
