"""An interpreter that lives under /tmp (a CI clone's venv) still works inside the private /tmp.

Regression: each run covers /tmp with its scratch dir; before the fix that also covered the venv,
and a lazy import (numpy.ma, imported by np.median) failed with "No module named 'numpy.ma'".
"""

from __future__ import annotations

import os
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
    root, venv = _venv("tutor-venv-", 0o755, "only_in_tmp_venv")
    yield venv
    shutil.rmtree(root, ignore_errors=True)


def _venv(prefix: str, mode: int, module: str) -> tuple[Path, Path]:
    """A venv under /tmp, in a folder of ``mode``: torch and friends come from the test's own
    environment, and ``module`` lives only in this venv."""
    root = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    root.chmod(mode)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    packages = next(venv.glob("lib/python*/site-packages"))
    (packages / "outer.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    (packages / f"{module}.py").write_text("VALUE = 42\n")
    return root, venv


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


@pytest.fixture(scope="module")
def locked_venv():
    """A venv in a folder only root may enter (as pyenv or conda put Python under /root): torch
    comes from the test's own environment, one module lives only in the locked venv."""
    root, venv = _venv("tutor-locked-", 0o700, "only_in_locked_venv")
    yield root, venv
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root's runs at isolation none leave for another user")
def test_at_none_an_interpreter_the_runs_cannot_read_is_named_and_explained(locked_venv):
    """As root at isolation none each run becomes a user of its own, which cannot read a Python
    under /root: `import` of a module the worker did not load ahead failed with a bare
    "No module named ..." (the module is there). doctor names the folder, and the run says why."""
    from tutor.sandbox.backends import choose
    from tutor.sandbox.isolation import UNREADABLE

    root, venv = locked_venv
    python = str(venv / "bin" / "python")
    gaps = [gap for gap in choose("none", python).gaps if gap.startswith(UNREADABLE)]
    assert gaps and str(root) in gaps[0], gaps
    with Sandbox(TEST_LIMITS, isolation="none", python=python) as box:
        box.start()
        assert box.wait_ready(timeout=300)
        torch_run = box.run("import torch\nprint(torch.ones(2).sum().item())\n")  # loaded ahead: works
        locked = box.run("import only_in_locked_venv\n")
    assert (torch_run.status, torch_run.stdout) == ("ok", "2.0\n"), (torch_run.status, torch_run.message)
    assert locked.status == "error" and locked.error.type == "ModuleNotFoundError"
    assert locked.message.startswith("The import failed here because runs cannot read the interpreter's files "
                                     f"as their own user ({root}")
    doctor = subprocess.run([sys.executable, "-m", "tutor", "doctor", "--isolation", "none", "--python", python],
                            capture_output=True, text=True, timeout=300)
    assert f"weaker:   {UNREADABLE} ({root}" in doctor.stdout, doctor.stdout + doctor.stderr
