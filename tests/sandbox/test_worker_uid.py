"""A root tutor's bubblewrap workers (and spawn-mode spares) leave root for a uid of the tutor's
own, not ``nobody``: any process on the host that runs as ``nobody`` (a daemon, another program's
sandbox) could otherwise signal them, ending a learner's sandbox or a grading batch, and reach
the folders of their runs."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.sandbox.conftest import TEST_LIMITS, _bwrap_reason, wait_for_idle
from tutor.sandbox import Sandbox
from tutor.sandbox.isolation import worker_uid

NOBODY = 65534
pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("setpriv") is None,
                                reason="a root tutor's workers, attacked as nobody with setpriv")


def _status(pid: int) -> dict[str, str]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return fields


def _workers(root: int) -> list[tuple[int, int]]:
    """(pid, real uid) of the processes under ``root`` (a bubblewrap) that left root."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                children.setdefault(int(_status(int(entry.name))["PPid"]), []).append(int(entry.name))
            except (OSError, KeyError):
                continue
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            todo.append(child)
            try:
                uid = int(_status(child)["Uid"].split()[0])
            except (OSError, KeyError):
                continue
            if uid != 0:
                found.append((child, uid))
    return found


@pytest.mark.parametrize("mode", ["fork", "spawn"])
def test_a_host_process_running_as_nobody_cannot_kill_a_root_tutors_workers(mode):
    why = _bwrap_reason()
    if why:
        pytest.skip(f"bubblewrap does not work here: {why}")
    with Sandbox(TEST_LIMITS, isolation="bwrap", mode=mode, workers=1, preload=[]) as box:
        box.wait_ready(300)
        first = box.run("print('ready')")
        assert (first.status, first.stdout) == ("ok", "ready\n"), (first.message, first.stderr)
        wait_for_idle(box)  # spawn mode: the next spare
        workers = [w for proc in box._spares.all if proc._proc is not None and proc.alive() for w in _workers(proc._proc.pid)]
        assert workers, "no worker that left root"
        for pid, _ in workers:
            attack = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                                     "kill", "-9", str(pid)], capture_output=True, text=True, timeout=30)
            assert attack.returncode != 0, f"nobody killed worker {pid}"
        after = box.run("print('still here')")
        assert (after.status, after.stdout) == ("ok", "still here\n"), (after.status, after.message)
    assert {uid for _, uid in workers} == {worker_uid()}, workers  # this tutor's own
