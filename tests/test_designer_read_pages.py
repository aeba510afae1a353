"""Issue 26, pages: tier DCs on the exact, compare and matrix pages; the exact page answers the tier question; the
sensitivity table leads with the exact effect, says "within noise" and fits the page; the matrix headline is
ordered by the size of the effect."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from examples import ROOT

import sim
from sim.designer.matrix import Matrix, outlier_sentences
from sim.designer.params import with_values
from sim.escape.designer import tiers_on_the_way

ROGUE = ROOT / "scenarios" / "escape" / "lone_rogue.toml"


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_tiers_on_the_way_follow_the_ladder():
    # R-ESC-2 defaults: heavy -> light -> free, moderate -> simple -> free (the rogue's arms and legs)
    assert tiers_on_the_way(sim.load_scenario(ROGUE)) == ["simple", "light", "moderate", "heavy"]


def test_exact_page_shows_the_ladder_and_answers_which_tier_holds_her(tmp_path, cli):
    assert cli("exact", ROGUE, "--out", tmp_path).code == 0
    text = _text((tmp_path / "exact.html").read_text(encoding="utf-8"))
    assert "Tier ladder in effect" in text and "heavy 18 default light" in text
    m = re.search(r"holds the party back most: (\w+) \(DC (\d+)\)", text)
    assert m, text[:1500]
    # the named tier is the one whose always-successful checks raise the exact escape rate most
    s = sim.load_scenario(ROGUE)
    gains = {t: sim.exact(with_values(s, {f"rules.tiers.{t}.dc": -100}))["escape_rate"]
             for t in ("simple", "light", "moderate", "heavy")}
    assert m.group(1) == max(gains, key=gains.get) and m.group(2) == "18"


def test_compare_and_matrix_pages_show_the_ladder(tmp_path, cli):
    assert cli("compare", ROGUE, "--policies", "greedy,arms_first", "--runs", 300, "--out", tmp_path / "c").code == 0
    text = _text((tmp_path / "c" / "compare.html").read_text(encoding="utf-8"))
    # the rogue's ladder with its DCs (R-ESC-2 defaults: heavy 18 becomes light 12, moderate 15 becomes simple 10)
    assert "Tier ladder in effect" in text and "heavy 18" in text and "light 12" in text
    assert cli("matrix", ROGUE, "--runs", 200, "--out", tmp_path / "m").code == 0
    text = _text((tmp_path / "m" / "report.html").read_text(encoding="utf-8"))
    assert "Tier ladder in effect" in text and "heavy 18" in text


def test_sensitivity_leads_with_exact_and_says_within_noise(tmp_path, cli):
    assert cli("sensitivity", ROGUE, "--runs", 400, "--out", tmp_path, "--quiet").code == 0
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    head = re.search(r"<thead>(.*?)</thead>", html, re.S).group(1)
    cols = [_text(c).strip() for c in re.findall(r"<th[^>]*>(.*?)</th>", head, re.S)]
    assert cols.index("exact effect") < cols.index("simulated effect") and len(cols) <= 7, cols
    assert "within noise (" in _text(html)  # cha plays no part in escaping: its change is within noise


def test_matrix_headline_is_ordered_by_size():
    frame = pd.DataFrame({
        "class": ["bard", "monk", "rogue"], "escape_rate": [0.4, 0.9, 0.55], "difference": [-0.10, 0.63, -0.2],
        "outlier": [True, True, True], "median_class_value": [0.5, 0.5, 0.5]})
    m = Matrix(frame=frame, metric="escape_rate", vary=[], threshold=0.05, scenario=sim.load_scenario(ROGUE),
               scores={}, level=5)
    lines = outlier_sentences(m)
    assert [ln.split()[1] for ln in lines] == ["monk", "rogue", "bard"]  # +63, -20, -10 points


@pytest.mark.parametrize("width", [1024])
def test_sensitivity_page_fits_the_window(tmp_path, width, cli):
    from browser_check import CHROMIUM, sync_playwright

    if CHROMIUM is None or sync_playwright is None:
        pytest.skip("headless Chromium not available")
    assert cli("sensitivity", ROGUE, "--runs", 300, "--out", tmp_path, "--quiet").code == 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": width, "height": 800})
        page.goto((tmp_path / "report.html").resolve().as_uri(), wait_until="load")
        # the page, and every table inside any scrolling wrapper, within the window
        over = page.evaluate("""() => Math.max(document.documentElement.scrollWidth - window.innerWidth,
            ...Array.from(document.querySelectorAll('table')).map(t => Math.max(
                t.getBoundingClientRect().right - document.documentElement.clientWidth,
                t.parentElement.scrollWidth - t.parentElement.clientWidth)))""")
        browser.close()
    assert over <= 0, f"the page is {over} px wider than a {width} px window"
