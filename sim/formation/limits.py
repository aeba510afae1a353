"""The formation kind's limits, rows of docs/limits.md (``python -m sim.docs_gen`` reads them through
``sim.kinds.get("formation")``): the numbers come from the code that enforces them."""

from __future__ import annotations

from sim.formation import model as formation


def limit_rows() -> list[tuple[str, str, str]]:
    """(what, limit, where) for every limit of a formation scenario."""
    return [
        ("formation units / rounds / checks per session", f"{formation.MAX_UNITS} / {formation.MAX_ROUNDS:,} / "
         f"{formation.MAX_CHECKS:,}", "`units`, `skirmish.max_rounds`, `session.checks`"),
    ]
