"""Hostile scenario strings never become markup or code in any page the project writes (issue 17).

Every free-text string of an example scenario of each kind (its name, a 10,000-character description, every
name, id and team, consistently where referenced) is replaced by a payload (tests/html_payloads.py): script
tags, event handlers, a breakout from an attribute, a ``javascript:`` link, template syntax, bidirectional
override characters. Every page type is generated from those scenarios (run report of each kind, exact,
compare, sweep, sensitivity, index); then the HTML source holds no such element, every page carries the
no-script Content-Security-Policy, and headless Chromium finds nothing executed (``document.title`` never
becomes the payload's ``XX``, no script element, no svg/iframe) and the payloads shown as text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser_check import needs_browser, open_pages  # tests/ is on sys.path (pytest's rootdir-relative import)
from examples import ROOT
from html_payloads import EFFECT, PAYLOADS, dump_toml, hostile_data

from sim.cli import main
from sim.report import CSP

EXAMPLES = {
    "escape": "scenarios/escape/party_under_watch.toml",  # party names, item names
    "restraint": "scenarios/restraint/party_composure.toml",  # party pool names
    "campus": "scenarios/campus/six_pcs_two_teams.toml",  # PCs, teams, locations, adversaries
    "formation": "scenarios/formation/summoner_vs_horde.toml",  # units and summoners
}
EXACT = {"escape": "scenarios/escape/lone_rogue.toml", "restraint": "scenarios/restraint/flank_penalty.toml",
         "formation": "scenarios/formation/dp_income.toml"}
SENSITIVITY_PARAM = {"escape": "party.0.scores.dex", "restraint": "target.scores.dex", "campus": "rules.vitality",
                     "formation": "ambush.ambusher_athletics"}


def _write(tmp: Path, rel: str) -> Path:
    path = tmp / "scenarios" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_toml(hostile_data(ROOT / rel)))
    return path


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    """Every page type, built from the hostile scenarios."""
    tmp = tmp_path_factory.mktemp("hostile")
    files = {kind: _write(tmp, rel) for kind, rel in EXAMPLES.items()}
    out: dict[str, Path] = {}
    quiet = ["--quiet"]
    assert main(["run", *map(str, files.values()), "--runs", "200", "--out", str(tmp / "multi"), "--no-runs",
                 *quiet]) == 0
    out["index"] = tmp / "multi" / "index.html"
    for folder in sorted(p for p in (tmp / "multi").iterdir() if p.is_dir()):
        kind = next(k for k in EXAMPLES if (folder / "summary.json").read_text().find(f'"kind": "{k}"') >= 0)
        out[f"run-{kind}"] = folder / "report.html"
    for kind, rel in EXACT.items():
        path = _write(tmp, rel)
        assert main(["exact", str(path), "--out", str(tmp / f"exact-{kind}")]) == 0
        out[f"exact-{kind}"] = tmp / f"exact-{kind}" / "exact.html"
    assert main(["compare", str(files["escape"]), "--runs", "200", "--out", str(tmp / "compare"), *quiet]) == 0
    out["compare-escape"] = tmp / "compare" / "compare.html"
    for kind, path in files.items():
        assert main(["sweep", str(path), "--param", "run.seed=1:2:1", "--runs", "100", "--out",
                     str(tmp / f"sweep-{kind}"), *quiet]) == 0
        out[f"sweep-{kind}"] = tmp / f"sweep-{kind}" / "report.html"
    assert main(["sensitivity", str(files["escape"]), "--param", SENSITIVITY_PARAM["escape"], "--runs", "100",
                 "--out", str(tmp / "sens"), *quiet]) == 0
    out["sensitivity-escape"] = tmp / "sens" / "report.html"
    single = _write(tmp, EXACT["escape"])  # one character: the class matrix and an exact fit apply
    assert main(["matrix", str(single), "--classes", "rogue,fighter", "--out", str(tmp / "matrix"), *quiet]) == 0
    out["matrix-escape"] = tmp / "matrix" / "report.html"
    fit_file = tmp / "fit.toml"
    fit_file.write_text(f'[fit]\nparams = ["rules.tiers.heavy.dc"]\nlo = 16\nhi = 18\n[[target]]\nscenario = '
                        f'"{single}"\nmetric = "escape_rate"\nvalue = 0.5\n', encoding="utf-8")
    assert main(["fit", str(fit_file), "--out", str(tmp / "fit"), *quiet]) == 0
    out["fit"] = tmp / "fit" / "report.html"
    return out


DANGEROUS = re.compile(r"<\s*(script|svg|iframe|img\s+src\s*=\s*x|object|embed)\b|\son(error|load)\s*=\s*\"",
                       re.I)


def test_no_payload_becomes_markup_and_every_page_forbids_scripts(pages):
    for name, path in pages.items():
        text = path.read_text()
        bad = DANGEROUS.search(text)
        assert bad is None, f"{name}: {bad.group(0)!r} in the page source"
        assert f'<meta http-equiv="Content-Security-Policy" content="{CSP.replace(chr(39), "&#39;")}">' in text, name
        assert "script-src 'none'" in CSP and "default-src 'none'" in CSP


def test_the_source_check_can_fail(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text(f"<html><body><p>{PAYLOADS[1]}</p></body></html>")
    assert DANGEROUS.search(bad.read_text())


@needs_browser
def test_nothing_executes_and_payloads_show_as_text(pages):
    seen = open_pages(list(pages.values()))
    for name, path in pages.items():
        r = seen[path]
        assert r["title"] != "XX", f"{name}: a payload ran"
        assert r["scripts"] == 0 and r["elements"] == 0, f"{name}: {r['scripts']} scripts, {r['elements']} elements"
        assert not r["errors"], f"{name}: {r['errors']}"
        assert r["csp"] == [CSP], name
        # the scenario name (with its <script> payload) is shown as text on every page
        assert PAYLOADS[0] in r["visible"], f"{name}: the scenario name is not visible as text"
    for kind in EXAMPLES:  # a run report shows the description (all payloads) and the renamed members as text
        text = seen[pages[f"run-{kind}"]]["text"]
        for p in PAYLOADS:
            assert p in text, f"run-{kind}: payload {p!r} not shown as text"
        assert "P1" + PAYLOADS[1] in text, f"run-{kind}: a renamed member is not shown"
    text = seen[pages["run-escape"]]["visible"]
    assert "{{ 7*7 }}" in text and "${ 7*7 }" in text  # template syntax is not evaluated


@needs_browser
def test_the_browser_check_detects_a_payload_that_runs(tmp_path):
    """The check must be able to fail: the same payloads in an unescaped page without the policy run."""
    page = tmp_path / "raw.html"
    page.write_text(f"<html><head><title>t</title></head><body>{PAYLOADS[1]}</body></html>")
    r = open_pages([page])[page]
    assert r["title"] == "XX"
    # and the policy alone stops it: the same unescaped payload under the pages' CSP runs nothing
    guarded = tmp_path / "guarded.html"
    guarded.write_text(f'<html><head><meta http-equiv="Content-Security-Policy" content="{CSP}"><title>t</title>'
                       f"</head><body>{PAYLOADS[0]}{PAYLOADS[1]}</body></html>")
    r = open_pages([guarded])[guarded]
    assert r["title"] == "t", "the Content-Security-Policy did not stop an inline script"
    assert EFFECT in PAYLOADS[0]
