"""How the app leaves when told to from outside (tutor/app/leaving.py, launch._leave_now).

The watchdog is tested in a process of its own (it takes over the process's signals), with a
stand-in for the app: ``ask`` is what the app's loop does, and a main thread stuck in a full
queue stands for the deadlock of issue 35 (Textual's writer queue during shutdown). The whole
app in a real terminal is tests/e2e/test_e2e_exit.py.
"""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app_support import settle, wait_for_text
from tutor.record.progress import ProgressStore

REPO = Path(__file__).parents[2]

STAND_IN = r'''
import os, queue, signal, sys, threading
from tutor.app.leaving import Leaving

mode, out, deadline = sys.argv[1], sys.argv[2], float(sys.argv[3])

def note(text):
    with open(out, "a") as handle:
        handle.write(text + "\n")

answered = threading.Event()

def ask(code):
    note(f"asked {code}")
    if mode == "stuck":
        threading.Event().wait()  # the app's loop never gets to it
    if mode == "not-running":
        raise RuntimeError("App is not running")
    answered.set()  # the app wrote its drafts and exited

if hasattr(signal, "SIGWINCH"):  # as Textual's driver does
    signal.signal(signal.SIGWINCH, lambda number, frame: note("resized"))
leaving = Leaving(ask, lambda: note("killed"), deadline=deadline, rescue=lambda: note("rescued"),
                  terminal=None if mode in ("terminal", "raw-stuck") else ()).install()
if mode == "raw-stuck":  # as Textual leaves the terminal while it runs
    import termios, tty
    tty.setraw(0)
    mode = "stuck"
if mode == "taken":  # something else takes the wake-up descriptor, as asyncio's add_signal_handler does
    import socket
    theirs = socket.socketpair()
    theirs[1].setblocking(False)
    signal.set_wakeup_fd(theirs[1].fileno())
    mode = "calm"
note("ready")
if mode == "write-failed":
    leaving.terminal_gone(OSError(5, "Input/output error"))
if mode in ("stuck", "not-running"):
    full = queue.Queue(1)
    full.put(1)
    full.put(2)  # blocks for ever, as Textual's shutdown did in its writer queue
answered.wait()
note("left")
leaving.uninstall()
sys.exit(leaving.code)
'''


_STARTED: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def _end_stand_ins():
    """A stand-in that a failed test left waiting (it may be one that ignores signals) goes."""
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


