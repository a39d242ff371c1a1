"""Pictures taken in Chinese only (issue 29): a focused editor, a run out of time, the reset
question, and the built-in pack's own Chinese text. The screens pictured in both languages are one
test each with a ``language`` parameter (test_snapshots_app.py, test_snapshots_review.py).

Update after an intended change with ``pytest tests/snapshots/test_snapshots_zh.py --snapshot-update``.
"""

from __future__ import annotations

import pytest

from test_snapshots_app import SMALL, _at, _settle
from tutor.app.widgets.report import CheckReport
from tutor.sandbox.result import RunResult


@pytest.fixture
def zh_app(snapshot_app):
    def build(start_lesson: str | None = None, **flags):
        return snapshot_app(start_lesson, language="zh", **flags)

    return build


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


def test_zh_reset_confirmation(snap_compare, zh_app):
    assert snap_compare(zh_app("exercises"), terminal_size=SMALL, run_before=_at("double", "f9"))


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
