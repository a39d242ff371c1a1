"""The learner at 80x24, round 3 (issue 52): no key lost, runs in view, honest progress."""

from __future__ import annotations

import asyncio

import pytest
from textual import events
from textual.widgets import Input

from app_support import screen_text, settle
from tutor.core import i18n

SMALL = (80, 24)


@pytest.fixture(autouse=True)
def _english_after(monkeypatch):
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    yield
    i18n.set_language(None)


def _key(char: str) -> events.Key:
    """A key as the terminal's driver posts it to the app."""
    names = {" ": "space", "(": "left_parenthesis", ")": "right_parenthesis", "\n": "enter", "\t": "tab"}
    return events.Key(names.get(char, char), char if char not in "\n\t" else None)


async def _burst(app, text: str, gap: int) -> None:
    """``text`` posted key by key as a terminal's burst arrives: ``gap`` turns of the event loop
    between two keys (0: all queued at once)."""
    for char in text:
        app.post_message(_key(char))
        for _ in range(gap):
            await asyncio.sleep(0)


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("gap", [0, 1, 2, 3, 4, 5, 6, 8, 12, 20])
async def test_a_filter_typed_in_a_burst_keeps_every_key(make_app, language, gap):
    """Issue 52, item 4: "fixing code" typed in one burst left "fi" in the filter. The first key
    moves the focus to the filter; the keys behind it went to the list, reached the screen after
    the focus had moved and were dropped ("fng code", "fxing code" here before the fix)."""
    app = make_app(resume=False, language=language)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await _burst(app, "fixing code", gap)
        await settle(pilot, 4)
        assert app.screen.query_one("#filter", Input).value == "fixing code"


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("gap", [0, 1, 3, 8])
async def test_keys_typed_as_a_new_step_appears_go_to_its_editor_in_order(make_app, language, gap):
    """Issue 52, item 4: keys typed within a frame or two of F4 went to the page (the new step's
    editor had no focus yet) or to the old step. They are held and handed to the new focus."""
    from tutor.app.widgets.editor import CodeEditor

    app = make_app(start_lesson="basics", language=language)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        app.post_message(events.Key("f4", None))  # to the example, whose editor takes the keys
        await _burst(app, "# mine\n", gap)
        await settle(pilot, 6)
        editor = app.screen.query_one(CodeEditor)
        assert app.focused is editor
        assert editor.text.startswith("# mine\nimport torch"), editor.text
