"""Issue 38 (the designer's read, third round), console items: ``optimal``/``exact`` take ``--param KEY=VALUE``
(issue 35 item 3 too) and ``tune`` prints the next step with it; ``tune`` says exact or Monte Carlo; no "-0.00";
ties in optimal play are printed as ties; report folders of two files cannot collide; every wrong-case value of a
file is reported; a mistyped flag gets a suggestion."""

from __future__ import annotations

import json
import shlex

import pytest
from examples import ROOT

ROGUE = ROOT / "scenarios" / "escape" / "lone_rogue.toml"
HEAVY = "rules.tiers.heavy.dc"


@pytest.fixture
def rogue_dc27(tmp_path):
    """The hand-edited copy a designer had to write before --param: the lone rogue with the heavy DC at 27."""
    path = tmp_path / "rogue_dc27.toml"
    path.write_text(ROGUE.read_text(encoding="utf-8") + "\n[rules.tiers.heavy]\ndc = 27\n", encoding="utf-8")
    return path


# ---- item 1: --param for optimal and exact, and tune's next step


def test_optimal_param_answers_as_the_hand_edited_copy(cli, scratch, rogue_dc27):
    edited = cli("optimal", rogue_dc27, "--json")
    over = cli("optimal", ROGUE, "--param", f"{HEAVY}=27", "--json")
    plain = cli("optimal", ROGUE, "--json")
    assert edited.code == over.code == plain.code == 0, (edited.err, over.err)
    a, b, c = (json.loads(r.out) for r in (edited, over, plain))
    assert a["optimal_value"] == b["optimal_value"] and a["policies"] == b["policies"]
    assert b["optimal_value"] < c["optimal_value"]  # DC 27 is harder than the ladder's heavy DC (18, R-ESC-2)
    text = cli("optimal", ROGUE, "--param", f"{HEAVY}=27").out
    assert text.splitlines()[0].endswith(f"with {HEAVY}=27"), text  # the console says which value it answers


def test_exact_param_answers_as_the_hand_edited_copy(cli, scratch, rogue_dc27):
    edited = cli("exact", rogue_dc27, "--json", "--out", scratch / "a")
    over = cli("exact", ROGUE, "--param", f"{HEAVY}=27", "--json", "--out", scratch / "b")
    assert edited.code == over.code == 0, over.err
    a, b = json.loads(edited.out), json.loads(over.out)
    assert a["escape_rate"] == b["escape_rate"] and a["escape_by_round"] == b["escape_by_round"]


@pytest.mark.parametrize("command", ["optimal", "exact"])
@pytest.mark.parametrize("spec, words", [
    ("rules.tier.heavy.dc=27", "did you mean 'rules.tiers.heavy.dc'"),
    (f"{HEAVY}=abc", "expected a valid integer"),
    (f"{HEAVY}=20:30", "one value per key"),
    (HEAVY, "expected --param KEY=VALUE"),
])
def test_a_bad_param_is_one_line_exit_2(cli, scratch, command, spec, words):
    r = cli(command, ROGUE, "--param", spec)
    err = r.err.strip().splitlines()
    assert r.code == 2 and len(err) == 1 and str(ROGUE) in err[0] and words in err[0], err
    assert not scratch.exists() and not (scratch.parent / "reports").exists()  # nothing written


def test_tune_prints_the_optimal_command_for_the_value_found(cli, scratch):
    r = cli("tune", ROGUE, "--param", HEAVY, "--metric", "escape_by_round@8", "--target", "0.5")
    assert r.code == 0, r.err
    nxt = [line for line in r.out.splitlines() if line.startswith("next step")]
    assert len(nxt) == 1, r.out
    command = shlex.split(nxt[0].partition(": ")[2])
    assert command[:4] == ["python", "-m", "sim", "optimal"] and "--param" in command, command
    value = command[command.index("--param") + 1].partition("=")[2]
    assert [line.split() for line in r.out.splitlines() if line.startswith("value ")] == [["value", value]]
    # the printed command runs as printed and answers for the DC found, under the metric tuned
    follow = cli(*command[3:], "--json")
    assert follow.code == 0, follow.err
    assert json.loads(follow.out)["objective"] == "escape_by_round@8"


# ---- item 2: tune says whether its answer is exact or simulated


def test_tune_table_and_answer_say_exact(cli, scratch):
    r = cli("tune", ROGUE, "--param", HEAVY, "--metric", "escape_by_round@8", "--target", "0.5")
    lines = r.out.splitlines()
    assert any(line.split() == ["method", "exact"] for line in lines), r.out
    answer = [line for line in lines if line.startswith("answer:")]
    assert len(answer) == 1 and answer[0].endswith("(exact)"), r.out


def test_tune_table_and_answer_say_monte_carlo_with_the_interval(cli, scratch):
    r = cli("tune", ROGUE, "--param", HEAVY, "--metric", "escape_by_round@8", "--target", "0.5", "--no-exact",
            "--runs", "2000")
    lines = r.out.splitlines()
    assert any(line.startswith("method") and "Monte Carlo (2,000 runs, seed 7)" in line for line in lines), r.out
    answer = [line for line in lines if line.startswith("answer:")]
    assert len(answer) == 1 and "Monte Carlo, 2,000 runs, seed 7, 95% interval [" in answer[0], r.out
