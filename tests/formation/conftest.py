"""Fixtures of the formation tests: ``examples`` is narrowed to the formation examples by name (``examples["<stem>"]``);
``scratch`` and ``cli`` come from tests/conftest.py, the builders from formation_helpers.py."""

from __future__ import annotations

import pytest
from examples import examples_of


@pytest.fixture(scope="session")
def examples():
    return examples_of("formation")
