"""The learner at 80x24 in a real terminal (tmux), round 2 (issue 28): keys typed in a burst
keep their spaces, Tab indents a selected block, and an output of 200,000 lines neither freezes
the page nor hides the next run."""

from __future__ import annotations

import time

import pytest

from test_e2e_tmux import MINI, TUTOR, Terminal, pytestmark  # noqa: F401  (same markers)


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
