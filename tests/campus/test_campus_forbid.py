"""policy.forbid (issue 36, the balance audit's restricted play): the PCs never declare a forbidden stance; each
stance policy takes its next best allowed stance by its own ordering (docs/decisions.md "Forbidden stances"); both
engines honour it alike; nothing forbidden changes nothing."""

from fractions import Fraction

import numpy as np
import pytest
from campus_helpers import kernel_matches_reference, make, params_of
from test_campus_agreement import rich

from sim.campus.params import compile_params
from sim.campus.simulate import run_arrays
from sim.campus.stances import maximin
from sim.errors import ScenarioError

FORBIDS = (["hide"], ["fight", "flee"], ["fight"])
POLICIES = {
    "fixed": {"stance": "fixed", "stance_value": "hide", "growth": "best"},
    "random": {"stance": "random", "rescue": True},
    "best": {"move": "random", "stance": "best", "growth": "best"},
    "counter": {"move": "avoid", "stance": "counter", "growth": "best", "rescue": True},
    "equilibrium": {"move": "avoid", "stance": "equilibrium", "growth": "best", "rescue": True},
}


@pytest.mark.parametrize("forbid", FORBIDS, ids=lambda f: "+".join(f))
@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_r_cam_40_forbidden_stances_reference_equals_kernel_on_same_draws(policy, forbid):
    """Both engines give identical per-game records on the same seed with stances forbidden, for each stance
    policy (teams, bosses, missions, miso bombs of the agreement suite's rich scenario)."""
    p = rich({**POLICIES[policy], "forbid": forbid}, miso_bomb=True)
    assert p.stance_allowed == 7 - sum(1 << ("fight", "flee", "hide").index(s) for s in forbid)
    assert kernel_matches_reference(p, 60, seed=7)


@pytest.mark.parametrize("forbid", FORBIDS, ids=lambda f: "+".join(f))
@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_r_cam_40_a_forbidden_stance_is_never_declared(policy, forbid):
    """The PCs' confrontations (duels and team battles, counted by the PC's stance) never use a forbidden
    stance; the adversaries' stances are not restricted."""
    arrays = run_arrays(rich({**POLICIES[policy], "forbid": forbid}), 200, 3)
    for s in forbid:
        k = ("fight", "flee", "hide").index(s)
        assert not arrays["duels_stance"][:, k].any()
    assert arrays["duels_stance"].sum() > 0


ONE_PC = {"party": [{"name": "A", "abilities": {"fight": 10, "flee": 12, "hide": 14}}]}


def test_r_cam_40_best_takes_the_best_allowed_stance():
    """best (R-CAM-40): the highest own value, ties fight, flee, hide. A with fight 10, flee 12, hide 14 declares
    hide; hide forbidden: flee (12 > 10); flee and hide forbidden: fight. By hand, from the reference's choice."""
    from sim.campus.rules import best_stance

    base, bonus, mult = [10, 12, 14], (0, 0, 0), (Fraction(1),) * 3
    assert best_stance(base, bonus, mult) == 2
    assert best_stance(base, bonus, mult, allowed=0b011) == 1
    assert best_stance(base, bonus, mult, allowed=0b001) == 0
    assert best_stance([12, 12, 12], bonus, mult, allowed=0b110) == 1  # tie flee, hide: flee


def test_r_cam_40_fixed_falls_back_to_the_first_allowed_of_fight_flee_hide():
    """fixed hide, hide forbidden: the first allowed stance in the order fight, flee, hide is fight; fight forbidden
    too: flee. One PC against a hound every turn: every duel is in that stance."""
    hound = [{"name": "hound", "abilities": {"fight": 5, "flee": 5, "hide": 5}}]
    for forbid, stance in ((["hide"], 0), (["hide", "fight"], 1)):
        p = params_of(**ONE_PC, adversaries=hound, spawns=[{"adversary": "hound", "locations": ["hall"]}],
                      policy={"stance": "fixed", "stance_value": "hide", "forbid": forbid})
        duels = run_arrays(p, 50, 1)["duels_stance"]
        assert duels[:, stance].sum() > 0 and duels.sum() == duels[:, stance].sum()


RPS = ((0, 0, 1), (1, 0, 0), (0, 1, 0))  # R-CAM-2: flee beats fight, hide beats flee, fight beats hide; equal values


def test_equilibrium_maximin_over_the_allowed_stances():
    """Equal values, so only the stance advantage decides (R-CAM-2; a tie is a loss, R-CAM-4): the 0/1 matrix is
    rock-paper-scissors. All three allowed: the uniform mix guarantees 1/3. Hide forbidden: against a mix of fight
    and flee the adversary's flee beats fight and ties flee, so every mix guarantees 0; the tie-break (the most
    prefer, then the lexicographically largest mix) gives pure fight. Only hide allowed: pure hide, 0."""
    third = Fraction(1, 3)
    assert maximin([RPS]) == ((third, third, third), third)
    assert maximin([RPS], allowed=0b011) == ((1, 0, 0), 0)
    assert maximin([RPS], allowed=0b100) == ((0, 0, 1), 0)


def test_nothing_forbidden_is_the_unrestricted_play():
    """An empty forbid list compiles to all three stances allowed, and plays the same games."""
    a = rich(POLICIES["counter"])
    b = rich({**POLICIES["counter"], "forbid": []})
    assert a.stance_allowed == b.stance_allowed == 7
    x, y = run_arrays(a, 100, 4), run_arrays(b, 100, 4)
    assert all(np.array_equal(x[k], y[k]) for k in x)


@pytest.mark.parametrize("forbid, key", [(["hide", "hide"], "policy.forbid.1"),
                                         (["fight", "flee", "hide"], "policy.forbid")])
def test_bad_forbid_names_the_key(forbid, key):
    with pytest.raises(ScenarioError) as exc:
        compile_params(make(policy={"forbid": forbid}))
    assert key in str(exc.value)
