"""Suite-wide test settings and the fixtures every test folder shares.

Fixtures (each folder's own conftest.py narrows ``examples`` to its kind):

- ``examples``: the shipped example scenarios, ``{"escape/lone_rogue": Path, ...}`` (tests/examples.py has ROOT, the
  project folder, and the same list for module-level use);
- ``scratch``: a fresh output folder's path, ``tmp_path / "out"`` (not created: the commands create it), with the
  working directory moved to ``tmp_path`` so that a command writing to its default ``reports/`` lands there and
  never in the project;
- ``cli``: runs ``python -m sim`` in-process (``cli("run", path, "--runs", 100)``) and returns its exit status with
  what it printed (``CliRun(code, out, err)``).

Hypothesis runs derandomized by default (profile ``ci``): the examples it tries are a function of
the test alone, so the suite passes or fails the same way on every machine and in CI, and a
slow machine cannot fail a test on Hypothesis's per-example deadline. Set
``HYPOTHESIS_PROFILE=explore`` to search with fresh random examples (and a larger budget) locally;
a failure found that way is replayed from the printed ``@reproduce_failure`` blob and then kept as
an explicit ``@example``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from examples import examples_of
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("explore", deadline=None, max_examples=500, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config):
    """Under pytest-xdist (``-n``), fill numba's cache before the workers start (tests/numba_warmup.py)."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        from numba_warmup import warm_up

        seconds = warm_up()
        config.stash[WARM_UP_SECONDS] = seconds


def pytest_report_header(config):
    if WARM_UP_SECONDS in config.stash:
        return f"numba engines compiled or loaded before the workers started: {config.stash[WARM_UP_SECONDS]:.0f} s"
    return None


WARM_UP_SECONDS = pytest.StashKey[float]()

BROWSER_SKIP = "headless Chromium not available"  # the start of every browser test's skip reason (browser_check.py)


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Say why the browser tests were skipped, in the summary of every run (the plain test command on a machine
    without Chromium skips them; README, "Run the whole test suite", says how ``.ci/run`` gets Chromium)."""
    reasons = [_skip_reason(r) for r in terminalreporter.stats.get("skipped", [])]
    browser = [r for r in reasons if BROWSER_SKIP in r]
    if browser:
        terminalreporter.write_line(
            f"{len(browser)} browser test{'s' if len(browser) != 1 else ''} skipped: {browser[0]}. They check the "
            "HTML reports and the studio in headless Chromium: install Debian's chromium (apt-get install chromium; "
            ".ci/run does this) and playwright (in .[test]) to run them.", yellow=True, bold=True)


@pytest.fixture(autouse=True, scope="session")
def _resume_key_in_a_temporary_folder(tmp_path_factory):
    """The resume store's per-user key (sim/store_key.py) lives in a folder of the test session, never in the
    home of whoever runs the tests; subprocesses inherit the setting."""
    old = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("config"))
    from sim import store_key

    store_key.user_key.cache_clear()
    yield
    if old is None:
        os.environ.pop("XDG_CONFIG_HOME", None)
    else:
        os.environ["XDG_CONFIG_HOME"] = old
    store_key.user_key.cache_clear()


@dataclass(frozen=True)
class CliRun:
    code: int
    out: str
    err: str


@pytest.fixture(scope="session")
def examples() -> dict[str, Path]:
    return examples_of()


@pytest.fixture
def scratch(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path / "out"


@pytest.fixture
def cli(capsys):
    from sim.cli import main

    def run(*args) -> CliRun:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return CliRun(code, captured.out, captured.err)

    return run
