"""Scenario values addressed by dotted key (``rules.tiers.heavy.dc``, ``party.0.scores.dex``).

A scenario is changed by dumping it to the mapping a TOML file would hold, setting one value
(creating missing tables on the way) and validating the mapping again at the one boundary,
:func:`sim.scenario.parse_scenario`. Every problem is a :class:`~sim.errors.ScenarioError` naming the
scenario's file and the key.
"""

from __future__ import annotations

import copy
import difflib
import math
import re
import types
import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from sim import kinds
from sim.errors import ScenarioError
from sim.limits import bounded_int
from sim.scenario import parse_scenario

_KEY_PART = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*|\d+")
MAX_GRID_POINTS = 10_000


def scenario_data(scenario) -> dict:
    """The scenario as the mapping a TOML file would hold (aliases such as ``class``, no None)."""
    return scenario.model_dump(by_alias=True, exclude_none=True)


def split_key(key: str, file: str | None = None) -> list[str | int]:
    """``"party.0.scores.dex"`` -> ``["party", 0, "scores", "dex"]``."""
    if not isinstance(key, str) or not key or len(key) > 300:
        raise ScenarioError(f"expected a dotted key such as 'rules.tiers.heavy.dc'; given {key!r}", file=file)
    parts: list[str | int] = []
    for part in key.split("."):
        if not _KEY_PART.fullmatch(part):
            raise ScenarioError(f"expected a dotted key of names and list indices; given {key!r}", file=file, key=key)
        parts.append(int(part) if part.isdigit() else part)
    return parts


def get_value(data: dict, key: str, default: Any = None, file: str | None = None) -> Any:
    """The value at ``key`` in a scenario mapping, or ``default`` where a table or key is missing."""
    node: Any = data
    for part in split_key(key, file):
        if isinstance(node, dict) and isinstance(part, str):
            if part not in node:
                return default
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int):
            if part >= len(node):
                return default
            node = node[part]
        else:
            return default
    return node


def set_value(data: dict, key: str, value: Any, file: str | None = None) -> dict:
    """A copy of ``data`` with ``value`` at ``key``; missing tables on the way are created."""
    parts = split_key(key, file)
    out = copy.deepcopy(data)
    node: Any = out
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        where = ".".join(str(p) for p in parts[: depth + 1])
        if isinstance(node, list):
            if not isinstance(part, int):
                raise ScenarioError(f"expected a list index at {where!r} (a number)", file=file, key=key)
            if part >= len(node):
                raise ScenarioError(f"list index {part} out of range (the list has {len(node)} entries)",
                                    file=file, key=key)
        elif isinstance(node, dict):
            if isinstance(part, int):
                raise ScenarioError(f"expected a key name at {where!r}, not a list index", file=file, key=key)
            if not last and part not in node:
                node[part] = {}
        else:
            prefix = ".".join(str(p) for p in parts[:depth])
            raise ScenarioError(f"{prefix!r} holds a value ({_short(node)}), not a table or list", file=file, key=key)
        if last:
            node[part] = value
        else:
            node = node[part]
    return out


def _names_at(types_: list[Any], part: str) -> tuple[list[Any], list[str]] | None:
    """(annotations found under ``part``, the names valid there); None where a free-form value allows any."""
    found: list[Any] = []
    names: list[str] = []
    for t in types_:
        origin = typing.get_origin(t)
        if isinstance(t, type) and issubclass(t, BaseModel):
            names += [info.alias or name for name, info in t.model_fields.items()]
            info = _field(t, part)
            if info is not None:
                found.append(info.annotation)
        elif origin is dict:
            args = typing.get_args(t)
            keys = [a for k in _unwrap(args[0])[0] if typing.get_origin(k) is typing.Literal
                    for a in typing.get_args(k)] if args else []
            if not keys:
                return None
            names += [str(k) for k in keys]
            if part in keys:
                found.append(args[1])
        elif t is Any:
            return None
    return found, names