def _start(tmp_path: Path, mode: str, deadline: float, **popen) -> tuple[subprocess.Popen, Path]:
    notes = tmp_path / "notes"
    script = ("import tutor\n" if "env" in popen else "") + STAND_IN  # tutor/__init__.py: the emulation
    proc = subprocess.Popen([sys.executable, "-c", script, mode, str(notes), str(deadline)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=popen.pop("stderr", subprocess.PIPE), **popen)
    _STARTED.append(proc)
    _wait_note(notes, "ready")
    return proc, notes


def _wait_note(notes: Path, text: str) -> list[str]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        lines = notes.read_text().splitlines() if notes.exists() else []
        if any(line.startswith(text) for line in lines):
            return lines
        time.sleep(0.02)
    raise AssertionError(f"never noted {text!r}")


def _notes(notes: Path) -> list[str]:
    return notes.read_text().splitlines()


def test_a_stuck_app_is_ended_at_the_deadline_drafts_rescued_sandbox_first(tmp_path):
    proc, notes = _start(tmp_path, "stuck", 1.0)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 128 + signal.SIGTERM
    assert _notes(notes) == ["ready", "asked 143", "rescued", "killed"]


def test_a_second_sigterm_ends_it_at_once(tmp_path):
    proc, notes = _start(tmp_path, "stuck", 3600.0)  # the deadline is not what ends it
    proc.send_signal(signal.SIGTERM)
    _wait_note(notes, "asked")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 128 + signal.SIGTERM
    assert _notes(notes) == ["ready", "asked 143", "killed"]


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_each_signal_asks_the_app_to_leave_with_its_code(tmp_path, name):
    number = getattr(signal, name)
    proc, notes = _start(tmp_path, "calm", 3600.0)
    proc.send_signal(number)
    assert proc.wait(60) == 128 + number
    assert _notes(notes) == ["ready", f"asked {128 + number}", "left"]
    assert b"KeyboardInterrupt" not in proc.stderr.read()  # SIGINT too: no exception in the main thread


def test_another_handlers_signal_is_no_reason_to_leave(tmp_path):
    """Every signal with a Python handler reaches the pipe: a resized terminal (Textual's SIGWINCH)
    must not end the app."""
    proc, notes = _start(tmp_path, "calm", 3600.0)
    proc.send_signal(signal.SIGWINCH)
    _wait_note(notes, "resized")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 128 + signal.SIGTERM
    assert _notes(notes) == ["ready", "resized", "asked 143", "left"]


def test_without_poll_or_sighup_signals_still_reach_the_watchdog(tmp_path):
    """As on Windows (``TORCH_TUTOR_EMULATE_WINDOWS``: no ``select.poll``, no SIGHUP, ``select``
    on sockets only): the wake-up channel is a socket and SIGTERM still asks the app to leave."""
    env = dict(os.environ, TORCH_TUTOR_EMULATE_WINDOWS="1")
    proc, notes = _start(tmp_path, "calm", 3600.0, env=env)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 128 + signal.SIGTERM, proc.stderr.read()
    assert _notes(notes) == ["ready", "asked 143", "left"]


def test_a_signal_still_arrives_when_something_else_takes_the_wake_up_descriptor(tmp_path):
    """Textual's web driver (``torch-tutor serve``) and any asyncio signal handler set their own
    wake-up descriptor; the handler itself then tells the watchdog."""
    proc, notes = _start(tmp_path, "taken", 3600.0)
    proc.send_signal(signal.SIGHUP)
    assert proc.wait(60) == 128 + signal.SIGHUP
    assert _notes(notes) == ["ready", "asked 129", "left"]


def test_an_app_whose_loop_is_not_running_is_asked_again_then_ended(tmp_path):
    proc, notes = _start(tmp_path, "not-running", 1.0)
    proc.send_signal(signal.SIGHUP)
    assert proc.wait(60) == 128 + signal.SIGHUP
    lines = _notes(notes)
    assert lines[-1] == "killed" and "rescued" in lines and lines.count("asked 129") >= 2, lines


def test_a_terminal_that_hangs_up_is_a_reason_to_leave(tmp_path):
    """No signal: the terminal is not the process's controlling terminal, so closing it sends
    none; its reads only see end-of-file and its writes fail."""
    master, slave = pty.openpty()
    try:
        proc, notes = _start(tmp_path, "terminal", 3600.0, stdin=slave, stderr=slave, start_new_session=True)
    finally:
        os.close(slave)
    os.close(master)
    assert proc.wait(60) == 129
    assert _notes(notes) == ["ready", "asked 129", "left"]


def test_a_hard_end_puts_a_terminal_that_is_still_there_back(tmp_path):
    import termios

    master, slave = pty.openpty()
    try:
        proc, notes = _start(tmp_path, "raw-stuck", 1.0, stdin=slave, stderr=slave, start_new_session=True)
        assert not termios.tcgetattr(slave)[3] & termios.ICANON  # raw while it runs
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 128 + signal.SIGTERM
        assert _notes(notes) == ["ready", "asked 143", "rescued", "killed"]
        modes = termios.tcgetattr(slave)[3]
        assert modes & termios.ICANON and modes & termios.ECHO  # typing shows again
        os.set_blocking(master, False)
        assert b"\x1b[?1049l\x1b[?25h" in os.read(master, 4096)  # off the alternate screen, cursor shown
    finally:
        os.close(slave)
        os.close(master)


def test_a_failed_write_to_the_terminal_is_a_reason_to_leave(tmp_path):
    proc, notes = _start(tmp_path, "write-failed", 3600.0)
    assert proc.wait(60) == 129
    assert _notes(notes) == ["ready", "asked 129", "left"]


# --------------------------------------------------------------------------- the app's side


async def test_leaving_writes_the_draft_ends_the_sandbox_then_exits_with_the_code(make_app, tmp_path, monkeypatch):
    from tutor.app import launch
    from tutor.app.widgets import editor

    monkeypatch.setattr(editor, "DEBOUNCE", 3600.0)  # only leaving can write the draft now
    app = make_app(start_lesson="exercises")
    killed: list[str | None] = []
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_text(pilot, app, "Double it")
        await pilot.press(*"# last words", "enter")
        await settle(pilot)
        reader = ProgressStore.open(tmp_path)
        try:
            assert "# last words" not in (reader.drafts.get("mini", "exercises", "double") or "")
            app.engine.kill_now = lambda: killed.append(reader.drafts.get("mini", "exercises", "double"))
            launch._leave_now(app, app.engine, 128 + signal.SIGTERM)
            await pilot.pause()
        finally:
            reader.close()
    assert app.return_code == 143
    assert len(killed) == 1 and "# last words" in (killed[0] or "")  # the draft was on disk first


def test_a_failed_write_is_said_once_and_the_rest_dropped():
    from tutor.app.textual_compat import _GuardedOutput

    class Gone:
        writes = 0

        def write(self, text):
            Gone.writes += 1
            raise OSError(5, "Input/output error")

        def flush(self):
            raise OSError(5, "Input/output error")

        def fileno(self):
            return 7

    told: list[BaseException] = []
    stream = _GuardedOutput(Gone(), told.append)
    assert stream.write("\x1b[?1049l") == 8
    stream.flush()
    assert stream.write("more") == 4
    assert len(told) == 1 and isinstance(told[0], OSError) and Gone.writes == 1
    assert stream.fileno() == 7


async def test_a_loop_that_never_answers_still_has_its_drafts_rescued_from_outside(make_app, tmp_path, monkeypatch):
    """Seen at 100 rounds: the loop laying out a flood of output for longer than the deadline,
    with the code typed just before the run still inside the debounce."""
    import asyncio

    from tutor.app import launch
    from tutor.app.widgets import editor

    monkeypatch.setattr(editor, "DEBOUNCE", 3600.0)
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_text(pilot, app, "Double it")
        await pilot.press(*"# typed before the flood", "enter")
        await settle(pilot)
        await asyncio.to_thread(launch._rescue_drafts, app)  # from the watchdog's side
        reader = ProgressStore.open(tmp_path)
        try:
            assert "# typed before the flood" in (reader.drafts.get("mini", "exercises", "double") or "")
        finally:
            reader.close()
