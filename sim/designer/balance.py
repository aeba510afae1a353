"""Balance metrics of one simulation result: run-length spread, share of timeouts, first-check
advantage, and the tier or turn where most runs fail.

``balance_metrics(result)`` returns a dict with whichever of these apply to the result's kind:

- ``run_length``: over all runs, the rounds (turns) played: mean, sd, min, p10, p50, p90, max, iqr;
  ``run_length_success`` the same over successful runs (escape: escaped).
- ``timeout_share`` with ``timeout_share_ci`` (escape: runs that reached ``max_rounds``).
- ``first_check_advantage`` (escape): P(escape | at least one check succeeded in round 1) − P(escape | every
  round-1 check failed), over runs that made a check in round 1, with a 95% normal interval. Round 1 is
  read from a one-round replay of the same seed and runs: with R-GEN-7 seeding, round 1 draws the same
  uniform block whatever ``max_rounds`` is, so the replay's round 1 is the result's round 1.
  (restraint) ``first_mover_advantage``: the main metric with the binder acting first minus with the target
  acting first, with common random numbers.
- ``failure_tier`` (escape): among runs that did not escape, the tier holding the characters longest (per
  run, the tier with the most character-rounds as the highest goal tier), the most common one, with the
  share of failed runs it holds; ``failure_tiers`` all shares. ``failure_round`` (restraint): the round in
  which most duels end with the target taken out (incapacitated or arms complete), ``taken_out_round`` the
  spread of that round over the duels that end so; (campus) ``failure_turn``: the turn with most captures.

Each kind computes its own metrics (``balance_metrics`` of ``sim/<kind>/designer.py``, reached through
sim/kinds.py); a kind without one gets the run-length spread of its ``rounds`` column. The presentation,
:func:`sim.designer.pages.balance_table` and :func:`sim.designer.pages.balance_section`, lives in
sim/designer/pages.py, which imports this module (never the other way round).
"""

from __future__ import annotations

from typing import Any

from sim import kinds
from sim.stats import spread, spread_from_counts  # noqa: F401 - moved to the foundation (the kinds use them)


def balance_metrics(result, replay: bool = True) -> dict[str, Any]:
    """The balance metrics that apply to ``result``'s kind (module docstring). ``replay=False`` skips
    the metrics that need a second simulation (first-check / first-mover advantage)."""
    kind = result.summary.get("kind")
    own = kinds.get(kind).balance_metrics if kind in kinds.KINDS else None
    if own is not None:  # the kind's own metrics (sim/<kind>/designer.py)
        return own(result, replay)
    out: dict[str, Any] = {}
    runs = result.runs
    for col in ("rounds", "skirmish_rounds"):
        if col in runs:
            out["run_length"] = spread(runs[col].to_numpy())
            break
    else:  # a streamed result (empty runs): the rounds histogram of its aggregate (formation)
        counts = getattr(result.aggregate, "rounds_counts", None)
        if counts is not None:
            out["run_length"] = spread_from_counts(counts)
    return out


