"""The scenario-format reference, generated from the scenario models so it cannot drift.

For every kind this module builds

- a JSON Schema of the scenario file (``docs/schema/<kind>.schema.json``; also printed by
  ``python -m sim schema KIND``), which TOML editors (taplo, Even Better TOML) use through the
  ``#:schema`` directive on the first line of every example scenario, and
- a Markdown reference (``docs/scenario-format/<kind>.md``; ``python -m sim schema KIND --markdown``):
  every key with its type, default, allowed values, description and an example value.

Both come from the pydantic models (``sim/<kind>/model.py``, ``sim/scenario.py``): the descriptions
are the models' ``Field(description=...)``. The Markdown is rendered from the JSON Schema, so the two
agree. ``python -m sim.docs_gen`` rewrites the files, ``python -m sim.docs_gen --check`` lists stale
ones (exit 1); ``tests/test_docs.py`` fails when a shipped file differs from what this module generates.

The schema describes each key on its own; checks across keys (unique names, ids that must exist,
``utter`` taking no override, ...) are made by the loader only, with the same one-line errors.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

from pydantic.json_schema import GenerateJsonSchema, NoDefault

from sim import batch, dice, kinds, limits

ROOT = Path(__file__).resolve().parent.parent  # the project folder (docs/, scenarios/)
SCHEMA_DIR = Path("docs") / "schema"
FORMAT_DIR = Path("docs") / "scenario-format"
LIMITS_PAGE = Path("docs") / "limits.md"
# Draft 7: the draft TOML editors (taplo, Even Better TOML) have supported longest. pydantic's output fits it
# once a $ref with sibling keywords (ignored beside $ref before 2019-09) is wrapped in allOf.
SCHEMA_URL = "http://json-schema.org/draft-07/schema#"

class _Generator(GenerateJsonSchema):
    """Pydantic's generator, with the defaults of ``default_factory`` fields filled in."""

    def get_default_value(self, schema):
        if "default_factory" in schema and not schema.get("default_factory_takes_data"):
            return schema["default_factory"]()
        return schema.get("default", NoDefault)


def _strip_titles(node: Any) -> None:
    """Drop pydantic's generated titles ("Max Rounds"): the key and its description say it better."""
    if isinstance(node, dict):
        node.pop("title", None)
        for key, value in node.items():
            if key in ("properties", "$defs"):
                for sub in value.values():
                    _strip_titles(sub)
            elif key in ("items", "additionalProperties", "propertyNames") and isinstance(value, dict):
                _strip_titles(value)
            elif key in ("anyOf", "oneOf", "allOf", "prefixItems"):
                for sub in value:
                    _strip_titles(sub)


def _wrap_refs(node: Any) -> Any:
    """``{"$ref": r, "description": d}`` -> ``{"allOf": [{"$ref": r}], "description": d}`` (draft 7)."""
    if isinstance(node, dict):
        out = {key: _wrap_refs(value) for key, value in node.items()}
        if "$ref" in out and len(out) > 1:
            ref = out.pop("$ref")
            out = {"allOf": [{"$ref": ref}], **out}
        return out
    if isinstance(node, list):
        return [_wrap_refs(item) for item in node]
    return node


def json_schema(kind: str) -> dict:
    """The JSON Schema (draft 7) of a scenario file of ``kind``."""
    model = kinds.get(kind).scenario_model
    body = model.model_json_schema(by_alias=True, schema_generator=_Generator)
    _strip_titles(body)
    body = _wrap_refs(body)
    schema = {
        "$schema": SCHEMA_URL,
        "title": f"sim scenario, kind = \"{kind}\"",
    }
    schema.update(body)
    schema["description"] = (f"A scenario file of kind \"{kind}\" for the sim balance simulator. "
                             f"Reference: docs/scenario-format/{kind}.md; rules: docs/rules/{kind}.md.")
    return schema


