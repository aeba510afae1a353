"""Issue 38 (the designer's read, third round), pages, checked in headless Chromium where the item is what a reader
sees: escape without a watch says so; formation's headline answers the scenario's question and its console shows
every main metric; descriptions reflow; a categorical sweep draws bars and only the metrics that moved; Japanese
terms draw with the shipped web font; the studio fits an 800 px window."""

from __future__ import annotations

import re

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
