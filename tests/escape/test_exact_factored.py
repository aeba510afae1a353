"""The factored round of the compiled exact engine (issue 35 item 2, sim/escape/exact_fast.py): within a round the
characters' random events are enumerated group by group (a group: characters joined by R-ESC-14 strength of will,
an R-ESC-10 item used on a teammate, or the R-ESC-10 searches sharing one pool), and the next states are the
combinations of the groups' outcomes. It must give the same answers as the plain odometer (every combination of
the round's outcomes, ``FACTORED = False``) and as the reference-driven engine, to 1e-12, under greedy (R-ESC-20),
arms_first and team (R-ESC-21); and the couplings it lists must be all there are (no state falls back to the plain
odometer: a fallback means a replay showed a character outside its group moving)."""

from __future__ import annotations

import pytest
from escape_helpers import EXAMPLES, character, scenario
from exact_cases import POLICIES, small_parties, with_policy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from test_exact_compiled import CLASSES, SLOT_NAMES, TIERS, assert_same, probes

import sim
from sim.errors import ExactUnsupported
from sim.escape import exact_fast as F
from sim.escape.exact import ExactBudgetExceeded, _refusal
from sim.escape.params import compile_params


def search_of(s, factored: bool) -> F.CompiledSearch:
    """The compiled engine's search; factored with every state of more than one group factored
    (``FACTOR_FROM`` 0: the small cases here would otherwise play the plain odometer), or plain."""
    p = compile_params(s)
    old = F.FACTOR_FROM
    F.FACTOR_FROM = 0
    try:
        search = F.CompiledSearch(p, s.policy.name, F.FAST_MAX_STATES, F.FAST_MAX_BRANCHES, factored=factored)
        search.run(_refusal(search, F.FAST_MAX_STATES, F.FAST_MAX_BRANCHES))
    finally:
        F.FACTOR_FROM = old
    return search


def summary(s, search) -> dict:
    from sim.escape.exact import exact_summary

    return exact_summary(s, search.p, search.escaped_at, search.caught, search.timeout, search.engine_block())


def check(s, reference: bool = True) -> tuple[F.CompiledSearch, F.CompiledSearch]:
    """Factored == plain == reference-driven (where it answers) to 1e-12; no fallback. Where the plain odometer
    refuses at its default budgets, the case is skipped."""
    try:
        plain = search_of(s, False)
    except ExactUnsupported:
        pytest.skip("beyond the plain odometer's default budgets")
    fac = search_of(s, True)
    a, b = summary(s, fac), summary(s, plain)
    assert_same(a, b)
    if reference:
        try:
            ref = sim.exact(s, engine="reference")
        except ExactUnsupported:
            ref = None
        if ref is not None:
            assert_same(a, ref)
    assert fac.fallbacks == 0, "a coupling the factored round does not list (exact_fast.couplings)"
    return fac, plain


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.stem)
def test_examples_factored_agree(path, policy):
    s = with_policy(sim.load_scenario(path), policy)
    if len(s.party) > 4:
        pytest.skip("a party of five: Monte Carlo only")
    if path.stem == "party_under_watch":  # beyond any budget whole: its first two rounds, test_watch_two_rounds
        pytest.skip("party_under_watch: see test_watch_two_rounds")
    check(s, reference=False)  # the plain odometer against the reference-driven engine: test_exact_compiled.py


def watch(rounds: int = 2):
    s = sim.load_scenario(EXAMPLES / "party_under_watch.toml")
    return s.model_copy(update={"run": s.run.model_copy(update={"max_rounds": rounds})})


def mass(e: dict) -> float:
    return e["escape_rate"] + e["caught_rate"] + e["timeout_rate"]


@pytest.mark.parametrize("policy", POLICIES)
def test_watch_two_rounds(policy):
    """party_under_watch over two rounds: the plain odometer adds 13.4 million probabilities (its total is 1 to
    about 1e-11), the factored round about 116,000 (1 to about 1e-14): they agree to the plain sum's rounding."""
    s = with_policy(watch(), policy)
    fac = search_of(s, True)
    F.FAST_MAX_BRANCHES, old = 10**8, F.FAST_MAX_BRANCHES  # the plain odometer's round 2: 13.4 M replays
    try:
        plain = search_of(s, False)
    finally:
        F.FAST_MAX_BRANCHES = old
    a, b = summary(s, fac), summary(s, plain)
    assert abs(mass(a) - 1) < 1e-13 and abs(mass(b) - 1) < 1e-10
    for k in ("escape_rate", "caught_rate", "timeout_rate"):
        assert a[k] == pytest.approx(b[k], abs=1e-10, rel=0)
    assert fac.fallbacks == 0


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", sorted(small_parties()))
def test_small_parties_factored_agree(name, policy):
    check(with_policy(small_parties()[name], policy))


