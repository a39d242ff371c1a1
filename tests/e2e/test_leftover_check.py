"""The suite's end-of-session check (tests/conftest.py, ``pytest_sessionfinish``): a run that leaves
a torch-tutor or sandbox process behind fails, names it, and ends it; other runs' processes on
the same machine are not its business."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).parents[2]

LEAK = '''
import os, subprocess, sys, time

def test_leaves_a_tutor_behind(tmp_path):
    # A detached process (its parent, sh, exits at once) that looks like a tutor.
    subprocess.run(["sh", "-c", f"{sys.executable} -c 'import time; time.sleep(120)' torch-tutor "
                    f">/dev/null 2>&1 & echo $! > {os.environ['LEAK_PID_FILE']}"], check=True)
'''

OTHER_RUN = '''
import os, subprocess, sys

def test_leaves_nothing_of_its_own(tmp_path):
    subprocess.run([sys.executable, "-c", "pass", "torch-tutor"], check=True)


def test_another_run_leaves_one(tmp_path):
    # Started with another run's mark: this run's check must leave it alone.
    env = dict(os.environ, PYTEST_TORCH_TUTOR_RUN="someone-else")
    subprocess.run(["sh", "-c", f"{sys.executable} -c 'import time; time.sleep(120)' torch-tutor "
                    f">/dev/null 2>&1 & echo $! > {os.environ['LEAK_PID_FILE']}"], check=True, env=env)
'''


def _inner_run(tmp_path: Path, source: str, *options: str) -> tuple[subprocess.CompletedProcess, int | None]:
    test = tmp_path / "inner" / "test_inner.py"
    test.parent.mkdir()
    test.write_text(source)
    pid_file = tmp_path / "pid"
    # The leak sleeps for minutes: waiting the whole grace for it to leave would only cost time.
    env = dict(os.environ, LEAK_PID_FILE=str(pid_file), PYTEST_TORCH_TUTOR_LEFTOVER_GRACE_S="0.5")
    out = subprocess.run([sys.executable, "-m", "pytest", str(test), "-q", "-p", "no:cacheprovider",
                          "-p", "tests.conftest", "--rootdir", str(test.parent), "-o", "addopts=", *options],
                         cwd=REPO, capture_output=True, text=True, env=env, timeout=300)
    pid = int(pid_file.read_text()) if pid_file.exists() else None
    return out, pid


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


def test_a_run_that_leaves_a_tutor_behind_fails_names_it_and_ends_it(tmp_path):
    out, pid = _inner_run(tmp_path, LEAK)
    assert pid is not None
    assert out.returncode == 1, out.stdout + out.stderr
    assert "1 passed" in out.stdout  # the test itself passed: the check failed the run
    assert "1 torch-tutor or sandbox process(es) this test run started are still running" in out.stdout
    assert f"pid {pid}: " in out.stdout and "torch-tutor" in out.stdout
    assert _gone(pid)


def test_a_parallel_run_whose_worker_leaves_a_tutor_behind_fails_names_it_and_ends_it(tmp_path):
    """Under pytest-xdist (the README's command runs `-n auto`) the process a worker left is
    found once the workers are done: the controller checks, and names it."""
    out, pid = _inner_run(tmp_path, LEAK, "-n", "2", "--dist", "loadgroup")
    assert pid is not None
    assert out.returncode == 1, out.stdout + out.stderr
    assert "1 passed" in out.stdout
    assert "1 torch-tutor or sandbox process(es) this test run started are still running" in out.stdout
    assert f"pid {pid}: " in out.stdout
    assert _gone(pid)


def test_a_run_that_leaves_nothing_of_its_own_passes_and_leaves_other_runs_alone(tmp_path):
    out, pid = _inner_run(tmp_path, OTHER_RUN)
    try:
        assert pid is not None
        assert out.returncode == 0, out.stdout + out.stderr
        assert "2 passed" in out.stdout and "still running" not in out.stdout
        assert os.path.exists(f"/proc/{pid}")  # still there: the check did not end it
    finally:
        if pid is not None:
            os.kill(pid, 9)
