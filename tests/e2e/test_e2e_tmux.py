"""The real `torch-tutor` in a real terminal (tmux): solve an exercise, survive a kill -9, keep
every key of a burst or a paste typed as keys, and stay responsive under a flood of output.

At 80x24, the size most terminals open at and the tutor's design size. The hostile tests check
the terminal itself: its title (OSC 0) and its clipboard (OSC 52, which tmux keeps as a buffer
with set-clipboard on) must be untouched by anything a learner's code prints or a paste holds.

Everything is real: the console script, the terminal, the sandbox, the check engine and the
progress file. The screen is read with capture-pane, as a learner would read it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tutor.words.i18n import TABLE

MINI = Path(__file__).parents[1] / "app" / "packs" / "mini"
TUTOR = Path(sys.executable).with_name("torch-tutor")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
    pytest.mark.skipif(not TUTOR.exists(), reason="needs the installed torch-tutor command"),
]


class Terminal:
    """One tmux server of our own (-L), so the test never touches the developer's sessions."""

    def __init__(self, tmp_path: Path):
        self.socket = f"tt-{uuid.uuid4().hex[:8]}"
        self.tmp = tmp_path

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True,
                              check=True, timeout=30).stdout

    def start(self, *argv: str, size: tuple[int, int] = (80, 24), raw: str | None = None) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
        env.update(TORCH_TUTOR_CONFIG_DIR=str(self.tmp / "config"), TERM="xterm-256color")
        command = raw or " ".join(["exec", str(TUTOR), "--data-dir", str(self.tmp / "data"), "--pack", str(MINI),
                                   *argv])
        subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", "start-server", ";",
                        "set", "-g", "set-clipboard", "on", ";",
                        "new-session", "-d", "-x", str(size[0]), "-y", str(size[1]), "-s", "t", command],
                       check=True, env=env, timeout=30)

    def title(self) -> str:
        return self.tmux("display-message", "-p", "-t", "t", "#{pane_title}").strip()

    def buffers(self) -> str:
        return subprocess.run(["tmux", "-L", self.socket, "list-buffers"], capture_output=True, text=True,
                              timeout=30).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "t")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "t", *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "t", "-l", text)

    def wait_for(self, text: str, timeout: float = 120.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                screen = self.screen()
            except subprocess.CalledProcessError:  # the session ended
                screen = ""
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never appeared; the screen was:\n{screen}")

    def pid(self) -> int:
        return int(self.tmux("display-message", "-p", "-t", "t", "#{pane_pid}").strip())

    def alive(self) -> bool:
        return subprocess.run(["tmux", "-L", self.socket, "has-session", "-t", "t"],
                              capture_output=True, timeout=30).returncode == 0

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=30)


@pytest.fixture
def terminal(tmp_path):
    term = Terminal(tmp_path)
    yield term
    term.close()


