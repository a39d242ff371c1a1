"""Review in a real terminal (tmux): a choice answered in a lesson is due a month later on the
command line; closing the terminal (SIGHUP) or SIGTERM right after typing loses nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from datetime import datetime, timedelta

import pytest

from test_e2e_tmux import MINI, TUTOR, Terminal, pytestmark  # noqa: F401  (same markers)


@pytest.fixture
def terminal(tmp_path):
    term = Terminal(tmp_path)
    yield term
    term.close()


def _cli(tmp_path, *argv: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    env["TORCH_TUTOR_CONFIG_DIR"] = str(tmp_path / "config")
    return subprocess.run([str(TUTOR), "--data-dir", str(tmp_path / "data"), "--pack", str(MINI), *argv],
                          capture_output=True, text=True, env=env, timeout=120)


def _wait_gone(terminal: Terminal) -> None:
    deadline = time.monotonic() + 30
    while terminal.alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not terminal.alive()


def test_a_choice_answered_in_a_lesson_is_due_a_month_later(terminal, tmp_path):
    terminal.start("open", "mini/basics")
    terminal.wait_for("Shapes first")
    for _ in range(2):  # intro -> example -> the choice quiz
        terminal.keys("F4")
        time.sleep(0.5)
    terminal.wait_for("Which numbers")
    screen = terminal.wait_for(") 8 and 16")  # drawn "( )" (issue 28: was ▐●▌, picked or not)
    if screen.index(") 4 and 2") < screen.index(") 8 and 16"):  # choices are shuffled per learner
        terminal.keys("Down")
        time.sleep(0.3)
    terminal.keys("Enter")  # the right choice, at the first try
    terminal.wait_for("Correct.")
    terminal.keys("C-q")
    _wait_gone(terminal)

    now = _cli(tmp_path, "review", "--due", "--json")
    assert now.returncode == 0, now.stderr
    assert json.loads(now.stdout)["due"] == []  # answered right just now: not due today
    later = (datetime.now() + timedelta(days=30)).isoformat(timespec="minutes")
    out = _cli(tmp_path, "review", "--due", "--json", "--at", later)
    assert out.returncode == 0, out.stderr
    due = json.loads(out.stdout)["due"]
    assert [(d["id"], d["pack"], d["kind"], d["new"]) for d in due] == [("basics/which-dim", "mini", "choice", False)]
    text = _cli(tmp_path, "review", "--due", "--at", later)
    assert "basics/which-dim" in text.stdout and "Basics › Which numbers" in text.stdout
    progress = _cli(tmp_path, "progress")
    assert "review: 0 due now, 0 new, next in 2 days (1 cards" in progress.stdout

    terminal.start("review")  # straight into the review queue
    terminal.wait_for("Nothing to review now. Next review in 2 days.")
    terminal.wait_for("Reviews due, next 14 days")
    terminal.keys("C-q")
    _wait_gone(terminal)


@pytest.mark.parametrize("how", ["SIGHUP", "SIGTERM"])
def test_typing_just_before_a_signal_is_saved(terminal, tmp_path, how):
    terminal.start("open", "mini/exercises")
    terminal.wait_for("f6 Check")
    terminal.type("# typed right before the end\n")
    terminal.wait_for("# typed right before the end")
    # No pause: the draft debounce (0.4 s) has not fired yet.
    os.kill(terminal.pid(), getattr(signal, how))
    _wait_gone(terminal)
    import sqlite3

    conn = sqlite3.connect(tmp_path / "data" / "progress.sqlite3")
    code = conn.execute("SELECT code FROM drafts WHERE step='double'").fetchone()
    conn.close()
    assert code is not None and "# typed right before the end" in code[0]
