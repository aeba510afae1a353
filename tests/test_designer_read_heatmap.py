"""Issue 26, item 3: the restraint report's heat-map numbers were about 6 px tall in the designer's browser (a
wide chart shrunk to the page). tests/test_designer_read_fonts.py checks the chart itself (9-point numbers,
at most 10 inches); this opens the written report in headless chromium at 1024 px and checks what the reader
sees: every heat map at its own size, so its numbers are 9 pt at 100 dpi = 12.5 px, at least 11 px."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from browser_check import CHROMIUM, needs_browser, sync_playwright  # noqa: E402

NUMBER_PX = 9 * 100 / 72  # the heat maps' 9-point numbers in a 100 dpi chart


@needs_browser
@pytest.mark.parametrize("name", ["party_composure"])  # the most heat maps: escape, effect, composure, overload
def test_restraint_heat_map_numbers_are_readable_on_the_page(tmp_path, name, cli):
    assert cli("run", ROOT / "scenarios" / "restraint" / f"{name}.toml", "--runs", 500, "--out", tmp_path, "--quiet",
               "--no-runs").code == 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1024, "height": 800})
        page.goto((tmp_path / "report.html").resolve().as_uri(), wait_until="load")
        shown = page.evaluate("""() => Array.from(document.images).filter(i => i.getAttribute('src').includes('heat'))
            .map(i => [i.getAttribute('src'), i.naturalWidth, i.getBoundingClientRect().width])""")
        browser.close()
    assert len(shown) >= 4, shown
    for src, natural, width in shown:
        assert NUMBER_PX * width / natural >= 11, f"{src}: {natural} px wide shown at {width:.0f} px, its numbers " \
                                                  f"{NUMBER_PX * width / natural:.1f} px"
