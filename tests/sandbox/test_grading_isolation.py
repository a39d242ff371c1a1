"""Grading runs strangers' code: under bubblewrap a submission sees only its own code, never the
class's folder (other learners' work) nor the pack (its solutions), wherever those lie."""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tutor.pack.scaffold import scaffold
from tests.sandbox.conftest import TEST_LIMITS, _bwrap_reason
from tutor.sandbox import Sandbox

RIGHT = "def bumped(t):\n    return t + 1\n"


@pytest.fixture
def open_folder():
    """A folder outside /tmp, /home and /root: bubblewrap's read-only / showed it unless hidden."""
    why = _bwrap_reason()
    if why:
        pytest.skip(f"bubblewrap does not work here: {why}")
    base = Path(tempfile.mkdtemp(prefix="tt-class-", dir="/var/tmp" if os.path.isdir("/var/tmp") else "/"))
    os.chmod(base, 0o755)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def _copycat(target: Path) -> str:
    return (f"path = {str(target)!r}\n"
            "try:\n    exec(open(path).read())\n    print('copied')\n"
            "except OSError as exc:\n    print('refused', type(exc).__name__)\n")


def test_hidden_folders_are_invisible_to_runs(open_folder):
    secret = open_folder / "alice" / "add-to-copy.py"
    secret.parent.mkdir(mode=0o755)
    secret.write_text(RIGHT)
    secret.chmod(0o644)
    with Sandbox(TEST_LIMITS, isolation="bwrap", preload=[]) as box:
        seen = box.run(_copycat(secret))
    # an allow-list (issue 26): a folder nobody named is not there either (it was, before)
    assert seen.stdout == "refused FileNotFoundError\n", (seen.status, seen.stdout)
    with Sandbox(TEST_LIMITS, isolation="bwrap", hide=[str(open_folder)], preload=[]) as box:
        hidden = box.run(_copycat(secret))
    assert hidden.status == "ok", (hidden.status, hidden.message)
    assert hidden.stdout == "refused FileNotFoundError\n"


def test_grade_never_shows_one_learner_anothers_work(open_folder):
    pack = open_folder / "pack"
    scaffold(pack, title="Grading test")
    subs = open_folder / "subs"
    (subs / "alice").mkdir(parents=True)
    (subs / "alice" / "add-to-copy.py").write_text(RIGHT)
    (subs / "mallory").mkdir()
    (subs / "mallory" / "add-to-copy.py").write_text(_copycat(subs / "alice" / "add-to-copy.py"))
    for path in open_folder.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    env = {**os.environ, "TORCH_TUTOR_DATA_DIR": str(open_folder / "data"),
           "TORCH_TUTOR_CONFIG_DIR": str(open_folder / "config"), "TORCH_TUTOR_ISOLATION": "bwrap"}
    out = open_folder / "grades.csv"
    done = subprocess.run([sys.executable, "-m", "tutor", "grade", str(pack), str(subs), "--csv", str(out),
                           "--no-cache"], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode in (0, 1), done.stderr
    rows = {r["learner"]: r for r in csv.DictReader(io.StringIO(out.read_text()))}
    assert rows["alice"]["passed"] in ("True", "true", "1"), rows["alice"]
    assert rows["mallory"]["passed"] not in ("True", "true", "1"), rows["mallory"]
