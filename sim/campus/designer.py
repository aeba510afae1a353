"""What the shared designer tools ask of the campus kind (hooks of sim/campus/kind.py): its balance
metrics."""

from __future__ import annotations

from typing import Any

import numpy as np

from sim.stats import spread, spread_from_counts


def balance_metrics(result, replay: bool = True) -> dict[str, Any]:
    """The turn with the most captures (``failure_turn``) and the spread of the turn each PC's game ends
    (``run_length``); nothing to replay."""
    s = result.summary
    out: dict[str, Any] = {}
    captures = np.asarray([v or 0.0 for v in s.get("capture_by_turn") or []], dtype=float)
    if captures.size and captures.max() > 0:
        out["failure_turn"] = int(captures.argmax()) + 1
        out["failure_turn_captures"] = float(captures.max())
    runs = result.runs
    ends = [c for c in runs.columns if c.endswith("_end_turn")]
    agg = result.aggregate
    if ends:
        out["run_length"] = spread(runs[ends].to_numpy().ravel())
    elif agg is not None and hasattr(agg, "end_turn_counts"):  # streamed: the end-turn histogram of every PC
        out["run_length"] = spread_from_counts(agg.end_turn_counts.sum(axis=0))
    return out


__all__ = ["balance_metrics"]
