"""One colour per outcome, for every chart of every kind (issue 26).

An outcome has the same colour wherever it is drawn: a campus PC that clears the game, an escaping party and a
won ambush are all :data:`WON` green; caught, game over and a lost skirmish are :data:`LOST` red; a run that ends
still held (escape timeout, a PC still captured at the end, a skirmish drawn at the round limit) is
:data:`HELD` amber; a campus PC still free mid-game is :data:`IN_PLAY` cyan. The colours are Paul Tol's
"bright" scheme, which stays distinguishable for the common colour-vision deficiencies.

Series that are not outcomes (PCs, policies, attention sources, scenario variants) draw from :data:`SERIES`,
which holds none of the outcome colours, so a green line in any report is an outcome that was reached and
nothing else. :func:`sim.report.new_figure` sets :data:`SERIES` as every axes' colour cycle."""

from __future__ import annotations

#: the roles of an outcome; each has one colour
WON = "won"
LOST = "lost"
HELD = "held"
IN_PLAY = "in play"

ROLE_COLOURS = {
    WON: "#228833",      # green
    LOST: "#EE6677",     # red
    HELD: "#CCBB44",     # amber
    IN_PLAY: "#66CCEE",  # cyan
}

#: every outcome name and summary key a chart draws, with its role. Restraint is seen from the binder's side
#: (the report asks whether the target is taken out), formation's skirmish from side A (the ambushing side).
OUTCOMES = {
    # escape (R-ESC: escaped, caught, timeout)
    "escaped": WON, "escape_rate": WON, "escape_by_round": WON,
    "caught": LOST, "caught_rate": LOST,
    "timeout": HELD, "timeout_rate": HELD, "still held": HELD,
    # campus (R-CAM-41: free, captured, cleared, game over)
    "cleared": WON, "clear_rate": WON, "party_clear_rate": WON, "duel won": WON,
    "game over": LOST, "game_over": LOST, "game_over_rate": LOST,
    "captured": HELD, "captured at the end": HELD, "captured_at_end_rate": HELD, "capture_by_turn": HELD,
    "free": IN_PLAY,
    # restraint (the target taken out: incapacitated or arms complete)
    "taken out": WON, "incapacitated_or_arms_complete_by_round": WON,
    "incapacitated_or_arms_complete_by_round.last": WON,
    # formation (ambush; skirmish: side A wins, side B wins, draw at the round limit)
    "won": WON, "ambush_win": WON, "ambush_win_by_2": WON, "skirmish_win_a": WON, "side A wins": WON,
    "lost": LOST, "skirmish_win_b": LOST, "side B wins": LOST,
    "draw": HELD, "skirmish_draw": HELD,
}

#: colours for series that are not outcomes: blues, purples and a dark grey, nothing near the green, red, amber
#: or cyan of an outcome
SERIES = ("#4477AA", "#AA3377", "#332288", "#555555", "#9970AB", "#1F3B73", "#C2A5CF")

#: a baseline or reference drawn beside a coloured variant
BASELINE = "#BBBBBB"

#: exact values over simulated ones
EXACT = "black"

#: restraint levels none .. despair (R-RST-1): one sequential blue-to-purple scale, no outcome colour in it
LEVEL_COLOURS = ("#F0F0F0", "#C6DBEF", "#6BAED6", "#2171B5", "#08306B", "#54278F")


def outcome_role(name: str) -> str | None:
    """The role of an outcome name or summary key (``"cleared"``, ``"caught_rate"``, ...), None if not one."""
    key = str(name).strip()
    return OUTCOMES.get(key) or OUTCOMES.get(key.lower())


def outcome_colour(name: str, default: str | None = None) -> str:
    """The colour of outcome ``name`` (its role's colour); ``default`` (else the first series colour) when
    ``name`` is not an outcome."""
    role = outcome_role(name)
    if role is not None:
        return ROLE_COLOURS[role]
    return default if default is not None else SERIES[0]


def series_colour(i: int) -> str:
    """The i-th colour for series that are not outcomes (cycling)."""
    return SERIES[i % len(SERIES)]


__all__ = ["BASELINE", "EXACT", "HELD", "IN_PLAY", "LEVEL_COLOURS", "LOST", "OUTCOMES", "ROLE_COLOURS", "SERIES",
           "WON", "outcome_colour", "outcome_role", "series_colour"]
