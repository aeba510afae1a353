"""The one table of summary metrics (name, unit, short name) and the one way to write their numbers, for the
console, the reports, the designer pages and the studio; plain-language names of scenario parameters.

``metric_label("escape_by_round.7")`` -> ``"escaped by the end of round 8"`` (``short=True``: ``"escaped by round
8"``, for console tables and the studio); ``param_label("party.0.scores.dex", scenario)`` -> ``"Aster: dexterity"``.
Unknown keys fall back to the key with underscores as spaces, so a new summary key is readable before it gets its
own name here. Numbers: :func:`decimals_for` shows the first significant digit of a 95% interval's half-width and
no more; :func:`format_estimate` and :func:`format_value` write a value with it (percent for probabilities)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

#: metric key -> (name, unit: "probability" | "count" | "rounds" | "points" | "DP" | "", short name or "": the name):
#: the metrics every kind may have (the balance metrics); each kind names its own summary keys in its kind object
#: (``Kind.metrics``, sim/<kind>/kind.py), added here by the registry (:func:`add_metrics`).
METRICS: dict[str, tuple[str, str, str]] = {
    # balance
    "run_length": ("rounds played per run", "rounds", ""),
    "run_length_success": ("rounds played per successful run", "rounds", ""),
    "timeout_share": ("share of runs that reach the round limit", "probability", ""),
    "first_check_advantage": ("first-check advantage", "probability", ""),
    "first_mover_advantage": ("first-mover advantage", "probability", ""),
    "failure_tier": ("tier that holds failed runs longest", "", ""),
    "failure_tier_share": ("share of failed runs held longest by that tier", "probability", ""),
    "failure_tiers": ("failed runs by the tier that held them longest", "", ""),
    "failure_round": ("round in which most duels are lost", "", ""),
    "failure_round_share": ("share of duels lost in that round", "probability", ""),
    "taken_out_round": ("round the target is taken out (duels where it is)", "rounds", ""),
    "failure_turn": ("turn with the most captures", "", ""),
    "failure_turn_captures": ("expected captures in that turn", "count", ""),
}

_KIND_METRICS: dict[str, dict[str, tuple[str, str, str]]] = {}
_SOURCES: list[Callable[[], object]] = []


def add_metrics(kind: str, rows: Mapping[str, tuple[str, str, str]]) -> None:
    """The names of ``kind``'s summary keys (the registry, sim/kinds.py, adds each kind's ``metrics``)."""
    _KIND_METRICS[kind] = dict(rows)


def add_metric_source(load: Callable[[], object]) -> None:
    """``load()`` adds the kinds' metric names (:func:`add_metrics`) the first time a key is not in the table:
    the registry's declarations are read only when a label needs them."""
    _SOURCES.append(load)


def _row(base: str) -> tuple[str, str, str] | None:
    row = METRICS.get(base)
    if row is not None:
        return row
    while _SOURCES:
        _SOURCES.pop(0)()
    for rows in _KIND_METRICS.values():
        if base in rows:
            return rows[base]
    return None


_INDEXED = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\.(-?\d+|last)|@(\d+))?$")


def _humanise(key: str) -> str:
    return key.replace("_", " ").replace(".", " ")


def metric_label(key: str, short: bool = False) -> str:
    """The plain-language name of a metric key (``escape_by_round.7`` is round 8; ``.last`` the last round).
    ``short``: the compact name of console tables and the studio (``escaped by round 8``; the end: ``(end)``)."""
    m = _INDEXED.match(str(key))
    row = _row(m.group(1)) if m else None
    if row is None:
        if short and m:
            return _short(m.group(1).replace("_", " "), _index(m))
        return _humanise(str(key))
    name, _, compact = row
    index, one_based = m.group(2), m.group(3)
    if short and compact:
        return _short(compact, _index(m))
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


def _index(m: re.Match) -> int | None:
    if m.group(3) is not None:
        return int(m.group(3)) - 1
    if m.group(2) is None:
        return None
    return -1 if m.group(2) == "last" else int(m.group(2))


