"""`torch-tutor serve` in headless Chromium: a lesson, an example, a quiz, an exercise and its
report, at 80x24 and in a large window; closing a tab loses nothing; a second tab is told.

Cost: one server for the module (about 2 s to start); each tab is an app process with its own
sandbox worker, whose torch warm-up dominates (see the README's test budget).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from tests.browser.harness import MINI, Served, Tab, clean_env, command_lines
from tutor.words.i18n import TABLE

#: The editor's frame once it has the keys: a new step is drawn a moment before its focus is set,
#: so a test types after this, as a learner does after seeing where the keys go.
EDITING = TABLE["en"]["editor.title.focused"]

pytestmark = [pytest.mark.slow, pytest.mark.browser]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    server = Served(tmp_path_factory.mktemp("serve"), "mini")  # each tab resumes where the last left
    yield server
    server.stop()


@pytest.fixture
def context(browser, served):
    """A fresh browser profile per test (no cookie yet), and a fresh progress file."""
    subprocess.run([sys.executable, "-m", "tutor", "--data-dir", str(served.data), "reset", "--yes"],
                   env=clean_env(served.tmp), capture_output=True, timeout=120, check=True)
    context = browser.new_context()
    yield context
    context.close()


def learn(tab: Tab) -> None:
    """What a learner does on the mini pack, with the keys the footer shows."""
    tab.wait_for("^r Resume")  # the contents, the first time
    tab.press("Control+r")  # Resume (the page's terminal keeps ctrl+r from reloading the page)
    tab.wait_for("Welcome")
    tab.press("F4")
    tab.wait_for("A shape error")
    tab.wait_for("sandbox: ready")
    tab.press("F5")  # Run: F5 reaches the app (the page's terminal keeps the browser from reloading)
    tab.wait_for("4x8 and 16x2")
    tab.press("F4")
    tab.wait_for("Which numbers")
    tab.click_text("the **inner**".replace("**", ""))  # the quiz's right answer, with the mouse
    tab.wait_for("Correct.")
    for _ in range(6):  # the other quizzes, then the next lesson
        tab.press("F4")
    tab.wait_for("Double it")
    tab.wait_for("f6 Check")
    tab.wait_for(EDITING)  # as a learner looks: the step is drawn a moment before its editor has the keys
    tab.press("ArrowDown", "ArrowDown", "ArrowDown", "End")
    tab.type(" * 2")
    tab.wait_for("return x * 2")
    tab.press("F6")
    screen = tab.wait_for("Solved!")
    assert "The check passed." in screen


def progress(served: Served) -> dict:
    out = subprocess.run([sys.executable, "-m", "tutor", "--data-dir", str(served.data), "--pack", str(MINI),
                          "progress", "--json"], env=clean_env(served.tmp), capture_output=True, text=True,
                         timeout=120, check=True)
    return json.loads(out.stdout)


@pytest.mark.parametrize("size", [(80, 24), None], ids=["80x24", "large"])
def test_a_lesson_an_example_a_quiz_and_an_exercise_in_a_browser(served, context, size):
    tab = Tab(context, served.url, size=size)
    if size is None:
        tab.page.set_viewport_size({"width": 1600, "height": 1000})
        tab.wait_for("^r Resume")
        deadline = time.monotonic() + 60  # the page's resize message may come after the contents
        while not (tab.size[0] > 150 and tab.size[1] > 40) and time.monotonic() < deadline:
            tab.page.wait_for_timeout(100)
        assert tab.size[0] > 150 and tab.size[1] > 40, tab.sizes
    else:
        assert tab.size == (80, 24)
    learn(tab)
    tab.close()
    lessons = progress(served)["packs"][0]["lessons"]
    assert lessons[1]["exercises_solved"] == 1 and lessons[0]["quiz_correct"] >= 1


def test_closing_a_tab_loses_nothing_a_second_tab_is_told_and_quit_is_a_browser_key(served, context):
    """ctrl+q is Firefox's (quit the browser) on Linux: a tab shows and binds ^g for Quit."""
    first = Tab(context, served.url, size=(80, 24))
    screen = first.wait_for("^r Resume")
    assert "^g Quit" in screen and "^q" not in screen  # the contents' footer has room for Quit
    first.press("Control+r")
    first.wait_for("Welcome")
    for _ in range(8):
        first.press("F4")
    first.wait_for("Double it")
    screen = first.wait_for("f6 Check")  # (at 80 columns an exercise's footer leaves Quit to F1's list)
    assert "^q" not in screen
    first.wait_for(EDITING)
    first.type("# typed in the browser\n")
    first.wait_for("# typed in the browser")

    second = Tab(context, served.url, size=(80, 24))  # the same data folder, as a second terminal
    second.wait_for("Another torch-tutor (process")
    second.close()

    first.close()  # no quit, no save: the tab just goes
    again = Tab(context, served.url, size=(80, 24))
    again.wait_for("# typed in the browser")
    screen = again.wait_for("def double(x):")  # the rest of the code is intact, at the same exercise
    assert "double" in screen.splitlines()[0] or "Double it" in screen
    assert "Another torch-tutor" not in screen  # the closed tabs' apps have gone
    # The other keys the footers show, in the browser: the review queue (F10), the contents (F2),
    # the filter (ctrl+f, which the page keeps from the browser's own find).
    again.press("Escape", "F10")
    again.wait_for("Review")
    again.press("F2")
    again.wait_for("^f Filter")
    again.press("Control+f")
    again.type("Fixing")  # once: no key typed as the filter takes the focus is lost (issue 52)
    deadline = time.monotonic() + 60  # "Fixing" is on the screen before the filter applies (Resume's line)
    while "Basics" in (screen := again.text()) and time.monotonic() < deadline:
        again.page.wait_for_timeout(100)
    assert "Basics" not in screen and "Fixing code" in screen, screen  # narrowed to the one lesson
    again.press("Control+g")  # Quit, as the footer says
    again.page.wait_for_function("document.body.classList.contains('-closed')", timeout=60_000)
    assert again.closed  # the app quit and the page says the session ended
    again.close()


