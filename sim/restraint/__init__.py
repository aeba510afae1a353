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

__getattr__ = lazy_exports(__name__)  # simulate, exact, write_report, ...: the kind object's hooks
