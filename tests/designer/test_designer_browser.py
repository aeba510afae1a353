"""The HTML reports as a person sees them: each page is opened in headless Chromium (Debian's `chromium`,
installed by .ci/run) from a local http server; every chart image must load (naturalWidth > 0, no 4xx/5xx
request) and the page must log nothing to the console. Also: charts have titles, axis labels with units
and interval bands."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import tempfile
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from sim.cli import main

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000"]

CHECK_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>check</title></head><body>
<pre id="result">pending</pre>
<script>
const frame = document.createElement("iframe");
frame.src = PAGE;
frame.onload = () => {
  const d = frame.contentDocument;
  const images = Array.from(d.images).map(i => ({src: i.getAttribute("src"), complete: i.complete,
                                                 width: i.naturalWidth, height: i.naturalHeight}));
  document.getElementById("result").textContent = JSON.stringify({title: d.title, images: images});
};
document.body.appendChild(frame);
</script></body></html>"""


class _Handler(SimpleHTTPRequestHandler):
    requests: list

    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/__check__.html":
            page = self.server.page  # type: ignore[attr-defined]
            body = CHECK_PAGE.replace("PAGE", json.dumps(page)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if path == "/favicon.ico":  # asked for by the browser itself, not by the page
            self.send_response(204)
            self.end_headers()
            return
        super().do_GET()

    def send_response(self, code, message=None):
        self.server.log.append((self.path, code))  # type: ignore[attr-defined]
        super().send_response(code, message)


def render(folder: Path, page: str) -> dict:
    """Open ``folder/page`` in headless Chromium; the images it shows, failed requests and console lines."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(folder)))
    server.page = page
    server.log = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with tempfile.TemporaryDirectory() as profile:
            url = f"http://127.0.0.1:{server.server_address[1]}/__check__.html"
            proc = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
                                  capture_output=True, text=True, timeout=120)
    finally:
        server.shutdown()
        server.server_close()
    match = re.search(r'<pre id="result">(.*?)</pre>', proc.stdout, re.S)
    assert match, f"no result in the dumped DOM (exit {proc.returncode}): {proc.stderr[-2000:]}"
    text = html.unescape(match.group(1))
    assert text != "pending", "the report page did not finish loading"
    result = json.loads(text)
    result["failed_requests"] = [(p, c) for p, c in server.log if c >= 400]
    result["console"] = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    return result


def assert_renders(folder: Path, page: str = "report.html") -> dict:
    r = render(folder, page)
    assert r["images"], f"{page}: no images"
    for img in r["images"]:
        assert img["complete"] and img["width"] > 0 and img["height"] > 0, f"{page}: image did not load: {img}"
    assert not r["failed_requests"], r["failed_requests"]
    assert not r["console"], r["console"]
    return r


needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (.ci/run installs Debian's "
                                                             "chromium package; apt-get install chromium)")


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    base = tmp_path_factory.mktemp("reports")
    esc, rst = ROOT / "scenarios/escape/lone_rogue.toml", ROOT / "scenarios/restraint/flank_penalty.toml"
    assert main(["run", str(esc), str(rst), "--runs", "1000", "--out", str(base / "cmp"), "--no-runs", "--quiet"]) == 0
    assert main(["sweep", str(esc), "--param", "rules.tiers.heavy.dc=16:22:3", "--runs", "800",
                 "--out", str(base / "sweep"), "--quiet"]) == 0
    assert main(["sweep", str(rst), "--param", "target.scores.dex=14:18:2", "--param", "binder.scores.str=12:18:6",
                 "--runs", "500", "--out", str(base / "sweep2"), "--quiet"]) == 0
    assert main(["sensitivity", str(esc), "--runs", "500", "--out", str(base / "sens"), "--quiet"]) == 0
    return base


@needs_chromium
@pytest.mark.slow
def test_every_report_page_renders_with_all_charts(reports):
    cmp = reports / "cmp"
    r = assert_renders(cmp, "index.html")
    assert len(r["images"]) >= 4 and r["title"] == "Scenario comparison"
    for sub in sorted(p for p in cmp.iterdir() if p.is_dir()):
        assert_renders(sub)
    for name in ("sweep", "sweep2", "sens"):
        assert_renders(reports / name)


@needs_chromium
def test_the_check_fails_on_a_missing_image_and_on_a_script_error(tmp_path, reports):
    page = tmp_path / "p"
    shutil.copytree(reports / "sens", page)
    (page / "tornado.png").unlink()
    with pytest.raises(AssertionError, match="image did not load"):
        assert_renders(page)
    (page / "broken.html").write_text('<html><body><img src="report.html"></body></html>')  # not an image
    with pytest.raises(AssertionError, match="image did not load"):
        assert_renders(page, "broken.html")
    shutil.copytree(reports / "sens", tmp_path / "q")
    text = (tmp_path / "q/report.html").read_text().replace("</body>", "<script>undefinedThing();</script></body>")
    (tmp_path / "q/report.html").write_text(text)
    with pytest.raises(AssertionError, match="undefinedThing"):
        assert_renders(tmp_path / "q")


# ---------------------------------------------------------------------------------------------
# chart content: titles, labelled axes with units, interval bands


@pytest.fixture
def figures(monkeypatch):
    import sim.report

    seen = []
    original = sim.report.save_figure

    def capture(fig, path):
        ax = fig.axes[0]
        seen.append({"name": Path(path).name, "title": ax.get_title(), "x": ax.get_xlabel(), "y": ax.get_ylabel(),
                     "bands": len(ax.collections), "legend": [t.get_text() for t in (ax.get_legend().get_texts()
                                                                                      if ax.get_legend() else [])]})
        return original(fig, path)

    monkeypatch.setattr(sim.report, "save_figure", capture)
    return seen


def test_designer_charts_have_titles_units_and_bands(figures, tmp_path):
    esc = ROOT / "scenarios/escape/lone_rogue.toml"
    assert main(["sweep", str(esc), "--param", "rules.tiers.heavy.dc=16:20:2", "--runs", "300",
                 "--out", str(tmp_path / "s"), "--quiet"]) == 0
    assert main(["sensitivity", str(esc), "--runs", "300", "--out", str(tmp_path / "t"), "--quiet",
                 "--param", "party.0.scores.dex"]) == 0
    assert main(["run", str(esc), str(esc), "--runs", "300", "--out", str(tmp_path / "c"), "--quiet",
                 "--no-runs"]) == 0
    mine = [f for f in figures if f["name"].startswith(("sweep_", "tornado", "index_", "heatmap_"))]
    assert {f["name"] for f in mine} >= {"sweep_escape_rate.png", "tornado.png", "index_escape_rate.png"}
    for f in mine:
        assert f["title"] and re.search(r"\(.+\)", f["x"]) and f["y"], f
        assert f["bands"] >= 1 and "95% interval" in f["legend"], f
