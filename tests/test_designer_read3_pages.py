"""Issue 38 (the designer's read, third round), pages, checked in headless Chromium where the item is what a reader
sees: escape without a watch says so; formation's headline answers the scenario's question and its console shows
every main metric; descriptions reflow; a categorical sweep draws bars and only the metrics that moved; Japanese
terms draw with the shipped web font; the studio fits an 800 px window."""

from __future__ import annotations

import re

import pytest
from browser_check import needs_browser, open_pages
from examples import ROOT

ROGUE = ROOT / "scenarios" / "escape" / "lone_rogue.toml"


def _visible(path):
    return re.sub(r"\s+", " ", open_pages([path])[path]["visible"])


# ---- item 6: escape without a watch


@needs_browser
def test_escape_without_a_watch_says_there_is_none(cli, tmp_path):
    # lone_rogue has no [attention] table: no limit, so R-ESC-9a's watch never catches anyone
    assert "[attention]" not in ROGUE.read_text(encoding="utf-8")
    assert cli("run", ROGUE, "--runs", 300, "--out", tmp_path, "--quiet").code == 0
    text = _visible(tmp_path / "report.html")
    assert "There is no watch" in text and "the party cannot be caught" in text
    assert "The watch catches it" not in text and "Attention: no watch" in text
    assert "what drew it" not in text  # no table of zeros


@needs_browser
def test_escape_with_a_watch_keeps_its_attention_table(cli, tmp_path):
    path = tmp_path / "watched.toml"
    path.write_text(ROGUE.read_text(encoding="utf-8") + "\n[attention]\nlimit = 3\nper_round = 1\n", encoding="utf-8")
    assert cli("run", path, "--runs", 300, "--out", tmp_path / "out", "--quiet").code == 0
    text = _visible(tmp_path / "out" / "report.html")
    assert "The watch catches it in" in text and "what drew it" in text and "There is no watch" not in text


# ---- item 5: formation answers the skirmish where the skirmish runs; the console shows its win rates

OVERFLOW = ROOT / "scenarios" / "formation" / "overflow_front.toml"  # "Does a 3-2 front beat a 2-3 line-up?"
DP_ONLY = ROOT / "scenarios" / "formation" / "dp_income.toml"  # [skirmish] enabled = false


def test_formation_console_shows_the_skirmish_win_rates(cli, tmp_path):
    r = cli("run", OVERFLOW, "--runs", 300, "--out", tmp_path)
    assert r.code == 0, r.err
    for key in ("skirmish_win_a", "skirmish_win_b", "skirmish_draw", "ambush_win", "dp_per_session"):
        assert f"({key})" in r.out, r.out
    r = cli("run", DP_ONLY, "--runs", 300, "--out", tmp_path / "dp")
    assert "(dp_per_session)" in r.out and "skirmish" not in r.out  # no skirmish, no skirmish rows


@needs_browser
def test_formation_headline_answers_the_skirmish_first(cli, tmp_path):
    assert cli("run", OVERFLOW, "--runs", 300, "--out", tmp_path, "--quiet").code == 0
    text = _visible(tmp_path / "report.html")
    first = text.index("Skirmish: side A wins")
    assert first < text.index("The ambush succeeds in"), text[:800]
    assert cli("run", DP_ONLY, "--runs", 300, "--out", tmp_path / "dp", "--quiet").code == 0
    assert "Skirmish: side A wins" not in _visible(tmp_path / "dp" / "report.html")


# ---- item 9: descriptions reflow (single line breaks of the TOML file join; blank lines are paragraphs)

SIGNATURE = ROOT / "scenarios" / "campus" / "signature_price.toml"


def test_reflow_joins_lines_and_keeps_paragraphs_and_list_items():
    from sim.report import reflow

    assert reflow("one\ntwo\n\n  three\nfour\n- a\n- b\n") == ["one two", "three four\n- a\n- b"]


@needs_browser
def test_campus_description_reflows_in_the_browser(cli, tmp_path):
    assert cli("run", SIGNATURE, "--runs", 50, "--out", tmp_path, "--quiet").code == 0
    page = tmp_path / "report.html"
    seen = open_pages([page])[page]["visible"]
    # the file breaks its description after "from" and after "a signature": a reader sees one flowing paragraph
    assert "with roaming hounds and, from turn 6, the executive (boss)." in seen, seen[:1500]
    assert "R-CAM-9a): a signature move (x2 on fight)" in seen


# ---- item 7: a sweep of a text switch draws bars, and charts only the metrics that moved


