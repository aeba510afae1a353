"""Issue 26, install: the README's main command needs the package alone, the tests `.[test]`.

The README's first set-up command installs `.` (no extra) and runs a scenario; the second installs `.[test]` and
runs pytest, exactly the line `.ci/run` runs. The scenario run is checked with every package that only the extras
bring made unimportable (and stdout taken for a terminal, where the console table would reach for rich).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

from examples import ROOT

# top-level modules that only the optional extras (test, studio, dask) install
EXTRA_ONLY = ["pytest", "hypothesis", "ruff", "nbclient", "nbformat", "ipykernel", "IPython", "dask", "distributed",
              "panel", "bokeh", "playwright", "jsonschema", "taplo", "mutmut", "rich", "jupyter_client"]

BLOCKER = f"""
import importlib.abc, sys
BLOCKED = set({EXTRA_ONLY!r})
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked: an extra)", name=name)
        return None
sys.meta_path.insert(0, Block())
sys.stdout.isatty = lambda: True
from sim.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _bash_blocks(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", text, flags=re.S)


def test_readme_main_command_installs_the_package_alone_and_tests_the_extra():
    blocks = _bash_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    main_cmd, test_cmd = blocks[0].strip(), blocks[1].strip()
    # the main job: the package alone (no [test], no other extra)
    assert main_cmd.startswith("python3 -m pip install -e . && python3 -m sim run "), main_cmd
    assert test_cmd == "python3 -m pip install -e '.[test]' && python3 -m pytest -n auto", test_cmd
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test_cmd in ci.splitlines(), ".ci/run must run exactly the README's test command"


def test_extras_only_modules_are_not_core_dependencies():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = {re.split(r"[<>=\[ ]", d)[0].lower() for d in project["dependencies"]}
    for name in EXTRA_ONLY:
        assert name.lower() not in core, f"{name} is a core dependency: remove it from EXTRA_ONLY"


def test_main_command_runs_without_any_extra(tmp_path):
    scenario = ROOT / "scenarios" / "escape" / "party_under_watch.toml"
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-c", BLOCKER, "run", str(scenario), "--runs", "300", "--no-runs",
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (out / "report.html").is_file() and (out / "summary.json").is_file()
    assert "report:" in proc.stdout
