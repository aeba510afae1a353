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


# ---- item 3: no "-0.00" on any page or console


def test_values_that_round_to_zero_have_no_sign():
    from sim.labels import fixed, format_estimate, format_value, points
    from sim.report import fmt_exact, fmt_pct

    tiny = -1.1e-14  # best - value of two equal exact values, as floating point leaves it
    assert fixed(tiny) == "0.00" and fixed(tiny, 1, signed=True) == "0.0" and points(tiny) == "0.00 pp"
    assert fixed(-0.006) == "-0.01" and fixed(0.5, 1, signed=True) == "+0.5"  # real signs stay
    assert format_estimate(tiny) == "0.00%" and format_value("escape_rate", tiny) == "0.0%"
    assert fmt_exact(tiny) == "0.00%" and fmt_pct(tiny, (tiny, 1e-3)) == "0.00% (0.00–0.10%)"


def test_optimal_console_and_page_never_show_negative_zero(tmp_path):
    import sim
    from sim.escape.optimal import compare, console_lines, write_optimal_report

    result = compare(sim.load_scenario(ROGUE))
    arms_first = next(r for r in result["policies"] if r["policy"] == "arms_first")
    # arms_first is optimal here (its gap is 1e-14); the subtraction can as well land below zero
    assert abs(arms_first["gap_points"]) < 1e-9
    arms_first["gap_points"] = -1.1e-14
    assert "-0.00" not in "\n".join(console_lines(result))
    write_optimal_report(sim.load_scenario(ROGUE), result, tmp_path)
    page = (tmp_path / "optimal.html").read_text(encoding="utf-8")
    assert "arms_first leaves 0.00 points on the table" in page and "-0.00" not in page


# ---- item 4: ties in optimal play are printed as ties


def _tied_rogue(tmp_path, text=""):
    """Mei with str = dex = int = 14 (modifier +2 each, R-ESC-4: any of the three may struggle) in heavy arms
    only: a struggle of the arms with str, dex or int has the same chance, so the three first actions tie."""
    body = ROGUE.read_text(encoding="utf-8")
    body = body.replace("scores = { str = 10, dex = 17, con = 12, int = 14, wis = 12, cha = 10 }",
                        "scores = { str = 14, dex = 14, con = 12, int = 14, wis = 12, cha = 10 }")
    body = body.replace('legs = "moderate"\n', text)
    path = tmp_path / "tied.toml"
    path.write_text(body, encoding="utf-8")
    return path


def test_equal_first_actions_are_named_as_a_tie(cli, tmp_path):
    r = cli("optimal", _tied_rogue(tmp_path))
    assert r.code == 0, r.err
    assert "optimal first actions: Mei struggles arms (str or dex or int, equal)" in r.out, r.out


def test_a_clear_best_action_is_named_alone(cli, tmp_path):
    path = _tied_rogue(tmp_path)
    path.write_text(path.read_text(encoding="utf-8").replace("dex = 14", "dex = 16"), encoding="utf-8")
    r = cli("optimal", path)  # dex 16 (+3) beats str and int (+2): no tie
    assert "optimal first actions: Mei struggles arms (dex)\n" in r.out, r.out


def test_name_first_actions_within_1e_12():
    from types import SimpleNamespace

    from sim.escape.optimal import name_first_actions
    from sim.escape.state import Action

    p = SimpleNamespace(names=("Mei", "Bo"), n_chars=2)
    arms_str, arms_dex = Action("struggle", slot=0, ability=0), Action("struggle", slot=0, ability=1)
    legs_dex = Action("struggle", slot=3, ability=1)  # SLOTS: arms 0, legs 3
    choices = [(arms_str, legs_dex), (arms_dex, legs_dex), (legs_dex, arms_dex)]
    # 0.5 and 0.5 + 5e-13 are equal to 1e-12: named in the order of the choices (str before dex), not by which
    # of the two is larger by rounding (the compiled and the reference-driven engines round differently)
    assert name_first_actions(p, choices, [0.5, 0.5 + 5e-13, 0.4]) == [
        "Mei struggles arms (str or dex, equal)", "Bo struggles legs (dex)"]
    assert name_first_actions(p, choices, [0.5 + 5e-13, 0.5, 0.4])[0] == "Mei struggles arms (str or dex, equal)"
    assert name_first_actions(p, choices, [0.5, 0.5 + 2e-12, 0.5 + 2e-12]) == [
        "Mei struggles arms (dex) or Mei struggles legs (dex) (equal)",
        "Bo struggles legs (dex) or Bo struggles arms (dex) (equal)"]


