"""Chinese mode leaves no English of ours on screen: the palette's input (issue 52, item 18)."""

from __future__ import annotations

import pytest
from textual.command import CommandInput

from app_support import screen_text
from test_app_palette import _palette_entries
from tutor.core import i18n

SMALL = (80, 24)


@pytest.fixture(autouse=True)
def _english_after(monkeypatch):
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    yield
    i18n.set_language(None)


@pytest.mark.parametrize("language, placeholder", [("en", "Search for commands…"), ("zh", "搜索命令……")])
async def test_the_palettes_input_speaks_the_tutors_language(make_app, language, placeholder):
    app = make_app(start_lesson="exercises", language=language)
    async with app.run_test(size=SMALL) as pilot:
        assert await _palette_entries(pilot, app)
        assert app.screen.query_one(CommandInput).placeholder == placeholder
        text = screen_text(app)
        assert placeholder in text, text
        if language == "zh":
            assert "Search for commands" not in text, text
