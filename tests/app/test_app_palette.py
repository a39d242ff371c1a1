"""The command palette lists every action of the screen before anything is typed (issue 14)."""

from __future__ import annotations

from textual.command import CommandList, CommandPalette

from app_support import settle

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