def _progress(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    env["TORCH_TUTOR_CONFIG_DIR"] = str(tmp_path / "config")
    out = subprocess.run([str(TUTOR), "--data-dir", str(tmp_path / "data"), "--pack", str(MINI), "progress",
                          "--json"], capture_output=True, text=True, check=True, env=env, timeout=120)
    return json.loads(out.stdout)


def test_solve_an_exercise_in_a_real_terminal(terminal, tmp_path):
    terminal.start("open", "mini/exercises")
    terminal.wait_for("Double it")
    terminal.wait_for("f6 Check")  # the footer is drawn once the step is mounted and the editor focused
    terminal.wait_for("sandbox: ready")
    terminal.keys("Down", "Down", "Down", "End")
    terminal.type("  # my first try")
    terminal.wait_for("# my first try", timeout=30)
    terminal.keys("F6")  # Check: it fails
    screen = terminal.wait_for("hint: Multiply by two.")  # the report scrolls itself fully into view
    assert "0/1 checks passed." in screen
    # One burst, as tmux delivers a fast typist: the cursor keys must not be overtaken by the
    # text typed after them (they were, while the app was busy; see CodeEditor._on_key).
    terminal.keys("C-Home", "Down", "Down", "Down", "End")  # typing brings the editor back into view
    for _ in range(len("  # my first try")):
        terminal.keys("BSpace")
    terminal.type(" * 2")
    terminal.wait_for("return x * 2", timeout=30)
    terminal.keys("F6")
    screen = terminal.wait_for("Solved!")
    assert "The check passed." in screen
    terminal.keys("C-q")
    deadline = time.monotonic() + 30
    while terminal.alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not terminal.alive()
    lessons = _progress(tmp_path)["packs"][0]["lessons"]
    assert lessons[1]["exercises_solved"] == 1 and lessons[1]["state"] == "done"


def test_a_killed_terminal_loses_no_typing(terminal, tmp_path):
    terminal.start("open", "mini/exercises")
    terminal.wait_for("Double it")
    terminal.wait_for("f6 Check")  # the step is mounted
    terminal.type("# typed before the crash\n")
    terminal.wait_for("# typed before the crash")
    time.sleep(1.0)  # longer than the draft debounce
    os.kill(terminal.pid(), 9)
    terminal.close()

    again = Terminal(tmp_path)
    try:
        again.start()  # plain start: resumes at the exercise, draft in the editor
        again.wait_for("Double it")
        screen = again.wait_for("# typed before the crash")
        assert "def double(x):" in screen  # the rest of the code is intact too
    finally:
        again.close()


def test_keys_in_a_burst_as_the_app_opens_arrive_in_order(terminal):
    """Cursor keys and text sent in one burst right as the step appears (the app is at its
    busiest: first frame, colours, sandbox warm-up) are applied in the order they were sent.
    Before CodeEditor ran its own bindings, text overtook the cursor keys in about half the runs."""
    terminal.start("open", "mini/exercises")
    terminal.wait_for("f6 Check")
    terminal.keys("Down", "Down", "Down", "End")
    terminal.type(" * 2")
    screen = terminal.wait_for("return x * 2", timeout=30)
    assert "* 2import torch" not in screen


OSC = "\x1b]0;pwned\x07\x1b]52;c;cm0gLXJmIH4=\x07"


def test_the_detector_sees_an_attack(terminal):
    """Control: a program that prints the escapes does set the title and the clipboard here."""
    terminal.start(raw="sleep 0.3; printf '\\033]0;pwned\\007\\033]52;c;cm0gLXJmIH4=\\007'; sleep 30")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and "pwned" not in terminal.title():
        time.sleep(0.1)
    assert terminal.title() == "pwned" and "rm -rf" in terminal.buffers()


def test_an_exception_message_cannot_touch_the_terminal(terminal):
    terminal.start("open", "mini/basics")
    terminal.wait_for("Welcome")
    title = terminal.title()
    terminal.keys("F4")  # the example
    terminal.wait_for("f5 Run")
    terminal.wait_for("sandbox: ready")
    terminal.keys("C-a")  # select all the code, then replace it by typing
    terminal.type('raise ValueError(chr(27)+"]52;c;cm0gLXJmIH4="+chr(7))')
    terminal.wait_for("cm0gLXJmIH4=", timeout=30)
    terminal.keys("F5")
    screen = terminal.wait_for("␛]52;c;")  # shown, inert
    assert "ValueError" in screen
    # (A paste with raw escapes is tested with Pilot, tests/app/test_app_hostile_text.py: tmux's
    # own paste-buffer already rewrites control characters, so it cannot deliver the attack.)
    time.sleep(0.5)
    assert terminal.title() == title != "pwned"
    assert "rm -rf" not in terminal.buffers() and terminal.buffers().strip() == ""


def test_review_with_no_keyboard_says_it_needs_a_terminal_and_exits_2(terminal, tmp_path):
    """Found by a new-user review: `torch-tutor review </dev/null` drew the app and waited until
    killed. In a terminal whose input is /dev/null, one line says why and which commands work."""
    command = (f"{TUTOR} --data-dir {tmp_path / 'data'} --pack {MINI} review </dev/null; "
               "echo EXIT=$?; sleep 60")
    terminal.start(raw=command)
    screen = terminal.wait_for("EXIT=", timeout=60)
    assert "EXIT=2" in screen, screen
    assert "the app needs a terminal" in screen and "review --due" in screen, screen
    assert "Review" not in screen.replace("review --due", ""), screen  # nothing of the app drawn


def test_tab_on_arriving_at_an_exercise_does_not_break_its_code(terminal, tmp_path):
    """Found by a new-user review: Tab pressed to "get into" the (already focused) editor
    indented line 1, and Check answered "IndentationError at line 1"."""
    terminal.start("open", "mini/exercises")
    terminal.wait_for("f6 Check")
    terminal.wait_for("sandbox: ready")
    terminal.keys("Tab")
    terminal.wait_for("already in the editor", timeout=30)
    terminal.keys("F6")
    screen = terminal.wait_for("hint: Multiply by two.")  # the starter's own failure: the checks ran
    assert "got: " in screen and "unexpected indent" not in screen


def _esc_leaves_and_tab_comes_back(terminal, focused: str) -> None:
    """The box that has the keys says ``focused`` (and that Esc leaves); after Esc its frame says
    the keys drive the lesson and typing changes nothing; Tab goes back in, and it says so."""
    screen = terminal.wait_for(f"{focused} · Esc leaves", timeout=30)
    assert "not editing" not in screen
    terminal.keys("Escape")
    terminal.wait_for("not editing: keys drive the lesson · Tab or click here to type", timeout=30)
    terminal.type("zzz")
    terminal.keys("Tab")
    screen = terminal.wait_for(focused, timeout=30)
    assert "zzz" not in screen  # typed while the lesson had the keys: not in the box


def test_the_editor_frame_says_where_keys_go(terminal):
    """Found by a new-user review: on arriving at an exercise the editor had focus and nothing
    on screen said so. At 80x24 the editor's frame says it; Esc leaves it (and the frame says
    so, and typing changes nothing), Tab goes back in."""
    terminal.start("open", "mini/exercises")
    terminal.wait_for("f6 Check")
    _esc_leaves_and_tab_comes_back(terminal, "✎ editing: keys type into your code")
    terminal.type("# back in")
    screen = terminal.wait_for("# back in", timeout=30)
    assert "not editing" not in screen


def _hangs_under(screen: str, start: str, column_of: str) -> None:
    """The report's line starting with ``start`` wraps, and the next line's text starts under
    ``column_of`` in it (under its own text, not at the box's column 0)."""
    lines = screen.splitlines()
    index = next(i for i, line in enumerate(lines) if ("│ " + start) in line)
    below = lines[index + 1]
    inner = below.index("│") + 2  # the box's border and its padding
    at = len(below) - len(below[inner:].lstrip())
    assert below[inner:].strip().strip("│").strip() and at == lines[index].index(column_of), lines[index:index + 2]


def test_wrapped_report_lines_hang_under_their_text(terminal):
    """Found by a new-user review: at 80 columns only the per-check lines of the report hung; what
    the code printed and the traceback of code that does not run wrapped to column 0."""
    terminal.start("open", "mini/exercises")
    terminal.wait_for("f6 Check")
    terminal.wait_for("sandbox: ready")
    terminal.keys("Down", "Down", "Down", "Down", "End")
    terminal.type('print("    HANGING " + "word " * 30)')
    terminal.wait_for('"word " * 30)', timeout=30)
    terminal.keys("F6")
    screen = terminal.wait_for("│     HANGING word", timeout=120)  # what the code printed, in the report
    _hangs_under(screen, "    HANGING", "HANGING")
    terminal.type(" " + "+ many_words_here " * 5 + "+ LAST +")  # now the line does not parse
    terminal.wait_for("LAST +", timeout=30)  # (all of it typed before the check starts)
    terminal.keys("F6")
    screen = terminal.wait_for("SyntaxError", timeout=120)
    _hangs_under(screen, '    print("    HANGING', "print")  # the traceback's code line


def test_a_prediction_box_says_where_keys_go_and_a_missed_one_hangs(terminal):
    """Found by a new-user review, at 80x24: a quiz's answer box gave no sign of having the keys
    (the code editor's frame does), and in a missed prediction's comparison a tensor's indented
    row, too long for its column, wrapped to the column's start."""
    terminal.start("open", "mini/basics")
    terminal.wait_for("Step 1/8")
    for step in range(2, 9):
        terminal.keys("F4")
        terminal.wait_for(f"Step {step}/8", timeout=30)
    _esc_leaves_and_tab_comes_back(terminal, "✎ editing: keys type into your answer")
    terminal.wait_for("sandbox: ready")
    terminal.type("tensor([[0.1000, 0.2000, 0.3000, 0.4000],")
    terminal.keys("Enter")
    terminal.type("        [0.5000, 0.6000, 0.7000, 0.8000]])")
    terminal.wait_for("0.8000]])", timeout=30)
    terminal.keys("F5")
    screen = terminal.wait_for("Actual output", timeout=120)
    lines = screen.splitlines()
    index = next(i for i, line in enumerate(lines) if "│         [0.5000" in line)  # the prediction's column
    column = lines[index].index("[0.5000")
    below = lines[index + 1]
    assert below[column - 8:column].strip() == "" and below[column:column + 1].strip(), lines[index:index + 2]


# ------------------------------------------- keys typed in a burst, Tab on a block, a flood of output (issue 28)


#: The editor's frame once it has the keys: a new step is drawn a moment before its focus is set,
#: so a test types after this, as a learner does after seeing where the keys go.
EDITING = TABLE["en"]["editor.title.focused"]


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


# ------------------------------------------- a paste that arrives as keystrokes (issue 52)


PASTED = "def double(x):\n    if x is None:\n        return 0\n    return x * 2\n\nprint(double(21))\n"


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
