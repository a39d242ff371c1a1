"""The command palette lists every action of the screen before anything is typed (issue 14), and
speaks the tutor's language, its input's placeholder included (issue 52, item 18)."""

from __future__ import annotations

import pytest
from textual.command import CommandInput, CommandList, CommandPalette

from app_support import screen_text, settle

SMALL = (80, 24)


async def _palette_entries(pilot, app, typed: str = "") -> list[str]:
    await pilot.press("ctrl+p")
    for _ in range(100):
        await pilot.pause(0.02)
        if isinstance(app.screen, CommandPalette) and app.screen.has_class("-ready"):
            break
    if typed:
        await pilot.press(*typed)
    options: list[str] = []
    for _ in range(100):  # the palette gathers its commands in a worker
        await pilot.pause(0.02)
        commands = app.screen.query_one(CommandList)
        options = [str(commands.get_option_at_index(i).prompt) for i in range(commands.option_count)]
        if options and (not typed or all(typed.lower()[:2] in o.lower() for o in options[:1])):
            break
    return options


async def test_the_lesson_palette_shows_every_step_action_before_typing(make_app):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        entries = " | ".join(await _palette_entries(pilot, app))
        for action in ("Run", "Check", "Hint", "Solution", "Reset", "Previous", "Contents", "Help",
                       "Toggle light/dark theme", "Language: English", "Language: 中文"):
            assert action in entries, entries


async def test_typing_finds_the_actions(make_app):
    for typed, wanted in (("run", "Run"), ("hint", "Hint"), ("sol", "Solution"), ("lang", "Language"),
                          ("prev", "Previous")):
        app = make_app(start_lesson="exercises")
        async with app.run_test(size=SMALL) as pilot:
            await settle(pilot)
            entries = await _palette_entries(pilot, app, typed)
            assert entries and any(wanted in entry for entry in entries), (typed, entries)


async def test_the_contents_palette_has_resume_and_filter(make_app):
    app = make_app(start_lesson=None, resume=False)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        entries = " | ".join(await _palette_entries(pilot, app))
        assert "Resume" in entries and "Filter" in entries, entries


async def test_a_theme_picked_in_the_palette_survives_a_restart(make_app, tmp_path):
    """Issue 28: the theme picked with the palette's Theme list was lost on restart. Picked
    with the keys (ctrl+p, Theme, a theme, Enter), quit with ctrl+q, started again."""
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        entries = await _palette_entries(pilot, app, "theme")
        assert entries[0].startswith("Theme\n"), entries
        await pilot.press("enter")  # the first match: Textual's Theme list
        await settle(pilot, 3)
        for _ in range(50):
            await pilot.pause(0.02)
            if isinstance(app.screen, CommandPalette) and app.screen.has_class("-ready"):
                break
        await pilot.press(*"nord", "enter")
        for _ in range(50):
            await pilot.pause(0.02)
            if app.theme == "nord":
                break
        assert app.theme == "nord"
        await pilot.press("ctrl+q")
    again = make_app(start_lesson="exercises", data_dir=tmp_path)
    async with again.run_test(size=SMALL) as pilot:
        await settle(pilot)
        assert again.theme == "nord"
        assert again.screen.query_one("#editor").theme == "monokai"  # a dark theme's editor


async def test_the_palette_lists_none_of_textuals_keys_maximize_or_screenshot(make_app):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        entries = [entry.split("\n")[0] for entry in await _palette_entries(pilot, app)]
        assert "Run" in entries and "Theme" in entries, entries
        for hidden in ("Keys", "Maximize", "Screenshot"):
            assert hidden not in entries, entries


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
