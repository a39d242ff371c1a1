"""The example of docs/authoring.md: a pack published as a pip-installable package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "torch-tutor-dtype-pack"


def test_example_package_installs_and_lists(tmp_path):
    target = tmp_path / "site"
    # A real pip install of the example (no network: the venv's setuptools builds it).
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--target", str(target), str(EXAMPLE)], check=True, capture_output=True, timeout=300)
    env = {**os.environ, "PYTHONPATH": str(target), "TORCH_TUTOR_DATA_DIR": str(tmp_path / "data")}
    out = subprocess.run([sys.executable, "-m", "tutor", "list", "--json"], capture_output=True, text=True,
                         env=env, check=True)
    row = next(r for r in json.loads(out.stdout) if r["id"] == "dtype-basics")
    assert row["origin"] == "package torch-tutor-dtype-pack"
    assert row["lessons"] == 1 and Path(row["path"]).parent == target
