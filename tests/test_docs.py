"""The project documents itself: generated references are fresh, every key is described, every
rule ID has its anchor, and no document sends the reader to a file the project does not ship."""

from __future__ import annotations

import re
import tomllib

import jsonschema
import pytest
from examples import ROOT

from sim.docs_gen import (
    FORMAT_DIR,
    SCHEMA_DIR,
    _anchor,
    _Renderer,
    examples_of,
    generated_files,
    json_schema,
    key_link,
    rule_link,
    stale_files,
)
from sim.scenario import KIND_NAMES

DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("**/*.md")])
SOURCES = [ROOT / "sim", ROOT / "tests"]
RULE_PAGES = {"escape": "ESC", "restraint": "RST", "campus": "CAM", "formation": "MDK"}


def test_generated_reference_is_fresh():
    """Regenerate and compare: a model change without `python -m sim.docs_gen` fails here."""
    stale = stale_files(ROOT)
    assert not stale, f"stale generated docs (run `python -m sim.docs_gen`): {[str(p) for p in stale]}"


def test_staleness_check_can_fail(tmp_path):
    """A generated file edited by hand (or a model changed) is reported stale."""
    for rel, text in generated_files(ROOT).items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    assert stale_files(tmp_path) == []
    victim = tmp_path / SCHEMA_DIR / "escape.schema.json"
    victim.write_text(victim.read_text(encoding="utf-8").replace('"default": 12', '"default": 13'), encoding="utf-8")
    (tmp_path / FORMAT_DIR / "campus.md").unlink()
    assert set(stale_files(tmp_path)) == {SCHEMA_DIR / "escape.schema.json", FORMAT_DIR / "campus.md"}


def _properties(schema: dict):
    """Every (dotted key, property schema) of a schema, sub-tables followed."""
    defs = schema.get("$defs", {})

    def resolve(node):
        if "allOf" in node:
            node = node["allOf"][0]
        return defs[node["$ref"].rsplit("/", 1)[-1]] if "$ref" in node else node

    def walk(node, path, seen):
        node = resolve(node)
        for alt in node.get("anyOf", []):
            yield from walk(alt, path, seen)
        if node.get("type") == "array":
            yield from walk(node.get("items", {}), path, seen)
        if isinstance(node.get("additionalProperties"), dict):
            yield from walk(node["additionalProperties"], path + ".<key>", seen)
        for key, sub in node.get("properties", {}).items():
            dotted = f"{path}.{key}" if path else key
            yield dotted, sub
            yield from walk(sub, dotted, seen)

    yield from walk(schema, "", set())


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_every_key_has_a_description(kind):
    missing = [key for key, sub in _properties(json_schema(kind)) if not sub.get("description")]
    assert not missing, f"{kind}: keys without Field(description=...): {missing}"


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_reference_lists_every_key_with_an_anchor(kind):
    text = (ROOT / FORMAT_DIR / f"{kind}.md").read_text(encoding="utf-8")
    for key, _ in _properties(json_schema(kind)):
        assert f'<a id="{_anchor(key, "key-")}"></a>' in text, f"{kind}: {key} has no row in the reference"


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_every_key_example_validates(kind):
    """The 'every key at once' block of the reference is valid TOML that the schema accepts."""
    schema = json_schema(kind)
    block = _Renderer(schema, examples_of(kind, ROOT)).skeleton(kind, schema)
    data = tomllib.loads("\n".join(block))
    jsonschema.validators.validator_for(schema)(schema).validate(data)


def _rule_ids(text: str, section: str) -> set[str]:
    return set(re.findall(rf"\bR-{section}-\d+[a-z]?\b", text))


