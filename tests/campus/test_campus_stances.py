"""Campus stance analysis (issue 7): the 3x3 stance game, its exact zero-sum equilibrium, the report section
and the `equilibrium` stance policy in both engines (R-CAM-2, R-CAM-3, R-CAM-4, R-CAM-30, R-CAM-40)."""

from fractions import Fraction
from itertools import combinations, product

import pytest
from campus_fuzz import random_scenario_dict
from campus_helpers import kernel_matches_reference, new_game, params_of, play, play_both, scenario_data, uniforms
from examples import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

import sim
from sim.campus import solve_zero_sum, stance_matrix, stance_table, write_report
from sim.campus.params import compile_params
from sim.campus.reference import Adv, Turn
from sim.campus.rules import FIGHT, FLEE, HIDE
from sim.campus.stances import (
    draw_stance,
    equilibrium_mix,
    guarantee,
    matrix_code,
    matrix_of_code,
    maximin,
    mix_thresholds,
    stance_values,
)
from sim.scenario import parse_scenario

SEED = ROOT / "scenarios" / "campus" / "seed_trio_vs_hounds.toml"
F = Fraction
HALF = F(1, 2)


# ------------------------------------------------------------------ brute-force oracles (STYLE.md 7, icepool bf_*)
def bf_payoff(matrix, x, y) -> Fraction:
    return sum((x[r] * matrix[r][c] * y[c] for r in range(3) for c in range(len(y))), F(0))


def bf_check_equilibrium(matrix, row, col, value) -> None:
    """Exact certificate: both mixes are distributions, the row mix guarantees >= value against every pure
    column and the column mix holds every pure row to <= value (so value is the game's value and both mixes
    are optimal)."""
    n = len(matrix[0])
    for mix in (row, col):
        assert all(v >= 0 for v in mix) and sum(mix) == 1
    for c in range(n):
        assert bf_payoff(matrix, row, [F(int(k == c)) for k in range(n)]) >= value
    for r in range(3):
        assert bf_payoff(matrix, [F(int(k == r)) for k in range(3)], col) <= value


def bf_grid(den: int):
    """Every mix with probabilities in multiples of 1/den."""
    for a in range(den + 1):
        for b in range(den + 1 - a):
            yield (F(a, den), F(b, den), F(den - a - b, den))


# ------------------------------------------------------------------ the stance game (R-CAM-2..4, R-CAM-30)
def seed_models():
    s = sim.load_scenario(SEED)
    pcs = {p.name: p for p in s.party}
    advs = {a.name: a for a in s.adversaries}
    return s, pcs, advs


def test_r_cam_3_stance_values_pin_the_seed_worked_example():
    """R-CAM-3 / R-CAM-30 at the seed's numbers (before any team-battle reduction): duel 1 is PC 14 flee vs a
    hound's flee, 32:16; PC 13's fight with the stance advantage is 76 (duel 3); the executive's fight with the
    advantage is 17 x2 x2 = 68."""
    _, pcs, advs = seed_models()
    v14 = stance_values(pcs["PC14"], advs["hound"])
    assert v14[FLEE][FLEE] == (32, 16)
    assert v14 == (((12, 15), (12, 32), (24, 16)), ((64, 15), (32, 16), (32, 32)), ((13, 30), (26, 16), (13, 16)))
    assert stance_values(pcs["PC13"], advs["hound"])[FIGHT][HIDE] == (76, 16)
    assert stance_values(pcs["PC13"], advs["executive"])[HIDE][FIGHT] == (12, 68)


