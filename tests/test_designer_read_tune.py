"""Issue 26, tune: the range widens by itself until the target is bracketed (within the key's valid range), a rate
target outside [0, 1] is refused with the fraction it most likely means, and --policy works as in run."""

from __future__ import annotations

import json

import pytest
from examples import ROOT

import sim
from sim.designer.metrics import metric_value
from sim.designer.params import with_values
from sim.designer.tune import tune

ROGUE = ROOT / "scenarios" / "escape" / "lone_rogue.toml"
HEAVY = "rules.tiers.heavy.dc"
METRIC = "escape_by_round@8"


@pytest.fixture(scope="module")
def rogue3(tmp_path_factory):
    """The lone rogue at level 3 (the issue's question: which heavy DC gives her 50% within 8 rounds?)."""
    path = tmp_path_factory.mktemp("tune") / "rogue3.toml"
    path.write_text(ROGUE.read_text(encoding="utf-8").replace("level = 5", "level = 3"), encoding="utf-8")
    return path


def _exact(scenario, dc):
    return metric_value(sim.exact(with_values(scenario, {HEAVY: dc})), METRIC)


@pytest.mark.parametrize("target, hint", [(50, "did you mean 0.50?"), (12.5, "did you mean 0.12?"), (-0.1, "")])
def test_a_rate_target_outside_0_1_is_refused(cli, rogue3, target, hint):
    r = cli("tune", rogue3, "--param", HEAVY, "--metric", METRIC, "--target", target)
    err = r.err.strip().splitlines()
    assert r.code == 2 and len(err) == 1 and "is a rate between 0 and 1" in err[0] and err[0].endswith(
        hint or f"given {target:g}"), err


def test_the_default_range_widens_until_the_target_is_bracketed(rogue3):
    s = sim.load_scenario(rogue3)
    # default range: the heavy DC in effect (18, R-ESC-2's ladder) +- 10 = [8, 28]. At DC 28 she still gets free
    # within 8 rounds more often than 10% of the time (exact analysis, checked here), so the answer lies above the
    # default range and the search must widen its upper end (never past TierOverride.dc's le=200)
    assert _exact(s, 28) > 0.1
    res = tune(s, HEAVY, 0.1, metric=METRIC)
    assert res.bracketed and res.hi > 28 and res.lo == 8, (res.lo, res.hi)
    assert max(e["value"] for e in res.evaluations) <= 200  # the key's declared range (TierOverride.dc le=200)
    # the answer is the closest of its neighbours (checked against exact analysis, not the search's own numbers)
    best = abs(_exact(s, res.value) - 0.1)
    assert best <= abs(_exact(s, res.value - 1) - 0.1) and best <= abs(_exact(s, res.value + 1) - 0.1)
    assert _exact(s, res.value - 1) > 0.1 >= _exact(s, res.value + 1)


def test_widening_stops_at_the_valid_range_and_given_ends_stay(rogue3, cli):
    s = sim.load_scenario(rogue3)
    # dex is a score in [1, 30] (Scores, R-GEN-2). Even at dex 1 she gets free within 8 rounds more often than
    # half the time (str 10 and the ladder's DCs; checked by exact analysis here), so 50% is out of reach: the
    # search widens down to dex 1 and no further
    low = metric_value(sim.exact(with_values(s, {"party.0.scores.dex": 1})), METRIC)
    assert low > 0.5
    res = tune(s, "party.0.scores.dex", 0.5, metric=METRIC)
    assert not res.bracketed and res.lo == 1 and min(e["value"] for e in res.evaluations) == 1
    # an end the user gave is kept: no widening past --hi 20
    res = tune(s, HEAVY, 0.1, metric=METRIC, hi=20)
    assert not res.bracketed and res.hi == 20 and max(e["value"] for e in res.evaluations) == 20
    r = cli("tune", rogue3, "--param", "party.0.scores.dex", "--metric", METRIC, "--target", 0.5)
    assert r.code == 1 and "valid range" in r.err


def test_policy_as_in_run(rogue3, cli):
    tuned = cli("tune", rogue3, "--param", HEAVY, "--metric", METRIC, "--target", 0.5, "--policy", "arms_first",
                "--json")
    out = json.loads(tuned.out)
    from sim.escape.policy_comparison import with_policy

    direct = tune(with_policy(sim.load_scenario(rogue3), "arms_first"), HEAVY, 0.5, metric=METRIC)
    assert tuned.code == 0 and out["value"] == direct.value and out["achieved"] == direct.achieved
    typo = cli("tune", rogue3, "--param", HEAVY, "--metric", METRIC, "--target", 0.5, "--policy", "greedyy")
    assert typo.code == 2 and "did you mean 'greedy'" in typo.err
