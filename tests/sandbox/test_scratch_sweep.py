"""A tutor killed with -9 cannot remove its scratch folder; the next sandbox to start does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tutor.sandbox import Sandbox
from tests.sandbox.conftest import TEST_LIMITS

_OWNER = """
import sys, time
from tutor.sandbox import Sandbox
box = Sandbox(isolation="none", preload=[])
box.wait_ready(300)
print(box._scratch_root, flush=True)
time.sleep(600)
"""


def _killed_owner() -> Path:
    owner = subprocess.Popen([sys.executable, "-c", _OWNER], stdout=subprocess.PIPE, text=True)
    try:
        scratch = Path(owner.stdout.readline().strip())
        assert scratch.is_dir(), scratch
        (scratch / "left-behind.bin").write_bytes(b"x" * 4096)
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    return scratch


def test_scratch_folders_of_killed_tutors_are_swept_at_the_next_start():
    scratch = _killed_owner()
    assert scratch.is_dir(), "kill -9 leaves the folder behind"
    assert scratch.parent == Path(tempfile.gettempdir())
    with Sandbox(TEST_LIMITS, isolation="none", preload=[]) as box:
        box.wait_ready(300)
        assert not scratch.exists(), "the next start removes a dead tutor's scratch folder"
        assert Path(box._scratch_root).is_dir()


def test_a_living_tutors_scratch_folder_is_kept():
    with Sandbox(TEST_LIMITS, isolation="none", preload=[]) as first:
        first.wait_ready(300)
        with Sandbox(TEST_LIMITS, isolation="none", preload=[]) as second:
            second.wait_ready(300)
            assert Path(first._scratch_root).is_dir()
            assert first.run("print(1)").stdout == "1\n"


def test_folders_that_only_look_alike_are_left_alone(tmp_path):
    stranger = Path(tempfile.mkdtemp(prefix="torch-tutor-"))  # no lock file: not ours to judge
    try:
        with Sandbox(TEST_LIMITS, isolation="none", preload=[]) as box:
            box.wait_ready(300)
        assert stranger.is_dir()
    finally:
        stranger.rmdir()
