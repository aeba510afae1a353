"""Issue 26, console: `sweep` prints its result table; `exact` without --out writes its page to
reports/<name>/ as `run` does."""

from __future__ import annotations

from pathlib import Path

from examples import ROOT

import sim
from sim.designer.params import with_values

ROGUE = ROOT / "scenarios" / "escape" / "lone_rogue.toml"


def test_sweep_prints_its_result_table(tmp_path, cli):
    r = cli("sweep", ROGUE, "--param", "rules.tiers.heavy.dc=16:20:2", "--runs", 500, "--out", tmp_path / "sweep")
    out = r.out.strip().splitlines()
    assert r.code == 0
    assert "sweep of rules.tiers.heavy.dc" in out[0] and "500 runs" in out[0]
    assert out[1].split()[0] == "rules.tiers.heavy.dc" and out[1].split()[-1] == "exact"
    rows = out[2:]
    assert [r.split()[0] for r in rows] == ["16", "18", "20"]
    base = sim.load_scenario(ROGUE)
    for row, dc in zip(rows, (16, 18, 20), strict=True):
        exact = sim.exact(with_values(base, {"rules.tiers.heavy.dc": dc}))["escape_rate"]
        assert row.split()[-1] == f"{100 * exact:.2f}%", row  # the exact column: the variant's exact escape rate
        assert "[" in row and "]" in row  # the estimate with its 95% interval


def test_sweep_quiet_prints_nothing(tmp_path, cli):
    r = cli("sweep", ROGUE, "--param", "rules.tiers.heavy.dc=18", "--runs", 200, "--quiet", "--out", tmp_path / "s")
    assert r.code == 0 and r.out == ""


def test_exact_without_out_writes_its_page_where_run_would(cli, scratch):
    run = cli("exact", ROGUE)  # the scratch fixture works in tmp_path: reports/ lands there
    assert run.code == 0
    folder = scratch.parent / "reports" / sim.load_scenario(ROGUE).slug
    assert (folder / "exact.html").is_file() and (folder / "exact.json").is_file()
    assert f"report: {Path('reports') / folder.name}/exact.html" in run.out
