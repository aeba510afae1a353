"""Bad input: one clear message naming file and key, exit status 2, no traceback, nothing written."""

from __future__ import annotations

import pytest
from examples import ROOT

import sim
from sim.cli import main

GOOD = """kind = "escape"
name = "ok"
[[party]]
name = "A"
class = "rogue"
scores = { str = 10, dex = 16, con = 10, int = 10, wis = 10, cha = 10 }
[party.restraints]
arms = "light"
"""

BAD = {
    "malformed_toml": ("kind = \"escape\"\n[[party]\nname = 1", "malformed TOML"),
    "missing_kind": ("name = 'x'", "kind: required key is missing"),
    "unknown_kind": ("kind = 'escpae'", "did you mean 'escape'"),
    "unknown_top_key": (GOOD + "\n[atention]\nlimit = 3\n", "atention: unknown key; did you mean 'attention'"),
    "unknown_nested_key": (GOOD.replace("[party.restraints]", "perceptoin = true\n[party.restraints]"),
                           "party.0.perceptoin: unknown key; did you mean 'perception'"),
    "wrong_type": (GOOD.replace('name = "A"', 'name = "A"\nlevel = "five"'), "party.0.level: expected a valid integer"),
    "out_of_range": (GOOD.replace("dex = 16", "dex = 99"), "party.0.scores.dex: expected less than or equal to 30"),
    "unknown_tier": (GOOD.replace('arms = "light"', 'arms = "tight"'), "party.0.restraints.arms"),
    "unknown_slot": (GOOD.replace('arms = "light"', 'tail = "light"'), "party.0.restraints.tail: unknown key"),
    "unknown_class": (GOOD.replace('"rogue"', '"necromancer"'), "party.0.class"),
    "bad_dice": (GOOD + '\n[stimulus]\ndamage = "2d"\n', "stimulus.damage"),
    "dice_eval_attempt": (GOOD + '\n[rest]\nrecovery = "__import__(\'os\')"\n', "rest.recovery"),
    "negative_runs": (GOOD + "\n[run]\nruns = -5\n", "run.runs: expected greater than or equal to 1"),
    "empty_party": ('kind = "escape"\nparty = []\n', "party"),
    "duplicate_names": (GOOD + GOOD[GOOD.index("[[party]]"):], "party.1.name: expected unique character names"),
    "bad_policy": (GOOD + '\n[policy]\nname = "grredy"\n', "policy.name"),
    "missing_policy_module": (GOOD + '\n[policy]\nname = "no_such_mod:fn"\n', "policy.name: cannot import"),
    "not_utf8": (b"kind = \"escape\"\nname = \"\xff\xfe\"\n", "not valid UTF-8"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_exits_2_with_one_line_naming_file_and_key(case, tmp_path, cli):
    text, expected = BAD[case]
    path = tmp_path / "bad.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    out = tmp_path / "out"
    r = cli("run", path, "--runs", 10, "--out", out)
    err = r.err
    assert r.code == 2
    assert str(path) in err and expected in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()  # nothing written


def test_scenario_error_is_raised_by_the_api(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(GOOD.replace("dex = 16", "dex = 0"))
    with pytest.raises(sim.ScenarioError, match="party.0.scores.dex"):
        sim.load_scenario(path)


def test_missing_file_and_validate_command(tmp_path, cli):
    assert cli("validate", tmp_path / "nope.toml").code == 2
    good = tmp_path / "good.toml"
    good.write_text(GOOD)
    valid = cli("validate", good)
    assert valid.code == 0
    assert "ok" in valid.out


def test_bad_command_line_flags_exit_2(tmp_path):
    good = tmp_path / "good.toml"
    good.write_text(GOOD)
    with pytest.raises(SystemExit) as exc:
        main(["run", str(good), "--runs", "zero"])
    assert exc.value.code == 2


def test_exact_of_a_party_of_five_is_a_clear_error(tmp_path, cli):
    path = tmp_path / "party.toml"
    member = GOOD[GOOD.index("[[party]]"):]
    path.write_text(GOOD + "".join(member.replace('name = "A"', f'name = "{n}"') for n in "BCDE"))
    r = cli("exact", path)
    assert r.code == 2
    err = r.err
    assert "party.toml" in err and "exact analysis supports parties of 1 to 4 characters" in err


def test_examples_validate():
    root = ROOT / "scenarios"
    for path in sorted(root.glob("escape/*.toml")):
        assert sim.load_scenario(path).kind == "escape"
