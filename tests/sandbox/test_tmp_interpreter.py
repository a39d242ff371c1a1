"""An interpreter that lives under /tmp (a CI clone's venv) still works inside the private /tmp.

Regression: each run covers /tmp with its scratch dir; before the fix that also covered the venv,
and a lazy import (numpy.ma, imported by np.median) failed with "No module named 'numpy.ma'".
"""

from __future__ import annotations

import shutil
import site
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.sandbox.conftest import TEST_LIMITS, _bwrap_reason
from tutor.sandbox import Sandbox


@pytest.fixture(scope="module")
def tmp_venv():
    # Like a CI clone: world-readable, under /tmp (pytest's own tmp dirs are 0700, which the
    # fallback's unprivileged run user could not read).
    root = Path(tempfile.mkdtemp(prefix="tutor-venv-", dir="/tmp"))
    root.chmod(0o755)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    packages = next(venv.glob("lib/python*/site-packages"))
    # torch and friends come from the test's own environment; one module lives only here
    (packages / "outer.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    (packages / "only_in_tmp_venv.py").write_text("VALUE = 42\n")
    yield venv
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("isolation", ["bwrap", "none"])
def test_lazy_imports_from_a_venv_under_tmp(tmp_venv, isolation):
    if isolation == "bwrap" and _bwrap_reason():
        pytest.skip("bubblewrap does not work here")
    with Sandbox(TEST_LIMITS, isolation=isolation, python=str(tmp_venv / "bin" / "python")) as box:
        box.start()
        assert box.wait_ready(timeout=300)
        code = ("import numpy as np\nprint(np.median([1.0, 2.0, 3.0]))\n"
                "import only_in_tmp_venv\nprint(only_in_tmp_venv.VALUE)\n"
                f"open({str(tmp_venv / 'written')!r}, 'w')\n")
        result = box.run(code)
    assert result.stdout.split() == ["2.0", "42"], (result.status, result.stdout, result.error)
    if isolation == "bwrap":  # the venv is visible, and read-only
        assert result.error is not None and "Read-only file system" in result.error.message
        assert not (tmp_venv / "written").exists()