def check_param_key(scenario, key: str) -> None:
    """Refuse a dotted key that names no value of the scenario's model, with the nearest valid key
    (``rules.tier.heavy.dc`` -> did you mean ``rules.tiers.heavy.dc``?)."""
    parts = split_key(key, scenario.source)
    current: list[Any] = [type(scenario)]
    for depth, part in enumerate(parts):
        types_ = [t for ann in current for t in _unwrap(ann)[0]]
        if isinstance(part, int):
            current = [typing.get_args(t)[0] for t in types_ if typing.get_origin(t) in (list, tuple)
                       and typing.get_args(t)]
            if not current:
                where = ".".join(str(p) for p in parts[:depth]) or "(top level)"
                raise ScenarioError(f"{where} is not a list; no index {part} there", file=scenario.source, key=key)
            continue
        result = _names_at(types_, part)
        if result is None:
            return
        found, names = result
        if found:
            current = found
            continue
        where = ".".join(str(p) for p in parts[:depth])
        if not names and any(typing.get_origin(t) in (list, tuple) for t in types_):
            fixed = ".".join(str(p) for p in [*parts[:depth], 0, *parts[depth + 1:]])
            raise ScenarioError(f"{where} is a list: expected a list index such as {fixed!r}", file=scenario.source,
                                key=key)
        if not names:
            raise ScenarioError(f"{where!r} holds a value, not a table or list", file=scenario.source, key=key)
        near = difflib.get_close_matches(part, sorted(set(names)), n=1, cutoff=0.6)
        if not near:  # a long name for a short key: dexterity -> dex
            near = [n for n in sorted(set(names), key=len, reverse=True) if part.lower().startswith(n.lower())][:1]
        if near:
            fixed = ".".join(str(p) for p in [*parts[:depth], near[0], *parts[depth + 1:]])
            raise ScenarioError(f"unknown key; did you mean {fixed!r}?", file=scenario.source, key=key)
        raise ScenarioError(f"unknown key: {part!r} is not one of {', '.join(map(repr, dict.fromkeys(names)))}"
                            f"{' under ' + where if where else ''}", file=scenario.source, key=key)


def with_values(scenario, values: dict[str, Any]):
    """A new validated scenario with each dotted key set (same source file)."""
    data = scenario_data(scenario)
    for key in values:
        check_param_key(scenario, key)
    for key, value in values.items():
        data = set_value(data, key, coerce_like(value, get_value(data, key, file=scenario.source)), scenario.source)
    return parse_scenario(data, scenario.source)


def coerce_like(value: Any, current: Any) -> Any:
    """Keep integers integers: 14.0 becomes 14 where the scenario holds an int (or nothing yet)."""
    if isinstance(value, float) and value.is_integer() and not isinstance(current, float):
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and isinstance(current, float):
        return float(value)
    return value


def parse_value(text: str) -> Any:
    """A command-line value: integer, float, true/false, else the text itself."""
    text = text.strip()
    if re.fullmatch(r"[+-]?\d+", text):
        try:
            return bounded_int(text)
        except ValueError as exc:
            raise ScenarioError(str(exc)) from None
    try:
        number = float(text)
    except ValueError:
        pass
    else:
        if not math.isfinite(number):
            raise ScenarioError(f"expected a finite number; given {text!r}")
        return number
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


@dataclass(frozen=True)
class GridAxis:
    """One swept parameter: its dotted key and its values in order."""

    key: str
    values: tuple


def parse_axis(spec: str) -> GridAxis:
    """``KEY=START:STOP:STEP`` (STOP included), ``KEY=START:STOP`` (step 1), ``KEY=a,b,c`` or ``KEY=v``."""
    if "=" not in spec:
        raise ScenarioError(f"expected KEY=START:STOP:STEP; given {spec!r}")
    key, _, rhs = spec.partition("=")
    key = key.strip()
    split_key(key)
    rhs = rhs.strip()
    if not rhs:
        raise ScenarioError(f"expected values after '='; given {spec!r}", key=key)
    if ":" in rhs:
        fields = rhs.split(":")
        if len(fields) not in (2, 3):
            raise ScenarioError(f"expected START:STOP:STEP; given {rhs!r}", key=key)
        nums = [parse_value(f) for f in fields]
        if any(isinstance(v, bool) or not isinstance(v, int | float) for v in nums):
            raise ScenarioError(f"expected numbers in START:STOP:STEP; given {rhs!r}", key=key)
        start, stop = nums[0], nums[1]
        step = nums[2] if len(nums) == 3 else 1
        if step <= 0:
            raise ScenarioError(f"expected STEP > 0; given {step!r}", key=key)
        if stop < start:
            raise ScenarioError(f"expected START <= STOP; given {rhs!r}", key=key)
        span = (stop - start) / step
        if not math.isfinite(span) or span >= MAX_GRID_POINTS:  # 1:2:1e-320 overflows: refuse, not a traceback
            raise ScenarioError(f"expected at most {MAX_GRID_POINTS} grid points; {rhs!r} gives more", key=key)
        count = math.floor(span + 1e-9) + 1
        if count > MAX_GRID_POINTS:
            raise ScenarioError(f"expected at most {MAX_GRID_POINTS} grid points; given {count}", key=key)
        if all(isinstance(v, int) for v in (start, stop, step)):
            values = tuple(start + i * step for i in range(count))
        else:
            values = tuple(_round(start + i * step) for i in range(count))
    else:
        values = tuple(parse_value(v) for v in rhs.split(","))
        if len(values) > MAX_GRID_POINTS:
            raise ScenarioError(f"expected at most {MAX_GRID_POINTS} values", key=key)
    return GridAxis(key, values)


