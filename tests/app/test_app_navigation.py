"""Home, lesson view, navigation and resume: the screens a learner moves through."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input

from app_support import burst, screen_text, settle
from app_support import SIZE

SMALL = (80, 24)
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


def _cursor_key(app) -> str:
    table = app.screen.query_one("#toc", DataTable)
    return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)


async def test_enter_in_the_filter_opens_the_highlighted_best_match(make_app):
    """"ex" is in the Basics summary ("an example") and starts the id of Fixing code: the title
    or id match is highlighted and opened, not the first lesson whose summary mentions it."""
    app = make_app(resume=False)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("e", "x")
        await settle(pilot)
        text = screen_text(app)
        assert "1. Basics" in text and "2. Fixing code" in text  # both match
        assert _cursor_key(app) == "mini/exercises"  # the highlight shows what Enter opens
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, LessonScreen)
        assert app.screen.place.key[:2] == ("mini", "exercises")


async def test_enter_opens_nothing_when_no_lesson_matches(make_app):
    app = make_app(resume=False)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press(*"zzq")
        await settle(pilot)
        assert app.screen.query_one("#filter").value == "zzq"  # the key that moved focus is kept
        assert "1. Basics" not in screen_text(app) and "2. Fixing" not in screen_text(app)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
        assert any("No lesson matches 'zzq'" in n.message for n in app._notifications)


async def test_down_and_up_move_from_the_filter_into_the_list(make_app):
    app = make_app(resume=False)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#toc", DataTable)
        await pilot.press("ctrl+f", "down")  # nothing typed: onto the first lesson, not the heading
        await settle(pilot)
        assert app.focused is table and _cursor_key(app) == "mini/basics"
        await pilot.press("down")  # now the list's own keys move the cursor
        assert _cursor_key(app) == "mini/exercises"
        await pilot.press(*"basi")  # typing goes back to the filter
        await settle(pilot)
        assert app.focused is app.screen.query_one("#filter")
        await pilot.press("up")
        await settle(pilot)
        assert app.focused is table and _cursor_key(app) == "mini/basics"
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen.place.key[:2] == ("mini", "basics")


async def test_escape_clears_the_filter_and_goes_back_to_the_list(make_app):
    app = make_app(resume=False)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press(*"fixing")
        await settle(pilot)
        assert "1. Basics" not in screen_text(app)
        await pilot.press("escape")
        await settle(pilot)
        filter_box = app.screen.query_one("#filter")
        assert filter_box.value == "" and app.focused is app.screen.query_one("#toc", DataTable)
        text = screen_text(app)
        assert "1. Basics" in text and "2. Fixing code" in text
        assert _cursor_key(app) == "mini/exercises"  # still on the lesson it had found


async def test_contents_opened_again_start_with_an_empty_filter(make_app):
    app = make_app(resume=False)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press(*"fixing", "enter")
        await settle(pilot)
        assert isinstance(app.screen, LessonScreen)
        await pilot.press("f2")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
        assert app.screen.query_one("#filter").value == ""
        text = screen_text(app)
        assert "1. Basics" in text and "2. Fixing code" in text
        assert _cursor_key(app) == "mini/exercises"  # on the lesson just left
        await pilot.press(*"basics")  # a new filter, not "fixingbasics"
        await settle(pilot)
        assert app.screen.query_one("#filter").value == "basics"
        assert "1. Basics" in screen_text(app)


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
        for words in ("Keys", "f5", "Run", "f6", "Check"):
            assert words in text
        await pilot.press("end")  # the rest of the list, scrolled to with the keyboard
        await settle(pilot)
        text = screen_text(app)
        for words in ("Hint", "Solution", "Command palette"):
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
        # the step's actions, then Next, Previous and Contents, each with its name (issue 28: f2/f3
        # were left out before Quit and Help); the rest are in F1's list
        for words in ("f5 Run", "f6 Check", "f7 Hint", "f8 Solution", "f9 Reset", "f4 Next", "f3 Previous",
                      "f2 Contents"):
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


def test_the_filter_reads_underscores_and_dashes_as_spaces():
    """A new learner typed `inference mode` for the lesson titled `no_grad or inference_mode?` and
    was told no lesson matches; `no grad` and `self test` find theirs too."""
    from tutor.app.screens.home import _rank

    assert _rank("inference mode", "no-grad-and-inference", "no_grad or inference_mode?", "") is not None
    assert _rank("no grad", "no-grad-and-inference", "no_grad or inference_mode?", "") is not None
    assert _rank("self test", "self-test", "Self-test", "") is not None
    assert _rank("inference mode", "profiler", "Reading the profiler", "time in copies") is None


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("gap", [0, 1, 2, 3, 4, 5, 6, 8, 12, 20])
async def test_a_filter_typed_in_a_burst_keeps_every_key(make_app, language, gap):
    """Issue 52, item 4: "fixing code" typed in one burst left "fi" in the filter. The first key
    moves the focus to the filter; the keys behind it went to the list, reached the screen after
    the focus had moved and were dropped ("fng code", "fxing code" here before the fix)."""
    app = make_app(resume=False, language=language)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await burst(app, "fixing code", gap)
        await settle(pilot, 4)
        assert app.screen.query_one("#filter", Input).value == "fixing code"


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("typed, lesson", [("numpy", "1. "), ("view-inplace", "2. "), ("view inplace", "2. ")])
async def test_the_filter_finds_step_titles_and_exercise_ids(make_app, language, typed, lesson):
    """Issue 52, item 8: the filter matched lesson titles only: `numpy` (a step's title) and
    `view-inplace` (an exercise id the app itself shows) found nothing."""
    from pathlib import Path

    from tutor.pack.loader import load_pack

    builtin = load_pack(Path(__file__).parents[2] / "lessons" / "debugging-and-speed")
    app = make_app(resume=False, language=language, pack=builtin)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press(*typed)
        await settle(pilot)
        text = screen_text(app)
        assert {"en": "No lesson matches", "zh": "没有"}[language] not in text
        rows = [line for line in text.splitlines() if lesson in line]
        assert rows, text


@pytest.mark.parametrize("typed, step_id", [("view-inplace", "view-inplace"), ("numpy", "numpy-float64")])
async def test_enter_on_a_filter_that_matched_a_step_opens_that_step(make_app, typed, step_id):
    """Typing an exercise's id (or a step's title) and Enter opened the lesson at its first step:
    the learner then had to find the exercise again. Enter opens the first step the filter matched
    (`numpy`: the step titled with NumPy's default dtype, before the numpy-dtype exercise)."""
    from pathlib import Path

    from tutor.pack.loader import load_pack

    builtin = load_pack(Path(__file__).parents[2] / "lessons" / "debugging-and-speed")
    app = make_app(resume=False, pack=builtin)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press(*typed)
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot, 3)
        assert isinstance(app.screen, LessonScreen)
        assert app.screen.place.step.id == step_id
        assert app.screen.place.step_index > 0
