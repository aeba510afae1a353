"""The campus kind's limits, rows of docs/limits.md (``python -m sim.docs_gen`` reads them through
``sim.kinds.get("campus")``): the numbers come from the code that enforces them."""

from __future__ import annotations

from sim.campus import model as campus


def limit_rows() -> list[tuple[str, str, str]]:
    """(what, limit, where) for every limit of a campus scenario."""
    return [
        ("campus turns", f"1 .. {campus.MAX_TURNS:,}", "`rules.turns`"),
        ("campus party / locations / spawn entries", f"{campus.MAX_PARTY} / {campus.MAX_LOCATIONS} / "
         f"{campus.MAX_SPAWN_SLOTS}", "`party`, `locations`, `spawns`"),
    ]
