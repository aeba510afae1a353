"""How the studio spells its address (no web code: the command line and the Panel page both use it)."""

from __future__ import annotations


def netloc(address: str, port: int) -> str:
    """``HOST:PORT`` as a URL and a Host header spell it (an IPv6 address in brackets: ``[::1]:5006``)."""
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
