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

#: beside the kind object's hooks (simulate, exact, ...): the rules and stances as functions, imported when first read
__getattr__ = lazy_exports(__name__, {
    **dict.fromkeys(("Params", "compile_params"), "sim.campus.params"),
    **dict.fromkeys(("Fighter", "TeamBattleResult", "beats", "duel", "fighter_value", "team_battle", "value"),
                    "sim.campus.rules"),
    **dict.fromkeys(("solve_zero_sum", "stance_matrix", "stance_table"), "sim.campus.stances"),
})
