"""A scenario file's text with values written in: what `fit` writes as ``<scenario>.fitted.toml`` and the
studio's Save. The original text is edited in place (tomlkit keeps comments and layout; missing tables are
created), a header comment says what changed, an editor's ``#:schema`` directive stays on the first line
(re-pointed so it still finds the schema from the new file's folder), and the result is validated before
it is returned."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import tomlkit

from sim.designer.params import split_key
from sim.scenario import parse_scenario

SCHEMA_DIRECTIVE = "#:schema "


def _directive(first_line: str, source: Path, dest: Path) -> str:
    target = first_line[len(SCHEMA_DIRECTIVE):].strip()
    if "://" in target:
        return first_line
    absolute = (source.resolve().parent / target).resolve()
    return SCHEMA_DIRECTIVE + Path(os.path.relpath(absolute, dest.resolve().parent)).as_posix()


def variant_text(source: str | Path, values: dict[str, Any], header: str, dest: str | Path) -> str:
    """The text of ``source`` with each dotted key of ``values`` set, headed by ``header`` (one comment line)."""
    source, dest = Path(source), Path(dest)
    original = source.read_text(encoding="utf-8") if source.is_file() else ""
    directive = ""
    lines = original.splitlines(keepends=True)
    if lines and lines[0].startswith(SCHEMA_DIRECTIVE):
        directive = _directive(lines[0].rstrip("\n"), source, dest) + "\n"
        original = "".join(lines[1:])
    doc = tomlkit.parse(original)
    for key, value in values.items():
        parts = split_key(key)
        node: Any = doc
        for part in parts[:-1]:
            if isinstance(part, int):
                node = node[part]
            else:
                if part not in node:
                    node[part] = tomlkit.table()
                node = node[part]
        node[parts[-1]] = value
    text = directive + "# " + header.replace("\n", " ") + "\n" + tomlkit.dumps(doc)
    parse_scenario(tomllib.loads(text), str(dest))
    return text
