"""Campus optimal play, second part (issue 37): the solved table played by Monte Carlo (``policy.name =
"optimal"``, ``run --policy optimal``) and where each built-in policy loses most against it."""

from __future__ import annotations

import math

import pytest
from campus_helpers import example, make
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_campus_exact import small_games, two_turns

import sim
from sim.campus.exact import CampusExactRefused
from sim.campus.optimal import (
    Losses,
    compare,
    console_lines,
    exact,  # the kind's exact hook: the exact engine, with the solved table where asked
    policy_variants,
    solve,
    with_policy,
)
from sim.errors import ScenarioError


def on_generated_games(n: int):
    """A test over ``n`` generated one-PC games (test_campus_exact.small_games)."""
    def wrap(fn):
        return settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow])(
            given(small_games())(fn))
    return wrap


def optimal_of(scenario):
    return with_policy(scenario, "optimal")


def assert_table_agrees(scenario, runs: int, seed: int = 5) -> None:
    """Monte Carlo of the solved table (the scalar reference) within 4 SE of its exact value (sim.exact)."""
    s = optimal_of(scenario)
    e = exact(s)
    mc = sim.simulate(s, runs=runs, seed=seed).summary
    assert mc["policy"] == "optimal" and e["policy"] == "optimal"
    for key in ("clear_rate", "game_over_rate", "captured_at_end_rate"):
        se = math.sqrt(max(e[key] * (1 - e[key]), 1 / runs) / runs)
        assert abs(mc[key] - e[key]) <= 4 * se, (key, e[key], mc[key])


def test_R_CAM_40_the_table_plays_the_safe_room_by_hand():
    """The two-turn game of test_campus_exact (a hound at the hall with chance 1/2, R-CAM-20): the cell is never
    given a hound and a free PC there with nobody checking does nothing (R-CAM-53), so the solved table goes there
    and every game clears (clear rate 1, no capture), where the built-in random move is captured 1/12 a turn."""
    s = optimal_of(two_turns(4))
    mc = sim.simulate(s, runs=500, seed=1).summary
    assert mc["clear_rate"] == 1.0 and mc["capture_by_turn"] == [0.0, 0.0]
    assert sim.simulate(two_turns(4), runs=500, seed=1).summary["clear_rate"] < 1.0


def test_the_table_draws_nothing_and_is_the_same_for_any_jobs():
    """R-GEN-7: the table declares without drawing; the per-game results do not depend on n_jobs."""
    s = optimal_of(sim.load_scenario(example("solo_pc_small_map")))
    a = sim.simulate(s, runs=300, seed=2, n_jobs=1).runs
    b = sim.simulate(s, runs=300, seed=2, n_jobs=2).runs
    assert a.equals(b)


def test_the_kernel_refuses_the_table_and_unknown_names_are_refused():
    s = optimal_of(two_turns(0))
    with pytest.raises(ScenarioError, match="reference engine"):
        sim.simulate(s, runs=10, seed=1, engine="kernel")
    with pytest.raises(ScenarioError, match="policy.name"):
        make(policy={"name": "greedy"})


def test_a_party_is_refused_in_one_line_before_any_game():
    s = optimal_of(sim.load_scenario(example("seed_trio_vs_hounds")))
    with pytest.raises(CampusExactRefused, match="party size binds.*policy.name = \"builtin\""):
        sim.simulate(s, runs=10, seed=1)


def test_cli_run_policy_optimal(tmp_path, cli):
    out = tmp_path / "o"
    res = cli("run", two_turns_file(tmp_path), "--policy", "optimal", "--runs", 200, "--out", out, "--quiet")
    assert res.code == 0
    import json

    summary = json.loads((out / "summary.json").read_text())
    assert summary["policy"] == "optimal" and summary["clear_rate"] == 1.0
    bad = cli("run", example("seed_trio_vs_hounds"), "--policy", "optimal", "--runs", 10, "--out", tmp_path / "b")
    assert bad.code == 2 and "party size binds" in bad.err and not (tmp_path / "b" / "summary.json").exists()