# ---- item 12: two files with the same name never share a report folder silently


def test_two_files_with_one_name_get_two_report_folders(cli, scratch, rogue_dc27):
    first = cli("run", rogue_dc27, "--runs", 200, "--quiet")
    assert first.code == 0 and first.err == "", first.err
    folder = scratch.parent / "reports" / "lone_rogue_in_heavy_arms"
    tuned_page = (folder / "report.html").read_text(encoding="utf-8")
    second = cli("run", ROGUE, "--runs", 200, "--quiet")
    assert second.code == 0
    # the tuned copy's report is still there, untouched; the original's went to its own folder, and the console
    # says where and why
    assert (folder / "report.html").read_text(encoding="utf-8") == tuned_page
    own = scratch.parent / "reports" / "lone_rogue_in_heavy_arms--lone_rogue"
    assert (own / "report.html").exists()
    assert f"holds the report of {rogue_dc27.resolve()}" in second.err and str(own.relative_to(scratch.parent)) \
        in second.err, second.err
    # the same file again: its own folder, and the console says that an earlier report was replaced
    again = cli("run", ROGUE, "--runs", 200, "--quiet")
    assert "replaced the earlier report.html" in again.err, again.err
    # --out into the other file's folder replaces it, and says whose report it replaced
    forced = cli("run", ROGUE, "--runs", 200, "--quiet", "--out", folder)
    assert f"replaced the report of {rogue_dc27.resolve()}" in forced.err, forced.err


# ---- item 13: every wrong value of a file at once, the policy name among them


def test_two_wrong_case_values_are_both_reported(cli, tmp_path):
    path = tmp_path / "cased.toml"
    path.write_text(ROGUE.read_text(encoding="utf-8").replace('arms = "heavy"', 'arms = "Heavy"')
                    + '\n[policy]\nname = "Greedy"\n', encoding="utf-8")
    r = cli("validate", path)
    err = r.err.strip().splitlines()
    assert r.code == 2 and len(err) == 2, err
    assert "party.0.restraints.arms" in err[0] and err[0].endswith("given 'Heavy'; did you mean 'heavy'?")
    assert "policy.name" in err[1] and err[1].endswith("given 'Greedy'; did you mean 'greedy'?")


# ---- item 14: a mistyped flag gets a suggestion; --jobs says what README says (threads, processes for Python)


@pytest.mark.parametrize("argv, hint", [
    (["run", str(ROGUE), "--sead", "3"], "(--sead: did you mean --seed?)"),
    (["sweep", str(ROGUE), "--param", f"{HEAVY}=18", "--jbos", "2"], "(--jbos: did you mean --jobs?)"),
])
def test_a_mistyped_flag_gets_a_suggestion(capsys, argv, hint):
    from sim.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2 and len(err) == 1 and err[0].endswith(hint), err


def test_jobs_help_says_threads_as_the_readme_does(capsys):
    from sim.cli import main

    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "run their chunks in J threads of one process" in readme
    for command in ("run", "sweep", "tune", "compare"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "threads of one process for the compiled engines" in text and "parallel processes" not in text, \
            command


# ---- item 11: the run's summary says why the browser tests were skipped


def test_the_summary_says_why_browser_tests_were_skipped(pytestconfig):
    from types import SimpleNamespace

    # the suite's own conftest.py as pytest loaded it (each test folder has a conftest module of that name)
    conftest = next(p for p in pytestconfig.pluginmanager.get_plugins()
                    if getattr(p, "__file__", None) == str(ROOT / "tests" / "conftest.py"))

    lines = []
    reporter = SimpleNamespace(
        stats={"skipped": [SimpleNamespace(longrepr=("tests/x.py", 3, "Skipped: headless Chromium not available "
                                                     "(.ci/run installs it): chromium=None, playwright=yes")),
                           SimpleNamespace(longrepr=("tests/y.py", 9, "Skipped: headless Chromium not available "
                                                     "(apt-get install chromium; pip install playwright)")),
                           SimpleNamespace(longrepr=("tests/z.py", 1, "Skipped: no CJK font installed"))]},
        write_line=lambda text, **markup: lines.append(text))
    conftest.pytest_terminal_summary(reporter, 0, None)
    assert len(lines) == 1 and lines[0].startswith("2 browser tests skipped: headless Chromium not available")
    assert ".ci/run" in lines[0]
    reporter.stats["skipped"] = reporter.stats["skipped"][2:]
    conftest.pytest_terminal_summary(reporter, 0, None)
    assert len(lines) == 1  # no browser test skipped: nothing said
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "`.ci/run` gets Chromium by installing Debian's package" in readme
