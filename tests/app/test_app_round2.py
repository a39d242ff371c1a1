"""The learner at 80x24, round 2 (issue 28): keys that never trap, an editor that indents
blocks, experiments welcomed, review that keeps up with the clock."""

from __future__ import annotations

from textual.widgets import DataTable, Input

from app_support import screen_text, settle

SMALL = (80, 24)


async def test_the_contents_filter_keeps_spaces_and_says_when_nothing_matches(make_app):
    app = make_app(resume=False)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press(*"fixing", "space", *"code")
        await settle(pilot)
        assert app.screen.query_one("#filter", Input).value == "fixing code"
        assert "Fixing code" in screen_text(app)
        await pilot.press("space", *"or")
        await settle(pilot)
        assert app.screen.query_one("#filter", Input).value == "fixing code or"
        text = screen_text(app)
        assert app.screen.query_one("#toc", DataTable).row_count == 0
        assert "No lesson matches 'fixing code or'" in text