def two_turns_file(tmp_path):
    """test_campus_exact's two_turns(4) as a file."""
    path = tmp_path / "two.toml"
    path.write_text('kind = "campus"\n[rules]\nturns = 2\nescape_offset = 4\n'
                    '[[locations]]\nid = "hall"\n[[locations]]\nid = "cell"\ncapture_room = true\n'
                    '[[adversaries]]\nname = "hound"\nabilities = { fight = 8, flee = 8, hide = 8 }\n'
                    'stance = { fight = 1, flee = 1, hide = 1 }\nreward = 1\n'
                    '[[spawns]]\nadversary = "hound"\nturns = [1, 2]\nlocations = ["hall"]\nchance = 0.5\n'
                    '[[party]]\nname = "A"\nabilities = { fight = 10, flee = 5, hide = 5 }\n'
                    '[policy]\nmove = "random"\nstance = "fixed"\nstance_value = "fight"\n')
    return path


@pytest.mark.slow
def test_monte_carlo_of_the_solved_table_agrees_with_its_exact_value_on_the_example():
    assert_table_agrees(sim.load_scenario(example("solo_pc_small_map")), runs=8_000)


@pytest.mark.slow
@on_generated_games(8)
def test_monte_carlo_of_the_solved_table_agrees_on_generated_small_games(scenario):
    assert_table_agrees(scenario, runs=1_500)


# ------------------------------------------------------------------------------------------ where it loses most
@on_generated_games(10)
def test_the_losses_of_every_decision_add_up_to_the_gap(scenario):
    """Over every decision the policy reaches, reach x (optimal value - value of its declaration then optimal
    play) adds up to the gap between optimal play and the policy's exact value (the performance difference
    identity): each decision's loss is >= 0 and none is missed or counted twice."""
    pol, best, _ = solve(scenario)
    for _, variant in policy_variants(scenario)[:3]:
        rows = Losses(pol, variant).run(worst=10**9)
        assert all(x["lost"] > 0 for x in rows)
        assert sum(x["weighted"] for x in rows) == pytest.approx(best - exact(variant)["clear_rate"], abs=1e-9)


def test_where_it_loses_most_in_console_json_and_page(tmp_path):
    s = sim.load_scenario(example("solo_pc_small_map"))
    res = compare(s, worst=3)
    first = res["policies"][0]
    assert len(first["losses"]) == 3 and first["losses"][0]["weighted"] >= first["losses"][1]["weighted"]
    assert sum(x["weighted"] for x in first["losses"]) <= first["gap_points"] / 100 + 1e-9
    assert any("instead of" in line for line in console_lines(res))
    from sim.campus.optimal import write_optimal_report

    write_optimal_report(s, res, tmp_path)
    page = (tmp_path / "optimal.html").read_text()
    assert "Where scenario policy loses most" in page and '"losses"' in (tmp_path / "optimal.json").read_text()


# ------------------------------------------------------------------------------------------ robust mode
def one_turn_duel(weights: dict):
    """One turn (R-CAM-5: free after it, cleared); options = 1 of the hall and the cell (R-CAM-50: each 1/2); a
    hound 8/8/8 always at the hall (R-CAM-20); A has 10 in every stance and meets it at the hall."""
    return make(rules={"turns": 1, "options": 1},
                adversaries=[{"name": "hound", "abilities": {"fight": 8, "flee": 8, "hide": 8}, "stance": weights}],
                spawns=[{"adversary": "hound", "turns": [1, 1], "locations": ["hall"], "chance": 1}],
                party=[{"name": "A", "abilities": {"fight": 10, "flee": 10, "hide": 10}}])


