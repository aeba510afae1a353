"""Errors raised at the boundary of the package.

Every invalid-input problem is a :class:`ScenarioError` carrying one human-readable line
that names the file, the dotted key, what was expected and what was given.
"""

from __future__ import annotations


class SimError(Exception):
    """Base class of the package's own errors (reported by the CLI with exit status 2)."""


class ScenarioError(SimError, ValueError):
    """A scenario file (or a value derived from it) is invalid."""

    def __init__(self, message: str, *, file: str | None = None, key: str | None = None):
        self.file = file
        self.key = key
        self.detail = message
        prefix = ""
        if file:
            prefix += f"{file}: "
        if key:
            prefix += f"{key}: "
        super().__init__(prefix + message)


class PolicyError(SimError):
    """A custom policy returned an illegal action (R-ESC-6)."""


class ExactUnsupported(SimError):
    """The scenario is outside what exact analysis supports."""
