"""Issue 28, item 2: another local process cannot drive the studio, and the studio writes only into its
output folder. Checked with a real Bokeh client over the websocket (`bokeh.client.pull_session`), as the
issue's probe did."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

pytest.importorskip("panel")
from bokeh.client import pull_session  # noqa: E402
from bokeh.events import ButtonClick  # noqa: E402
from examples import ROOT

from sim.errors import SimError  # noqa: E402
from sim.studio.security import confined  # noqa: E402

ROGUE = ROOT / "scenarios" / "escape" / "lone_rogue.toml"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def studio(tmp_path_factory):
    """A studio server started as a user would; yields (port, token, output folder, scratch folder)."""
    tmp = tmp_path_factory.mktemp("studio")
    out = tmp / "out"
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "sim", "studio", str(ROGUE), "--port", str(port), "--no-browser",
                             "--out", str(out)], cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(iter(proc.stderr.readline, "")), daemon=True).start()
    token = None
    deadline = time.time() + 120
    while time.time() < deadline and token is None:
        for line in list(lines):
            m = re.search(r"http://127\.0\.0\.1:\d+/studio\?token=([A-Za-z0-9_-]+)", line)
            if m:
                token = m.group(1)
        time.sleep(0.2)
    assert token, f"no URL with a token printed: {lines}"
    while time.time() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.3)
    try:
        yield port, token, out, tmp
    finally:
        proc.terminate()
        proc.wait(30)


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=60) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_the_page_needs_the_token(studio):
    port, token, _, _ = studio
    assert _status(f"http://127.0.0.1:{port}/studio?token={token}") == 200
    assert _status(f"http://127.0.0.1:{port}/studio") == 403
    assert _status(f"http://127.0.0.1:{port}/studio?token=wrong{token}") == 403
    assert _status(f"http://127.0.0.1:{port}/") == 403


def test_a_bokeh_client_without_the_token_cannot_connect(studio):
    port, token, _, _ = studio
    with pytest.raises(IOError):
        pull_session(url=f"http://127.0.0.1:{port}/studio")
    with pytest.raises(IOError):
        pull_session(url=f"http://127.0.0.1:{port}/studio", arguments={"token": "guess"})


def test_a_websocket_from_another_origin_is_refused(studio):
    """A web page of another site, open in the user's browser, cannot connect even with the token."""
    from tornado.httpclient import HTTPClientError, HTTPRequest
    from tornado.websocket import websocket_connect

    port, token, _, _ = studio

    async def connect(origin: str):
        req = HTTPRequest(f"ws://127.0.0.1:{port}/studio/ws?token={token}", headers={"Origin": origin})
        conn = await websocket_connect(req, subprotocols=["bokeh", "x"])
        conn.close()

    with pytest.raises(HTTPClientError, match="403"):
        asyncio.run(connect("http://evil.example"))


def test_the_browser_that_opened_the_link_keeps_the_token_in_a_cookie(studio):
    """The page's own websocket carries no query string: the cookie set by the link authenticates it."""
    from bokeh.util.token import generate_jwt_token, generate_session_id
    from tornado.httpclient import HTTPClientError, HTTPRequest
    from tornado.websocket import websocket_connect

    port, token, _, _ = studio
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/studio?token={token}", timeout=60) as resp:
        cookie = resp.headers["Set-Cookie"]
    assert token in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    jwt = generate_jwt_token(generate_session_id())

    async def connect(headers):
        req = HTTPRequest(f"ws://127.0.0.1:{port}/studio/ws", headers=headers, follow_redirects=False)
        conn = await websocket_connect(req, subprotocols=["bokeh", jwt])
        conn.close()

    origin = {"Origin": f"http://127.0.0.1:{port}"}
    asyncio.run(connect({**origin, "Cookie": cookie.split(";")[0]}))
    with pytest.raises(HTTPClientError):
        asyncio.run(connect(origin))


def _models(doc, kind: str) -> list:
    return [m for m in doc.roots[0].references() if type(m).__name__ == kind]


