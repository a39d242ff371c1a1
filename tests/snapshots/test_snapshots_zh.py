"""Every screen kind at 80x24 in Chinese (issue 29): CJK characters are two cells wide, so the
footer, the top bar, choices, tables, frame titles and the review chart must fit by cells.

Update after an intended change with ``pytest tests/snapshots/test_snapshots_zh.py --snapshot-update``.
"""

from __future__ import annotations

import pytest

from test_snapshots_app import SMALL, _at, _settle
from test_snapshots_review import FREE, WHICH, _reviewing, utc  # noqa: F401  (utc: autouse, the charts in UTC)
from test_snapshots_review import _settle as _review_settle
from tutor.app.widgets.report import CheckReport
from tutor.core import i18n
from tutor.sandbox.result import RunResult


@pytest.fixture(autouse=True)
def _english_after():
    yield
    i18n.set_language(None)


@pytest.fixture
def zh_app(snapshot_app):
    def build(start_lesson: str | None = None, **flags):
        return snapshot_app(start_lesson, language="zh", **flags)

    return build


def test_zh_home(snap_compare, zh_app):
    assert snap_compare(zh_app(), terminal_size=SMALL, run_before=_settle)


def test_zh_prose(snap_compare, zh_app):
    assert snap_compare(zh_app("basics"), terminal_size=SMALL, run_before=_settle)


def test_zh_example_after_run(snap_compare, zh_app):
    from tutor.grading.exercise import ExampleOutcome
    from tutor.sandbox.result import LearnerError

    outcome = ExampleOutcome(matched=True, summary="raised as expected", run=RunResult(
        status="error", error=LearnerError("RuntimeError", "mat1 and mat2 shapes cannot be multiplied (4x8 and 16x2)",
                                           "Traceback (most recent call last):\n  File \"shape-error.py\", line 4, "
                                           "in <module>\n    a @ b\nRuntimeError: mat1 and mat2 shapes cannot be "
                                           "multiplied (4x8 and 16x2)", 4)))

    async def ran(pilot):
        pilot.app.screen.step_view.example_finished(outcome, None)

    assert snap_compare(zh_app("basics"), terminal_size=SMALL, run_before=_at("shape-error", then=ran))


def test_zh_choice_quiz_answered_wrong(snap_compare, zh_app):
    async def wrong(pilot):
        await pilot.click("#choice-1")

    assert snap_compare(zh_app("basics"), terminal_size=SMALL, run_before=_at("which-dim", then=wrong))


def test_zh_multiple_choice(snap_compare, zh_app):
    assert snap_compare(zh_app("basics"), terminal_size=SMALL, run_before=_at("which-modes"))


def test_zh_free_quiz_revealed(snap_compare, zh_app):
    async def reveal(pilot):
        await pilot.press(*"shapes")
        await pilot.click("#reveal")

    assert snap_compare(zh_app("basics"), terminal_size=SMALL, run_before=_at("why-shapes", then=reveal))


def test_zh_predict_missed(snap_compare, zh_app):
    async def missed(pilot):
        await pilot.press("6")
        pilot.app.screen.step_view.run_finished(RunResult(status="ok", stdout="5\n", wall_time=0.05), None)

    assert snap_compare(zh_app("basics"), terminal_size=SMALL, run_before=_at("predict-sum", then=missed))


def test_zh_exercise_editor_focused(snap_compare, zh_app):
    async def focused(pilot):
        pilot.app.screen.query_one("#editor").focus()

    assert snap_compare(zh_app("exercises"), terminal_size=SMALL, run_before=_at("double", then=focused))


def test_zh_exercise_run_out_of_time(snap_compare, zh_app):
    """A wrong fix that loops: the sandbox's sentence and grading's, both rendered in Chinese."""
    from tutor.grading.exercise import grade
    from tutor.sandbox import Limits
    from tutor.sandbox.classify import RawRun, classify

    async def show(pilot):
        step = pilot.app.screen.step_view
        result = classify(RawRun(verdict={"reason": "timeout", "wall_time": 10.0}), Limits(wall_time=10))
        report = grade(step.place.step, result)
        await step.query_one("#result").mount(CheckReport(report, step.text, stamp="第 1 次检查，10:00:00"))

    assert snap_compare(zh_app("exercises"), terminal_size=SMALL, run_before=_at("double", then=show))


