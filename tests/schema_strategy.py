"""Scenario data drawn from a kind's JSON Schema (docs/schema/, ``python -m sim schema KIND``), for hostile-input tests.

A small translation of the schema subset pydantic emits (objects, ``$ref``/``allOf``/``anyOf``, ``enum``/``const``,
bounded integers and numbers, strings with lengths, arrays, ``propertyNames``) into a hypothesis strategy. It stays
inside the schema, leaning on its edges: integers are drawn at their bounds as often as between them (a composure of
100,000, 1,000 rounds), strings from dice expressions and names as often as from arbitrary text. (hypothesis-jsonschema
does this in general, but its last release no longer runs on current hypothesis.)
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent

#: strings a scenario holds often: dice expressions (small and at the limits), names, slots, empty
STRINGS = ["", "1d6", "2d6+3", "1d4-2", "20d100", "100d1000", "1d1000+10000", "a", "arms", "legs", "wis",
           "Aldo (wizard)", "x" * 100]
INTEGER_EDGES = [0, 1, -1, 2, 5, 10, 20]


def load_schema(kind: str) -> dict:
    return json.loads((ROOT / "docs" / "schema" / f"{kind}.schema.json").read_text())


def from_schema(schema: dict, optional: float = 0.5):
    """A strategy for JSON data valid against ``schema`` (the root of one kind's schema)."""
    defs = schema.get("$defs", {})

    def resolve(node: dict) -> dict:
        while "$ref" in node:
            node = defs[node["$ref"].rsplit("/", 1)[-1]]
        if "allOf" in node and len(node["allOf"]) == 1:
            return resolve(node["allOf"][0])
        return node

    def strategy(node: dict, depth: int = 0):
        node = resolve(node)
        if "const" in node:
            return st.just(node["const"])
        if "enum" in node:
            return st.sampled_from(node["enum"])
        if "anyOf" in node:
            return st.one_of(*(strategy(n, depth + 1) for n in node["anyOf"]))
        kind = node.get("type")
        if isinstance(kind, list):
            return st.one_of(*(strategy({**node, "type": k}, depth + 1) for k in kind))
        if kind == "object" or "properties" in node:
            return objects(node, depth)
        if kind == "array":
            return arrays(node, depth)
        if kind == "integer":
            return integers(node)
        if kind == "number":
            return numbers(node)
        if kind == "string":
            lo, hi = node.get("minLength", 0), node.get("maxLength", 200)
            fits = [s for s in STRINGS if lo <= len(s) <= hi]
            text = st.text(st.characters(exclude_categories=["Cs", "Cc"]), min_size=lo, max_size=min(hi, lo + 20))
            return st.one_of(st.sampled_from(fits), text) if fits else text
        if kind == "boolean":
            return st.booleans()
        if kind == "null":
            return st.none()
        return st.none()

    def objects(node: dict, depth: int):
        props = node.get("properties", {})
        required = set(node.get("required", []))
        fields = {k: strategy(v, depth + 1) for k, v in props.items()}
        extra = node.get("additionalProperties")
        names = node.get("propertyNames", {}).get("enum")

        @st.composite
        def build(draw):
            out = {}
            for key, value in fields.items():
                if key in required or draw(st.floats(0, 1)) < optional:
                    drawn = draw(value)
                    if drawn is not None:  # TOML has no null: a nullable key is left out
                        out[key] = drawn
            if isinstance(extra, dict) and depth < 4:
                keys = draw(st.lists(st.sampled_from(names) if names else st.text(min_size=1, max_size=8),
                                     max_size=3, unique=True))
                for key in keys:
                    drawn = draw(strategy(extra, depth + 1))
                    if drawn is not None:
                        out[key] = drawn
            return out

        return build()

    def arrays(node: dict, depth: int):
        lo = node.get("minItems", 0)
        hi = min(node.get("maxItems", lo + 4), lo + 4)
        return st.lists(strategy(node.get("items", {}), depth + 1), min_size=lo, max_size=hi)

    return strategy(schema)


def integers(node: dict):
    lo = node.get("minimum", node.get("exclusiveMinimum", -(2**31) - 1) + (1 if "exclusiveMinimum" in node else 0))
    hi = node.get("maximum", node.get("exclusiveMaximum", 2**31 + 1) - (1 if "exclusiveMaximum" in node else 0))
    edges = [v for v in [lo, hi, *INTEGER_EDGES] if lo <= v <= hi]
    return st.one_of(st.sampled_from(edges), st.integers(lo, hi))


def numbers(node: dict):
    lo = node.get("minimum", node.get("exclusiveMinimum"))
    hi = node.get("maximum", node.get("exclusiveMaximum"))
    return st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False,
                     exclude_min="exclusiveMinimum" in node, exclude_max="exclusiveMaximum" in node)
