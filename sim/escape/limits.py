"""The escape kind's limits, rows of docs/limits.md (``python -m sim.docs_gen`` reads them through
``sim.kinds.get("escape")``): the numbers come from the code that enforces them."""

from __future__ import annotations

from sim.escape import model as escape
from sim.escape.exact import AUTO_MAX_STATES, BRANCHES_PER_STATE, DEFAULT_MAX_STATES
from sim.escape.exact import MAX_PARTY as EXACT_MAX_PARTY
from sim.escape.exact_fast import (
    FAST_AUTO_MAX_BRANCHES,
    FAST_AUTO_MAX_STATES,
    FAST_MAX_BRANCHES,
    FAST_MAX_STATES,
)
from sim.limits import MAX_STATES


def limit_rows() -> list[tuple[str, str, str]]:
    """(what, limit, where) for every limit of an escape scenario and of its exact analysis and optimal play."""
    return [
        ("escape party", f"1 .. {escape.MAX_PARTY} characters", "`party`"),
        ("escape rounds", f"1 .. {escape.MAX_ROUNDS:,}", "`run.max_rounds`"),
        ("escape exact analysis", f"1 .. {EXACT_MAX_PARTY} characters, built-in policies; compiled engine "
         f"(the default): {FAST_MAX_STATES:,} states and {FAST_MAX_BRANCHES:,} replays by "
         f"default ({FAST_AUTO_MAX_STATES:,} and {FAST_AUTO_MAX_BRANCHES:,} next to a "
         "simulation); reference-driven engine (optimal play, hand-over): state budget "
         f"{DEFAULT_MAX_STATES:,} by default "
         f"({AUTO_MAX_STATES:,} next to a simulation), at most {MAX_STATES:,}, and "
         f"{BRANCHES_PER_STATE} branches per state of the budget (`--max-branches`); refused as soon "
         "as the projected work exceeds either", "`--max-states`, `--max-branches`, "
         "`sim.exact(max_states=, max_branches=)`"),
        ("escape optimal play", f"1 .. {EXACT_MAX_PARTY} characters, the same budgets (every choice of "
         "every state counts)", "`python -m sim optimal --max-states/--max-branches`"),
    ]
