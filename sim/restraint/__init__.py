"""kind = "restraint": restraints applied and escaped in combat, and composure pools
(RULES.md section 2, R-RST-1 … R-RST-31).

- :mod:`.model` the scenario format; :mod:`.rules` the rules as scalar functions;
- :mod:`.reference` the scalar reference, :mod:`.kernel` the vectorized kernel (same draws, same results);
- :mod:`.exact` the duel as a Markov chain and rounds until overload; :mod:`.tables` R-RST-14 and R-RST-24;
- :mod:`.simulate` the Monte Carlo driver and summaries, :mod:`.aggregate` the running sums they come from;
  :mod:`.report` the HTML report (from the summary alone, so it works on streamed results);
- :mod:`.kind` the kind's facts and hooks as one object (sim/kinds.py). Importing this package compiles nothing:
  the names below are imported from their modules when first read.
"""

from __future__ import annotations

from sim.kinds import lazy_exports

STREAMS = True  # simulate(keep_runs=False, runs_sink=...) streams chunk by chunk (sim/restraint/aggregate.py)

#: name -> the module it is imported from when first read ("module:attr" where the name differs)
_EXPORTS = {
    "Scenario": "sim.restraint.model",
    "audit_options": "sim.restraint.audit",
    "audit_runs": "sim.restraint.audit",
    "balance_metrics": "sim.restraint.designer",
    "check_scenario": "sim.restraint.model",
    "exact": "sim.restraint.simulate",
    "one_character": "sim.restraint.designer",
    "simulate": "sim.restraint.simulate",
    "supports_exact": "sim.restraint.simulate",
    "write_report": "sim.restraint.report",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
