"""Open generated HTML pages in headless Chromium (Debian's /usr/bin/chromium through Playwright; never a
downloaded browser) and report what a reader's browser saw: title, scripts, text, console messages, page
errors, failed requests, images and whether the page is wider than its viewport. :func:`studio_server` starts
the live studio as a user does, for the browser tests of the studio page."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
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
#: how the studio's browser tests launch chromium (quiet: no background requests, no first-run pages)
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--no-first-run"]
ROOT = Path(__file__).resolve().parents[1]
STUDIO_LINK = re.compile(r"http://\S+/studio\?token=[\w-]+")  # the link `python -m sim studio` prints

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


def require_browser() -> None:
    """Skip the calling test (or fixture) where headless Chromium or Playwright is missing."""
    if CHROMIUM is None or sync_playwright is None:
        pytest.skip(f"headless Chromium not available (.ci/run installs it): chromium={CHROMIUM}, "
                    f"playwright={'yes' if sync_playwright else 'no'}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def studio_server(scenario: Path, folder: Path, timeout: float = 120.0) -> Iterator[str]:
    """``python -m sim studio SCENARIO --no-browser --out FOLDER`` started in ``folder`` as a user starts it;
    yields the link it printed (it carries the launch token every request needs) once its port answers, and
    stops it on exit (killed when it does not stop within 20 s).

    The server writes its output to ``folder/studio-server.log``, a file: a pipe that nobody reads after the link
    fills up with the server's log lines and then blocks the server mid-session (the page stops answering, e.g.
    "Saved" never comes). Unbuffered, so the log is whole when the server is stopped; its last lines are added
    to any error raised inside the block."""
    port = free_port()
    log_path = Path(folder) / "studio-server.log"
    command = [sys.executable, "-m", "sim", "studio", str(scenario), "--port", str(port), "--no-browser",
               "--out", str(folder)]
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    with open(log_path, "wb") as log:
        server = subprocess.Popen(command, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            yield _served_link(server, port, log_path, timeout)
        except BaseException as exc:
            exc.add_note(f"studio server log ({log_path}), last lines:\n{_tail(log_path)}")
            raise
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(timeout=20)


def _served_link(server: subprocess.Popen, port: int, log_path: Path, timeout: float) -> str:
    """The link the server printed, once its port accepts connections."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"the studio exited with code {server.returncode} before serving")
        link = STUDIO_LINK.search(log_path.read_text(encoding="utf-8", errors="replace"))
        if link:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    return link.group(0)
        time.sleep(0.2)
    raise AssertionError(f"the studio did not serve a link with a token within {timeout:.0f} s")


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError as exc:
        return f"(unreadable: {exc})"
