"""Hostile input: malformed and extreme scenario files end in a clean error or a valid result, never a
traceback, a hang or a partial file (property-based, hypothesis)."""

from __future__ import annotations

import copy
import json
import math
import tomllib

import pytest
from examples import example_scenarios
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sim
from sim.cli import main
from sim.scenario import parse_scenario

EXAMPLES = {p: tomllib.loads(p.read_text()) for p in example_scenarios()}
EXAMPLE_LIST = sorted(EXAMPLES)


def to_toml(data: dict) -> str:
    """A small TOML writer for the fuzzer (tables, arrays of tables, inline values)."""

    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, float):
            if math.isnan(v):
                return "nan"
            if math.isinf(v):
                return "inf" if v > 0 else "-inf"
            return repr(v)
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{json.dumps(k)} = {value(x)}" for k, x in v.items()) + "}"
        raise TypeError(type(v))

    return "\n".join(f"{json.dumps(k)} = {value(v)}" for k, v in data.items()) + "\n"


leaf = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 10**6, 10**12, 2**63, -(2**63)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["", "1d6", "99999d99999", "1d6+wis", "__import__('os')", "heavy", "utter", "all", "x" * 10_000]),
    st.booleans(),
    st.lists(st.integers(min_value=-5, max_value=5), max_size=4),
    st.recursive(st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
                 lambda inner: st.dictionaries(st.text(max_size=5), inner, max_size=2), max_leaves=20),
)


def paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from paths(v, (*prefix, i))


def mutate(data: dict, draw) -> dict:
    data = copy.deepcopy(data)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        all_paths = [p for p in paths(data) if p]
        if not all_paths:
            break
        target = draw(st.sampled_from(all_paths))
        parent = data
        for part in target[:-1]:
            parent = parent[part]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        key = target[-1]
        if action == "replace":
            parent[key] = draw(leaf)
        elif action == "delete":
            del parent[key]
        elif isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(leaf)
    return data


@st.composite
def mutated(draw):
    path = draw(st.sampled_from(EXAMPLE_LIST))
    return path, mutate(EXAMPLES[path], draw)


def _run_or_clean_error(data: dict) -> None:
    try:
        scenario = parse_scenario(data, "fuzz.toml")
    except sim.ScenarioError as exc:
        # one line per problem (every problem of the file), each naming the file
        assert exc.lines and str(exc) == "\n".join(exc.lines)
        assert all(line.startswith("fuzz.toml") and "\n" not in line for line in exc.lines)
        return
    try:
        result = sim.simulate(scenario, runs=20, seed=1)
    except sim.SimError:
        return
    assert len(result.runs) == 20


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_examples_end_in_a_clean_error_or_a_valid_result(case):
    _path, data = case
    _run_or_clean_error(data)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_are_a_clean_error(tmp_path_factory, blob):
    path = tmp_path_factory.mktemp("fuzz") / "bytes.toml"
    path.write_bytes(blob)
    try:
        sim.load_scenario(path)
    except sim.ScenarioError as exc:
        assert str(path) in str(exc)


@pytest.mark.parametrize("text", [
    "kind = 'escape'\n" + "a = " + "[" * 600 + "]" * 600,  # deep nesting
    "kind = 'escape'\nname = '" + "x" * 10_000 + "'\n",  # 10,000 characters
    "kind = 'escape'\n[run]\nruns = 0\n",  # zero runs
    "kind = 'escape'\n[run]\nruns = 99999999999999999999\n",  # huge number
    "kind = 'escape'\n[run]\nmax_rounds = -3\n",  # negative count
])
def test_extreme_files_exit_2_and_write_nothing(tmp_path, cli, text):
    path = tmp_path / "x.toml"
    path.write_text(text)
    out = tmp_path / "out"
    r = cli("run", path, "--out", out, "--runs", 10)
    assert r.code == 2
    err = r.err
    assert "Traceback" not in err and str(path) in err
    assert not out.exists()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(mutated())
def test_cli_on_mutated_files_exits_0_or_2_without_partial_output(tmp_path, case):
    _path, data = case
    try:
        text = to_toml(data)
    except TypeError:
        return
    import uuid

    folder = tmp_path / uuid.uuid4().hex
    folder.mkdir()
    path = folder / "s.toml"
    path.write_text(text)
    out = folder / "out"
    code = main(["run", str(path), "--out", str(out), "--runs", "20", "--quiet"])
    assert code in (0, 2)
    if code == 2:
        assert not out.exists()
    else:
        assert (out / "summary.json").exists() and (out / "report.html").exists()
        assert not list(out.glob(".*.tmp"))