def test_a_filter_typed_in_a_burst_keeps_its_spaces(served, context):
    """Issue 52, item 4: the browser's contents filter lost its first keys as the terminal's did:
    keys typed in one burst after the one that moves the focus to the filter went to the list."""
    tab = Tab(context, served.url, size=(80, 24))
    tab.wait_for("^r Resume")
    tab.type("fixing code")  # Chromium's key events, as fast as Playwright sends them
    tab.wait_for("fixing code", timeout=30)
    tab.type(" or")
    screen = tab.wait_for("No lesson matches 'fixing code or'", timeout=30)
    assert "2. Fixing code" not in screen
    tab.close()


def _get(url: str, cookie: str | None = None, origin: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers={k: v for k, v in (("Cookie", cookie), ("Origin", origin)) if v})

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    try:
        with urllib.request.build_opener(NoRedirect).open(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_no_token_no_page_no_socket_and_the_token_is_printed_once(served, context):
    base = served.url.split("?")[0]
    token = served.url.split("token=")[1]
    for path in ("", "static/js/textual.js", "ws"):
        status, body = _get(base + path)
        assert status == 403 and "access token" in body, (path, status)
    assert _get(base + "?token=wrong" + token)[0] == 403
    status, _ = _get(served.url)
    assert status == 303  # into a cookie, and out of the address bar
    # A page of another site in the same browser: its socket is refused even with the cookie.
    tab = Tab(context, served.url)
    cookie = next(c for c in context.cookies() if c["name"].startswith("torch_tutor_"))
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert tab.page.url == base  # the token is gone from the address bar (and the history)
    jar = f"{cookie['name']}={cookie['value']}"
    assert _get(base + "ws", cookie=jar, origin="http://evil.example")[0] == 403
    assert _get(base, cookie=jar, origin=None)[0] == 200
    tab.close()
    # Printed once, on standard output; never in the log, never given to an app process.
    assert served.output().count(token) == 1
    assert token not in served.errors()
    assert not [line for line in command_lines() if token in line]