@needs_browser
def test_categorical_sweep_charts_only_what_moved(cli, tmp_path):
    import pandas as pd

    r = cli("sweep", OVERFLOW, "--param", "rules.attack_types=both,listed", "--runs", 400, "--out", tmp_path,
            "--quiet")
    assert r.code == 0, r.err
    df = pd.read_csv(tmp_path / "sweep.csv")
    # R-MDK-6's attack-type switch acts in the skirmish only: the ambush check and the session's DP cannot move
    # (every point runs on the same random numbers, so they are equal to the last digit), the skirmish can
    assert df["ambush_win"].nunique() == 1 and df["dp_per_session"].nunique() == 1
    assert df["skirmish_win_a"].nunique() == 2
    page = tmp_path / "report.html"
    seen = open_pages([page])[page]
    charts = sorted(i["src"] for i in seen["images"])
    assert charts == ["sweep_skirmish_win_a.png", "sweep_skirmish_win_b.png"], charts
    assert all(i["complete"] and i["width"] > 0 for i in seen["images"])
    text = re.sub(r"\s+", " ", seen["visible"])
    assert "Unchanged by this sweep" in text and "(dp_per_session) 23." in text and "(ambush_win) " in text


def test_categorical_values_are_bars_not_a_line(tmp_path, monkeypatch):
    import pandas as pd

    import sim.report
    from sim.designer.sweep import line_chart

    figures = []
    monkeypatch.setattr(sim.report, "save_figure", lambda fig, path: figures.append(fig) or path)
    df = pd.DataFrame({"rules.attack_types": ["both", "listed"], "skirmish_win_a": [0.99, 0.94],
                       "skirmish_win_a_lo": [0.98, 0.92], "skirmish_win_a_hi": [1.0, 0.96]})
    df.attrs["runs"] = 400
    line_chart(df, "rules.attack_types", "skirmish_win_a", tmp_path)
    ax = figures[0].axes[0]
    assert len(ax.patches) == 2 and not [ln for ln in ax.lines if ln.get_marker() == "o"]
    line_chart(df.assign(**{"rules.attack_types": [1, 2]}), "rules.attack_types", "skirmish_win_a", tmp_path)
    assert not figures[1].axes[0].patches  # numbers stay a line


# ---- item 14: the studio fits an 800 px window


def test_the_studio_fits_an_800_px_window(tmp_path):
    pytest.importorskip("panel")
    from browser_check import CHROMIUM, LAUNCH_ARGS, require_browser, studio_server, sync_playwright

    require_browser()
    with studio_server(ROGUE, tmp_path) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        page = browser.new_page(viewport={"width": 800, "height": 900})
        page.goto(url)
        page.locator(".current-value").wait_for(timeout=60_000)
        page.wait_for_timeout(1500)
        wide = page.evaluate("document.documentElement.scrollWidth")
        boxes = {name: page.get_by_role("button", name=name).bounding_box() for name in ("Save", "Report")}
        page.screenshot(path=str(tmp_path / "studio_800.png"))
        browser.close()
    assert wide <= 800, f"the studio is {wide} px wide in an 800 px window"
    for name, box in boxes.items():
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 800, (name, box)


# ---- item 8: Japanese terms draw with the pages' own web font (a subset of Noto Sans CJK JP, OFL)

AMBUSH = ROOT / "scenarios" / "formation" / "ambush_powered_armor.toml"  # "運動 or 情報" in its description


def test_the_font_subset_covers_every_japanese_character_the_project_uses():
    import importlib.util

    from fontTools.ttLib import TTFont

    spec = importlib.util.spec_from_file_location("cjk_font", ROOT / "tools" / "cjk_font.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    font = ROOT / "sim" / "templates" / "cjk-subset.woff"
    covered = {chr(c) for c in TTFont(font).getBestCmap()}
    wanted = set(tool.project_characters())
    assert "運" in wanted and not wanted - covered, f"run tools/cjk_font.py: {''.join(sorted(wanted - covered))}"
    assert font.stat().st_size < 20_000  # a subset, not the font


@needs_browser
def test_japanese_terms_draw_with_the_pages_web_font(cli, tmp_path):
    from browser_check import CHROMIUM, assert_clean, sync_playwright

    assert cli("run", AMBUSH, "--runs", 200, "--out", tmp_path, "--quiet").code == 0
    page_path = tmp_path / "report.html"
    assert_clean(page_path, open_pages([page_path])[page_path])  # no CSP complaint about the inline font
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        page.goto(page_path.as_uri(), wait_until="load")
        page.evaluate("document.fonts.ready.then(() => true)")
        cdp = page.context.new_cdp_session(page)
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        cdp.send("DOM.getDocument", {"depth": -1})
        search = cdp.send("DOM.performSearch", {"query": "//*[contains(text(), '運動')]"})
        nodes = cdp.send("DOM.getSearchResults", {"searchId": search["searchId"], "fromIndex": 0,
                                                  "toIndex": search["resultCount"]})["nodeIds"]
        fonts = [cdp.send("CSS.getPlatformFontsForNode", {"nodeId": n})["fonts"] for n in nodes]
        browser.close()
    assert nodes, "the page shows no 運動"
    # the page's own font (a web font: isCustomFont) draws the Japanese characters, whatever the machine has
    for used in fonts:
        assert any(f["isCustomFont"] and "CJK" in f["familyName"] for f in used), used