def test_r_cam_4_stance_matrices_of_the_seed_trio_hand_computed():
    """R-CAM-2/3/4: 1 where the PC's value is higher; PC 14 flee vs hound hide is 32:32, a tie, so 0."""
    _, pcs, advs = seed_models()
    assert stance_matrix(pcs["PC14"], advs["hound"]) == ((0, 0, 1), (1, 1, 0), (0, 1, 0))
    assert stance_matrix(pcs["PC13"], advs["hound"]) == ((1, 0, 1), (1, 0, 0), (0, 1, 0))
    assert stance_matrix(pcs["PC15"], advs["hound"]) == ((0, 0, 1), (1, 0, 0), (1, 1, 1))
    # the executive: fight 34 (68 with the advantage), flee and hide 8 (16)
    assert stance_matrix(pcs["PC13"], advs["executive"]) == ((0, 1, 1), (0, 1, 0), (0, 1, 1))
    assert stance_matrix(pcs["PC14"], advs["executive"]) == ((0, 0, 1), (1, 1, 1), (0, 1, 1))


def test_r_cam_30_advantage_multiplier_only_in_the_advantage_cells_and_boss_tie_loses():
    """R-CAM-30: `when = "advantage"` counts only when the stance beats the opponent's; R-CAM-4 / R-CAM-54: a tie
    is a loss for the PC, also against a boss."""
    d = scenario_data(
        adversaries=[{"name": "b", "abilities": {"fight": 10, "flee": 10, "hide": 10}, "boss": True}],
        party=[{"name": "A", "abilities": {"fight": 10, "flee": 5, "hide": 5},
                "skills": [{"kind": "multiplier", "stances": ["fight"], "value": 3, "when": "advantage"}]}])
    s = parse_scenario(d)
    v = stance_values(s.party[0], s.adversaries[0])
    assert v[FIGHT] == ((10, 10), (10, 20), (60, 10))  # x3 x2 only against hide
    assert stance_matrix(s.party[0], s.adversaries[0])[FIGHT] == (0, 0, 1)  # 10:10 against a boss is a loss


def test_matrix_code_round_trip():
    for code in range(512):
        assert matrix_code(matrix_of_code(code)) == code


# ------------------------------------------------------------------ the exact solver
def test_solve_zero_sum_hand_computed_games():
    """Exact equilibria: the seed's PC 14 vs a hound (fight or flee, 1/2 each), rock-paper-scissors, a diagonal
    game (mix proportional to 1/a_i) and pure games."""
    _, pcs, advs = seed_models()
    row, col, value = solve_zero_sum(stance_matrix(pcs["PC14"], advs["hound"]))
    assert (row, value) == ((HALF, HALF, F(0)), HALF)
    bf_check_equilibrium(stance_matrix(pcs["PC14"], advs["hound"]), row, col, value)
    assert solve_zero_sum([[0, -1, 1], [1, 0, -1], [-1, 1, 0]]) == ((F(1, 3),) * 3, (F(1, 3),) * 3, F(0))
    assert solve_zero_sum([[3, 0, 0], [0, 2, 0], [0, 0, 1]])[::2] == ((F(2, 11), F(3, 11), F(6, 11)), F(6, 11))
    row, _, value = solve_zero_sum(stance_matrix(pcs["PC15"], advs["hound"]))
    assert (row, value) == ((0, 0, 1), 1)  # hide wins against every stance


def test_solver_ties_go_to_the_weights_then_to_fight_flee_hide():
    """Among optimal mixes: the most wins against the adversary's weights, then the order fight, flee, hide."""
    zeros = [[0, 0, 0]] * 3
    assert solve_zero_sum(zeros)[0] == (1, 0, 0)
    assert solve_zero_sum(zeros, prefer=(0, 1, 0))[0] == (0, 1, 0)
    _, pcs, advs = seed_models()
    # PC 13 vs the executive: its fight beats every PC stance (value 0); fight and hide both win 1/2 against
    # the executive's weights (2, 1, 1) -> fight
    t = stance_table(sim.load_scenario(SEED)).set_index(["pc", "adversary"])
    r = t.loc[("PC13", "executive")]
    assert r["value"] == 0 and (r["eq_fight"], r["eq_flee"], r["eq_hide"]) == (1, 0, 0)


