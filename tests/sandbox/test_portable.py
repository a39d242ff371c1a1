"""The child side as it runs off Linux: spawn mode with every Linux-only helper made unavailable
(``TORCH_TUTOR_PORTABLE_CHILD=1`` sets ``linux.AVAILABLE`` false in the judge and the runner), so
no prctl, no namespace, no mount and no ``/proc`` read. We cannot run macOS here; this is the
part of that claim we can check: the sandbox still starts, runs, limits wall time and output,
judges, and cleans up, and says which limits it could not enforce."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from tests.sandbox.conftest import TEST_LIMITS
from tutor.sandbox import ProbeSpec, Sandbox


@pytest.fixture(scope="module")
def portable():
    previous = os.environ.get("TORCH_TUTOR_PORTABLE_CHILD")
    os.environ["TORCH_TUTOR_PORTABLE_CHILD"] = "1"
    try:
        with Sandbox(TEST_LIMITS, isolation="none", mode="spawn", workers=1,
                     preload=["tutor.sandbox.echo_probe"]) as box:
            box.wait_ready(300)
            yield box
    finally:
        if previous is None:
            os.environ.pop("TORCH_TUTOR_PORTABLE_CHILD", None)
        else:
            os.environ["TORCH_TUTOR_PORTABLE_CHILD"] = previous


def test_the_child_side_ran_without_the_linux_helpers(portable):
    assert portable.worker_info["os_helpers"] is False
    # As macOS would where its thread count reads 1: the judge and every runner forked from the
    # template, with no subreaper, parent-death signal or /proc sweep to lean on.
    assert portable.worker_info["runners"] == "forked"
    assert portable.unenforced_limits() == ["memory_mb", "processes"]


def test_runs_work_and_errors_point_at_the_line(portable):
    ok = portable.run("import torch\nprint(torch.ones(2).sum().item())")
    assert (ok.status, ok.stdout) == ("ok", "2.0\n")
    failed = portable.run("x = 1\n1 / 0\n", filename="lesson.py")
    assert failed.status == "error" and failed.error.type == "ZeroDivisionError" and failed.error.lineno == 2


def test_wall_time_and_output_caps_hold(portable):
    slow = portable.run("while True:\n    pass\n")
    assert slow.status == "timeout"
    loud = portable.run("import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n")
    assert loud.status == "output-limit"


def test_the_judge_still_judges(portable):
    probe = ProbeSpec("tutor.sandbox.echo_probe", "run_checks", {"seen": True})
    result = portable.run("x = 41\n", probe=probe)
    assert result.status == "ok", (result.message, result.stderr)
    assert result.report is not None
    assert (result.report["names"], result.report["payload"]) == (["x"], {"seen": True})


def test_what_a_run_leaves_running_is_killed(portable):
    """Without /proc the keeper cannot list the run's children: it kills the run's process group."""
    marker = f"tt-portable-{uuid.uuid4().hex[:8]}"
    code = ("import subprocess, sys\n"
            f"subprocess.Popen(['/bin/sh', '-c', 'sleep 300; : {marker}'])\n"
            "print('left one behind')\n")
    result = portable.run(code)
    assert result.status == "ok" and result.stdout == "left one behind\n"
    # SIGKILL lands at once but the process is not ours to reap (no subreaper off Linux): give
    # the kernel a moment to finish it, then nothing with the marker may be left but a zombie.
    deadline = time.monotonic() + 3.0
    while _alive(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive(marker) == []


def _alive(marker: str) -> list[str]:
    if not Path("/proc").is_dir():  # macOS (the CI's job there): ps lists the same
        listed = subprocess.run(["ps", "-axo", "pid=,stat=,command="], capture_output=True, text=True).stdout
        return [f"{pid}:{state}" for pid, state, command in (line.split(None, 2) for line in listed.splitlines())
                if marker in command and not state.startswith("Z")]
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                    if state != "Z":
                        found.append(f"{entry.name}:{state}")
            except OSError:
                continue
    return found
