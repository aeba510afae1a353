"""Who may drive the studio, and where it may write (issue 28).

- **A per-launch token.** Every page and websocket request must carry the token printed with the studio's URL
  (``?token=...``, as Jupyter does); the browser that opened that URL keeps it in a cookie (HttpOnly,
  SameSite=Strict) so that the page's own websocket carries it too. A request without it gets a short page
  saying where the link with the token is; another local process or another user of the machine cannot open a
  session, read the page or press its buttons.
- **The websocket origin** is checked by Bokeh against the studio's own address (``allow_websocket_origin``),
  so a web page from elsewhere, open in the same browser, cannot connect either.
- **The Host header** of every request that reads or drives the studio (the page, its websocket, Bokeh's
  session requests) must name the studio itself (``127.0.0.1:PORT``, ``localhost:PORT`` or the ``--address`` it
  listens on), as Jupyter checks it: a page of another site whose name was rebound to
  127.0.0.1 (DNS rebinding) sends its own name as Host and as Origin, which Bokeh's origin check alone would let
  through. A studio listening for other machines (``--allow-remote`` on 0.0.0.0 or ::) cannot know the names it
  is reached by and checks the token only.
- **Save and Report write only inside the output folder** (``--out``, default ``reports/<name>/studio/``): a
  path that leads elsewhere (``..``, an absolute path, a symbolic link out of the folder) or that is not a
  ``.toml`` file is refused in the page with the reason.
"""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

from bokeh.server.auth_provider import AuthProvider
from tornado.web import RequestHandler
from tornado.websocket import WebSocketHandler

from sim.errors import SimError

TOKEN_BYTES = 32
REFUSED_PATH = "/token-required"


def new_token() -> str:
    """A fresh random token for one launch of the studio."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def cookie_name(port: int) -> str:
    return f"sim_studio_token_{int(port)}"  # cookies are per host, not per port: one name per studio


class _Refused(RequestHandler):
    def get(self) -> None:
        self.set_status(403)
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.finish("This studio needs the link with its token, printed in the terminal where "
                    "`python -m sim studio` was started.\n")


class TokenAuth(AuthProvider):
    """Bokeh authentication: the request's Host must be one of ``hosts`` (None: any) and its ``token`` argument or
    the studio's cookie must equal the token."""

    def __init__(self, token: str, port: int, hosts: list[str] | None = None):
        self._token = token.encode()
        self._cookie = cookie_name(port)
        self._hosts = None if hosts is None else {h.lower() for h in hosts}
        super().__init__()

    def _user(self, handler: RequestHandler) -> str | None:
        if self._hosts is not None and handler.request.host.lower() not in self._hosts:
            return None  # DNS rebinding: a foreign name for this machine (module docstring)
        given = handler.get_argument("token", None)
        from_query = given is not None
        if given is None:
            given = handler.get_cookie(self._cookie)
        if not given or not hmac.compare_digest(given.encode(), self._token):
            return None
        if from_query and not isinstance(handler, WebSocketHandler):
            handler.set_cookie(self._cookie, given, httponly=True, samesite="Strict", path="/")
        return "studio"

    @property
    def get_user(self):
        return self._user

    @property
    def login_url(self) -> str:
        return REFUSED_PATH

    @property
    def login_handler(self):
        return _Refused


def confined(folder: str | Path, path: str | Path, suffix: str | None = ".toml") -> Path:
    """``path`` (relative paths are taken from the current folder, as typed) if it lies inside ``folder`` once
    every link is followed and ends with ``suffix``; a SimError giving the reason otherwise."""
    root = Path(folder).resolve()
    text = str(path)
    if not text.strip():
        raise SimError("give a file name inside the output folder")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise SimError("the path holds control characters")
    target = Path(os.path.abspath(text))
    real = target.resolve()
    if real != root and not real.is_relative_to(root):
        raise SimError(f"{text} is outside the studio's output folder {root}; the studio writes only there "
                       "(start it with --out FOLDER to choose another)")
    if suffix is not None and target.suffix != suffix:
        raise SimError(f"{text}: the studio saves scenario files only (a name ending in {suffix})")
    return target
