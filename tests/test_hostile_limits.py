"""Issue 28, items 5, 7 (sweep range, campus spawn locations), 8 and 9: resource bombs refused at validation
within seconds and bounded memory, control characters refused in names and labels, and docs that agree with
the code (limits generated from it, name length, compare keeping the scenario's own policy, batch folders)."""

from __future__ import annotations

import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

import pytest
from examples import ROOT

import sim
from sim.docs_gen import limits_markdown
from sim.errors import ScenarioError
from sim.limits import (
    MAX_EXACT_DICE_FACES,
    MAX_FILE_BYTES,
    MAX_KEY_DEPTH,
    MAX_LIST_ITEMS,
    MAX_NAME_CHARS,
    MAX_STATES,
    max_jobs,
)

ROGUE = ROOT / "scenarios" / "escape" / "lone_rogue.toml"
CAMPUS = ROOT / "scenarios" / "campus" / "seed_trio_vs_hounds.toml"
DP = ROOT / "scenarios" / "formation" / "dp_income.toml"


def _refusal(r) -> str:
    """The one line of a refusal: a command that exits 2 prints exactly one line on stderr."""
    assert r.code == 2, r
    err = r.err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def _refused_quickly(path: Path, cli, max_mb: float = 64, seconds: float = 5) -> str:
    """`validate` refuses `path` with one line, in seconds, without large allocations."""
    from sim.cli import build_parser

    build_parser()  # the command line's modules imported first: only the refusal is measured
    start = time.perf_counter()
    assert cli("validate", path).code == 2
    assert time.perf_counter() - start < seconds
    tracemalloc.start()  # again, for its memory (tracemalloc slows it down: not timed)
    try:
        refused = cli("validate", path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < max_mb * 2**20, f"peak {peak / 2**20:.0f} MB"
    return _refusal(refused)


def _rogue_with(extra: str) -> str:
    return ROGUE.read_text(encoding="utf-8") + "\n" + extra


# --------------------------------------------------------------------------------------------- item 5


def test_a_search_pool_of_70000_items_is_refused(tmp_path, cli):
    """The issue's bomb: 70,000 items in 906 KB (under the file limit) ran out of memory after 71 s."""
    items = ",".join(['{name="x"}'] * 70_000)
    path = tmp_path / "pool.toml"
    path.write_text(_rogue_with(f"[search]\nitems = [{items}]\n"), encoding="utf-8")
    assert path.stat().st_size < MAX_FILE_BYTES
    line = _refused_quickly(path, cli, max_mb=200)
    assert "search.items" in line and f"at most {MAX_LIST_ITEMS:,} items" in line


def test_a_dotted_key_thousands_deep_is_refused_before_parsing(tmp_path, cli):
    """Deep dotted keys make the TOML parser's memory grow with the square of the depth (25,000 parts: 3.5 GB).
    8,000 parts here: tens of MB in the parser; the scan before parsing refuses it in a few KB."""
    path = tmp_path / "deep.toml"
    path.write_text(_rogue_with(".".join(["a"] * 8_000) + " = 1\n"), encoding="utf-8")
    line = _refused_quickly(path, cli, max_mb=8)
    assert f"more than {MAX_KEY_DEPTH} parts" in line
    ok = tmp_path / "ok.toml"  # dots inside strings and comments are not keys; floats are fine
    ok.write_text(ROGUE.read_text(encoding="utf-8").replace(
        'name = "', 'name = "' + "x." * 30, 1) + "# " + "a." * 100 + "\n", encoding="utf-8")
    assert cli("validate", ok).code == 0


def test_the_file_size_is_checked_before_reading(tmp_path, cli):
    big = tmp_path / "big.toml"
    with big.open("wb") as fh:  # sparse: 64 MB that take no disk space
        fh.truncate(64 << 20)
    line = _refused_quickly(big, cli, max_mb=4)
    assert f"larger than {MAX_FILE_BYTES:,} bytes" in line


def test_exact_refuses_100d1000_at_once(tmp_path):
    """Exact analysis convolves every die: 100d1000 hung it. Refused with one line, in seconds."""
    path = tmp_path / "dice.toml"
    path.write_text(_rogue_with('[stimulus]\ndamage = "100d1000"\n'), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "sim", "exact", str(path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"at most {MAX_EXACT_DICE_FACES:,}" in lines[0], proc.stderr
    sim.exact(sim.load_scenario(ROGUE))  # a normal scenario still solves


def test_jobs_and_max_states_are_bounded(cli):
    assert "--jobs" in _refusal(cli("run", DP, "--runs", 100, "--jobs", max_jobs() + 1, "--out", "/nonexistent/x"))
    assert "this machine has" in _refusal(cli("run", DP, "--runs", 100, "--jobs", 1000, "--quiet"))
    assert "--max-states" in _refusal(cli("exact", ROGUE, "--max-states", MAX_STATES + 1))
    assert "--runs" in _refusal(cli("run", DP, "--runs", 1000000000000, "--out", "/nonexistent/x"))


# --------------------------------------------------------------------------------------------- item 7


def test_a_sweep_range_with_a_tiny_step_is_one_line(cli):
    assert "grid points" in _refusal(cli("sweep", ROGUE, "--param", "rules.tiers.heavy.dc=1:2:1e-320", "--quiet"))


def test_campus_spawn_locations_must_be_unique(tmp_path, cli):
    text = CAMPUS.read_text(encoding="utf-8").replace('locations = ["courtyard", "rooftop"]',
                                                      'locations = ["courtyard", "rooftop", "courtyard"]')
    assert '"courtyard", "rooftop", "courtyard"' in text
    path = tmp_path / "dup.toml"
    path.write_text(text, encoding="utf-8")
    line = _refusal(cli("validate", path))
    assert "spawns.1.locations.2" in line and "courtyard" in line


# --------------------------------------------------------------------------------------------- item 8


NAME = 'name = "Lone rogue in heavy arms"'


@pytest.mark.parametrize("old, new, key", [
    (NAME, 'name = "Rogue \\u001b]0;pwned\\u0007 \\u001b[2J"', "name"),  # retitles the terminal, clears it
    (NAME, 'name = "a\\u0000b"', "name"),  # NUL
    (NAME, 'name = "a\\u009bb"', "name"),  # C1 (CSI)
    ('description = """A level-5', 'description = """\\u0000A level-5', "description"),  # NUL, even in free text
])
def test_control_characters_are_refused(tmp_path, cli, old, new, key):
    text = ROGUE.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "ctl.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    line = _refusal(cli("validate", path))
    assert f": {key}: " in line and "control character" in line and "\x1b" not in line and "\x00" not in line


def test_a_character_name_with_an_escape_is_refused_and_descriptions_keep_line_breaks(tmp_path, cli):
    path = tmp_path / "party.toml"
    path.write_text(ROGUE.read_text(encoding="utf-8").replace('name = "Mei"', 'name = "Mei\\u001b[31m"'),
                    encoding="utf-8")
    assert "party.0.name" in _refusal(cli("validate", path))
    from sim.scenario import parse_scenario

    with pytest.raises(ScenarioError, match="control character"):
        parse_scenario({"kind": "escape", "name": "x\ty", "party": []})
    ok = tmp_path / "ok.toml"
    ok.write_text(ROGUE.read_text(encoding="utf-8").replace('description = """A level-5',
                                                            'description = """two\n\tlines. A level-5'),
                  encoding="utf-8")
    assert cli("validate", ok).code == 0


# --------------------------------------------------------------------------------------------- item 9


def test_name_length_agrees_with_the_docs(tmp_path, cli):
    assert f"0 .. {MAX_NAME_CHARS} characters" in (ROOT / "docs" / "limits.md").read_text(encoding="utf-8")
    for n, code in ((MAX_NAME_CHARS, 0), (MAX_NAME_CHARS + 1, 2)):
        path = tmp_path / f"n{n}.toml"
        path.write_text(ROGUE.read_text(encoding="utf-8").replace(NAME, f'name = "{"n" * n}"'), encoding="utf-8")
        assert cli("validate", path).code == code


def test_the_limits_page_is_generated_from_the_code():
    """docs/limits.md is exactly what sim/limits.py gives (tests/test_docs.py also checks every generated file),
    and security.md gives no limit of its own: it points to limits.md."""
    from sim.designer.sweep import MAX_POINTS

    page = (ROOT / "docs" / "limits.md").read_text(encoding="utf-8")
    assert page == limits_markdown()
    assert f"at most {MAX_POINTS:,} points in all" in page
    security = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    assert "limits.md" in security and "| sweep grid |" not in security and "2,000,000 states" not in security


def test_compare_keeps_the_scenarios_own_policy_or_says_why_not(tmp_path, cli):
    text = _rogue_with('[policy]\nname = "sim.escape.examples:cautious"\n')
    path = tmp_path / "own.toml"
    path.write_text(text, encoding="utf-8")
    assert sim.load_scenario(path).policy.name == "sim.escape.examples:cautious"
    out = tmp_path / "c"
    compared = cli("compare", path, "--runs", 300, "--out", out, "--quiet")
    assert compared.code == 0
    err = compared.err
    assert "sim.escape.examples:cautious" in err and "left out" in err and "--allow-code" in err
    assert cli("compare", path, "--runs", 300, "--out", out, "--quiet", "--allow-code").code == 0
    assert "sim.escape.examples:cautious" in (out / "compare.html").read_text(encoding="utf-8")


def test_batch_output_folders_use_a_sanitised_stem(tmp_path):
    from sim.designer.scenario_comparison import output_folders

    scenarios = [SimpleNamespace(slug="same", source=str(tmp_path / f"{stem}.toml"))
                 for stem in ("a", "b c\x1b[2J", "..")]
    folders = output_folders(scenarios, tmp_path / "base")
    names = [f.name for f in folders]
    assert names[0] == "same" and len(set(names)) == 3
    for f in folders:
        assert f.parent == tmp_path / "base"
        assert all(ch.isalnum() or ch in "-_" for ch in f.name), f.name
