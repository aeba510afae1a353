"""Designer tools (issue 7): sweeps, tuning, sensitivity, runs to a target error, batch comparison and
balance metrics, for any kind whose summary follows SCENARIOS.md.

- :mod:`.params` scenario values by dotted key (``rules.tiers.heavy.dc``, ``party.0.scores.dex``);
- :mod:`.metrics` summary metrics by name (``escape_by_round.7``) with their 95% intervals;
- :mod:`.evaluate` one variant, simulated with common random numbers and solved exactly where possible;
- :mod:`.sweep`, :mod:`.tune`, :mod:`.sensitivity`, :mod:`.precision` (``--target-error``);
- :mod:`.scenario_comparison` batch runs and the comparison index (scenarios side by side);
- :mod:`.policy_comparison` one scenario under each of its kind's policy settings (escape has its own,
  :mod:`sim.escape.policy_comparison`); :mod:`.balance` balance metrics of a result.

See docs/designer.md. The package imports none of its modules (import the one you use, e.g.
``from sim.designer.sweep import sweep``): the kinds read :mod:`.params` and :mod:`.metrics` without loading the tools.
"""