def test_bf_solver_on_every_0_1_matrix():
    """bf: all 512 win/lose matrices: the exact certificate holds, the adversary's side gives the same value,
    and no mix on a 1/6 grid guarantees more."""
    grid = list(bf_grid(6))
    for code in range(512):
        m = matrix_of_code(code)
        row, col, value = solve_zero_sum(m)
        bf_check_equilibrium(m, row, col, value)
        assert max(guarantee([m], x) for x in grid) <= value


fractions = st.builds(F, st.integers(-20, 20), st.integers(1, 6))
matrices = st.lists(st.lists(fractions, min_size=3, max_size=3), min_size=3, max_size=3)


@settings(max_examples=150, deadline=None)
@given(matrices)
def test_bf_solver_on_rational_matrices(m):
    """bf: general rational 3x3 zero-sum games: exact equilibrium certificate and minimax equality."""
    row, col, value = solve_zero_sum(m)
    bf_check_equilibrium(m, row, col, value)
    # the column mix is the row player's solution of -M^T: the same value with the sign flipped
    neg_t = [[-m[r][c] for r in range(3)] for c in range(3)]
    assert solve_zero_sum(neg_t)[2] == -value


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 511), min_size=2, max_size=2), st.lists(st.integers(0, 6), min_size=3, max_size=3))
def test_bf_maximin_against_several_adversaries(codes, prefer):
    """bf: the policy's game against two adversaries that each choose their own stance (the one met drawn
    uniformly) is the 3 x 9 game of joint stance profiles. The mix guarantees the value against every pure
    profile, and an optimal profile distribution (support <= 3, found by enumerating column triples) holds
    every pure PC stance to the value; ties go to the highest ``prefer``."""
    ms = [matrix_of_code(c) for c in codes]
    x, value = maximin(ms, prefer)
    joint = [[F(ms[0][r][a] + ms[1][r][b], 2) for a, b in product(range(3), repeat=2)] for r in range(3)]
    for c in range(9):
        assert sum(x[r] * joint[r][c] for r in range(3)) >= value
    best_upper = None
    for cols in combinations(range(9), 3):
        sub = [[joint[r][c] for c in cols] for r in range(3)]
        _, y, v = solve_zero_sum(sub)
        if best_upper is None or v < best_upper[0]:
            best_upper = (v, cols, y)
    v, cols, y = best_upper
    assert v == value
    assert all(sum(joint[r][c] * y[k] for k, c in enumerate(cols)) <= value for r in range(3))
    optimal = [z for z in bf_grid(12) if guarantee(ms, z) / 2 == value]
    score = sum(p * a for p, a in zip(prefer, x, strict=True))
    assert all(sum(p * a for p, a in zip(prefer, z, strict=True)) <= score for z in optimal)


def test_draw_stance_thresholds():
    """The mix is drawn like an adversary's stance (R-CAM-21): stance = (u >= c1) + (u >= c2)."""
    assert mix_thresholds((HALF, F(0), HALF)) == (0.5, 0.5)
    assert [draw_stance((HALF, F(0), HALF), u) for u in (0.0, 0.49, 0.5, 0.99)] == [0, 0, 2, 2]
    assert [draw_stance((F(0), F(1), F(0)), u) for u in (0.0, 0.999)] == [1, 1]
    assert [draw_stance((F(0), F(0), F(1)), u) for u in (0.0, 0.999)] == [2, 2]
    assert [draw_stance((F(1), F(0), F(0)), u) for u in (0.0, 0.999)] == [0, 0]
    thirds = (F(1, 3),) * 3
    assert [draw_stance(thirds, u) for u in (0.3, 0.34, 0.66, 0.67)] == [0, 1, 1, 2]


