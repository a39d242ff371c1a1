"""`validate` says plainly when the torch that runs a pack's code is outside its `requires.torch`.

The built-in pack is copied and its range moved: once above the installed torch (a plain
sentence at the `requires` line, both versions named, exit 1), once around it (no sentence).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import torch

from tests.packs.conftest import PACK_DIR


def _validate(tmp_path, spec: str) -> subprocess.CompletedProcess:
    folder = tmp_path / "pack"
    shutil.copytree(PACK_DIR, folder)
    header = folder / "pack.yaml"
    text = header.read_text(encoding="utf-8")
    moved = re.sub(r'(?m)^  torch: ".*"$', f'  torch: "{spec}"', text)
    assert moved != text, "pack.yaml has no requires.torch line to move"
    header.write_text(moved, encoding="utf-8")
    # Only the header matters here: one short lesson keeps the run quick.
    lessons = [line for line in moved.splitlines() if line.strip().startswith("- 0")]
    header.write_text(moved.replace("\n".join(lessons[1:]) + "\n", ""), encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "tutor.cli.main", "validate", str(folder)],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)


def test_validate_names_a_torch_below_the_pack_range(tmp_path):
    done = _validate(tmp_path, ">=99")
    assert done.returncode == 1, done.stdout + done.stderr
    line = next(line for line in done.stdout.splitlines() if "This pack needs" in line and "pack.yaml:" in line)
    assert re.match(r".*pack\.yaml:\d+:\d+: This pack needs torch >=99, but the Python that runs your code has "
                    rf"torch {re.escape(torch.__version__)}", line), line


def test_validate_is_quiet_about_a_torch_inside_the_range(tmp_path):
    done = _validate(tmp_path, ">=2.0")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "This pack needs torch" not in done.stdout + done.stderr


def test_check_names_a_torch_below_the_pack_range(tmp_path):
    folder = tmp_path / "pack"
    shutil.copytree(PACK_DIR, folder)
    header = folder / "pack.yaml"
    header.write_text(re.sub(r'(?m)^  torch: ".*"$', '  torch: ">=99"', header.read_text(encoding="utf-8")),
                      encoding="utf-8")
    fix = tmp_path / "fix.py"
    fix.write_text("def shifted_first_row(t, k):\n    return t[0] + k\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "tutor.cli.main", "check", "view-inplace", str(fix),
                           "--pack", str(folder)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr  # the fix is right: the notice does not fail it
    assert f"This pack needs torch >=99, but the Python that runs your code has torch {torch.__version__}" \
        in " ".join(done.stderr.split())