def _short(name: str, index: int | None) -> str:
    if index is None:
        return name
    if index == -1:
        return f"{name} (end)" if not name.endswith("by round") else f"{name} (last)"
    return f"{name} {index + 1}" if name.endswith(("by round", "by turn")) else f"{name} @{index + 1}"


def metric_unit(key: str) -> str:
    """The unit of a metric key from the table ("probability", "count", "rounds", "points", "DP", ""); a key not
    in the table by its name (``*_rounds`` rounds, ``dp`` DP, ``mean_*`` count; otherwise a probability)."""
    m = _INDEXED.match(str(key))
    base = m.group(1) if m else str(key)
    row = _row(base)
    if row is not None:
        return row[1]
    if base.endswith("_rounds"):
        return "rounds"
    if "dp" in base.split("_"):
        return "DP"
    if base.startswith("mean_") or base.endswith(("_sd", "_max")) or "checks" in base:
        return "count"
    return "probability"


def is_proportion(key: str) -> bool:
    """Whether the metric is a share (written as a percentage)."""
    return metric_unit(key) == "probability"


def decimals_for(half_width: float, percent: bool = False, most: int = 4, fallback: int | None = None) -> int:
    """Decimals that show the first significant digit of a 95% interval's half-width (and no more), at most
    ``most``; ``percent``: of the value in percent. Without a usable half-width: ``fallback`` (default 2 for a
    percentage, else ``most``)."""
    hw = abs(half_width) * (100 if percent else 1)
    if not math.isfinite(hw) or hw <= 0:
        return (2 if percent else most) if fallback is None else fallback
    return int(min(most, max(0, -math.floor(math.log10(hw)))))


def fixed(value: float, decimals: int = 2, signed: bool = False) -> str:
    """``value`` with ``decimals`` fixed decimals (``signed``: with its sign, "+1.50"), never "-0.00": a value that
    rounds to zero is written as zero without a sign (a gap of -1e-15 between two equal exact values is 0.00)."""
    text = f"{value:+.{decimals}f}" if signed else f"{value:.{decimals}f}"
    if text.lstrip("+-").strip("0.") == "" and text[0] in "+-":
        return text[1:]
    return text


def points(value: float, decimals: int = 2, signed: bool = False) -> str:
    """A difference of two shares in percentage points, from the difference as a share: ``0.0123`` -> "1.23 pp"
    (through :func:`fixed`: no "-0.00 pp")."""
    return f"{fixed(100 * value, decimals, signed)} pp"


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def format_estimate(value: float, lo: float = math.nan, hi: float = math.nan, percent: bool = True) -> str:
    """``99.5% [99.0, 99.9]``: value and 95% interval with the precision the interval supports; an exact
    value (``lo == hi``) or one without an interval is shown with 2 decimals (percent) or 4 significant."""
    if _missing(value):
        return "–"
    scale, unit = (100.0, "%") if percent else (1.0, "")
    has_ci = not (_missing(lo) or _missing(hi)) and hi > lo
    if not has_ci:
        return f"{fixed(value * scale)}{unit}" if percent else _zero_unsigned(f"{value:.4g}")
    d = decimals_for(max(value - lo, hi - value), percent)
    return f"{fixed(value * scale, d)}{unit} [{fixed(lo * scale, d)}, {fixed(hi * scale, d)}]"


def _zero_unsigned(text: str) -> str:
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def format_value(key: str, value: float | None, decimals: int | None = None) -> str:
    """One value of metric ``key`` without its interval: a percentage with ``decimals`` (default 1) for a
    probability, otherwise ``decimals`` (default 2) fixed decimals; "–" when missing."""
    if _missing(value):
        return "–"
    if is_proportion(key):
        return f"{fixed(100 * value, 1 if decimals is None else decimals)}%"
    return fixed(value, 2 if decimals is None else decimals)


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


__all__ = ["METRICS", "add_metric_source", "add_metrics", "decimals_for", "format_estimate", "format_value",
           "is_proportion", "metric_label", "metric_unit", "param_label"]
