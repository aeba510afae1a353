"""The escape challenge (kind = "escape", RULES.md section 1).

The kind's facts and hooks are one object, :data:`sim.escape.kind.KIND` (sim/kinds.py). Importing this package
compiles nothing: the names below are imported from their modules when first read."""

from __future__ import annotations

from sim.kinds import lazy_exports

__getattr__ = lazy_exports(__name__, {"check": "sim.escape.model"})  # beside the kind object's hooks
