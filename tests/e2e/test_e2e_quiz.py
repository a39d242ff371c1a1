"""`torch-tutor quiz` in a real terminal at 80x24 (issue 51): typed answers at the `?` prompt with
the terminal's own line editing, nothing wider than the terminal (tmux's joined lines show any
line it had to wrap), and Ctrl-C at a prompt ending the sitting without a traceback, every answer
given kept."""

from __future__ import annotations

import shlex

from test_e2e_tmux import TUTOR, Terminal, pytestmark  # noqa: F401  (same markers)

from tutor.cli.common import cells
from tutor.pack.scaffold import scaffold


def test_quiz_in_a_terminal_at_80_by_24_and_ctrl_c(tmp_path):
    pack = tmp_path / "views"
    scaffold(pack, title="Views")
    data = tmp_path / "data"
    term = Terminal(tmp_path)
    command = (f"{shlex.quote(str(TUTOR))} --data-dir {shlex.quote(str(data))} quiz {shlex.quote(str(pack))}; "
               "echo EXIT=$?; sleep 60")
    try:
        term.start(raw=command)
        term.wait_for("Type your answer; an empty line ends it.")
        term.type("views share memory")
        term.keys("BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "BSpace")  # the terminal's line editing
        term.type("storage")
        term.keys("Enter", "Enter")
        term.wait_for("How did you do?")
        term.type("maybe")
        term.keys("Enter")
        term.wait_for("Type 1, 2, 3 or 4.")
        term.type("3")
        term.keys("Enter")
        term.wait_for("Type the letter of your answer")
        term.keys("C-c")
        screen = term.wait_for("EXIT=130")
        assert "Stopped: every answer you gave is kept." in screen and "Traceback" not in screen
        joined = term.tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "t")
        assert all(cells(line.rstrip()) <= 80 for line in joined.splitlines()), joined
    finally:
        term.close()
    from tutor.record.progress import ProgressStore

    store = ProgressStore.open(data)
    try:
        kept = store.steps.get("views", "first-lesson", "why-views")
    finally:
        store.close()
    assert (kept.quiz_answer, kept.quiz_correct) == ("views share storage", True)