def schema_text(kind: str) -> str:
    return json.dumps(json_schema(kind), indent=2, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------------------------
# Markdown, rendered from the JSON Schema


def _code(value: Any) -> str:
    text = value if isinstance(value, str) and value.startswith('"') else _toml_value(value)
    return "`" + text.replace("|", "\\|").replace("`", "'") + "`"


def _toml_value(value: Any) -> str:
    """A value as it is written in TOML (the example and default columns)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, float) and value.is_integer():
        return f"{value:.1f}"
    return str(value)


class _Renderer:
    def __init__(self, schema: dict, examples: dict[str, Any]):
        self.defs = schema.get("$defs", {})
        self.examples = examples
        self.sections: list[tuple[str, str, dict]] = []  # (dotted path, header, object schema)

    def resolve(self, node: dict) -> dict:
        if "allOf" in node and len(node["allOf"]) == 1:
            merged = self.resolve(node["allOf"][0])
            merged = dict(merged)
            merged.update({k: v for k, v in node.items() if k != "allOf"})
            return merged
        if "$ref" in node:
            target = self.defs[node["$ref"].rsplit("/", 1)[-1]]
            merged = dict(target)
            merged.update({k: v for k, v in node.items() if k != "$ref"})
            return merged
        return node

    def variants(self, node: dict) -> tuple[list[dict], bool]:
        """The alternatives of a node and whether null (key not set) is one of them."""
        node = self.resolve(node)
        if "anyOf" in node:
            alts = [self.resolve(a) for a in node["anyOf"]]
            return [a for a in alts if a.get("type") != "null"], any(a.get("type") == "null" for a in alts)
        return [node], False

    @staticmethod
    def _is_table(node: dict) -> bool:
        return node.get("type") == "object" and "properties" in node

    def _range(self, node: dict) -> str:
        parts = []
        lo, hi = node.get("minimum"), node.get("maximum")
        if "exclusiveMinimum" in node:
            parts.append(f"> {node['exclusiveMinimum']}")
        elif lo is not None:
            parts.append(f">= {lo}")
        if "exclusiveMaximum" in node:
            parts.append(f"< {node['exclusiveMaximum']}")
        elif hi is not None:
            parts.append(f"<= {hi}")
        if lo is not None and hi is not None and "exclusiveMinimum" not in node and "exclusiveMaximum" not in node:
            return f"{lo} … {hi}"
        return ", ".join(parts)

    def _length(self, node: dict, unit: str) -> str:
        lo, hi = node.get(f"min{unit}"), node.get(f"max{unit}")
        word = {"Length": "characters", "Items": "entries"}[unit]
        if lo is not None and hi is not None:
            return f"{lo} … {hi} {word}" if lo != hi else f"exactly {lo} {word}"
        if lo is not None:
            return f"at least {lo} {word}"
        if hi is not None:
            return f"at most {hi} {word}"
        return ""

    def type_and_allowed(self, node: dict, path: str, header: str) -> tuple[str, str]:
        """A short type and the allowed values of one key; registers sub-tables as sections."""
        alts, nullable = self.variants(node)
        types, allowed = [], []
        for alt in alts:
            t, a = self._one(alt, path, header)
            types.append(t)
            if a:
                allowed.append(a)
        type_text = " or ".join(dict.fromkeys(types))
        allowed_text = "; or ".join(allowed)
        if nullable:
            allowed_text = (allowed_text + "; " if allowed_text else "") + "may be left out"
        return type_text, allowed_text

    def _one(self, node: dict, path: str, header: str) -> tuple[str, str]:
        node = self.resolve(node)
        if "const" in node:
            return "string", f"exactly {_code(node['const'])}"
        if "enum" in node:
            return "string", "one of " + ", ".join(_code(v) for v in node["enum"])
        t = node.get("type")
        if t == "integer":
            return "integer", self._range(node) or "any integer"
        if t == "number":
            return "number", self._range(node)
        if t == "boolean":
            return "boolean", "`true` or `false`"
        if t == "string":
            return "string", self._length(node, "Length")
        if t == "array":
            item = self.resolve(node.get("items", {}))
            count = self._length(node, "Items")
            if self._is_table(item):
                sub_header = f"[[{path}]]"
                self.sections.append((path + "[]", sub_header, item))
                return "array of tables", "; ".join(x for x in (count, f"see [`{sub_header}`](#{_anchor(path)})") if x)
            item_type, item_allowed = self.type_and_allowed(item, path + "[]", header)
            each = f"each {item_allowed}" if item_allowed and not item_allowed.startswith("any") else ""
            return f"array of {item_type}s", "; ".join(x for x in (count, each) if x)
        if t == "object" and "properties" in node:
            sub_header = f"[{path}]"
            self.sections.append((path, sub_header, node))
            return "table", f"see [`{sub_header}`](#{_anchor(path)})"
        if t == "object":
            value = self.resolve(node.get("additionalProperties", {}))
            keys = node.get("propertyNames", {}).get("enum")
            key_text = "one of " + ", ".join(_code(k) for k in keys) if keys else "any name"
            if self._is_table(value):
                sub_header = f"[{path}.<key>]"
                self.sections.append((path + ".<key>", sub_header, value))
                return "table of tables", f"keys: {key_text}; each see [`{sub_header}`](#{_anchor(path + '.<key>')})"
            vt, va = self.type_and_allowed(value, path + ".<key>", header)
            return f"table of {vt}s", f"keys: {key_text}" + (f"; values {va}" if va else "")
        return "any", ""

    def _value_for(self, dotted: str, key: str, sub: dict, required: bool):
        resolved = self.resolve(sub)
        if not required and ("default" in sub or "default" in resolved):
            return sub.get("default", resolved.get("default"))
        return self.examples.get(dotted)

    def skeleton(self, kind: str, schema: dict) -> list[str]:
        """A TOML file with every key: defaults, else the example value (not-set keys commented out)."""
        out: list[str] = []
        self._skeleton_table("", schema, out, array=False, hidden=False)
        return out

    def _skeleton_table(self, path: str, node: dict, out: list[str], array: bool, hidden: bool) -> None:
        """One table of the skeleton; ``hidden`` (an optional table that is not set) comments it out."""
        required = set(node.get("required", []))
        subtables = []
        mark = "# " if hidden else ""
        if path:
            out.append("")
            out.append(mark + (f"[[{path}]]" if array else f"[{path}]"))
        for key, sub in node["properties"].items():
            dotted = f"{path}.{key}" if path else key
            alts, nullable = self.variants(sub)
            off = hidden or (nullable and key not in required and self._value_for(dotted, key, sub, False) is None)
            table = next((a for a in alts if self._is_table(a)), None)
            items = next((self.resolve(a.get("items", {})) for a in alts if a.get("type") == "array"), None)
            keyed = next((self.resolve(a["additionalProperties"]) for a in alts
                          if a.get("type") == "object" and "additionalProperties" in a
                          and isinstance(a["additionalProperties"], dict)
                          and self._is_table(self.resolve(a["additionalProperties"]))), None)
            if table is not None:
                subtables.append((dotted, table, False, off))
                continue
            if items is not None and self._is_table(items):
                subtables.append((dotted, items, True, hidden))
                continue
            if keyed is not None:
                names = sub.get("propertyNames", self.resolve(sub).get("propertyNames", {})).get("enum", [])
                example = self.examples.get(dotted) or {}
                name = next(iter(example), names[0] if names else "name")
                subtables.append((f"{dotted}.{name}", keyed, False, hidden))
                continue
            value = self._value_for(dotted, key, sub, key in required)
            if value is None:
                out.append(f"# {key} = (not set)")
            else:
                out.append(f"{mark}{key} = {_toml_value(value)}")
        for dotted, table, is_array, off in subtables:
            self._skeleton_table(dotted, table, out, is_array, off)

    def table(self, path: str, node: dict) -> list[str]:
        required = set(node.get("required", []))
        rows = ["| key | type | default | allowed | example | description |", "|---|---|---|---|---|---|"]
        for key, sub in node["properties"].items():
            dotted = f"{path}.{key}" if path else key
            type_text, allowed = self.type_and_allowed(sub, dotted, "")
            resolved = self.resolve(sub)
            if key in required:
                default = "*required*"
            elif "default" in resolved or "default" in sub:
                value = sub.get("default", resolved.get("default"))
                default = "*not set*" if value is None else (
                    "see table" if isinstance(value, dict) and type_text.startswith("table") else _code(value))
            else:
                default = ""
            example = self.examples.get(dotted.replace("[]", ""), self.examples.get(dotted))
            if isinstance(example, dict):
                example = "see table" if type_text.startswith("table") else _code(example)
            elif isinstance(example, list) and example and isinstance(example[0], dict):
                example = "see table"
            elif example is not None:
                example = _code(example)
            else:
                example = ""
            description = (sub.get("description") or resolved.get("description") or "").replace("\n", " ")
            description = _link_rule_ids(description.replace("|", "\\|"))
            rows.append(f"| <a id=\"{_anchor(dotted, 'key-')}\"></a>`{key}` | {type_text} | {default} | {allowed} | "
                        f"{example} | {description} |")
        return rows


_RULE_ID = re.compile(r"\bR-([A-Z]+)-(\d+[a-z]?)\b")


def rule_pages() -> dict[str, str]:
    """Rule-ID prefix -> its page under docs/rules/: the general rules and each kind's (``Kind.rule_prefix``)."""
    return {"GEN": "general"} | {k.rule_prefix: k.name for k in kinds.all_kinds() if k.rule_prefix}


def rule_link(rule_id: str) -> str:
    """The documentation page and anchor of a rule ID, relative to the project folder.

    ``rule_link("R-ESC-3") == "docs/rules/escape.md#r-esc-3"`` (for reports that link a rule to its text).
    """
    m = _RULE_ID.fullmatch(rule_id)
    pages = rule_pages()
    if m is None or m.group(1) not in pages:
        raise ValueError(f"not a rule ID: {rule_id!r}")
    return f"docs/rules/{pages[m.group(1)]}.md#{rule_id.lower()}"


def key_link(kind: str, dotted: str) -> str:
    """The reference row of a scenario key, e.g. ``key_link("escape", "rules.tiers.heavy.dc")`` ->
    ``docs/scenario-format/escape.md#key-rules-tiers-key-dc`` (a tier, item or list index counts as its table)."""
    parts = []
    for part in dotted.split("."):
        if part.isdigit():
            continue
        parts.append(part)
    keyed = kinds.get(kind).keyed_tables if kind in kinds.names() else ()
    for table in keyed:  # a table keyed by names (escape: rules.tiers.<key>)
        depth = table.count(".") + 1
        if len(parts) > depth and parts[:depth] == table.split("."):
            parts[depth] = "<key>"
    return f"docs/scenario-format/{kind}.md#{_anchor('.'.join(parts), 'key-')}"


def _link_rule_ids(text: str) -> str:
    """Rule IDs become links to their anchor on the kind's rule page (docs/rules/)."""
    pages = rule_pages()

    def link(m: re.Match) -> str:
        page = pages.get(m.group(1))
        return m.group(0) if page is None else f"[{m.group(0)}](../rules/{page}.md#{m.group(0).lower()})"

    return _RULE_ID.sub(link, text)


def _anchor(path: str, prefix: str = "table-") -> str:
    """The anchor of a table (or, with ``prefix="key-"``, a key): its dotted path, array marks dropped."""
    return prefix + path.replace("[]", "").replace(".<key>", "-key").replace(".", "-").replace("_", "-")


def _walk_examples(value: Any, path: str, out: dict[str, Any]) -> None:
    out.setdefault(path, value)
    if isinstance(value, dict):
        for key, sub in value.items():
            _walk_examples(sub, f"{path}.{key}" if path else key, out)
            if path:  # a table keyed by names (rules.tiers.<key>) records under the placeholder too
                _walk_examples(sub, f"{path}.<key>", out)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                for key, sub in item.items():
                    _walk_examples(sub, f"{path}.{key}", out)


def example_files(kind: str, root: Path = ROOT) -> list[Path]:
    return sorted((root / "scenarios" / kind).glob("*.toml"))


def examples_of(kind: str, root: Path = ROOT) -> dict[str, Any]:
    """The first value each dotted key has in the shipped example scenarios of ``kind``."""
    out: dict[str, Any] = {}
    for path in example_files(kind, root):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        for key, value in data.items():
            if key in ("name", "description"):
                continue
            _walk_examples(value, key, out)
    return out


def markdown(kind: str, root: Path = ROOT) -> str:
    schema = json_schema(kind)
    renderer = _Renderer(schema, examples_of(kind, root))
    lines = [
        f"# Scenario format: `kind = \"{kind}\"`",
        "",
        "<!-- generated by `python -m sim.docs_gen` from the scenario models; do not edit by hand -->",
        "",
        kinds.get(kind).format_intro,
        "",
        f"A scenario is one TOML file. Every key below is optional unless its default says *required*; an "
        f"unknown key is an error that names the nearest valid key. Types are TOML types (a `number` also "
        f"accepts an integer). The *example* column shows a value used in the example scenarios under "
        f"`scenarios/{kind}/`. The same information as a JSON Schema: "
        f"[`docs/schema/{kind}.schema.json`](../schema/{kind}.schema.json), also printed by "
        f"`python -m sim schema {kind}`. Checks across keys (unique names, ids that must exist) are made "
        f"when the file is loaded (`python -m sim validate FILE`).",
        "",
        "Put this line first in a scenario file and editors with TOML schema support (taplo, Even Better "
        "TOML) check and complete it (the path is relative to the file):",
        "",
        "```toml",
        f"#:schema ../../docs/schema/{kind}.schema.json",
        "```",
        "",
        "## Top level",
        "",
    ]
    lines += renderer.table("", schema)
    done = 0
    while done < len(renderer.sections):
        path, header, node = renderer.sections[done]
        done += 1
        lines += ["", f"## <a id=\"{_anchor(path)}\"></a>`{header}`", ""]
        description = node.get("description")
        if description:
            lines += [_link_rule_ids(description.replace("\n", " ")), ""]
        lines += renderer.table(path.replace("[]", ""), node)
    lines += ["", "## Every key at once", "",
              "Every key at its default; required keys and tables keyed by name carry an example value "
              "(a real scenario sets only what differs from the defaults):", "",
              "```toml", *renderer.skeleton(kind, schema), "```"]
    files = example_files(kind, root)
    if files:
        lines += ["", "Example scenarios: " + ", ".join(
            f"[`{p.name}`](../../scenarios/{kind}/{p.name})" for p in files) + "."]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# the limits page (docs/limits.md): generic rows, each kind's own, the designer tools'


def _input_limit_rows() -> list[tuple[str, str, str]]:
    """The limits of a scenario file, a run and a dice expression, whatever the kind: (what, limit, where)."""
    n = "{:,}".format
    return [
        ("scenario file size", f"{n(limits.MAX_FILE_BYTES)} bytes, UTF-8 (the size is checked before the file is read)",
         "`sim.limits.MAX_FILE_BYTES`"),
        ("dotted key depth", f"{limits.MAX_KEY_DEPTH} parts (`a.b.c` has 3), checked before parsing",
         "`sim.limits.MAX_KEY_DEPTH`"),
        ("nesting", f"{limits.MAX_NESTING} tables or arrays inside one another", "`sim.limits.MAX_NESTING`"),
        ("items of any one array", f"{n(limits.MAX_LIST_ITEMS)} (the escape search pool `search.items`, campus spawn "
         "`locations`, ...)", "`sim.limits.MAX_LIST_ITEMS`"),
        ("names and labels", "printable text: no control characters (C0, DEL, C1: terminal escapes, NUL); "
         "`description` may hold line breaks and tabs", "every string of a scenario"),
        ("scenario name", f"0 .. {limits.MAX_NAME_CHARS} characters (empty: the file name is used); descriptions up "
         "to 10,000", "`name`, `description`"),
        ("report folder name", f"at most {limits.MAX_FOLDER_NAME_BYTES} bytes (UTF-8): a longer name (100 letters of 4 "
         "bytes) is cut at a letter and ends in `-` and 8 hex digits of the full name's hash, so two names "
         "never share a folder", "`reports/<name>/`, batch and compare folders"),
        ("runs per simulation", f"1 .. {n(batch.MAX_RUNS)}", "`run.runs`, `--runs`"),
        ("runs per seed chunk", f"{n(batch.CHUNK_RUNS)} (fixed, R-GEN-7; not configurable, so results never depend "
         "on it)", "`sim.batch.CHUNK_RUNS`"),
        ("stored chunk", f"{n(batch.MAX_CHUNK_BYTES)} bytes, uncompressed members only (else computed again)",
         "`OUT/.chunks/`"),
        ("seed", "0 .. 2^63 − 1", "`run.seed`, `--seed`"),
        ("parallel jobs", f"-1 (every core) or 1 .. {limits.JOBS_PER_CORE} × the machine's cores", "`--jobs`"),
        ("dice expression", f"at most 200 characters, {dice.MAX_DICE_COUNT} dice, {n(dice.MAX_DIE_SIDES)} sides, "
         f"constants up to {n(dice.MAX_CONSTANT)}", "R-GEN-5, `sim.dice`"),
        ("dice for exact analysis", f"Σ count × sides at most {n(limits.MAX_EXACT_DICE_FACES)} per expression "
         "(20d100, 2d1000); beyond it exact analysis is refused and Monte Carlo still runs",
         "`sim.limits.MAX_EXACT_DICE_FACES`"),
        ("problems printed per file", f"the first {limits.MAX_PROBLEMS} in file order, then one line saying how many "
         "more (key positions are found in one pass)", "`sim.limits.MAX_PROBLEMS`"),
        ("integers on the command line", "magnitude at most 2^63 − 1 (a longer digit string is refused before it "
         "is converted)", "`--seed`, `--runs`, `sweep --param`, `tune --lo/--hi`, ..."),
        ("Dask scheduler", f"`tcp://` or `tls://` (with certificates), host, port 1 .. 65,535; one handshake "
         f"deadline of {batch.DASK_HANDSHAKE_SECONDS:.0f} s before anything is written", "`--scheduler`"),
    ]


def _tool_limit_rows() -> list[tuple[str, str, str]]:
    """The limits of the designer tools (sweep, tune, fit)."""
    from sim.designer import fit, params, sweep, tune  # lazy: CLI start-up (`schema`'s parser is built from here)

    return [
        ("sweep grid", f"at most {sweep.MAX_POINTS:,} points in all, {params.MAX_GRID_POINTS:,} values per parameter",
         "`sweep --param`"),
        ("tune evaluations", f"at most {tune.MAX_EVALUATIONS}", "`sim.designer.tune.MAX_EVALUATIONS`"),
        ("fit search space", f"{fit.MAX_PARAMS} parameters of at most 1,001 values each; `method = \"exhaustive\"` "
         f"at most {fit.MAX_EXHAUSTIVE_EVALUATIONS:,} evaluations (feasible points × target scenarios), counted "
         "before any point is built", "`fit.method`, `sim.designer.fit.MAX_EXHAUSTIVE_EVALUATIONS`"),
    ]


def limit_rows() -> list[tuple[str, str, str]]:
    """(what, limit, where) for every limit: a scenario file, a run and a dice expression (sim/limits.py, sim/batch.py,
    sim/dice.py), then each kind's rows as it declares them (``limit_rows`` of ``sim/<kind>/limits.py``, through
    :func:`sim.kinds.get`), then the designer tools'."""
    rows = _input_limit_rows()
    for name in kinds.names():  # a kind without limits of its own declares none (``limit_rows`` is optional)
        rows += list(kinds.get(name).limit_rows())
    return rows + _tool_limit_rows()


def limits_markdown() -> str:
    """The text of ``docs/limits.md``."""
    lines = [
        "# Limits",
        "",
        "<!-- generated by `python -m sim.docs_gen` from sim/limits.py and each kind's sim/<kind>/limits.py: edit the "
        "code, not this file -->",
        "",
        "Every limit is enforced at the one validation boundary (`sim.load_scenario`, the CLI flags) and reported",
        "like any invalid input: one line naming the file and the dotted key, exit status 2, nothing written.",
        "Each is checked before the work it bounds starts (the file's size before it is read, key depth before",
        "the TOML parser runs, dice before exact analysis convolves them), so a refusal takes well under a",
        "second and little memory.",
        "",
        "| what | limit | where |",
        "|---|---|---|",
    ]
    lines += [f"| {what} | {limit} | {where} |" for what, limit, where in limit_rows()]
    lines += [
        "",
        "What a scenario file, an output folder and a local process can and cannot do: [security.md](security.md).",
        "",
        "Memory: the CLI streams chunk by chunk (`sim run`): summaries and reports are built from running sums",
        "and per-run rows are written as one parquet part per chunk, so the peak memory is that of a few chunks",
        "whatever the run count (`bench/memory.py` measures it). The Python API `sim.simulate` returns every",
        "per-run row in memory as a DataFrame; for very large runs use the CLI or `keep_runs=False`.",
        "",
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# files


def generated_files(root: Path = ROOT) -> dict[Path, str]:
    """Every generated file (path relative to ``root``) and the text it must hold."""
    files: dict[Path, str] = {}
    for kind in kinds.names():
        files[SCHEMA_DIR / f"{kind}.schema.json"] = schema_text(kind)
        files[FORMAT_DIR / f"{kind}.md"] = markdown(kind, root)
    files[LIMITS_PAGE] = limits_markdown()  # the numbers of the code (sim/limits.py, each kind's), never typed by hand
    return files


def stale_files(root: Path = ROOT) -> list[Path]:
    """Generated files that are missing or differ from what the models give now."""
    out = []
    for rel, text in generated_files(root).items():
        path = root / rel
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            out.append(rel)
    return out


def write_files(root: Path = ROOT) -> list[Path]:
    written = []
    for rel, text in generated_files(root).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(rel)
    return written


# --------------------------------------------------------------------------------------------
# command line: `python -m sim schema KIND [--markdown]` and `python -m sim.docs_gen [--check]`


class _KindNames:
    """``schema``'s choices: the registered kinds' names, read when argparse checks a value (building the parser for
    ``--help`` reads no kind)."""

    def __contains__(self, name: object) -> bool:
        return name in kinds.names()

    def __iter__(self):
        return iter(kinds.names())


def add_schema_command(sub) -> None:
    """Register ``schema`` on the subparsers of ``python -m sim``."""
    p = sub.add_parser("schema", help="print the JSON Schema (or the Markdown reference) of a kind's scenario file")
    p.add_argument("kind", choices=_KindNames(), metavar="KIND", help="the name of a registered kind")
    p.add_argument("--markdown", action="store_true", help="print the Markdown reference instead")


def cmd_schema(args) -> int:
    sys.stdout.write(markdown(args.kind) if args.markdown else schema_text(args.kind))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.docs_gen",
                                     description="Regenerate docs/schema and docs/scenario-format from the models.")
    parser.add_argument("--check", action="store_true", help="only list stale files; exit 1 if any")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files()
        for rel in stale:
            print(f"stale: {rel}")
        return 1 if stale else 0
    for rel in write_files():
        print(f"wrote {rel}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
