"""The learner at 80x24 in a real terminal (tmux), round 2 (issue 28): keys typed in a burst
keep their spaces, Tab indents a selected block, and an output of 200,000 lines neither freezes
the page nor hides the next run."""

from __future__ import annotations

import time

import pytest

from test_e2e_tmux import MINI, TUTOR, Terminal, pytestmark  # noqa: F401  (same markers)
from tutor.core.i18n import TABLE

#: The editor's frame once it has the keys: a new step is drawn a moment before its focus is set,
#: so a test types after this, as a learner does after seeing where the keys go.
EDITING = TABLE["en"]["editor.title.focused"]


@pytest.fixture
def terminal(tmp_path):
    term = Terminal(tmp_path)
    yield term
    term.close()


def test_a_filter_typed_in_a_burst_keeps_its_spaces(terminal):
    """tmux delivers "fixing code" in one burst: the first key moves the focus to the filter,
    the rest arrive before it has moved. The space was dropped ("fixingcode")."""
    terminal.start()
    terminal.wait_for("2. Fixing code")
    terminal.type("fixing code")
    screen = terminal.wait_for("fixing code", timeout=30)
    assert "fixingcode" not in screen
    terminal.type(" or")
    screen = terminal.wait_for("No lesson matches 'fixing code or'", timeout=30)
    assert "2. Fixing code" not in screen


def test_an_output_of_200000_lines_does_not_freeze_the_page(terminal):
    """An example printing 200,000 lines (the run is capped at 1 MiB) left ~96,000 lines on the
    page; keys took 10-20 s to register and the next Run showed the old output again. Now the box
    shows the last lines with a note, and the next Run's output replaces it."""
    terminal.start("open", "mini/basics")
    terminal.wait_for("Welcome")
    terminal.keys("F4")  # the example
    terminal.wait_for("f5 Run")
    terminal.wait_for(EDITING)  # the new step's editor has the keys (drawn a moment before it does)
    terminal.wait_for("sandbox: ready")
    terminal.keys("C-a")
    terminal.type("for i in range(200000): print('line', i)")
    terminal.wait_for("range(200000)", timeout=30)
    terminal.keys("F5")
    screen = terminal.wait_for("earlier lines not shown", timeout=120)
    assert "line 199999" not in screen  # the top of the box: its note, then the last lines
    # The box fills while the run streams; F5 during the run only says "a run is in progress"
    # (seen once under CI's load), so the next Run waits for this one's end, as a learner would.
    terminal.wait_for("Stopped: the program printed more than", timeout=120)
    terminal.wait_for("f5 Run", timeout=60)
    # The page answers keys: the editor (still focused) takes new code, and Run shows its output.
    terminal.keys("C-a")
    terminal.type('print("sec" + "ond", "run")')
    terminal.keys("F5")
    screen = terminal.wait_for("second run", timeout=120)  # ("Run 2" heads the box as the run starts)
    assert "Run 2" in screen
    assert "earlier lines not shown" not in screen


def test_tab_indents_and_shift_tab_dedents_a_selected_block(terminal):
    """Select two lines with Shift+Down / Shift+End, Tab: both move right a level (they became
    one indented blank line); Shift+Tab: back (it left the editor)."""
    terminal.start("open", "mini/exercises")
    terminal.wait_for("Double it")
    terminal.wait_for("f6 Check")
    terminal.keys("Down", "Down")  # line 3: def double(x):
    terminal.keys("S-Down", "S-End")
    terminal.keys("Tab")
    screen = terminal.wait_for("    def double(x):", timeout=30)
    assert "        return x" in screen and "✎ editing" in screen
    terminal.keys("BTab")
    terminal.wait_for("3  def double(x):", timeout=30)
    screen = terminal.wait_for("4      return x", timeout=30)
    assert "✎ editing" in screen  # still in the editor
