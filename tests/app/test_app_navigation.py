"""Home, lesson view, navigation and resume: the screens a learner moves through."""

from __future__ import annotations

from textual.widgets import DataTable

from app_support import screen_text, settle
from app_support import SIZE
from tutor.app.screens.home import HomeScreen
from tutor.app.screens.lesson import LessonScreen


async def test_first_start_shows_contents_with_every_lesson(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
        text = screen_text(app)
        assert "Mini pack" in text and "1. Basics" in text and "2. Fixing code" in text
        assert "not started" in text
        assert "Start: Basics › Welcome" in text


async def test_filter_narrows_the_contents(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(*"fixing")  # typing on the contents goes to the filter
        await settle(pilot)
        text = screen_text(app)
        assert "Fixing code" in text and "1. Basics" not in text
        await pilot.press("enter")  # opens the (first) match
        await settle(pilot)
        assert isinstance(app.screen, LessonScreen)
        assert app.screen.place.key == ("mini", "exercises", "double")


async def test_selecting_a_lesson_opens_its_first_step(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#toc", DataTable)
        table.move_cursor(row=1)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, LessonScreen)
        text = screen_text(app)
        assert "Basics › Welcome" in text and "Step 1/8 · Lesson 1/2 · Mini pack" in text
        assert "Shapes first" in text


async def test_next_and_previous_cross_lessons_and_stop_at_the_ends(make_app):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f3")  # nothing before the first step
        await settle(pilot)
        assert app.screen.place.key == ("mini", "basics", "intro")
        for _ in range(8):
            await pilot.press("f4")
            await settle(pilot)
        assert app.screen.place.key == ("mini", "exercises", "double")
        assert "Step 1/1 · Lesson 2/2" in screen_text(app)
        assert "You reached the end of the pack." in screen_text(app)
        await pilot.press("f4")
        await settle(pilot)
        assert app.screen.place.key == ("mini", "exercises", "double")
        await pilot.press("f3")
        await settle(pilot)
        assert app.screen.place.key == ("mini", "basics", "predict-sum")
        assert "End of the lesson." in screen_text(app)


async def test_contents_key_returns_home_and_home_shows_progress(make_app):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f4", "f4")
        await settle(pilot)
        await pilot.press("f2")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
        text = screen_text(app)
        assert "in progress" in text
        assert "Resume: Basics › Which numbers" in text


async def test_restart_resumes_at_the_last_step(make_app, tmp_path):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for _ in range(3):
            await pilot.press("f4")
            await settle(pilot)
        await pilot.press("ctrl+q")
    again = make_app(data_dir=tmp_path)
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(again.screen, LessonScreen)
        assert again.screen.place.key == ("mini", "basics", "which-modes")
        await pilot.press("f2")
        await settle(pilot)
        await pilot.press("ctrl+r")  # Resume from the contents goes back to the same step
        await settle(pilot)
        assert again.screen.place.key == ("mini", "basics", "which-modes")


async def test_help_lists_the_keys_of_the_screen_below(make_app):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await settle(pilot)
        text = screen_text(app)
        for words in ("Keys", "f5", "Run", "f6", "Check", "Hint", "Solution", "Command palette"):
            assert words in text
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, LessonScreen)


async def test_footer_shows_only_the_keys_the_step_answers(make_app):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        footer = screen_text(app).splitlines()[-1]
        assert "Next" in footer and "Run" not in footer and "Check" not in footer
        await pilot.press("f4")  # the example: Run and Reset
        await settle(pilot)
        footer = screen_text(app).splitlines()[-1]
        assert "Run" in footer and "Reset" in footer and "Check" not in footer


async def test_theme_toggles_between_light_and_dark(make_app):
    app = make_app(theme="light")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.theme == "textual-light"
        app.action_toggle_dark()
        assert app.theme == "textual-dark"


async def test_pack_language_switch_redraws_the_step(make_app):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "Shapes first" in screen_text(app)
        app.set_language("zh")
        await settle(pilot, 4)
        text = screen_text(app)
        assert "先看形状" in text and "基础" in text


async def test_theme_choice_is_kept_for_the_next_start(make_app, tmp_path):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.theme == "textual-dark"
        app.action_toggle_dark()
        await settle(pilot)
        assert app.screen.query_one("#editor").theme == "github_light", "the open editor follows"
        await pilot.press("ctrl+q")
    again = make_app(data_dir=tmp_path)
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert again.theme == "textual-light"
    flagged = make_app(data_dir=tmp_path, theme="dark")  # a theme given explicitly (a flag) still wins
    async with flagged.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert flagged.theme == "textual-dark"


async def test_footer_fits_80_columns_keeping_the_step_actions(make_app):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        footer = screen_text(app).splitlines()[-1]
        # the step's actions keep their names, then Next and Help; the rest are in F1's list
        for words in ("f5 Run", "f6 Check", "f7 Hint", "f8 Solution", "f9 Reset", "f4 Next", "f1 Help", "f2"):
            assert words in footer, footer
        assert "…" not in footer and len(footer.rstrip()) <= 80


async def test_clicking_a_key_in_the_footer_presses_it(make_app):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        footer = screen_text(app).splitlines()[-1]
        start = app.screen.place.key
        await pilot.click("KeyFooter", offset=(footer.index("f4") + 1, 0))
        await settle(pilot)
        assert app.screen.place.key != start and app.screen.place.moved(-1).key == start
