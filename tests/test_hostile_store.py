"""Issue 40 (hostile inputs, third round) and issue 45 items 1-2 (fourth round): the resume store never follows a
link and deletes only what it wrote, chunks are authenticated with a per-user key, a 5,000-digit integer, a pipe
as the scenario and a long name end in one line or run, a command records what each write put in place, and an
interrupted run never leaves one run's rows beside another run's summary."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from examples import ROOT

import sim

DP = ROOT / "scenarios" / "formation" / "dp_income.toml"


def _refusal(r) -> str:
    """The one line of a refusal: exit 2, exactly one line on stderr, no traceback."""
    assert r.code == 2, r
    err = r.err.strip().splitlines()
    assert len(err) == 1, err
    assert "Traceback" not in err[0]
    return err[0]


def _with_name(tmp_path: Path, name: str, file: str = "s.toml") -> Path:
    text = re.sub(r"^name = .*$", f"name = {name!r}".replace("'", '"'), DP.read_text(), count=1, flags=re.M)
    path = tmp_path / file
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------- issue 40, item 2


@pytest.mark.parametrize("command", ["validate", "run", "exact"])
def test_a_5000_digit_integer_is_one_line_naming_file_and_key(tmp_path, cli, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    text = DP.read_text()
    assert re.search(r"^runs = \d+$", text, flags=re.M)
    path = tmp_path / "big.toml"
    path.write_text(re.sub(r"^runs = \d+$", "runs = " + "7" * 5000, text, count=1, flags=re.M))
    line = _refusal(cli(command, path))
    assert line.startswith(f"error: {path}: run.runs: ") and "5,000 digits" in line
    assert not (tmp_path / "reports").exists()


def test_a_5000_digit_integer_in_an_inline_table_names_its_dotted_key(tmp_path):
    path = tmp_path / "big.toml"
    path.write_text('kind = "escape"\n[[party]]\nname = "A"\nscores = { str = 10, dex = ' + "1" * 5000 + " }\n")
    with pytest.raises(sim.ScenarioError) as info:
        sim.load_scenario(path)
    assert info.value.key == "party.scores.dex" and info.value.file == str(path)


# --------------------------------------------------------------------------------------------- issue 40, item 5


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_fifo_as_the_scenario_is_not_a_regular_file(tmp_path, cli, command, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)  # never opened: opening a FIFO without a writer would block
    line = _refusal(cli(command, fifo))
    assert f"{fifo}: not a regular file" in line and "no such" not in line


def test_a_device_as_the_scenario_is_not_a_regular_file(cli):
    assert "/dev/null: not a regular file" in _refusal(cli("validate", "/dev/null"))


# --------------------------------------------------------------------------------------------- issue 40, item 4


def test_a_valid_name_of_100_four_byte_letters_runs(tmp_path, cli, monkeypatch):
    """100 characters is a valid name; as UTF-8 it is 400 bytes, beyond a file system's 255 for one name."""
    from sim.limits import MAX_FOLDER_NAME_BYTES

    monkeypatch.chdir(tmp_path)
    name = "\U0001d49c" * 100  # MATHEMATICAL SCRIPT CAPITAL A: a letter, 4 bytes in UTF-8
    path = _with_name(tmp_path, name)
    assert cli("validate", path).code == 0
    assert cli("run", path, "--runs", 100, "--quiet").code == 0
    (folder,) = (tmp_path / "reports").iterdir()
    assert (folder / "summary.json").is_file()
    assert len(os.fsencode(folder.name)) <= MAX_FOLDER_NAME_BYTES
    assert folder.name.startswith("\U0001d49c" * 27) and re.fullmatch(r"\U0001d49c+-[0-9a-f]{8}", folder.name)


def test_two_long_names_with_the_same_start_get_two_folders(tmp_path):
    a = sim.load_scenario(_with_name(tmp_path, "\u00e9" * 99 + "a", "a.toml"))
    b = sim.load_scenario(_with_name(tmp_path, "\u00e9" * 99 + "b", "b.toml"))
    assert a.slug != b.slug
    assert len(a.slug.encode()) <= 120 and len(b.slug.encode()) <= 120
    short = sim.load_scenario(_with_name(tmp_path, "Short name", "c.toml"))
    assert short.slug == "short_name"  # names that fit are unchanged
