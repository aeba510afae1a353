"""What the shared designer tools ask of the restraint kind (hooks of sim/restraint/kind.py): its balance
metrics and the one character of the class matrix."""

from __future__ import annotations

from typing import Any

import numpy as np

from sim.designer.metrics import main_metric, metric_value
from sim.designer.params import with_values
from sim.restraint.simulate import simulate
from sim.stats import spread, spread_from_counts


def one_character(scenario) -> str:
    """The class matrix's character: the target."""
    return "target"


def balance_metrics(result, replay: bool = True) -> dict[str, Any]:
    """The round in which most duels end with the target taken out (``failure_round``), the spread of that round
    (``taken_out_round``) and, with ``replay``, the first-mover advantage: the main metric with the binder acting
    first minus with the target acting first, with common random numbers."""
    s = result.summary
    out: dict[str, Any] = {}
    either = np.asarray(s.get("incapacitated_or_arms_complete_by_round") or [], dtype=float)
    if either.size and either[-1] > 0:
        new = np.diff(np.concatenate([[0.0], either]))
        out["failure_round"] = int(new.argmax()) + 1
        out["failure_round_share"] = float(new.max())
    runs = result.runs
    agg = result.aggregate
    if "first_incapacitated_round" in runs and len(runs):
        never = np.iinfo(np.int64).max
        rounds = [runs[c].to_numpy(dtype=np.int64) for c in ("first_incapacitated_round", "first_arms_complete_round")]
        first = np.minimum.reduce([np.where(r > 0, r, never) for r in rounds])
        taken = first < never
        out["taken_out_round"] = spread(first[taken])
    elif agg is not None:  # a streamed result: runs by the first round taken out (index 0 = never)
        counts = np.asarray(agg.taken_out, dtype=np.int64).copy()
        counts[0] = 0
        out["taken_out_round"] = spread_from_counts(counts)
    if replay and s.get("seed") is not None and result.scenario is not None:
        metric = main_metric("restraint")
        values = {}
        for who in ("binder", "target"):
            variant = with_values(result.scenario, {"target.initiative": who})
            # the kind's own engine (a kind imports no pipeline): common random numbers, only its summary
            summary = simulate(variant, runs=s["runs"], seed=s["seed"], keep_runs=False).summary
            values[who] = metric_value(summary, metric)
        out["first_mover_advantage"] = {"metric": metric, "value": values["binder"] - values["target"],
                                        "binder_first": values["binder"], "target_first": values["target"]}
    return out


__all__ = ["balance_metrics", "one_character"]