def test_R_CAM_21_robust_mode_by_hand():
    """R-CAM-2..4: A wins unless the hound's stance beats A's (beaten: 10 against 16; beating: 20 against 8; the
    same stance: 10 against 8). Weights fight 2, flee 1, hide 1 (R-CAM-21): the best stance, fight, loses only to
    flee, 1/4: at the hall 3/4, clear rate 1/2 (the cell) + 1/2 x 3/4 = 7/8. Adversaries choosing (R-CAM-7 robust
    reading): they see A's mix x and take the stance that beats A's most likely stance, so A wins 1 - max(x) at
    best 2/3 (the uniform mix): 1/2 + 1/2 x 2/3 = 5/6. With weight on fight and flee only the hound cannot choose
    hide, so A's flee always wins: 1 either way."""
    s = one_turn_duel({"fight": 2, "flee": 1, "hide": 1})
    assert solve(s)[1] == pytest.approx(7 / 8, abs=1e-12)
    assert solve(s, adversary="best")[1] == pytest.approx(5 / 6, abs=1e-9)
    s = one_turn_duel({"fight": 1, "flee": 1, "hide": 0})
    assert solve(s, adversary="best")[1] == pytest.approx(1.0, abs=1e-9)


@on_generated_games(5)
def test_robust_value_is_at_most_the_random_one(scenario):
    """The rules' stance weights are one way for the adversaries to play: choosing well cannot help the PC."""
    _, v, _ = solve(scenario)
    _, vb, _ = solve(scenario, adversary="best")
    assert vb <= v + 1e-9


def test_robust_mixed_spendings_equal_every_split():
    """RobustPolicy.mixed_spends (thresholds and a common floor) gives the value of every split up to the caps."""
    from sim.campus.exact import Rules
    from sim.campus.optimal import RobustPolicy
    from sim.campus.params import compile_params
    from sim.designer.params import with_values

    s = with_values(sim.load_scenario(example("solo_pc_small_map")), {"rules.turns": 5})
    _, vb, _ = solve(s, adversary="best")
    r = Rules(compile_params(s))
    from sim.campus.exact import Turn

    full = RobustPolicy(r, Turn(r))
    full.penalised, full.gp_clip = True, False
    assert full.value(1, (False, r.vit0, 0, full.clip(r.base0), -1)) == pytest.approx(vb, abs=1e-9)


def test_cli_optimal_adversary_best(tmp_path, cli):
    res = cli("optimal", two_turns_file(tmp_path), "--adversary", "best", "--out", tmp_path / "o")
    assert res.code == 0 and "--adversary best" in res.out
    import json

    data = json.loads((tmp_path / "o" / "optimal.json").read_text())
    assert data["adversary_best"]["optimal_value"] <= data["optimal_value"] + 1e-12
    assert "Adversaries choosing their stances" in (tmp_path / "o" / "optimal.html").read_text()


payoff = st.sampled_from([0.0, 0.25, 0.5, 1.0, 0.3, 0.7])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 5).flatmap(lambda n: st.lists(st.lists(payoff, min_size=n, max_size=n),
                                                              min_size=3, max_size=3)), min_size=1, max_size=3))
def test_maximin_float_equals_the_exact_maximin(ms):
    """The robust mode's float solver against the equilibrium policy's exact one (sim.campus.stances.maximin, which
    returns the mean over the matrices)."""
    from sim.campus.stances import guarantee, maximin, maximin_float

    x, v = maximin_float(ms)
    _, exact_v = maximin(ms)
    assert v == pytest.approx(float(exact_v) * len(ms), abs=1e-9)
    assert float(guarantee(ms, x)) == pytest.approx(v, abs=1e-9) and sum(x) == pytest.approx(1.0)


def test_two_pcs_are_refused_with_the_projected_size_in_under_5_s():
    """Two PCs on the one-PC example: refused before the work naming the party size, with a floor on the joint
    game's (turn, state) pairs (each PC alone, its states per turn multiplied), well under 5 s of CPU."""
    import time

    from sim.designer.params import with_values

    one = sim.load_scenario(example("solo_pc_small_map"))
    party = [pc.model_dump(exclude_none=True) for pc in one.party]
    party.append({"name": "PC15", "abilities": {"fight": 8, "flee": 10, "hide": 18}})
    start = time.process_time()
    with pytest.raises(CampusExactRefused) as exc:
        exact(with_values(one, {"party": party}))
    assert time.process_time() - start < 5
    assert exc.value.binds == "party" and exc.value.estimate > 1_000 and "at least" in str(exc.value)