def coupled_probes() -> dict:
    """Parties where each listed coupling acts, several times a run."""
    return {
        # R-ESC-14 strength of will: a paladin free of the goal's slots, its fingers bound (no untie, no assist,
        # R-ESC-7), guides a bound teammate every round (R-ESC-20 step 4) and recovers cha mod composure when the
        # teammate succeeds, while a stimulus wears its composure down
        "paladin_helps": scenario(
            dict(character("Pa", "paladin", 3, {"fingers": "light"}, str=14, cha=16), composure=5),
            character("Fi", "fighter", 3, {"arms": "severe", "legs": "heavy"}, str=15),
            dict(character("Ro", "rogue", 3, {"arms": "heavy"}, dex=15), composure=4),
            goal={"slots": ["arms", "legs"]}, stimulus={"damage": "1d3"}, overload={"dazed_rounds": 1},
            run={"max_rounds": 6}),
        # R-ESC-10 one pool: three searchers draw from one knife and one pin; an item used on a teammate
        "three_searchers": scenario(
            character("A", "rogue", 2, {"arms": "complete", "legs": "light"}, dex=14, wis=14),
            character("B", "fighter", 2, {"arms": "complete"}, str=14, wis=13),
            character("C", "cleric", 2, {"fingers": "light", "arms": "heavy"}, wis=15),
            search={"dc": 11, "items": [{"name": "knife", "kind": "release", "max_tier": "complete", "count": 1},
                                        {"name": "pin", "kind": "bonus", "value": 2, "weight": 2, "count": 1}]},
            stimulus={"damage": "1d2"}, run={"max_rounds": 6}),
    }


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", sorted({**probes(), **coupled_probes()}))
def test_probes_factored_agree(name, policy):
    check(with_policy({**probes(), **coupled_probes()}[name], policy))


def test_the_factored_round_replays_fewer_and_counts_its_work():
    """party_under_watch's round 1: every character struggles, nobody helps or searches, so four groups of one.
    By hand (R-GEN-4, R-ESC-11, R-ESC-34): each character's check has 2 outcomes and the 1d3 stimulus 3; Briar
    struggles with a moderate harness on (1d4, 4 more); no composure can reach 0 in round 1.
    Plain: 2x3 x 2x3x4 x 2x3 x 2x3 = 5,184 replays. Factored: the pinned pass that picks the states to factor
    (1), the pinned replay that reads the declarations (1) and 6 + 24 + 6 + 6 = 42 group replays. The distinct
    outcomes: 2 x 3 composures each, and
    Briar's damage 1d3 + 1d4 has 6 sums: 6 x 12 x 6 x 6 = 2,592 combinations, the 2,592 states after round 1."""
    s = watch()
    fac = search_of(s, True)
    F.FAST_MAX_BRANCHES, old = 10**8, F.FAST_MAX_BRANCHES
    try:
        plain = search_of(s, False)
    finally:
        F.FAST_MAX_BRANCHES = old
    assert plain.replays == 5_184 + 2_592 * 5_184
    p = compile_params(s)
    one = F.CompiledSearch(p, "greedy", 10**7, 10**9, factored=True)
    first = one._factored((one.R, one.keys, one.probs, one.policy, 0, True, one.st, one.sc, one.b, p.n_chars,
                           p.n_items, 10**7, 10**9))
    out, played, replays = first[0], first[5], first[8]
    assert len(out) == 2_592 and replays == 1 + 1 + 42 and played == replays + 2_592
    assert fac.replays < plain.replays / 40


def test_budgets_project_the_factored_work():
    """party_under_watch at the default budgets: refused before round 3 in about a second; the projection is
    round 2's work per state (pinned and group replays plus combinations) times round 3's 111,375 states alive."""
    with pytest.raises(ExactBudgetExceeded) as info:
        sim.exact(sim.load_scenario(EXAMPLES / "party_under_watch.toml"))
    exc = info.value
    assert exc.projected and exc.binds == "branches" and exc.round == 3 and exc.states >= 113_968
    per_state = (exc.played - 2_636) / 2_592  # round 1's work: 2,636 (test above); round 2's 2,592 states
    assert exc.branches == pytest.approx(exc.played + 111_375 * per_state, abs=2)  # round 3's states alive
    assert exc.projected_seconds is not None and "--max-branches 10,000,000" in str(exc)


@hs.composite
def parties(draw):
    """Two to four characters, couplings likely: paladins, searches with a small pool, items, attention."""
    n = draw(hs.integers(2, 4))
    party = []
    for k in range(n):
        slots = draw(hs.lists(hs.sampled_from(SLOT_NAMES), min_size=1, max_size=2, unique=True))
        restraints = {s: draw(hs.sampled_from(TIERS)) for s in slots}
        ch = character("ABCD"[k], draw(hs.sampled_from(CLASSES + ("paladin", "paladin"))), draw(hs.integers(1, 5)),
                       restraints, str=draw(hs.integers(8, 17)), dex=draw(hs.integers(8, 17)),
                       int=draw(hs.integers(8, 17)), wis=draw(hs.integers(8, 17)), cha=draw(hs.integers(8, 17)))
        if draw(hs.booleans()):
            ch["composure"] = draw(hs.integers(1, 5))
        party.append(ch)
    sections = {"run": {"max_rounds": draw(hs.integers(1, 6 - n))},
                "rules": {"volume1_features": draw(hs.booleans()), "legs_hinder": draw(hs.booleans())},
                "policy": {"name": draw(hs.sampled_from(POLICIES))}}
    if draw(hs.booleans()):
        sections["stimulus"] = {"damage": draw(hs.sampled_from(["1d2", "1d3"] if n < 4 else ["1d2"]))}
    if n < 4 and draw(hs.booleans()):
        sections["harness"] = {"damage": "1d2"}
    if draw(hs.booleans()):
        sections["overload"] = {"dazed_rounds": draw(hs.integers(0, 1))}
    if draw(hs.booleans()):
        sections["attention"] = {"limit": draw(hs.integers(3, 12)), "assist": 2, "guide": 1, "search": 1,
                                 "per_round": draw(hs.integers(0, 1))}
    if draw(hs.booleans()):
        sections["search"] = {"dc": draw(hs.integers(6, 14)),
                              "items": [{"name": "knife", "kind": "release", "max_tier": "heavy", "count": 1},
                                        {"name": "pin", "kind": "bonus", "value": 1, "count": 1}]}
    return scenario(*party, **sections)


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(parties())
def test_generated_parties_factored_agree(s):
    check(s, reference=False)
