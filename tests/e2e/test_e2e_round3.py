"""The learner at 80x24 in a real terminal (tmux), round 3 (issue 52): a paste that arrives as
keystrokes (no bracketed paste) keeps its indentation and undoes as one step."""

from __future__ import annotations

import re
import time

import pytest

from test_e2e_tmux import MINI, TUTOR, Terminal, pytestmark  # noqa: F401  (same markers)
from tutor.core.i18n import TABLE

PASTED = "def double(x):\n    if x is None:\n        return 0\n    return x * 2\n\nprint(double(21))\n"


@pytest.fixture
def terminal(tmp_path):
    term = Terminal(tmp_path)
    yield term
    term.close()


def code_lines(screen: str) -> list[str]:
    """The code editor's lines as the screen shows them: after the line number, without the frame."""
    found = []
    for line in screen.splitlines():
        match = re.match(r"^\s*▊\s*(\d+)  (.*?)\s*▎$", line)
        if match:
            found.append(match.group(2).rstrip())
    return found


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_paste_typed_by_the_terminal_keeps_its_indentation_and_undoes_at_once(terminal, tmp_path, language):
    """Issue 52, item 1: `tmux paste-buffer` without -p types the text (lines end in CR): each
    pasted line took the auto-indent of the line before it, a staircase, and ctrl+z undid one
    line at a time."""
    terminal.start("--language", language, "open", "mini/exercises")
    terminal.wait_for(TABLE[language]["editor.title.focused"])
    terminal.keys("C-a", "Delete")
    deadline = time.monotonic() + 30
    while code_lines(terminal.screen()) != [""] and time.monotonic() < deadline:  # as a learner sees it
        time.sleep(0.2)
    source = tmp_path / "paste.txt"
    source.write_text(PASTED)
    terminal.tmux("load-buffer", "-b", "p", str(source))
    terminal.tmux("paste-buffer", "-b", "p", "-t", "t")  # no -p: typed as keys, no paste brackets
    screen = terminal.wait_for("print(double(21))", timeout=30)
    assert code_lines(screen)[:6] == PASTED.splitlines(), screen
    terminal.keys("C-z")  # one undo takes the whole paste away
    deadline = time.monotonic() + 30
    while code_lines(screen := terminal.screen()) != [""] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert code_lines(screen) == [""], screen  # (ctrl+a, Delete: the code the paste replaced was empty)
