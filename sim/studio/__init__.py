"""The live balance studio: ``python -m sim studio SCENARIO`` (optional extra ``sim[studio]``: Panel).

:mod:`sim.studio.model` answers variants (no web code); :mod:`sim.studio.app` is the Panel page.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
import sys

from sim.errors import ScenarioError, shown
from sim.scenario import load_scenario
from sim.studio.address import netloc

DEFAULT_PORT = 5006


def add_parser(sub) -> None:
    st = sub.add_parser("studio", help="a live page: move DCs and scores, see the answer and curves update")
    st.add_argument("scenario")
    st.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    st.add_argument("--address", default="127.0.0.1",
                    help="address to listen on (default 127.0.0.1, this machine only)")
    st.add_argument("--allow-remote", action="store_true",
                    help="required to listen on an address other machines can reach")
    st.add_argument("--no-browser", action="store_true", help="do not open a browser")
    st.add_argument("--out", help="where Save and Report write (default reports/<scenario name>/studio/)")


def _loopback(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def check_address(address: str) -> None:
    """IPv4 addresses and host names only: the studio's web server (Bokeh) matches websocket origins as HOST:PORT
    and cannot name an IPv6 address, so ``--address ::1`` is refused in one line instead of serving a page whose
    websocket is then refused."""
    if ":" in address:
        raise ScenarioError(f"{address} is an IPv6 address; the studio supports IPv4 only (its web server matches "
                            "origins as HOST:PORT): use 127.0.0.1 for this machine", key="--address")


def check_port(address: str, port: int) -> None:
    """The studio can listen on ``address:port`` (IPv4); one line otherwise."""
    if not 1 <= port <= 65535:
        raise ScenarioError(f"expected a port from 1 to 65535; given {port}", key="--port")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((address if address != "localhost" else "127.0.0.1", port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ScenarioError(f"cannot listen on {netloc(address, port)}: the port is in use; choose another "
                                    "with --port", key="--port") from None
            raise ScenarioError(f"cannot listen on {netloc(address, port)} ({exc.strerror or exc}): the address is "
                                "not this machine's", key="--address") from None


def cmd_studio(args) -> int:
    scenario = load_scenario(args.scenario)
    check_address(args.address)
    if not _loopback(args.address):
        if not args.allow_remote:
            raise ScenarioError(f"{args.address} can be reached from other machines; add --allow-remote to "
                                "listen there anyway", key="--address")
        print(f"warning: the studio listens on {netloc(args.address, args.port)}, which other machines can reach. "
              "Anyone who has the link with its token (below) can use it as you can: run simulations on this machine "
              "for as long as they like, read the scenario and its results, and write scenario files and reports "
              "into its output folder (nowhere else). The token travels unencrypted (http): anyone who can watch "
              "the network can copy it.", file=sys.stderr)
    check_port(args.address, args.port)
    try:
        from sim.studio.app import serve  # lazy: optional extra (Panel), loaded only by the studio command
    except ImportError as exc:
        raise ScenarioError(f"the studio needs the optional extra: pip install 'sim[studio]' ({exc.name} is "
                            "missing)") from None
    from sim.studio.security import new_token  # lazy: optional extra (Bokeh, tornado), as above

    token = new_token()  # required by every page and websocket request (sim/studio/security.py)
    print(shown(f"studio for {scenario.source}: http://{netloc(args.address, args.port)}/studio?token={token} "
                "(open this link; Ctrl-C to stop)"), file=sys.stderr, flush=True)
    serve(scenario, port=args.port, address=args.address, show=not args.no_browser, out_dir=args.out, token=token)
    return 0
