"""Issue 45 item 3: schema-valid files that hang. Every exact computation ``run`` adds beside the simulation, and every
search space, is counted against a stated limit before the work: refused (``exact``, ``fit``) or skipped with one line
(the exact column beside ``run``) within seconds. Scenario files drawn from each kind's own JSON Schema
(tests/schema_strategy.py) go through validate, run and exact with a time limit per command."""

from __future__ import annotations

import importlib
import signal
import time
from contextlib import contextmanager

import pytest
import tomlkit
from hypothesis import given, settings
from hypothesis import strategies as st
from schema_strategy import from_schema, load_schema

import sim
from sim.cli import main

X = importlib.import_module("sim.restraint.exact")

KINDS = ("escape", "restraint", "campus", "formation")
# the refusals themselves take a few seconds at most (MAX_EXACT_WORK ~ 4 s); a command may also compile a numba
# signature the warm-up did not (about 10 s of CPU on the CI machine, seen failing a 10 s limit once under load),
# so the limit sits well above both and far below the minutes a hang takes
SECONDS_PER_COMMAND = 30.0

HUGE_COMPOSURE = """
kind = "restraint"
name = "huge composure"
[run]
rounds = 3
runs = 200
[target]
class = "ranger"
scores = { str = 12, dex = 16, con = 14, int = 10, wis = 14, cha = 8 }
condition = "none"
[composure]
stimulus = "1d6"
rounds = 20
[[composure.party]]
name = "wizard"
class = "wizard"
level = 5
composure = 63434
scores = { str = 8, dex = 14, con = 14, int = 17, wis = 12, cha = 10 }
"""


class TimeLimit(BaseException):  # a BaseException: the command's own `except Exception` cannot swallow it
    pass


@contextmanager
def time_limit(seconds: float):
    """Interrupt the block after ``seconds`` of this process's CPU time (a shared, busy machine stretches the
    clock on the wall, not the work)."""
    def expire(signum, frame):
        raise TimeLimit(f"still busy after {seconds} s of CPU time")

    old = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    except TimeLimit as exc:  # reported as a plain test failure (pytest would not report a BaseException)
        pytest.fail(str(exc), pytrace=False)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def timed_cli(*args) -> tuple[int, float]:
    """(exit status, CPU seconds) of one command run in-process within :data:`SECONDS_PER_COMMAND`."""
    started = time.process_time()
    with time_limit(SECONDS_PER_COMMAND):
        code = main([str(a) for a in args])
    return code, time.process_time() - started


# --------------------------------------------------------------------------------------------
# the restraint composure race: a stated work budget


def test_huge_composure_race_is_refused_by_exact_within_seconds(tmp_path, capsys):
    path = tmp_path / "huge.toml"
    path.write_text(HUGE_COMPOSURE)
    code, seconds = timed_cli("exact", path, "--out", tmp_path / "out")
    err = capsys.readouterr().err
    assert code == 2 and seconds < 8
    assert len(err.strip().splitlines()) == 1 and f"{X.MAX_EXACT_WORK:,} steps" in err
    assert not (tmp_path / "out").exists()


def test_huge_composure_run_skips_the_exact_column_with_one_line(tmp_path, capsys):
    path = tmp_path / "huge.toml"
    path.write_text(HUGE_COMPOSURE)
    code, seconds = timed_cli("run", path, "--runs", 100, "--out", tmp_path / "out", "--quiet")
    err = capsys.readouterr().err
    assert code == 0 and seconds < SECONDS_PER_COMMAND
    notes = [line for line in err.splitlines() if line.startswith("note: Exact analysis was skipped")]
    assert len(notes) == 1 and "MAX_EXACT_WORK" in notes[0]
    assert (tmp_path / "out" / "summary.json").is_file()


def test_wide_stimulus_on_a_large_pool_without_recoveries_is_counted_before_the_chain():
    """The chain without recoveries costs rounds x stimulus outcomes x composure values (vectorised): a composure of
    100,000 under 20d100 for 1,000 rounds is ~8e8 steps, refused before its first round."""
    damage = {d: 1 / 1981 for d in range(20, 2001)}
    work = X.Work()
    started = time.perf_counter()
    with pytest.raises(X.ExactWorkExceeded):
        X.overload_by_round(100_000, damage, 1000, work)
    with pytest.raises(X.ExactWorkExceeded):
        X.expected_rounds_to_overload(100_000, damage, X.Work())
    assert time.perf_counter() - started < 0.1


def test_the_shipped_restraint_examples_stay_far_inside_the_work_budget(examples):
    for path in examples.values():
        scenario = sim.load_scenario(path)
        if scenario.kind == "restraint":
            sim.exact(scenario)  # raises ExactWorkExceeded if the budget were too tight


# --------------------------------------------------------------------------------------------
# fit: the exhaustive search space is counted before any point is built


def test_exhaustive_fit_over_a_huge_box_is_refused_before_any_point_is_built(tmp_path, examples, capsys):
    probe = examples["escape/lone_rogue"]
    (tmp_path / "fit.toml").write_text(f"""
[fit]
params = ["rules.tiers.light.dc", "rules.tiers.moderate.dc", "rules.tiers.heavy.dc", "rules.tiers.severe.dc"]
method = "exhaustive"
lo = 1
hi = 30

[[target]]
scenario = {str(probe)!r}
metric = "escape_rate"
value = 0.5
""")
    code, seconds = timed_cli("fit", tmp_path / "fit.toml", "--out", tmp_path / "out")
    err = capsys.readouterr().err
    # 30^4 = 810,000 points x 1 scenario > MAX_EXHAUSTIVE_EVALUATIONS (10,000)
    assert code == 2 and seconds < 3, err
    assert "fit.method" in err and "810,000" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_counting_an_increasing_ladder_ignores_the_gap_between_far_apart_bounds():
    from sim.designer.fit import count_feasible

    # two values below, two far above: 2 x 2 ladders (the count once walked every integer between the bounds)
    with time_limit(2):
        assert count_feasible([0, 10**12], [1, 10**12 + 1], True) == 4


# --------------------------------------------------------------------------------------------
# files drawn from each kind's JSON Schema: validate, run and exact, each within its time limit


def _warm_up(examples) -> None:
    """Compile (or load) every kind's engine once, outside the time limits."""
    for path in examples.values():
        sim.simulate(sim.load_scenario(path), runs=10)


@pytest.fixture(scope="module")
def warm(examples):
    _warm_up({k: p for k, p in examples.items() if k.split("/")[0] in KINDS and not k.endswith("s")})


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_schema_drawn_files_end_cleanly_within_the_time_limit(kind, tmp_path_factory, warm, capsys):
    schema = load_schema(kind)

    @settings(max_examples=6)
    @given(data=from_schema(schema), n=st.integers(0, 10**6))
    def check(data, n):
        folder = tmp_path_factory.mktemp(kind)
        path = folder / f"drawn{n}.toml"
        path.write_text(tomlkit.dumps(data), encoding="utf-8")
        for args in (("validate", path), ("run", path, "--runs", 30, "--quiet", "--out", folder / "run"),
                     ("exact", path, "--out", folder / "exact")):
            code, _ = timed_cli(*args)
            assert code in (0, 2), (args, capsys.readouterr().err)
            assert "Traceback" not in capsys.readouterr().err

    check()
