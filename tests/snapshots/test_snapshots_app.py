"""Pictures of each screen in its key states (pytest-textual-snapshot; Textual is pinned), those
at 80x24 in English and in Chinese (``[en]``, ``[zh]``).

Update after an intended change with ``pytest tests/snapshots --snapshot-update`` and review
the SVGs in the diff.
"""

from __future__ import annotations

import pytest
from textual.screen import ModalScreen

from tutor.app.widgets.report import CheckReport
from tutor.grading.exercise import CheckResult, ExerciseReport
from tutor.sandbox.result import RunResult

WIDE = (100, 32)
SMALL = (80, 24)
#: The pictures taken in both languages: CJK characters are two cells wide, so the footer, the
#: top bar, choices, tables and frame titles must fit by cells in Chinese too (issue 29).
LANGUAGES = pytest.mark.parametrize("language", ["en", "zh"])
#: A report's stamp, as the app writes it in each language (``exercise.stamp``).
STAMP = {"en": "Check 1 at 10:00:00", "zh": "第 1 次检查，10:00:00"}


async def _settle(pilot) -> None:
    """Let work finish, and stop cursors blinking (a blink timer would make pictures flaky)."""
    await pilot.pause()
    for _ in range(200):  # the first frame is out and the held-back work (code colours) done
        if pilot.app.started:
            break
        await pilot.pause(0.01)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()
    # No text cursor in pictures: a blinking one (or focus landing a frame late) made them flaky.
    app = pilot.app
    if not isinstance(app.screen, ModalScreen):
        app.screen.set_focus(None)
    for screen in app.screen_stack:
        for widget in screen.query("TextArea, Input"):
            widget.cursor_blink = False
        for bar in screen.query("StatusBar"):  # it polls twice a second; show the settled state now
            bar.refresh_status()
    await pilot.pause()
    await pilot.pause()


def test_home(snap_compare, snapshot_app):
    assert snap_compare(snapshot_app(), terminal_size=WIDE, run_before=_settle)


@LANGUAGES
def test_home_small_terminal(snap_compare, snapshot_app, language):
    assert snap_compare(snapshot_app(language=language), terminal_size=SMALL, run_before=_settle)


def test_prose_step(snap_compare, snapshot_app):
    assert snap_compare(snapshot_app("basics"), terminal_size=WIDE, run_before=_settle)


def test_exercise_small_terminal(snap_compare, snapshot_app):
    assert snap_compare(snapshot_app("exercises"), terminal_size=SMALL, run_before=_settle)


def test_exercise_small_terminal_editor_focused(snap_compare, snapshot_app):
    """As a learner arrives: the editor has the keys, and its frame says so (a solid cursor)."""
    async def focused(pilot):
        await _settle(pilot)
        pilot.app.screen.query_one("#editor").focus()
        await pilot.pause()
        await pilot.pause()

    assert snap_compare(snapshot_app("exercises"), terminal_size=SMALL, run_before=focused)


def test_exercise_light_theme(snap_compare, snapshot_app):
    assert snap_compare(snapshot_app("exercises", theme="light"), terminal_size=WIDE, run_before=_settle)


def test_choice_quiz_answered(snap_compare, snapshot_app):
    async def answer(pilot):
        await _settle(pilot)
        for _ in range(2):
            await pilot.press("f4")
            await _settle(pilot)
        await pilot.press("down", "enter")
        await _settle(pilot)

    assert snap_compare(snapshot_app("basics"), terminal_size=WIDE, run_before=answer)


def test_free_quiz_revealed(snap_compare, snapshot_app):
    async def reveal(pilot):
        await _settle(pilot)
        for _ in range(4):
            await pilot.press("f4")
            await _settle(pilot)
        await pilot.press(*"shapes")
        await pilot.click("#reveal")
        await _settle(pilot)

    assert snap_compare(snapshot_app("basics"), terminal_size=WIDE, run_before=reveal)


def test_help(snap_compare, snapshot_app):
    async def help_(pilot):
        await _settle(pilot)
        await pilot.press("f1")
        await _settle(pilot)

    assert snap_compare(snapshot_app("exercises"), terminal_size=WIDE, run_before=help_)


def test_reset_confirmation(snap_compare, snapshot_app):
    async def reset(pilot):
        await _settle(pilot)
        await pilot.press("f9")
        await _settle(pilot)

    assert snap_compare(snapshot_app("exercises"), terminal_size=WIDE, run_before=reset)


def test_check_report_with_profile_and_memory(snap_compare, snapshot_app):
    """The report as a learner sees it after a failed Check: expected/got, hint, table, sparkline."""
    report = ExerciseReport(
        exercise="double", passed=False, message="1 of 3 checks passed",
        run=RunResult(status="ok"),
        checks=[
            CheckResult("doubles", "passed", "double(x) is twice x", ""),
            CheckResult("hot-op", "failed", "the matmul dominates self time",
                        "aten::copy_ ranked first", expected="aten::mm first", got="aten::copy_ first",
                        hint="Move the .contiguous() out of the loop.",
                        data={"rows": [
                            {"op": "aten::copy_", "self_us": 5200, "total_us": 5300, "share": 0.52, "calls": 40},
                            {"op": "aten::mm", "self_us": 3100, "total_us": 3300, "share": 0.31, "calls": 20},
                            {"op": "aten::add", "self_us": 900, "total_us": 950, "share": 0.09, "calls": 20},
                            {"op": "aten::sum", "self_us": 400, "total_us": 420, "share": 0.04, "calls": 1}]}),
            CheckResult("no-leak", "failed", "memory stays flat as steps grow",
                        "memory grew with steps", expected="flat", got="+1.0 MiB per 8 steps",
                        data={"curve": [[4, 131072], [8, 262144], [16, 524288], [32, 1048576]]}),
        ])

    async def show(pilot):
        await _settle(pilot)
        step = pilot.app.screen.step_view
        await step.query_one("#result").mount(CheckReport(report, step.text))
        await _settle(pilot)
        pilot.app.screen.query_one("#step-scroll").scroll_to(y=14, animate=False)
        await _settle(pilot)

    assert snap_compare(snapshot_app("exercises"), terminal_size=WIDE, run_before=show)