def _press_save(port: int, token: str, path: str) -> str:
    """Set "Save as" to ``path`` and press Save from a Bokeh client; the message the page then shows."""
    session = pull_session(url=f"http://127.0.0.1:{port}/studio", arguments={"token": token})
    try:
        doc = session.document
        field = next(m for m in _models(doc, "TextInput") if m.title == "Save as")
        button = next(m for m in _models(doc, "Button") if m.label == "Save")
        message = next(m for m in _models(doc, "HTML") if "studio-message" in m.css_classes)
        field.value = path
        doc.callbacks.send_event(ButtonClick(button))
        conn = session._connection  # the client's loop runs until the server's change of the message arrives
        watchdog = threading.Timer(60, lambda: conn._loop.add_callback(conn._loop.stop))
        watchdog.start()
        try:
            conn._loop_until(lambda: bool(message.text))
        finally:
            watchdog.cancel()
        return message.text
    finally:
        session.close()


def test_save_outside_the_output_folder_is_refused_in_the_page(studio):
    port, token, out, tmp = studio
    site = tmp / "site-packages"
    site.mkdir()
    evil = site / "evil.pth"
    text = _press_save(port, token, str(evil))
    assert "Not saved" in text and "outside" in text
    assert not evil.exists()
    text = _press_save(port, token, str(out / ".." / "escaped.toml"))
    assert "Not saved" in text and not (tmp / "escaped.toml").exists()
    text = _press_save(port, token, str(out / "notes.pth"))  # inside, but not a scenario file
    assert "Not saved" in text and not (out / "notes.pth").exists()
    text = _press_save(port, token, str(out / "ok.toml"))  # the same client and button do save inside
    assert "Saved" in text and (out / "ok.toml").is_file()


def test_confined_follows_links(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "away").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(SimError, match="outside"):
        confined(out, out / "away" / "x.toml")
    with pytest.raises(SimError, match="outside"):
        confined(out, "/etc/x.toml")
    assert confined(out, out / "sub" / "x.toml") == out / "sub" / "x.toml"


def _request(port: int, path: str, headers: dict) -> int:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", path, headers=headers)
        return conn.getresponse().status
    finally:
        conn.close()


def test_a_dns_rebinding_page_is_refused_by_the_host_check(studio):
    """Issue 45 item 7: a page of evil.example whose name now resolves to 127.0.0.1 sends its own name as Host and as
    Origin; Bokeh's origin check compares the two and lets that through. The Host check refuses it, even with the
    token (a page that somehow had it), while the studio's own names still work."""
    from tornado.httpclient import HTTPClientError, HTTPRequest
    from tornado.websocket import websocket_connect

    port, token, _, _ = studio
    rebound = f"evil.example:{port}"

    async def connect(host: str):
        req = HTTPRequest(f"ws://127.0.0.1:{port}/studio/ws?token={token}",
                          headers={"Origin": f"http://{host}", "Host": host})
        conn = await websocket_connect(req, subprotocols=["bokeh", "x"])
        conn.close()

    with pytest.raises(HTTPClientError, match="403"):
        asyncio.run(connect(rebound))
    assert _request(port, f"/studio?token={token}", {"Host": rebound}) in (302, 403)  # to the refusal page
    assert _request(port, f"/studio?token={token}", {"Host": f"localhost:{port}"}) == 200
    assert _request(port, f"/studio?token={token}", {"Host": f"127.0.0.1:{port}"}) == 200


def test_ipv6_addresses_are_refused_in_one_line(cli, scratch):
    """Issue 45 item 7: `--address ::1` once failed with a message blaming the port; the studio's web server (Bokeh)
    cannot match IPv6 origins, so IPv6 is refused up front, saying so (before any port is bound)."""
    for address in ("::1", "::", "[::1]"):
        res = cli("studio", ROGUE, "--address", address, "--no-browser", "--out", scratch)
        lines = res.err.strip().splitlines()
        assert res.code == 2 and len(lines) == 1 and "IPv6" in lines[0] and "--address" in lines[0], res.err
        assert "port" not in lines[0].split("IPv6")[0]
    assert not scratch.exists()
