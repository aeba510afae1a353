"""Open generated HTML pages in headless Chromium (Debian's /usr/bin/chromium through Playwright; never a
downloaded browser) and report what a reader's browser saw: title, scripts, text, console messages, page
errors, failed requests, images and whether the page is wider than its viewport."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

CHROMIUM = next((p for p in ("/usr/bin/chromium", shutil.which("chromium") or "", shutil.which("chromium-browser")
                             or "") if p and Path(p).exists()), None)
try:  # pragma: no cover - depends on the machine
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover
    sync_playwright = None

needs_browser = pytest.mark.skipif(
    CHROMIUM is None or sync_playwright is None,
    reason="headless Chromium not available (apt-get install chromium; pip install playwright): "
           f"chromium={CHROMIUM}, playwright={'yes' if sync_playwright else 'no'}")

VIEWPORT = {"width": 1024, "height": 800}

PROBE = """() => ({
  title: document.title,
  scripts: document.scripts.length,
  text: document.body ? document.body.textContent : "",
  visible: document.body ? document.body.innerText : "",
  csp: Array.from(document.querySelectorAll('meta[http-equiv="Content-Security-Policy"]')).map(m => m.content),
  images: Array.from(document.images).map(i => ({src: i.getAttribute("src"), alt: i.getAttribute("alt"),
                                               complete: i.complete, width: i.naturalWidth})),
  elements: Array.from(document.querySelectorAll("svg, iframe, object, embed, form, base")).length,
  scrollWidth: document.documentElement.scrollWidth,
  innerWidth: window.innerWidth,
  height: document.documentElement.scrollHeight,
})"""


def open_pages(pages: list[Path], screenshots: dict[Path, Path] | None = None) -> dict[Path, dict]:
    """Visit every page (file:// URL) in one browser; per page the PROBE result plus console lines,
    page errors and failed requests. ``screenshots`` maps a page to a PNG path for its first screen."""
    out: dict[Path, dict] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            for path in pages:
                page = browser.new_page(viewport=VIEWPORT)
                console, errors, failed = [], [], []
                page.on("console", lambda m, c=console: c.append(f"{m.type}: {m.text}"))
                page.on("pageerror", lambda e, c=errors: c.append(str(e)))
                page.on("requestfailed", lambda r, c=failed: c.append(r.url))
                page.goto(Path(path).resolve().as_uri(), wait_until="load")
                page.wait_for_timeout(100)  # let anything that would run, run
                result = page.evaluate(PROBE)
                result.update(console=console, errors=errors, failed=failed)
                if screenshots and path in screenshots:
                    page.set_viewport_size({"width": 1280, "height": 1000})
                    page.screenshot(path=str(screenshots[path]), full_page=False)
                out[path] = result
                page.close()
        finally:
            browser.close()
    return out


def assert_clean(path: Path, r: dict) -> None:
    """No script error or console message, every image loaded, nothing wider than the viewport."""
    for img in r["images"]:
        assert img["complete"] and img["width"] > 0, f"{path}: image did not load: {img}"
    assert not r["errors"], f"{path}: script errors {r['errors']}"
    assert not r["console"], f"{path}: console {r['console']}"
    assert not r["failed"], f"{path}: failed requests {r['failed']}"
    assert r["scrollWidth"] <= r["innerWidth"], f"{path}: page {r['scrollWidth']} px wide in a {r['innerWidth']} px " \
                                                "viewport"
