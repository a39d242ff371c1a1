"""How a run ended, said by the run's PID 1 the moment nothing of the run is left (issue 32).

A run in its own namespaces is the runner under a tiny init (PID 1 of the run's PID namespace)
under a relay. The record of how it ended used to come from the relay once its wait on the init
returned, after the init's own exit and the namespace's teardown (3-4 ms of a 15-20 ms Run here).
Now the init says it itself when reaping the runner leaves it alone in the namespace, and a run
that left a process running still waits for the relay, after the namespace is gone.

These tests drive ``keeper.split_below_relay`` in a child of the test, as the keeper and a
spawn-mode runner interpreter do (tests/sandbox/test_hostile.py covers the same through whole
sandboxes: a daemon is gone by the verdict in every setup).
"""

from __future__ import annotations

import faulthandler
import json
import os
import select
import signal
import socket
import time

import pytest

from tutor.child.worker import keeper, linux


def _can_unshare() -> str | None:
    pid = os.fork()
    if pid == 0:
        os._exit(0 if linux.unshare_run_namespaces() is None else 1)
    _, status = os.waitpid(pid, 0)
    return None if os.waitstatus_to_exitcode(status) == 0 else "this machine gives no user/PID namespaces"


pytestmark = pytest.mark.skipif(not linux.AVAILABLE, reason="namespaces are a Linux feature")


def _run(body: str) -> tuple[int, int, socket.socket]:
    """Fork a relay that unshares the run's namespaces and splits below it, as the keeper does;
    the runner (PID 1's child) runs ``body`` holding its channel, then exits 3. Returns the
    relay's pid, the pipe its record comes on, and our end of the runner's channel (the relay
    and the init close theirs: it ends when every process of the run holding it is gone)."""
    exit_r, exit_w = os.pipe()
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(exit_r)
            ours.close()
            if linux.unshare_run_namespaces() is not None:
                os._exit(90)
            keeper.split_below_relay(theirs, exit_w)  # returns in the runner
            os.close(exit_w)
            faulthandler.disable()  # pytest's: a run that crashes on purpose prints nothing
            exec(body, {"os": os, "time": time, "signal": signal})
            os._exit(3)
        finally:
            os._exit(91)
    os.close(exit_w)
    theirs.close()
    return pid, exit_r, ours


def _first_record(exit_r: int, timeout: float = 20.0) -> dict:
    data = b""
    deadline = time.monotonic() + timeout
    while b"\n" not in data:
        ready, _, _ = select.select([exit_r], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"no record within {timeout} s"
        chunk = os.read(exit_r, 4096)
        assert chunk, "the pipe ended without a record"
        data += chunk
    return json.loads(data.split(b"\n", 1)[0])


def _closed(channel: socket.socket) -> bool:
    """Whether every process holding the other end of ``channel`` is gone (EOF, nothing sent)."""
    channel.setblocking(False)
    try:
        return channel.recv(1) == b""
    except BlockingIOError:
        return False


@pytest.fixture
def namespaces():
    why = _can_unshare()
    if why:
        pytest.skip(why)


def test_a_run_that_leaves_nothing_is_said_by_its_init_with_all_it_used(namespaces):
    # The runner burns CPU and memory itself, and a grandchild orphaned to the init burns more:
    # the init's record counts all of it, as the relay's wait on the init did.
    body = (
        "if os.fork() == 0:\n"
        "    if os.fork() == 0:\n"
        "        end = time.process_time() + 0.3\n"
        "        while time.process_time() < end: pass\n"
        "    os._exit(0)\n"
        "os.wait()\n"
        "blob = bytearray(120 * 1024 * 1024)\n"
        "end = time.process_time() + 0.2\n"
        "while time.process_time() < end: pass\n"
        "time.sleep(0.5)\n"  # the orphan is done and reaped by the init by now
    )
    relay, exit_r, channel = _run(body)
    try:
        record = _first_record(exit_r)
        assert record["by"] == "init", record
        assert _closed(channel)
        assert record["exit_code"] == 3 and record["signal"] is None, record
        assert record["cpu_time"] >= 0.45, record  # the runner's 0.2 s and the orphan's 0.3 s
        assert record["maxrss_kb"] >= 120 * 1024, record
    finally:
        os.close(exit_r)
        _, status, _ = os.wait4(relay, 0)
    assert os.waitstatus_to_exitcode(status) == 3  # the relay still leaves the way the runner did


def test_a_run_that_leaves_a_process_is_said_only_once_that_process_is_gone(namespaces):
    # The runner's child holds the runner's channel and sleeps on: the init is not alone when the
    # runner ends, so it says nothing; the relay's record comes once the namespace is gone, and
    # with it every holder of the channel.
    body = (
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    time.sleep(60)\n"
        "    os._exit(0)\n"
    )
    relay, exit_r, channel = _run(body)
    try:
        record = _first_record(exit_r)
        assert record.get("by") == "relay", record
        assert record["exit_code"] == 3, record
        assert _closed(channel), "a process of the run still held its channel when its record came"
    finally:
        os.close(exit_r)
        channel.close()
        os.wait4(relay, 0)


def test_a_runner_killed_by_a_signal_is_said_so_by_its_init(namespaces):
    relay, exit_r, channel = _run("os.kill(os.getpid(), signal.SIGSEGV)\n")
    channel.close()
    try:
        record = _first_record(exit_r)
        assert record["by"] == "init", record
        assert record["signal"] == signal.SIGSEGV and record["exit_code"] is None, record
    finally:
        os.close(exit_r)
        _, status, _ = os.wait4(relay, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSEGV
