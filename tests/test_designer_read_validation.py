"""Issue 26, validation: every error of a file, one line each in file order, with a did-you-mean for renamed keys,
misspelled names and --param typos."""

from __future__ import annotations

import pytest
from examples import ROOT

import sim

ROGUE = ROOT / "scenarios" / "escape" / "lone_rogue.toml"

# five mistakes, in this order in the file: run.runs, party.0.class, party.0.scores.dexterity,
# party.0.restraints.arms, rules.tiers.hevy
BAD = """\
kind = "escape"
name = "five mistakes"

[run]
runs = 0
seed = 7

[[party]]
name = "Mei"
class = "Rogue"
level = 5
scores = { str = 10, dexterity = 17, con = 12, int = 14, wis = 12, cha = 10 }
[party.restraints]
arms = "hevy"
legs = "moderate"

[rules.tiers.hevy]
dc = 30
"""


def _errors(tmp_path, cli, text=BAD):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    r = cli("run", path, "--runs", 10, "--out", out)
    err = r.err
    assert r.code == 2 and "Traceback" not in err and not out.exists()
    return path, err.strip().splitlines()


def test_every_error_of_a_file_one_line_each_in_file_order(tmp_path, cli):
    path, lines = _errors(tmp_path, cli)
    keys = ["run.runs", "party.0.class", "party.0.scores.dexterity", "party.0.restraints.arms", "rules.tiers.hevy"]
    assert len(lines) == len(keys), lines
    for line, key in zip(lines, keys, strict=True):
        assert line.startswith(f"error: {path}: {key}: "), line


def test_a_renamed_key_suggests_the_name_and_is_one_line(tmp_path, cli):
    _, lines = _errors(tmp_path, cli)
    dex = [ln for ln in lines if "scores.dex" in ln]
    # dexterity = 15 stands for dex: one line at the unknown key, suggesting the rename
    assert len(dex) == 1 and "party.0.scores.dexterity: unknown key; did you mean 'dex'?" in dex[0], dex


def test_names_suggest_the_nearest_one_and_case_alone_is_named(tmp_path, cli):
    _, lines = _errors(tmp_path, cli)
    by_key = {ln.split(": ")[2]: ln for ln in lines}
    assert by_key["party.0.class"].endswith("given 'Rogue'; did you mean 'rogue'?")
    assert by_key["party.0.restraints.arms"].endswith("given 'hevy'; did you mean 'heavy'?")
    assert by_key["rules.tiers.hevy"].endswith("given 'hevy'; did you mean 'heavy'?")


def test_one_error_is_still_one_line(tmp_path, cli):
    text = ROGUE.read_text(encoding="utf-8").replace('class = "rogue"', 'class = "rouge"')
    _, lines = _errors(tmp_path, cli, text)
    assert len(lines) == 1 and lines[0].endswith("given 'rouge'; did you mean 'rogue'?"), lines


def test_the_error_carries_every_line():
    data = {"kind": "escape", "run": {"runs": 0}, "party": [{"name": "A", "class": "Rogue", "level": 1,
                                                             "scores": {"str": 10}}]}
    with pytest.raises(sim.ScenarioError) as exc:
        sim.scenario.parse_scenario(data, "mem.toml")
    assert len(exc.value.lines) >= 3 and str(exc.value) == "\n".join(exc.value.lines)
    assert exc.value.lines[0].startswith("mem.toml: run.runs: ")


@pytest.mark.parametrize("command", [
    ["tune", str(ROGUE), "--param", "rules.tier.heavy.dc", "--target", "0.5", "--runs", "10"],
    ["sweep", str(ROGUE), "--param", "rules.tier.heavy.dc=14:16", "--runs", "10"],
])
def test_param_typo_names_the_nearest_key(command, cli):
    r = cli(*command)
    assert r.code == 2
    err = r.err.strip().splitlines()
    assert err == [f"error: {ROGUE}: rules.tier.heavy.dc: unknown key; did you mean 'rules.tiers.heavy.dc'?"], err


def test_param_typos_deeper_and_renamed():
    from sim.designer.params import check_param_key

    s = sim.load_scenario(ROGUE)
    for typo, fixed in [("rules.tiers.hevy.dc", "rules.tiers.heavy.dc"),
                        ("party.0.scores.dexterity", "party.0.scores.dex")]:
        with pytest.raises(sim.ScenarioError, match=f"did you mean '{fixed}'"):
            check_param_key(s, typo)
    check_param_key(s, "rules.tiers.heavy.dc")  # a valid key passes
    check_param_key(s, "party.0.scores.dex")
