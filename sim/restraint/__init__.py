"""kind = "restraint": restraints applied and escaped in combat, and composure pools
(RULES.md section 2, R-RST-1 … R-RST-31).

- :mod:`.model` the scenario format; :mod:`.rules` the rules as scalar functions;
- :mod:`.reference` the scalar reference, :mod:`.kernel` the vectorized kernel (same draws, same results);
- :mod:`.exact` the duel as a Markov chain and rounds until overload; :mod:`.tables` R-RST-14 and R-RST-24;
- :mod:`.simulate` the Monte Carlo driver and summaries, :mod:`.aggregate` the running sums they come from;
  :mod:`.report` the HTML report (from the summary alone, so it works on streamed results).
"""

from sim.restraint.audit import audit_options, audit_runs
from sim.restraint.designer import balance_metrics, one_character
from sim.restraint.limits import limit_rows  # the rows of docs/limits.md (sim/docs_gen.py)
from sim.restraint.model import Scenario, check_scenario
from sim.restraint.report import write_report
from sim.restraint.simulate import exact, simulate, supports_exact

STREAMS = True  # simulate(keep_runs=False, runs_sink=...) streams chunk by chunk (sim/restraint/aggregate.py)

__all__ = ["Scenario", "balance_metrics", "check_scenario", "exact", "one_character", "simulate", "supports_exact",
           "write_report"]
__all__ += ["audit_options", "audit_runs"]

__all__ += ["limit_rows"]
