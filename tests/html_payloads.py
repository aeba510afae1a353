"""Hostile strings for the HTML-safety tests (issue 17): each would change ``document.title`` to ``XX`` (or run
code) if a page put it into its markup unescaped. ``String.fromCharCode`` keeps the effect's text ("XX") out
of the payload itself, so a page that merely shows the payload cannot fake the effect."""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path

EFFECT = "document.title=String.fromCharCode(88,88)"
PAYLOADS = (
    f"<script>{EFFECT}</script>",
    f'<img src=x onerror="{EFFECT}">',
    f'"><svg onload="{EFFECT}">',
    f"javascript:{EFFECT}",
    "{{ 7*7 }} ${ 7*7 } {% raw %}",
    "\u202egnp.exe \u2067isolate\u2069",
    f"'><iframe srcdoc=\"<script>parent.{EFFECT}</script>\">",
)
#: the description gets every payload and is padded to the longest description a scenario accepts
LONG = 10_000

#: keys whose string values name things (and are referenced by other keys holding the same string)
NAME_KEYS = {"name", "id", "team"}


def payload(i: int) -> str:
    """The i-th payload with a unique prefix (names must be unique), at most 100 characters."""
    return (f"P{i}" + PAYLOADS[i % len(PAYLOADS)])[:100]


def long_description() -> str:
    text = " ".join(PAYLOADS) + " "
    return (text + "A" * LONG)[:LONG]


def hostile_data(path: Path) -> dict:
    """The scenario file at ``path`` with every free-text string replaced by a payload: its name, its
    description (10,000 characters) and every name, id and team, consistently wherever it is referenced."""
    data = tomllib.loads(Path(path).read_text())
    mapping: dict[str, str] = {}

    def collect(node, key=None, under_policy=False):
        if isinstance(node, dict):
            for k, v in node.items():
                collect(v, k, under_policy or k == "policy" or k == "skills")
        elif isinstance(node, list):
            for v in node:
                collect(v, key, under_policy)
        elif isinstance(node, str) and key in NAME_KEYS and not under_policy and node not in mapping:
            mapping[node] = payload(len(mapping))

    top_name = data.get("name")
    collect({k: v for k, v in data.items() if k not in ("name", "description", "kind")})

    def replace(node, key=None):
        if isinstance(node, dict):
            return {k: (v if k in ("kind", "policy", "skills") else replace(v, k)) for k, v in node.items()}
        if isinstance(node, list):
            return [replace(v, key) for v in node]
        if isinstance(node, str) and node in mapping:
            return mapping[node]
        return node

    out = replace(copy.deepcopy(data))
    out["name"] = ("N" + PAYLOADS[0] + " " + str(top_name or ""))[:200]
    out["description"] = long_description()
    return out


def dump_toml(data: dict) -> str:
    """A minimal TOML writer for scenario data (tables, arrays of tables, scalars, arrays of scalars)."""
    import json

    def scalar(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int | float):
            return repr(v)
        if isinstance(v, str):
            return json.dumps(v)  # a JSON string is a valid TOML basic string
        if isinstance(v, list):
            return "[" + ", ".join(scalar(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{json.dumps(k)} = {scalar(x)}" for k, x in v.items()) + " }"
        raise TypeError(type(v))

    lines: list[str] = []

    def table(prefix: str, node: dict):
        simple = {k: v for k, v in node.items() if not _is_table(v) and not _is_table_array(v)}
        for k, v in simple.items():
            lines.append(f"{json.dumps(k)} = {scalar(v)}")
        for k, v in node.items():
            name = f"{prefix}.{json.dumps(k)}" if prefix else json.dumps(k)
            if _is_table(v):
                lines.append(f"[{name}]")
                table(name, v)
            elif _is_table_array(v):
                for item in v:
                    lines.append(f"[[{name}]]")
                    table(name, item)

    table("", data)
    return "\n".join(lines) + "\n"


def _is_table(v) -> bool:
    return isinstance(v, dict)


def _is_table_array(v) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)
