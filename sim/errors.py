"""Errors raised at the boundary of the package.

Every invalid-input problem is a :class:`ScenarioError` carrying one human-readable line
that names the file, the dotted key, what was expected and what was given; a file with several problems
raises one error whose text is one such line per problem (``lines``), in file order.
"""

from __future__ import annotations

import contextvars

#: how a refused ``module:callable`` policy tells the user to opt in; a command without ``--allow-code`` sets what it
#: takes instead (sim/cli.py), so that no refusal names a flag its command rejects (read where a kind refuses code)
OPT_IN_HINT: contextvars.ContextVar[str | None] = contextvars.ContextVar("sim_opt_in_hint", default=None)


class SimError(Exception):
    """Base class of the package's own errors (reported by the CLI with exit status 2)."""


class ScenarioError(SimError, ValueError):
    """A scenario file (or a value derived from it) is invalid."""

    def __init__(self, message: str, *, file: str | None = None, key: str | None = None,
                 others: list[ScenarioError] = ()):
        self.file = file
        self.key = key
        self.detail = message
        prefix = ""
        if file:
            prefix += f"{file}: "
        if key:
            prefix += f"{key}: "
        self.others = list(others)  # further errors of the same file, one line each (file order)
        self.lines = [one_line(prefix + message)] + [line for o in self.others for line in o.lines]
        super().__init__("\n".join(self.lines))


def one_line(text: str, limit: int = 500) -> str:
    """A message as one printable line: control characters escaped, very long text cut."""
    out = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return out if len(out) <= limit else out[: limit - 3] + "..."


def shown(text: object) -> str:
    """``text`` as the console prints it: every path and name (a shared folder's file name may hold a terminal escape
    sequence) with control characters escaped as in error messages (:func:`one_line`), never cut."""
    return one_line(str(text), limit=1_000_000)


class PolicyError(SimError):
    """A custom policy returned an illegal action (R-ESC-6)."""


class ExactUnsupported(SimError):
    """The scenario is outside what exact analysis supports."""
