"""Textual's private surface that the app leans on (tutor/app/textual_compat.py): each test fails
when an installed Textual changes what its workaround relies on, and checks the guard that keeps
the app on Textual's own behaviour outside the tested range."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Checkbox, RadioButton, TextArea

from tutor.app import textual_compat
from tutor.app.textual_compat import TESTED, in_range, textual_version

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def untested(monkeypatch):
    """As if the installed Textual were outside the range the workarounds were tested with."""
    monkeypatch.setattr(textual_compat, "tested", lambda: False)


def test_the_installed_textual_is_the_tested_one():
    from importlib.metadata import version

    assert textual_version() == tuple(int(p) for p in version("textual").split("."))
    assert textual_compat.tested(), f"Textual {version('textual')} is outside {TESTED}: re-test the workarounds"


def test_the_guard_is_the_range_pyproject_pins():
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (pin,) = [d for d in dependencies if re.match(r"textual\b", d)]
    low, high = re.fullmatch(r"textual>=([\d.]+),<([\d.]+)", pin.replace(" ", "")).groups()
    assert TESTED == (tuple(map(int, low.split("."))), tuple(map(int, high.split("."))))
    assert in_range(TESTED[0]) and in_range((8, 2, 99))
    assert not in_range(TESTED[1]) and not in_range((8, 2, 7)) and not in_range((9, 0)) and not in_range(None)


async def test_highlight_queries_are_compiled_once_per_process():
    from textual.document._syntax_aware_document import SyntaxAwareDocument

    assert callable(getattr(SyntaxAwareDocument, "prepare_query", None)), "the private hook is gone"
    assert textual_compat.share_highlight_queries()
    assert getattr(SyntaxAwareDocument.prepare_query, "_shared", False)

    class Two(App[None]):
        def compose(self):
            yield TextArea("x = 1", language="python", id="a")
            yield TextArea("y = 2", language="python", id="b")

    app = Two()
    async with app.run_test():
        first, second = (app.query_one(f"#{n}", TextArea).document for n in "ab")
        assert isinstance(first, SyntaxAwareDocument) and isinstance(second, SyntaxAwareDocument)
        query = "(identifier) @name"
        assert first.prepare_query(query) is second.prepare_query(query)


def test_outside_the_range_textual_compiles_as_it_always_did(untested):
    assert textual_compat.share_highlight_queries() is False


def test_a_widgets_own_bindings_are_readable():
    area = TextArea()
    assert hasattr(area, "_bindings") and isinstance(area._bindings.key_to_bindings, dict)
    assert [b.action for b in textual_compat.own_bindings(area, "ctrl+z")] == ["undo"]
    assert textual_compat.own_bindings(area, "f12") == []


def test_outside_the_range_no_binding_runs_early(untested):
    assert textual_compat.own_bindings(TextArea(), "ctrl+z") == []


async def test_the_cursor_blink_restarts_and_the_key_hook_is_where_the_editor_expects_it():
    assert textual_compat.key_hook_present(), "TextArea no longer types characters in _on_key"
    assert callable(getattr(TextArea, "_restart_blink", None))

    class One(App[None]):
        def compose(self):
            yield TextArea("x")

    app = One()
    async with app.run_test():
        area = app.query_one(TextArea)
        area._cursor_visible = False
        textual_compat.restart_blink(area)
        assert area._cursor_visible


async def test_toggle_glyphs_are_textuals_own_and_plain_outside_the_range(monkeypatch):
    from textual.content import Content

    class Toggles(App[None]):
        def compose(self):
            yield RadioButton("one", value=True)
            yield Checkbox("two")

    app = Toggles()
    async with app.run_test():
        radio, box = app.query_one(RadioButton), app.query_one(Checkbox)
        styled = textual_compat.toggle_glyph(radio)
        assert isinstance(radio._button, Content) and styled is not None
        assert styled.plain == "▐●▌" and textual_compat.toggle_glyph(box).plain == "▐X▌"
        assert styled.spans, "Textual's glyph carries its styles"
        monkeypatch.setattr(textual_compat, "tested", lambda: False)
        plain = textual_compat.toggle_glyph(radio)
        assert plain.plain == "▐●▌" and not plain.spans


async def test_the_linux_driver_writes_through_the_guard():
    """Fails when Textual's driver no longer keeps its terminal stream in ``_file``."""
    import signal

    from textual.drivers.linux_driver import LinuxDriver

    previous = {number: signal.getsignal(number) for number in (signal.SIGTSTP, signal.SIGCONT)}
    try:
        driver = textual_compat.guard_output(LinuxDriver, lambda error: None)(App())
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    assert isinstance(driver, LinuxDriver) and isinstance(driver._file, textual_compat._GuardedOutput)


def test_outside_the_range_the_driver_is_textuals_own(monkeypatch):
    from textual.drivers.linux_driver import LinuxDriver

    monkeypatch.setattr(textual_compat, "tested", lambda: False)
    assert textual_compat.guard_output(LinuxDriver, lambda error: None) is LinuxDriver
