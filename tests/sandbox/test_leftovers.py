"""``leftovers`` (tests/sandbox/conftest.py) counts what this test process left running, and only
that: under pytest-xdist other workers' runs are alive at the same time and are not a leak here."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.sandbox.conftest import leftover_processes

#: A process that renames itself (as the runner names itself tutor-run) and waits.
NAMED = ("import ctypes, sys, time\n"
         "ctypes.CDLL(None).prctl(15, sys.argv[1].encode(), 0, 0, 0)\n"
         "print('named', flush=True)\n"
         "time.sleep(60)\n")
#: The same, started by a child that exits at once: the named process is adopted by PID 1 (or by
#: the nearest subreaper above this test, where there is one).
ORPHAN = ("import subprocess, sys\n"
          f"subprocess.Popen([sys.executable, '-c', {NAMED!r}, sys.argv[1]], stdout=subprocess.DEVNULL,\n"
          "                 start_new_session=True)\n")


def _name() -> str:
    return f"tt-{uuid.uuid4().hex[:10]}"  # comm holds 15 bytes


def _until(check, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def test_a_named_descendant_is_found_and_another_process_tree_is_not():
    name = _name()
    child = subprocess.Popen([sys.executable, "-c", NAMED, name], stdout=subprocess.PIPE, text=True)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert child.stdout is not None and child.stdout.readline() == "named\n"
        assert leftover_processes(name) == [f"{child.pid}:{name}"]
        # Seen from another process tree (another xdist worker), it is not that tree's leftover.
        assert leftover_processes(name, root=other.pid) == []
    finally:
        for proc in (child, other):
            proc.kill()
            proc.wait()
    assert _until(lambda: leftover_processes(name) == [])


def _named(name: str) -> list[tuple[int, int]]:
    """(pid, parent pid) of every live process called ``name``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().strip() == name:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if fields[0] != "Z":
                    found.append((int(entry.name), int(fields[1])))
        except OSError:
            continue
    return found


def test_an_orphan_adopted_by_pid_1_is_found():
    name = _name()
    subprocess.run([sys.executable, "-c", ORPHAN, name], check=True, timeout=60)
    try:
        assert _until(lambda: len(_named(name)) == 1), "the orphan did not start"
        (pid, parent), = _named(name)
        if parent != 1:  # a subreaper above this test (systemd --user on a desktop) adopted it
            pytest.skip(f"orphans are adopted by PID {parent} here, not PID 1")
        assert leftover_processes(name) == [f"{pid}:{name}"]
    finally:
        for pid, _ in _named(name):
            os.kill(pid, signal.SIGKILL)
    assert _until(lambda: _named(name) == [])


def test_an_orphan_of_another_xdist_worker_is_that_workers(monkeypatch):
    """Under pytest-xdist, an orphan that another worker's run left (the sandbox passes
    PYTEST_XDIST_WORKER on to what it starts) is that worker's leftover, not this one's; an
    orphan of this worker's still counts."""
    names = {"gw7": _name(), "gw3": _name()}
    for worker, name in names.items():
        subprocess.run([sys.executable, "-c", ORPHAN, name], check=True, timeout=60,
                       env={**os.environ, "PYTEST_XDIST_WORKER": worker})
    try:
        assert _until(lambda: all(len(_named(n)) == 1 for n in names.values())), "the orphans did not start"
        if any(parent != 1 for n in names.values() for _, parent in _named(n)):
            pytest.skip("orphans are not adopted by PID 1 here")
        monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")
        assert leftover_processes(names["gw7"]) == []
        (pid, _), = _named(names["gw3"])
        assert leftover_processes(names["gw3"]) == [f"{pid}:{names['gw3']}"]
    finally:
        for name in names.values():
            for pid, _ in _named(name):
                os.kill(pid, signal.SIGKILL)
    assert _until(lambda: all(_named(n) == [] for n in names.values()))