def _round(x: float) -> float:
    return float(f"{x:.12g}")


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------------------------
# declared bounds of a field (for tune's default search interval)


def _unwrap(annotation: Any) -> tuple[list[Any], list[Any]]:
    """(concrete types, constraint metadata) of an annotation, Optional/Union/Annotated unwrapped."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        args = typing.get_args(annotation)
        types_, meta = _unwrap(args[0])
        return types_, list(args[1:]) + meta
    if origin in (typing.Union, types.UnionType):
        out_t: list[Any] = []
        out_m: list[Any] = []
        for arg in typing.get_args(annotation):
            t, m = _unwrap(arg)
            out_t.extend(t)
            out_m.extend(m)
        return out_t, out_m
    return [annotation], []


def _field(model: type[BaseModel], name: str):
    for fname, info in model.model_fields.items():
        if fname == name or info.alias == name:
            return info
    return None


@dataclass(frozen=True)
class FieldBounds:
    lo: float | None
    hi: float | None
    integer: bool
    numeric: bool


def field_bounds(scenario, key: str) -> FieldBounds:
    """The declared range of the value at ``key`` (ge/gt/le/lt of the scenario model)."""
    current: list[tuple[Any, list]] = [(type(scenario), [])]
    for part in split_key(key, scenario.source):
        nxt: list[tuple[Any, list]] = []
        for ann, _meta in current:
            types_, _ = _unwrap(ann)
            for t in types_:
                origin = typing.get_origin(t)
                if isinstance(t, type) and issubclass(t, BaseModel) and isinstance(part, str):
                    info = _field(t, part)
                    if info is not None:
                        nxt.append((info.annotation, list(info.metadata)))
                elif origin in (list, tuple) and isinstance(part, int):
                    nxt.extend((a, []) for a in typing.get_args(t)[:1])
                elif origin is dict and isinstance(part, str):
                    args = typing.get_args(t)
                    if len(args) == 2:
                        nxt.append((args[1], []))
        current = nxt
    lo = hi = None
    integer = numeric = False
    for ann, meta in current:
        types_, inner = _unwrap(ann)
        if int in types_ and float not in types_:
            integer = numeric = True
        elif float in types_:
            numeric = True
        for m in meta + inner:
            for attr, is_lo in (("ge", True), ("gt", True), ("le", False), ("lt", False)):
                v = getattr(m, attr, None)
                if v is None:
                    continue
                if integer and attr in ("gt", "lt"):
                    v = v + 1 if attr == "gt" else v - 1
                if is_lo:
                    lo = v if lo is None else max(lo, v)
                else:
                    hi = v if hi is None else min(hi, v)
    return FieldBounds(lo, hi, integer, numeric)


def effective_value(scenario, key: str) -> Any:
    """The value ``key`` has in effect: the scenario's own, else the rules' default for it (the kind's
    ``rule_default``: the escape tier ladder's DC for ``rules.tiers.<tier>.dc``), else the model's declared
    default; None if none is known."""
    value = get_value(scenario_data(scenario), key)
    if value is not None:
        return value
    value = kinds.get(scenario.kind).rule_default(key)
    return value if value is not None else field_default(scenario, key)


def field_default(scenario, key: str) -> Any:
    """The declared default of the model field at ``key`` (None if it has none or the key is not a field)."""
    model: Any = type(scenario)
    info = None
    for part in split_key(key, scenario.source):
        if isinstance(part, int):
            if info is None:
                return None
            types_, _ = _unwrap(info.annotation)
            inner = [typing.get_args(t)[0] for t in types_ if typing.get_origin(t) in (list, tuple)
                     and typing.get_args(t)]
            model = inner[0] if inner else None
            info = None
            continue
        if info is not None:
            types_, _ = _unwrap(info.annotation)
            models = [t for t in types_ if isinstance(t, type) and issubclass(t, BaseModel)]
            model = models[0] if models else None
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return None
        info = _field(model, part)
        if info is None:
            return None
    if info is None:
        return None
    default = info.get_default(call_default_factory=True)
    return None if default is PydanticUndefined else default