# ------------------------------------------------------------------ 80x24, the design size (issue 14)


async def _goto(pilot, step_id: str) -> None:
    await _settle(pilot)
    while pilot.app.screen.place.step.id != step_id:
        await pilot.press("f4")
        await _settle(pilot)


def _at(step_id: str, *keys: str, then=None):
    async def run(pilot):
        await _goto(pilot, step_id)
        if keys:
            await pilot.press(*keys)
        if then is not None:
            await then(pilot)
        await _settle(pilot)

    return run


@LANGUAGES
def test_small_prose(snap_compare, snapshot_app, language):
    app = snapshot_app("basics", language=language)
    assert snap_compare(app, terminal_size=SMALL, run_before=_settle)


@LANGUAGES
def test_small_example_after_run(snap_compare, snapshot_app, language):
    from tutor.grading.exercise import ExampleOutcome
    from tutor.sandbox.result import LearnerError

    outcome = ExampleOutcome(matched=True, summary="raised as expected", run=RunResult(
        status="error", error=LearnerError("RuntimeError", "mat1 and mat2 shapes cannot be multiplied (4x8 and 16x2)",
                                           "Traceback (most recent call last):\n  File \"shape-error.py\", line 4, "
                                           "in <module>\n    a @ b\nRuntimeError: mat1 and mat2 shapes cannot be "
                                           "multiplied (4x8 and 16x2)", 4)))

    async def ran(pilot):
        pilot.app.screen.step_view.example_finished(outcome, None)

    app = snapshot_app("basics", language=language)
    assert snap_compare(app, terminal_size=SMALL, run_before=_at("shape-error", then=ran))


@LANGUAGES
def test_small_choice_quiz_answered_wrong(snap_compare, snapshot_app, language):
    async def wrong(pilot):
        await pilot.click("#choice-1")

    app = snapshot_app("basics", language=language)
    assert snap_compare(app, terminal_size=SMALL, run_before=_at("which-dim", then=wrong))


@LANGUAGES
def test_small_multiple_choice(snap_compare, snapshot_app, language):
    app = snapshot_app("basics", language=language)
    assert snap_compare(app, terminal_size=SMALL, run_before=_at("which-modes"))


@LANGUAGES
def test_small_free_quiz_revealed(snap_compare, snapshot_app, language):
    async def reveal(pilot):
        await pilot.press(*"shapes")
        await pilot.click("#reveal")

    app = snapshot_app("basics", language=language)
    assert snap_compare(app, terminal_size=SMALL, run_before=_at("why-shapes", then=reveal))


@LANGUAGES
def test_small_predict_missed(snap_compare, snapshot_app, language):
    async def missed(pilot):
        await pilot.press("6")
        pilot.app.screen.step_view.run_finished(RunResult(status="ok", stdout="5\n", wall_time=0.05), None)

    app = snapshot_app("basics", language=language)
    assert snap_compare(app, terminal_size=SMALL, run_before=_at("predict-sum", then=missed))


def test_small_exercise_with_a_long_report(snap_compare, snapshot_app):
    # as grading makes them: a passing check that measures nothing carries no message
    checks = [CheckResult(f"c{n}", "failed", f"check number {n} of the exercise", "the values differ",
                          expected="2 * x", got="x", hint="Multiply by two.") if n % 2 else
              CheckResult(f"c{n}", "passed", f"check number {n} of the exercise", "")
              for n in range(1, 7)]
    report = ExerciseReport(exercise="double", passed=False, message="3 of 6 checks passed",
                            run=RunResult(status="ok"), checks=checks)

    async def show(pilot):
        step = pilot.app.screen.step_view
        await step.query_one("#result").mount(CheckReport(report, step.text, stamp="Check 1 at 10:00:00"))

    assert snap_compare(snapshot_app("exercises"), terminal_size=SMALL, run_before=_at("double", then=show))


@LANGUAGES
def test_small_syntax_error_report(snap_compare, snapshot_app, language):
    from tutor.grading.exercise import grade
    from tutor.sandbox.result import LearnerError

    async def show(pilot):
        step = pilot.app.screen.step_view
        error = LearnerError("IndentationError", "expected an indented block after function definition on line 3",
                             "  File \"double.py\", line 4\n    return x * 2\n    ^^^^^^\n"
                             "IndentationError: expected an indented block after function definition on line 3", 4)
        report = grade(step.place.step, RunResult(status="error", error=error, report={"checks": [
            {"id": "doubles", "status": "error", "message": "NameError: name 'double' is not defined"}]}))
        await step.query_one("#result").mount(CheckReport(report, step.text, stamp=STAMP[language]))

    app = snapshot_app("exercises", language=language)
    assert snap_compare(app, terminal_size=SMALL, run_before=_at("double", then=show))


@LANGUAGES
def test_small_help(snap_compare, snapshot_app, language):
    app = snapshot_app("exercises", language=language)
    assert snap_compare(app, terminal_size=SMALL, run_before=_at("double", "f1"))