@pytest.mark.parametrize("kind,section", RULE_PAGES.items())
def test_rule_page_has_an_anchor_for_every_rule_id_the_code_names(kind, section):
    """Every rule ID the code or the tests name has an anchor `r-<sec>-<n>` on the kind's rule page."""
    page = (ROOT / "docs" / "rules" / f"{kind}.md").read_text(encoding="utf-8")
    named = set()
    for folder in SOURCES:
        for path in folder.glob("**/*.py"):
            named |= _rule_ids(path.read_text(encoding="utf-8"), section)
    assert named, f"no R-{section} IDs found in the code"
    anchors = set(re.findall(r'<a id="(r-[a-z]+-\d+[a-z]?)"></a>', page))
    missing = sorted(rid for rid in named if rid.lower() not in anchors)
    assert not missing, f"docs/rules/{kind}.md lacks anchors for {missing}"


def test_general_rule_ids_are_documented():
    page = (ROOT / "docs" / "rules" / "general.md").read_text(encoding="utf-8")
    for n in range(1, 8):
        assert f'<a id="r-gen-{n}"></a>' in page


_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_CODE_PATH = re.compile(r"`((?:docs|sim|scenarios|notebooks|bench|tests|\.ci)/[A-Za-z0-9_./<>*-]+)`")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_link_only_to_shipped_files(doc):
    text = doc.read_text(encoding="utf-8")
    assert not re.search(r"RULES\.md|SCENARIOS\.md|STYLE\.md|DEVELOPERS\.md|\.\./shared|project brief", text), (
        f"{doc.name} refers to a file the project does not ship")
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = (doc.parent / target.split("#", 1)[0]).resolve()
        assert path.exists(), f"{doc.name} links to {target}, which does not exist"
        anchor = target.split("#", 1)[1] if "#" in target else ""
        if re.match(r"(r|key|table)-", anchor):  # the anchors this project writes itself
            assert f'<a id="{anchor}"></a>' in path.read_text(encoding="utf-8"), f"{doc.name}: no anchor {target}"
    for target in _CODE_PATH.findall(text):
        if any(ch in target for ch in "<>*"):
            continue
        assert (ROOT / target.rstrip("/")).exists(), f"{doc.name} names {target}, which does not exist"


def test_readme_links_the_docs():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for target in ["docs/index.md", "docs/rules/", "docs/scenario-format/", "docs/designer.md", "docs/policies.md",
                   "docs/limits.md", "docs/decisions.md"]:
        assert f"({target}" in text, f"README does not link {target}"
    for kind in KIND_NAMES:
        assert f"(docs/rules/{kind}.md" in text and f"(docs/scenario-format/{kind}.md" in text


@pytest.mark.parametrize("rule_id,page", [("R-ESC-3", "escape"), ("R-ESC-9a", "escape"), ("R-GEN-4", "general"),
                                          ("R-RST-20", "restraint"), ("R-CAM-6", "campus"), ("R-MDK-21", "formation")])
def test_rule_link_points_at_an_existing_anchor(rule_id, page):
    link = rule_link(rule_id)
    assert link == f"docs/rules/{page}.md#{rule_id.lower()}"
    path, anchor = link.split("#")
    assert f'<a id="{anchor}"></a>' in (ROOT / path).read_text(encoding="utf-8")


def test_rule_link_refuses_a_non_id():
    with pytest.raises(ValueError):
        rule_link("R-XYZ-1")


@pytest.mark.parametrize("kind,dotted", [("escape", "rules.tiers.heavy.dc"), ("escape", "party.0.restraints.arms"),
                                         ("escape", "attention.limit"), ("campus", "spawns.2.chance"),
                                         ("formation", "units.0.combat"), ("restraint", "binder.scores.str")])
def test_key_link_points_at_an_existing_row(kind, dotted):
    path, anchor = key_link(kind, dotted).split("#")
    assert f'<a id="{anchor}"></a>' in (ROOT / path).read_text(encoding="utf-8")


@pytest.mark.parametrize("notebook", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_notebooks_refer_only_to_shipped_files(notebook):
    import json

    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(c["source"]) for c in cells)
    assert not re.search(r"RULES\.md|SCENARIOS\.md|STYLE\.md|DEVELOPERS\.md|\.\./shared|project brief", text)
    for target in _CODE_PATH.findall(text):
        if not any(ch in target for ch in "<>*"):
            assert (ROOT / target.rstrip("/")).exists(), f"{notebook.name} names {target}, which does not exist"
