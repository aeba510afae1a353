"""kind = "formation": the 魔導界 house rules on the 絶対隷奴 base check (RULES.md section 4).

- :mod:`sim.formation.rules`: R-MDK-1 .. R-MDK-3, R-MDK-12, R-MDK-13, R-MDK-20, R-MDK-21 as scalar
  functions and their exact analysis (36 × 36 outcomes).
- :mod:`sim.formation.targeting`: the targeting engine (R-MDK-6 .. R-MDK-9, R-MDK-11, R-MDK-14).
- :mod:`sim.formation.reference` / :mod:`sim.formation.kernel`: the per-run simulation (ambush,
  session DP, skirmish with R-MDK-4, R-MDK-5, R-MDK-6, R-MDK-10, R-MDK-11), scalar and compiled
  (numba), same columns.
- :mod:`sim.formation.switches`: the effect of each issue-18 switch (the report's last table).
- :mod:`sim.formation.aggregate`: the streaming aggregate that the summary and the report read.
- :mod:`sim.formation.report`: report.html with the ambush heat map, targeting table, DP income
  and skirmish outcomes.
"""

from __future__ import annotations

from sim.formation.audit import audit_metric, audit_options, audit_runs
from sim.formation.engine import exact, simulate, supports_exact
from sim.formation.limits import limit_rows  # the rows of docs/limits.md (sim/docs_gen.py)
from sim.formation.model import Scenario, check_scenario
from sim.formation.report import write_report
from sim.formation.targeting import targeting_table

STREAMS = True  # simulate(keep_runs=False, runs_sink=...) streams chunk by chunk (sim/formation/aggregate.py)

__all__ = ["Scenario", "check_scenario", "exact", "simulate", "supports_exact", "targeting_table",
           "write_report"]
__all__ += ["audit_metric", "audit_options", "audit_runs"]

__all__ += ["limit_rows"]