def test_zh_syntax_error_report(snap_compare, zh_app):
    from tutor.grading.exercise import grade
    from tutor.sandbox.result import LearnerError

    async def show(pilot):
        step = pilot.app.screen.step_view
        error = LearnerError("IndentationError", "expected an indented block after function definition on line 3",
                             "  File \"double.py\", line 4\n    return x * 2\n    ^^^^^^\n"
                             "IndentationError: expected an indented block after function definition on line 3", 4)
        report = grade(step.place.step, RunResult(status="error", error=error, report={"checks": [
            {"id": "doubles", "status": "error", "message": "NameError: name 'double' is not defined"}]}))
        await step.query_one("#result").mount(CheckReport(report, step.text, stamp="第 1 次检查，10:00:00"))

    assert snap_compare(zh_app("exercises"), terminal_size=SMALL, run_before=_at("double", then=show))


def test_zh_help(snap_compare, zh_app):
    assert snap_compare(zh_app("exercises"), terminal_size=SMALL, run_before=_at("double", "f1"))


def test_zh_reset_confirmation(snap_compare, zh_app):
    assert snap_compare(zh_app("exercises"), terminal_size=SMALL, run_before=_at("double", "f9"))


def test_zh_review_choice_item(snap_compare, snapshot_app):
    app = _reviewing(lambda lesson: snapshot_app(lesson, language="zh"), WHICH, FREE)
    assert snap_compare(app, terminal_size=SMALL, run_before=_review_settle)


def test_zh_review_free_answer_waiting_for_a_rating(snap_compare, snapshot_app):
    app = _reviewing(lambda lesson: snapshot_app(lesson, language="zh"), FREE)

    async def run_before(pilot):
        await _review_settle(pilot, "#reveal")

    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)


def test_zh_review_summary_with_charts(snap_compare, snapshot_app):
    app = _reviewing(lambda lesson: snapshot_app(lesson, language="zh"), WHICH, FREE)

    async def run_before(pilot):
        # (the free answer revealed and rated Again: F4 on a card not tried grades nothing now)
        await _review_settle(pilot, "enter", "f4", "#reveal", "1", "f4")

    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)


# ---------------------------------------------------------------- the built-in pack in Chinese

BUILTIN = __import__("pathlib").Path(__file__).parents[2] / "lessons" / "debugging-and-speed"


@pytest.fixture
def builtin_zh_app(snapshot_app):
    """The app on the built-in pack (not the mini one), in Chinese: the pack's own text."""
    return lambda start_lesson=None: snapshot_app(start_lesson, folder=BUILTIN, language="zh")


def test_zh_builtin_contents(snap_compare, builtin_zh_app):
    """The table of contents: the pack's and its nine lessons' titles and summaries in Chinese."""
    assert snap_compare(builtin_zh_app(), terminal_size=SMALL, run_before=_settle)


def test_zh_builtin_prose(snap_compare, builtin_zh_app):
    """A prose step with a list: Chinese paragraphs wrap by cell width, code spans stay code."""
    assert snap_compare(builtin_zh_app("reading-errors"), terminal_size=SMALL, run_before=_settle)


def test_zh_builtin_choice_quiz_answered_wrong(snap_compare, builtin_zh_app):
    async def wrong(pilot):
        await pilot.click("#choice-1")

    assert snap_compare(builtin_zh_app("reading-errors"), terminal_size=SMALL,
                        run_before=_at("inner-dims", then=wrong))


def test_zh_builtin_exercise_with_its_checks(snap_compare, builtin_zh_app):
    """A wrong fix checked: the pack's check descriptions and its hint, in Chinese."""
    from tutor.grading.exercise import grade

    async def show(pilot):
        step = pilot.app.screen.step_view
        report = grade(step.place.step, RunResult(status="ok", report={"checks": [
            {"id": "output-shape", "status": "passed"},
            {"id": "values", "status": "failed", "case": 1,
             "message": "wrong value at [0, 1]: expected 1.2345, got -0.6789 (25 of 25 elements differ; "
                        "rtol 1e-05, atol 1e-05)"}]}),
                       language="zh", fallback="en")  # as the app's engine grades: in its language
        await step.query_one("#result").mount(CheckReport(report, step.text, stamp="第 1 次检查，10:00:00"))

    assert snap_compare(builtin_zh_app("reading-errors"), terminal_size=SMALL,
                        run_before=_at("shape-mismatch", then=show))
