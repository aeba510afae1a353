"""Batch runs: several files or a folder, each scenario's own report, and the comparison index."""

from __future__ import annotations

import json
import re
import shutil

import pandas as pd
import pytest
from examples import ROOT

ROGUE = ROOT / "scenarios/escape/lone_rogue.toml"
MONK = ROOT / "scenarios/escape/monk_body_wrap.toml"
FLANK = ROOT / "scenarios/restraint/flank_penalty.toml"
EXTRA = ROOT / "scenarios/restraint/flank_extra_level.toml"


def test_files_of_two_kinds_give_reports_and_an_index(tmp_path, cli):
    out = tmp_path / "cmp"
    code = cli("run", ROGUE, MONK, FLANK, "--runs", 1200, "--seed", 3, "--out", out, "--no-runs", "--quiet").code
    assert code == 0
    index = pd.read_csv(out / "index.csv")
    assert len(index) == 3 and list(index["kind"]) == ["escape", "escape", "restraint"]
    page = (out / "index.html").read_text()
    for _, row in index.iterrows():
        summary = json.loads((out / row["report"]).with_name("summary.json").read_text())
        assert summary["runs"] == 1200 and summary["seed"] == 3
        assert f'href="{row["report"]}"' in page and (out / row["report"]).is_file()
        if row["kind"] == "escape":
            assert row["escape_rate"] == summary["escape_rate"]
            assert [row["escape_rate_lo"], row["escape_rate_hi"]] == pytest.approx(summary["escape_rate_ci"])
        else:
            assert row["incapacitated_or_arms_complete_by_round.last"] == \
                summary["incapacitated_or_arms_complete_by_round"][-1]
    assert pd.notna(index.loc[0, "escape_rate_exact"])  # a lone character: exact alongside
    for img in re.findall(r'<img src="([^"]+)"', page):
        assert (out / img).stat().st_size > 1000
    assert "index_escape_rate.png" in page


def test_a_folder_runs_every_scenario_in_it(tmp_path, cli):
    folder = tmp_path / "variants"
    folder.mkdir()
    shutil.copy(FLANK, folder / "a.toml")
    shutil.copy(EXTRA, folder / "b.toml")
    out = tmp_path / "cmp"
    assert cli("run", folder, "--runs", 800, "--out", out, "--no-runs", "--quiet").code == 0
    records = json.loads((out / "index.json").read_text())
    assert [r["file"] for r in records] == [str(folder / "a.toml"), str(folder / "b.toml")]
    assert len({r["report"] for r in records}) == 2


def test_duplicate_names_get_their_own_folders(tmp_path, cli):
    out = tmp_path / "cmp"
    copy = tmp_path / "copy.toml"
    shutil.copy(ROGUE, copy)
    assert cli("run", ROGUE, copy, "--runs", 500, "--out", out, "--no-runs", "--quiet").code == 0
    reports = pd.read_csv(out / "index.csv")["report"]
    assert reports.nunique() == 2 and all((out / r).is_file() for r in reports)


def test_one_bad_file_stops_the_batch_before_anything_is_written(tmp_path, cli):
    bad = tmp_path / "bad.toml"
    bad.write_text(ROGUE.read_text().replace("dex = 17", "dex = 77"))
    out = tmp_path / "cmp"
    r = cli("run", ROGUE, bad, "--runs", 500, "--out", out)
    err = r.err
    assert r.code == 2 and str(bad) in err and "party.0.scores.dex" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_empty_folder_is_an_error(tmp_path, cli):
    (tmp_path / "empty").mkdir()
    r = cli("run", tmp_path / "empty", "--out", tmp_path / "o")
    assert r.code == 2 and "no *.toml" in r.err and not (tmp_path / "o").exists()
