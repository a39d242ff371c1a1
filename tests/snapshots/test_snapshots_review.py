"""Pictures of the review screen at 80x24 (pytest-textual-snapshot), with a controlled clock:
an item in the queue, a free answer waiting for its 1-4 rating, and the summary with its charts,
each in English and in Chinese.

Update after an intended change with ``pytest tests/snapshots --snapshot-update``.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone

import pytest
from textual.screen import ModalScreen

SMALL = (80, 24)
DAY = 86400.0
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc).timestamp()


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.delenv("TZ")
    time.tzset()


def _reviewing(snapshot_app, *met, language: str):
    app = snapshot_app("basics", language=language)
    store = app.store
    store.cards.clock = lambda: T0
    for key, answer, correct in met:
        store.answers.record_quiz(*key, answer, correct)
    store.cards.clock = lambda: T0 + 3 * DAY
    return app


async def _settle(pilot, *keys: str) -> None:
    await pilot.pause()
    for _ in range(200):
        if pilot.app.started:
            break
        await pilot.pause(0.01)
    await pilot.press("f10")
    for _ in range(3):
        await pilot.pause()
    pilot.app.screen._elapsed = lambda since: 30.0
    for key in keys:
        if key.startswith("#"):
            await pilot.click(key)
        else:
            await pilot.press(key)
        for _ in range(3):
            await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    app = pilot.app
    if not isinstance(app.screen, ModalScreen):
        app.screen.set_focus(None)
    for screen in app.screen_stack:
        for widget in screen.query("TextArea, Input"):
            widget.cursor_blink = False
        for bar in screen.query("StatusBar"):
            bar.refresh_status()
    await pilot.pause()
    await pilot.pause()


WHICH = (("mini", "basics", "which-dim"), "0", True)
FREE = (("mini", "basics", "why-shapes"), "shapes", True)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_review_choice_item(snap_compare, snapshot_app, language):
    app = _reviewing(snapshot_app, WHICH, FREE, language=language)
    assert snap_compare(app, terminal_size=SMALL, run_before=_settle)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_review_free_answer_waiting_for_a_rating(snap_compare, snapshot_app, language):
    app = _reviewing(snapshot_app, FREE, language=language)

    async def run_before(pilot):
        await _settle(pilot, "#reveal")

    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_review_summary_with_charts(snap_compare, snapshot_app, language):
    app = _reviewing(snapshot_app, WHICH, FREE, language=language)

    async def run_before(pilot):
        # (the free answer revealed and rated Again: F4 on a card not tried grades nothing now)
        await _settle(pilot, "enter", "f4", "#reveal", "1", "f4")

    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)
