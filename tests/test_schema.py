"""The JSON Schema of the scenario files (``python -m sim schema KIND``, docs/schema/).

Every example scenario must validate against its kind's schema (the schema is what editors check
with, so a schema stricter than the loader would flag good files), and files the loader refuses for
a reason one key can show (unknown key, wrong type, value out of range, unknown enum value, missing
required key) must fail the schema too.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import jsonschema
import pytest
from examples import ROOT

import sim
from sim.cli import main
from sim.docs_gen import json_schema
from sim.errors import ScenarioError
from sim.scenario import KIND_NAMES, parse_scenario


def _scenario_files() -> list[Path]:
    """Every TOML file under scenarios/ that is a scenario (has a kind); other files there (a fit
    specification) are inputs of designer tools, not scenarios."""
    return [p for p in sorted((ROOT / "scenarios").glob("**/*.toml"))
            if "kind" in tomllib.loads(p.read_text(encoding="utf-8"))]


EXAMPLES = _scenario_files()


def _validator(kind: str) -> jsonschema.protocols.Validator:
    schema = json_schema(kind)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _kind(path: Path) -> str:
    return tomllib.loads(path.read_text(encoding="utf-8"))["kind"]


def _id(path: Path) -> str:
    return path.relative_to(ROOT / "scenarios").as_posix()


def test_every_kind_has_examples():
    assert {p.parent.name for p in EXAMPLES if p.parent.parent.name == "scenarios"} == set(KIND_NAMES)
    for path in EXAMPLES:
        if path.parent.name in KIND_NAMES:
            assert _kind(path) == path.parent.name, f"{path}: a scenario in the folder of another kind"


@pytest.mark.parametrize("path", EXAMPLES, ids=_id)
def test_example_validates_against_its_schema(path):
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    errors = sorted(_validator(data["kind"]).iter_errors(data), key=str)
    assert not errors, f"{path}: {errors[0].json_path}: {errors[0].message}"


@pytest.mark.parametrize("path", EXAMPLES, ids=_id)
def test_example_carries_the_schema_directive_and_loads(path):
    """The first line points taplo / Even Better TOML at the shipped schema; the loader ignores it."""
    first = path.read_text(encoding="utf-8").splitlines()[0]
    kind = _kind(path)
    relative = Path(os.path.relpath(ROOT / "docs" / "schema" / f"{kind}.schema.json", path.parent)).as_posix()
    assert first == f"#:schema {relative}"
    target = (path.parent / first.removeprefix("#:schema ").strip()).resolve()
    assert target == (ROOT / "docs" / "schema" / f"{kind}.schema.json").resolve()
    assert target.is_file()
    assert sim.load_scenario(path).kind == kind


def test_directive_does_not_change_the_scenario(tmp_path):
    """Same scenario hash with and without the directive line."""
    path = ROOT / "scenarios" / "escape" / "lone_rogue.toml"
    text = path.read_text(encoding="utf-8")
    bare = tmp_path / "bare.toml"
    bare.write_text(text.split("\n", 1)[1], encoding="utf-8")
    assert sim.load_scenario(bare).scenario_hash == sim.load_scenario(path).scenario_hash


def _example(kind: str) -> dict:
    return tomllib.loads(sorted((ROOT / "scenarios" / kind).glob("*.toml"))[0].read_text(encoding="utf-8"))


def _set(data: dict, dotted: str, value) -> dict:
    out = copy.deepcopy(data)
    node = out
    parts = dotted.split(".")
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    node[parts[-1]] = value
    return out


def _drop(data: dict, dotted: str) -> dict:
    out = copy.deepcopy(data)
    node = out
    parts = dotted.split(".")
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    del node[parts[-1]]
    return out


# each case: an example of the kind with one key broken; both the loader and the schema refuse it
INVALID = [
    ("escape", lambda d: _set(d, "atention", {"limit": 3}), "unknown top-level key"),
    ("escape", lambda d: _set(d, "party.0.level", "five"), "wrong type"),
    ("escape", lambda d: _set(d, "party.0.scores.dex", 99), "score above 30"),
    ("escape", lambda d: _set(d, "party.0.restraints.arms", "tight"), "unknown tier"),
    ("escape", lambda d: _set(d, "rules", {"tiers": {"hevy": {"dc": 14}}}), "unknown tier id as a key"),
    ("escape", lambda d: _drop(d, "party.0.class"), "missing required key"),
    ("escape", lambda d: _set(d, "party", []), "empty party"),
    ("restraint", lambda d: _set(d, "target.restraints", {"arms": 6}), "level above despair"),
    ("restraint", lambda d: _set(d, "target.condition", "asleep"), "unknown condition"),
    ("campus", lambda d: _set(d, "rules", {"fights": 3.5}), "wrong type or unknown key in [rules]"),
    ("campus", lambda d: _set(d, "spawns.0.chance", 1.5), "chance above 1"),
    ("campus", lambda d: _set(d, "policy", {"stance": "charge"}), "unknown stance policy"),
    ("formation", lambda d: _set(d, "units.0.area", "middle"), "unknown area"),
    ("formation", lambda d: _set(d, "session", {"checks": -1}), "negative checks"),
    ("formation", lambda d: _set(d, "kind", "escape"), "kind of another schema"),
]


@pytest.mark.parametrize("kind,breaker,what", INVALID, ids=[c[2] for c in INVALID])
def test_invalid_scenario_fails_the_schema_and_the_loader(kind, breaker, what):
    good = _example(kind)
    assert _validator(kind).is_valid(good)
    bad = breaker(good)
    assert not _validator(kind).is_valid(bad), what
    with pytest.raises(ScenarioError):
        parse_scenario(bad, "bad.toml")


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_schema_subcommand_prints_the_schema(kind, cli):
    r = cli("schema", kind)
    assert r.code == 0
    printed = json.loads(r.out)
    assert printed == json_schema(kind)
    assert printed["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert printed["properties"]["kind"]["const"] == kind
    assert "additionalProperties" in printed and printed["additionalProperties"] is False


def test_schema_subcommand_markdown(cli):
    r = cli("schema", "campus", "--markdown")
    assert r.code == 0
    out = r.out
    assert out.startswith('# Scenario format: `kind = "campus"`')
    assert '<a id="key-rules-team-max"></a>`team_max`' in out


def test_schema_subcommand_refuses_an_unknown_kind(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["schema", "escpae"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice" in err and "escape" in err and "Traceback" not in err


TAPLO = shutil.which("taplo")


@pytest.mark.skipif(TAPLO is None, reason="taplo (the TOML toolkit behind Even Better TOML) is not installed; "
                                          "pip install -e '.[test]' installs it")
def test_taplo_follows_the_directive(tmp_path):
    """What an editor does: taplo reads each example's #:schema line and validates it; a bad file fails."""
    examples = [str(p.relative_to(ROOT)) for p in EXAMPLES]
    ok = subprocess.run([TAPLO, "check", *examples], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr[-2000:]
    bad = tmp_path / "bad.toml"
    schema = (ROOT / "docs" / "schema" / "escape.schema.json").as_uri()
    bad.write_text(f'#:schema {schema}\nkind = "escape"\n[[party]]\nname = "A"\nclass = "rogue"\n'
                   'scores = { str = 10, dex = 99, con = 10, int = 10, wis = 10, cha = 10 }\n', encoding="utf-8")
    res = subprocess.run([TAPLO, "check", str(bad)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode != 0
    assert "99 is greater than the maximum of 30" in res.stderr + res.stdout
