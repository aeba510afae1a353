"""The test command also runs ruff (configured in pyproject.toml), so style problems fail CI."""

import shutil
import subprocess
import sys
from pathlib import Path

from examples import ROOT


def test_ruff_check_is_clean():
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    proc = subprocess.run([ruff, "check", str(ROOT)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
