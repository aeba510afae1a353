"""Plain-language names of summary metrics and scenario parameters, for reports (and any other reader).

``metric_label("escape_by_round.7")`` -> ``"escaped by the end of round 8"``; ``param_label("party.0.scores.dex",
scenario)`` -> ``"Aster: dex score"``. Unknown keys fall back to the key with underscores as spaces, so a
new summary key is readable before it gets its own name here."""

from __future__ import annotations

import re
from typing import Any

#: metric key -> (name, unit: "probability" | "count" | "rounds" | "turns" | "DP" | "")
METRICS: dict[str, tuple[str, str]] = {
    # escape
    "escape_rate": ("share of runs in which the party escapes", "probability"),
    "caught_rate": ("share of runs in which the watch catches the party", "probability"),
    "timeout_rate": ("share of runs that reach the round limit", "probability"),
    "mean_rounds": ("mean rounds to escape (escaped runs)", "rounds"),
    "mean_checks": ("mean escape checks per run (party total)", "count"),
    "mean_overloads": ("mean overloads per run (party total)", "count"),
    "escape_by_round": ("escaped by the end of round {round}", "probability"),
    # restraint
    "incapacitated_or_arms_complete_by_round": ("target taken out (incapacitated or arms complete) by round {round}",
                                                "probability"),
    "arms_complete_by_round": ("target's arms complete by round {round}", "probability"),
    "incapacitated_by_round": ("target incapacitated by round {round}", "probability"),
    "overload_by_round": ("target overloaded by round {round}", "probability"),
    "escape_checks_by_round": ("escape checks in round {round}", "count"),
    "mean_escape_checks": ("mean escape checks per duel", "count"),
    "mean_escape_successes": ("mean successful escape checks per duel", "count"),
    "mean_bindings_won": ("mean bindings won by the binder per duel", "count"),
    "mean_rages_left": ("mean rages left at the end", "count"),
    "mean_ranger_uses_left": ("mean ranger uses left at the end", "count"),
    "composure_max": ("target's composure maximum", "points"),
    # campus
    "clear_rate": ("share of PCs that clear the game (mean over PCs)", "probability"),
    "party_clear_rate": ("share of games in which every PC clears", "probability"),
    "game_over_rate": ("share of PCs whose game is over (mean over PCs)", "probability"),
    "captured_at_end_rate": ("share of PCs captured at the end", "probability"),
    "rescues_tried_per_game": ("rescues tried per game", "count"),
    "rescue_success_rate": ("share of rescues that succeed", "probability"),
    "capture_by_turn": ("expected captures in turn {round}", "count"),
    "capture_hazard_by_turn": ("capture hazard in turn {round}", "probability"),
    "escape_success_by_turn": ("escape-check success in turn {round}", "probability"),
    "escape_checks_by_turn": ("escape checks per game in turn {round}", "count"),
    # formation
    "ambush_win": ("share of ambushes that succeed", "probability"),
    "ambush_win_by_2": ("share of ambushes won by 2 or more", "probability"),
    "dp_per_session": ("DP earned per session", "DP"),
    "skirmish_win_a": ("share of skirmishes side A wins", "probability"),
    "skirmish_win_b": ("share of skirmishes side B wins", "probability"),
    "skirmish_draw": ("share of skirmishes that reach the round limit", "probability"),
    "skirmish_mean_rounds": ("mean skirmish rounds", "rounds"),
    "skirmish_mean_survivors_a": ("mean survivors of side A", "count"),
    "skirmish_mean_survivors_b": ("mean survivors of side B", "count"),
    "enslave_dp_mean": ("mean enslavement DP for side A", "DP"),
    # balance
    "run_length": ("rounds played per run", "rounds"),
    "run_length_success": ("rounds played per successful run", "rounds"),
    "timeout_share": ("share of runs that reach the round limit", "probability"),
    "first_check_advantage": ("first-check advantage", "probability"),
    "first_mover_advantage": ("first-mover advantage", "probability"),
    "failure_tier": ("tier that holds failed runs longest", ""),
    "failure_tier_share": ("share of failed runs held longest by that tier", "probability"),
    "failure_tiers": ("failed runs by the tier that held them longest", ""),
    "failure_round": ("round in which most duels are lost", ""),
    "failure_round_share": ("share of duels lost in that round", "probability"),
    "taken_out_round": ("round the target is taken out (duels where it is)", "rounds"),
    "failure_turn": ("turn with the most captures", ""),
    "failure_turn_captures": ("expected captures in that turn", "count"),
}

_INDEXED = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\.(-?\d+|last)|@(\d+))?$")


def _humanise(key: str) -> str:
    return key.replace("_", " ").replace(".", " ")


def metric_label(key: str) -> str:
    """The plain-language name of a metric key (``escape_by_round.7`` is round 8; ``.last`` the last round)."""
    m = _INDEXED.match(str(key))
    if not m or m.group(1) not in METRICS:
        return _humanise(str(key))
    name = METRICS[m.group(1)][0]
    index, one_based = m.group(2), m.group(3)
    if "{round}" in name:
        if one_based is not None:
            return name.format(round=int(one_based))
        if index is None:
            return name.replace(" {round}", "").replace("in turn", "per turn").replace("in round", "per round")
        if index in ("last", "-1"):
            return name.format(round="the last round").replace("round the last round", "the end") \
                .replace("turn the last round", "the last turn")
        i = int(index)
        return name.format(round=i + 1 if i >= 0 else f"{i} (from the end)")
    return name


def metric_kind(key: str) -> str:
    """The unit of a metric key ("probability", "count", "rounds", ...; "" when unknown)."""
    m = _INDEXED.match(str(key))
    return METRICS[m.group(1)][1] if m and m.group(1) in METRICS else ""


_SCORES = {"str": "strength", "dex": "dexterity", "con": "constitution", "int": "intelligence",
           "wis": "wisdom", "cha": "charisma"}


def param_label(key: str, scenario: Any = None) -> str:
    """A dotted scenario key in words, list members named by their ``name`` where the scenario has one:
    ``party.0.scores.dex`` -> ``Aster: dexterity``; ``rules.tiers.heavy.dc`` -> ``heavy tier DC``."""
    parts = str(key).split(".")
    if parts[:2] == ["rules", "tiers"] and len(parts) == 4:
        return f"{parts[2]} tier {parts[3].upper() if parts[3] == 'dc' else parts[3]}"
    words = []
    node = scenario
    i = 0
    while i < len(parts):
        part = parts[i]
        child = getattr(node, part, None) if node is not None and not part.isdigit() else None
        if part.isdigit() and isinstance(node, list | tuple) and int(part) < len(node):
            member = node[int(part)]
            name = getattr(member, "name", None)
            words[-1:] = [str(name) if name else f"{words[-1] if words else ''} #{int(part) + 1}".strip()]
            node = member
            i += 1
            continue
        if part == "scores" and i + 1 < len(parts):
            words.append(_SCORES.get(parts[i + 1], parts[i + 1]))
            i += 2
            continue
        words.append(part.replace("_", " ").upper() if part == "dc" else part.replace("_", " "))
        node = child
        i += 1
    if len(words) > 1:
        return f"{words[0]}: {' '.join(words[1:])}"
    return " ".join(words)


__all__ = ["METRICS", "metric_kind", "metric_label", "param_label"]