# ------------------------------------------------------------------ the table and the report
def test_stance_table_of_the_seed_scenario():
    s = sim.load_scenario(SEED)
    t = stance_table(s)
    assert len(t) == 6 and list(t["pc"]) == ["PC13", "PC13", "PC14", "PC14", "PC15", "PC15"]
    r = t.set_index(["pc", "adversary"]).loc[("PC14", "hound")]
    assert [r[f"flee_vs_{b}"] for b in ("fight", "flee", "hide")] == [1, 1, 0]
    assert (r["eq_fight"], r["eq_flee"], r["eq_hide"], r["value"]) == (HALF, HALF, 0, HALF)
    # against the hound's uniform weights: fight 1/3, flee 2/3, hide 1/3 -> counter plays flee
    assert (r["vs_weights_fight"], r["vs_weights_flee"], r["vs_weights_hide"]) == (F(1, 3), F(2, 3), F(1, 3))
    assert r["best_vs_weights"] == "flee" and r["best_vs_weights_win"] == F(2, 3)
    for _, row in t.iterrows():
        m = [[row[f"{a}_vs_{b}"] for b in ("fight", "flee", "hide")] for a in ("fight", "flee", "hide")]
        bf_check_equilibrium(m, [row[f"eq_{a}"] for a in ("fight", "flee", "hide")],
                             [row[f"adv_eq_{a}"] for a in ("fight", "flee", "hide")], row["value"])


def test_report_has_the_stance_section_and_heat_map(tmp_path):
    s = sim.load_scenario(SEED)
    res = sim.simulate(s, runs=100, seed=1)
    page = write_report(res, tmp_path).read_text()
    assert "Stance analysis" in page and "stance_game_value.png" in page
    assert (tmp_path / "stance_game_value.png").stat().st_size > 0
    assert "Win rate per stance" in page  # the existing sections stay
    empty = parse_scenario(scenario_data())
    page = write_report(sim.simulate(empty, runs=20, seed=1), tmp_path / "e").read_text()
    assert "No adversary templates" in page


# ------------------------------------------------------------------ the `equilibrium` stance policy
HOUND = {"name": "hound", "abilities": {"fight": 15, "flee": 15, "hide": 15}, "bonus": {"flee": 1, "hide": 1},
         "reward": 2}
PC14 = {"name": "PC14", "abilities": {"fight": 9, "flee": 13, "hide": 10},
        "skills": [{"kind": "bonus", "value": 3}, {"kind": "multiplier", "stances": ["flee"], "value": 2}]}


def test_policy_validation_accepts_equilibrium_only():
    s = parse_scenario(scenario_data(policy={"stance": "equilibrium"}))
    assert s.policy.stance == "equilibrium"
    with pytest.raises(sim.ScenarioError) as exc:
        parse_scenario(scenario_data(policy={"stance": "equilibrum"}), "bad.toml")
    assert exc.value.key.startswith("policy.stance")
    # the mixed-strategy draw is one uniform per PC facing someone; `best` draws nothing for the stance
    for stance, drawn in (("equilibrium", True), ("best", False)):
        p = params_of(adversaries=[HOUND], spawns=[{"adversary": "hound", "locations": ["hall"]}],
                      policy={"stance": stance})
        u = uniforms(p)
        play(p, new_game(p), 1, u)
        assert (("pc_stance", 0) in u.labels) == drawn


@pytest.mark.parametrize("u_stance,u_hound,stance,status", [
    (0.3, 0.9, FIGHT, "free"),  # fight 24 beats hide 16
    (0.6, 0.9, FLEE, "captured"),  # flee 32 ties hide 32: a loss (R-CAM-4)
    (0.6, 0.0, FLEE, "free"),  # flee 64 beats fight 15
])
def test_equilibrium_policy_draws_from_the_mix_with_early_ears(u_stance, u_hound, stance, status):
    """Policy `equilibrium` with early ears: the seed's PC 14 against a hound seen at its destination plays
    fight or flee, 1/2 each (the game's equilibrium), drawn with its stance draw; both engines agree."""
    p = params_of(adversaries=[HOUND], spawns=[{"adversary": "hound", "locations": ["hall"]}],
                  party=[{**PC14, "skills": [*PC14["skills"], {"kind": "early_ears"}]}],
                  policy={"stance": "equilibrium"})
    g = new_game(p)
    play_both(p, g, 1, uniforms(p, pc_move=[0.0], pc_stance=[u_stance], adv_stance={(0, 0): u_hound}))
    expected = [0, 0, 0]
    expected[stance] = 1
    assert g.duels_stance == expected
    assert g.status == [0 if status == "free" else 1]


