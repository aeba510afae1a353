"""Exact answers stay what they were before the party speed-ups of issue 25 (to 1e-12): every escape
example scenario and a set of small parties, under every built-in policy. The pinned numbers
(tests/escape/data/exact_baseline.json) came from the engine before any change (tests/escape/exact_cases.py);
a case that engine refused is not compared. The numbers were pinned before the 2026-12 revision of RULES.md
(issue 24), so every case is solved under the switches' earlier reading (``volume1_features = false``,
``self_untie = "hands_free"``), which must give exactly the earlier answers."""

from __future__ import annotations

import json

import pytest
from exact_cases import BASELINE, KEYS, POLICIES, all_cases, with_policy

import sim

PINNED = json.loads(BASELINE.read_text())


def earlier_reading(s):
    """R-ESC-14a/14b off and R-ESC-10b untying oneself with free hands: the reading the answers were pinned in."""
    return s.model_copy(update={"rules": s.rules.model_copy(update={"volume1_features": False,
                                                                    "self_untie": "hands_free"})})
CASES = all_cases()


@pytest.mark.parametrize("key", sorted(k for k, v in PINNED.items() if v is not None))
def test_exact_equals_the_pinned_answer(key):
    name, policy = key.rsplit("/", 1)
    assert policy in POLICIES
    e = sim.exact(earlier_reading(with_policy(CASES[name], policy)))
    want = PINNED[key]
    for k in KEYS:
        if k == "escape_by_round":
            assert e[k] == pytest.approx(want[k], abs=1e-12, rel=0), k
        elif want[k] is None:
            assert e[k] is None
        else:
            assert e[k] == pytest.approx(want[k], abs=1e-12, rel=0), k
