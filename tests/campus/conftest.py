"""Fixtures of the campus tests: ``examples`` is narrowed to the campus examples by name (``examples["<stem>"]``);
``scratch`` and ``cli`` come from tests/conftest.py, the builders from campus_helpers.py."""

from __future__ import annotations

import pytest
from examples import examples_of


@pytest.fixture(scope="session")
def examples():
    return examples_of("campus")
