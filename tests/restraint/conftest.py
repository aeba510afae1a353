"""Fixtures of the restraint tests: ``examples`` is narrowed to the restraint examples by name (``examples["<stem>"]``);
``scratch`` and ``cli`` come from tests/conftest.py, the builders from restraint_helpers.py."""

from __future__ import annotations

import pytest
from examples import examples_of


@pytest.fixture(scope="session")
def examples():
    return examples_of("restraint")
