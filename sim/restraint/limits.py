"""The restraint kind's limits, rows of docs/limits.md (``python -m sim.docs_gen`` reads them through
``sim.kinds.get("restraint")``): the numbers come from the code that enforces them."""

from __future__ import annotations

from sim.restraint import model as restraint
from sim.restraint.exact import MAX_EXACT_STATES, MAX_EXACT_WORK


def limit_rows() -> list[tuple[str, str, str]]:
    """(what, limit, where) for every limit of a restraint scenario and of its exact analysis."""
    return [
        ("restraint rounds", f"1 .. {restraint.MAX_ROUNDS:,}; party for the composure table 0 .. "
         f"{restraint.MAX_PARTY}", "`run.rounds`, `composure.party`"),
        ("restraint exact analysis", f"at most {MAX_EXACT_STATES:,} duel states and "
         f"{MAX_EXACT_WORK:,} steps (one duel or composure state meeting one stimulus outcome in "
         "one round), projected over the rounds to come and refused as soon as the projection exceeds it (a few "
         "seconds at most); beside `run` the exact column is skipped with one line saying why",
         "`sim.restraint.exact.MAX_EXACT_WORK`"),
    ]
