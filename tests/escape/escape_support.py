"""The escape test helpers under their earlier name: tests/escape/escape_helpers.py is the module (kept so that a
test written against the earlier name still imports; new tests import escape_helpers)."""

from escape_helpers import *  # noqa: F403
from escape_helpers import Script, character, scenario, setup  # noqa: F401