def test_equilibrium_policy_without_information_uses_the_templates_of_the_turn():
    """Without early ears: the mix against the templates the schedule can place this turn, each once; with
    none scheduled the PC plays `best` (flee 32 here)."""
    boss = {"name": "boss", "abilities": {"fight": 30, "flee": 5, "hide": 5}, "boss": True}
    p = params_of(adversaries=[HOUND, boss],
                  spawns=[{"adversary": "hound", "turns": [3, 12], "count": 2, "locations": ["hall"]},
                          {"adversary": "hound", "turns": [4, 5], "chance": 0.5},
                          {"adversary": "boss", "turns": [5, 12], "chance": 0.5}],
                  party=[PC14], policy={"stance": "equilibrium"})
    s = p.scenario
    m_hound = stance_matrix(s.party[0], s.adversaries[0])
    m_boss = stance_matrix(s.party[0], s.adversaries[1])
    g = new_game(p)

    def chosen(t, u):
        turn = Turn(p, g, t, uniforms(p, pc_stance=[u]))
        return turn.choose_stance(0, 0, [], False)

    assert [chosen(1, u) for u in (0.0, 0.5, 0.99)] == [FLEE] * 3  # nothing scheduled: best
    assert [chosen(3, u) for u in (0.3, 0.6)] == [FIGHT, FLEE]  # the hound's equilibrium (1/2, 1/2, 0)
    w = p.adv_wnum[0]  # the tie-break: wins weighted by the stance weights, as counter counts them
    prefer = [sum(int(w[c]) * (m_hound[s][c] + m_boss[s][c]) for c in range(3)) for s in range(3)]
    mix = equilibrium_mix([matrix_code(m_hound), matrix_code(m_boss)], prefer)
    assert mix == maximin([m_hound, m_boss], prefer)[0]
    assert [chosen(5, u) for u in (0.1, 0.5, 0.9)] == [draw_stance(mix, u) for u in (0.1, 0.5, 0.9)]
    # a seen adversary takes precedence when the party has early ears (here: passed in directly)
    a = Adv(p.S - 1, 0, (30, 5, 5))
    assert Turn(p, g, 5, uniforms(p, pc_stance=[0.9])).choose_stance(0, 0, [a], True) == draw_stance(
        solve_zero_sum(m_boss, prefer=[int(p.adv_wnum[p.S - 1][c]) for c in range(3)])[0], 0.9)


@pytest.mark.parametrize("seed", range(12))
def test_equilibrium_reference_equals_kernel_random_scenarios(seed):
    """Stance policy `equilibrium`: random valid scenarios (teams, bosses, miso bombs, missions, advantage
    multipliers), same draws, identical games in both engines."""
    d = random_scenario_dict(1000 + seed)
    d["policy"]["stance"] = "equilibrium"
    assert kernel_matches_reference(compile_params(parse_scenario(d)), 25, seed)


def test_equilibrium_example_scenario_engines_agree():
    s = sim.load_scenario(SEED.parent / "stance_mix_vs_counter.toml")
    assert s.policy.stance == "equilibrium"
    a = sim.simulate(s, runs=80, seed=2)
    b = sim.simulate(s, runs=80, seed=2, engine="reference")
    assert a.runs.equals(b.runs) and a.summary == b.summary
