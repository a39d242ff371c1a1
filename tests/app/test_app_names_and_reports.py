"""Names, not ids, wherever a learner reads; reports that lead with the cause (issue 14)."""

from __future__ import annotations

import dataclasses
import pytest

from app_support import MINI, screen_text, settle, wait_for_text
from tutor.app.widgets.editor import CodeEditor
from tutor.app.widgets.report import CheckReport
from tutor.cli.main import main
from tutor.grading.exercise import grade
from tutor.record.progress import ProgressStore
from tutor.sandbox.result import LearnerError, RunResult

SMALL = (80, 24)
SYNTAX_ERROR = "import torch\n\ndef double(x):\nreturn x * 2\n"


def _exercise(mini_pack):
    return mini_pack.lessons[1].steps[0]


# ------------------------------------------------------------------ the command line


def test_list_pack_shows_lessons_and_the_exercise_ids_check_takes(tmp_path, capsys):
    assert main(["--data-dir", str(tmp_path), "--pack", str(MINI), "list", "mini"]) == 0
    out = capsys.readouterr().out
    assert "1. Basics" in out and "2. Fixing code" in out
    assert "exercise double: Double it" in out
    assert "torch-tutor check EXERCISE-ID FILE" in out


def test_check_takes_a_title_or_a_unique_start(tmp_path, capsys):
    fix = tmp_path / "fix.py"
    fix.write_text("import torch\n\ndef double(x):\n    return x * 2\n", encoding="utf-8")
    base = ["--data-dir", str(tmp_path / "data"), "--pack", str(MINI), "check"]
    assert main([*base, "Double it", str(fix), "--pack", str(MINI)]) == 0
    assert main([*base, "doub", str(fix), "--pack", str(MINI)]) == 0
    assert "exercises/double: the one check passed" in capsys.readouterr().out
    assert main([*base, "triple", str(fix), "--pack", str(MINI)]) == 2
    assert "no exercise 'triple'" in capsys.readouterr().err


def test_progress_names_where_to_resume_by_title(tmp_path, capsys):
    data = tmp_path / "data"
    store = ProgressStore.open(data)
    store.positions.set("mini", "basics", "which-dim")
    store.steps.visit("mini", "basics", "which-dim")
    store.close()
    assert main(["--data-dir", str(data), "--pack", str(MINI), "progress"]) == 0
    out = capsys.readouterr().out
    assert "resume at: Basics › Which numbers" in out and "which-dim" not in out


def test_check_of_a_syntax_error_leads_with_it(tmp_path, capsys):
    broken = tmp_path / "broken.py"
    broken.write_text(SYNTAX_ERROR, encoding="utf-8")
    assert main(["--data-dir", str(tmp_path / "data"), "--pack", str(MINI), "check", "double", str(broken)]) == 1
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert "your code does not run: IndentationError at line 4" in first
    assert "NameError" not in out and "hint" not in out


# ------------------------------------------------------------------ grading, parent side


def _run(error: LearnerError | None, checks: list[dict]) -> RunResult:
    return RunResult(status="error" if error else "ok", error=error, report={"checks": checks})


def test_a_file_that_does_not_run_gets_its_cause_not_a_list_of_name_errors(mini_pack):
    error = LearnerError("IndentationError", "expected an indented block after function definition on line 3",
                         "  File \"double.py\", line 4\n    return x * 2\n    ^\nIndentationError: ...", 4)
    checks = [{"id": "doubles", "status": "error",
               "message": "NameError: name 'double' is not defined (setup: x = torch.randn(n))"}]
    report = grade(_exercise(mini_pack), _run(error, checks))
    assert report.cause == ("your code does not run: IndentationError at line 4: expected an indented block "
                            "after function definition on line 3")
    assert report.message == report.cause and not report.passed
    assert [(c.status, c.hint) for c in report.checks] == [("skipped", None)]
    assert "NameError" not in report.checks[0].message and "setup" not in report.checks[0].message


def test_hints_only_for_checks_that_failed_on_their_own_terms(mini_pack):
    exercise = _exercise(mini_pack)
    errored = grade(exercise, _run(None, [{"id": "doubles", "status": "error", "message": "RuntimeError: x"}]))
    assert errored.checks[0].hint is None
    failed = grade(exercise, _run(None, [{"id": "doubles", "status": "failed", "message": "values differ"}]))
    assert failed.checks[0].hint == "Multiply by two."


def test_a_skip_reason_names_the_check_it_waits_for(mini_pack):
    exercise = _exercise(mini_pack)
    second = dataclasses.replace(exercise.checks[0], id="second", description="the second check")
    two = dataclasses.replace(exercise, checks=[exercise.checks[0], second])
    report = grade(two, _run(None, [
        {"id": "doubles", "status": "failed", "message": "no"},
        {"id": "second", "status": "skipped", "message": "skipped: needs 'doubles' to pass first"}]))
    assert report.checks[1].message == "skipped: needs “double(x) is twice x” to pass first"


# ------------------------------------------------------------------ the app


async def test_the_exercise_shows_its_id_for_the_command_line(make_app):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        assert "Exercise id: double" in screen_text(app)


async def test_resume_names_the_step_by_title(make_app, tmp_path):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        while app.screen.place.step.id != "which-dim":
            await pilot.press("f4")
            await settle(pilot)
        await pilot.press("f2")
        text = await wait_for_text(pilot, app, "Resume:")
        assert "Resume: Basics › Which numbers" in text and "which-dim" not in text


async def test_a_syntax_error_report_at_80x24_leads_with_the_cause(make_app, sandbox):
    app = make_app(start_lesson="exercises", sandbox=sandbox)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        app.screen.query_one(CodeEditor).replace_all(SYNTAX_ERROR)
        await pilot.press("f6")
        await app.workers.wait_for_complete()
        # The report is mounted a frame before the running line goes: at 80x24 that line can
        # still hide the report's second line, so wait for the line the test is about.
        text = await wait_for_text(pilot, app, "IndentationError at line 4")
        assert "Your code does not run yet" in text
        assert "IndentationError at line 4" in " ".join(text.split())
        assert "NameError" not in text and "Multiply by two" not in text  # no check's hint


async def test_three_checks_of_the_unchanged_starter_do_not_open_the_solution(make_app, sandbox):
    app = make_app(start_lesson="exercises", sandbox=sandbox)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        for _ in range(3):
            await pilot.press("f6")
            await app.workers.wait_for_complete()
            await settle(pilot, 3)
        assert app.store.steps.get("mini", "exercises", "double").failed_checks == 0
        await pilot.press("f8")
        await settle(pilot, 3)
        assert type(app.screen).__name__ == "LessonScreen"  # no confirmation, no solution


async def test_the_same_result_twice_still_shows_a_change(make_app, sandbox):
    app = make_app(start_lesson="exercises", sandbox=sandbox)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        app.screen.query_one(CodeEditor).replace_all("import torch\n\ndef double(x):\n    return x + 1\n")
        for n in (1, 2):
            await pilot.press("f6")
            await app.workers.wait_for_complete()
            await settle(pilot, 3)
            assert app.screen.query_one(CheckReport).stamp.startswith(f"Check {n} at ")
            assert f"Check {n} at" in screen_text(app)


def test_a_gpu_step_on_a_cpu_does_not_read_as_the_learners_fault():
    from tutor.app.widgets.steps.example import example_headline
    from tutor.grading.exercise import ExampleOutcome

    outcome = ExampleOutcome(matched=False, summary="expected RuntimeError, got AssertionError: Torch not "
                             "compiled with CUDA enabled", run=RunResult(status="error", error=LearnerError(
                                 "AssertionError", "Torch not compiled with CUDA enabled", "")))
    sentence, style = example_headline(outcome, needs_cuda=True)
    assert "needs a CUDA GPU" in sentence and "Nothing you did caused this" in sentence and "red" not in style
    assert example_headline(outcome, needs_cuda=False)[0].startswith("Not what the lesson expected")


async def test_contents_say_done_only_when_the_quizzes_are_answered_too(make_app, mini_pack):
    app = make_app(start_lesson="basics")
    for step in mini_pack.lessons[0].steps:  # every step of Basics seen, no quiz answered
        app.store.steps.visit("mini", "basics", step.id)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f2")
        text = await wait_for_text(pilot, app, "Basics")
        row = next(line for line in text.splitlines() if "1. Basics" in line)
        assert "in progress" in row and "done" not in row


async def test_the_solution_pop_up_never_wraps_a_comment_into_code(make_app, mini_pack):
    from tutor.app.modals.solution import SolutionScreen

    app = make_app(start_lesson="exercises")
    long = "import torch\n\ndef double(x):\n    # " + "a long comment that goes on " * 4 + "END\n    return x * 2\n"
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        app.push_screen(SolutionScreen(long))
        text = await wait_for_text(pilot, app, "return x * 2")
        lines = [line for line in text.splitlines() if "return x * 2" in line or "goes on" in line]
        assert len(lines) == 2  # the comment stays one line (scrolled sideways), the code another
        assert "END" not in text


@pytest.mark.parametrize("status, word", [("tampered", "tampered"), ("timeout", "timed out")])
def test_a_tampered_or_timed_out_check_is_marked_as_a_problem_not_a_question(status, word):
    from tutor.app.widgets.report import check_text
    from tutor.grading.exercise import CheckResult

    check = CheckResult(id="c", status=status, description="x is float32", message="the run lied",
                        hint="look at the dtype")
    text = check_text(check, lambda value: value if isinstance(value, str) else "").plain
    assert text.startswith("! x is float32")
    assert word in text and "?" not in text.splitlines()[0]
    assert "the run lied" in text and "hint: look at the dtype" in text


async def test_wrapped_lines_in_the_check_report_hang_under_their_text(make_app):
    """Found by a new-user review: a long check description or message wrapped to column 0 of
    the box, under the mark, so the list of checks no longer read as a list."""
    from tutor.grading.exercise import CheckResult, ExerciseReport

    words = "the doubled tensor keeps the dtype and the device of its input, for every shape tried"
    checks = [CheckResult("c1", "failed", f"DESC {words}", f"MSG {words}, even a scalar", expected="2 * x",
                          got="x", hint=f"HINT {words}")]
    report = ExerciseReport(exercise="double", passed=False, message="", run=RunResult(status="ok"),
                            checks=checks)
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        step = app.screen.step_view
        await step.query_one("#result").mount(CheckReport(report, step.text))
        await settle(pilot, 3)
        box = [line.rstrip() for line in screen_text(app).splitlines() if line.lstrip().startswith("│")]
        for head, hang in (("✗ DESC ", 2), ("    MSG ", 4), ("    hint: HINT ", 4)):
            index = next(i for i, line in enumerate(box) if ("│ " + head) in line)
            column = box[index].index("│") + 2  # the box's border and its padding
            follow = box[index + 1]
            text_at = len(follow) - len(follow[column:].lstrip())
            assert follow[column:].strip() and text_at == column + hang, (head, box[index:index + 2])


# At 80 columns, tall enough that a whole report is on screen at once (the width is what wraps).
TALL80 = (80, 60)
WORDS = "the doubled tensor keeps the dtype and the device of its input, for every shape tried"


def _box_lines(app) -> list[str]:
    return [line.rstrip() for line in screen_text(app).splitlines() if line.lstrip().startswith("│")]


def _hangs(box: list[str], head: str, hang: int) -> None:
    """The line of the box starting with ``head`` wraps, and its next line starts ``hang`` cells
    in from where ``head`` starts (under its own text), not at the box's column 0."""
    index = next((i for i, line in enumerate(box) if ("│ " + head) in line), None)
    assert index is not None, (head, box)
    column = box[index].index("│ " + head) + 2  # the box's border and its padding
    follow = box[index + 1]
    text_at = len(follow) - len(follow[column:].lstrip())
    assert follow[column:].strip() and text_at == column + hang, (head, box[index:index + 2])


async def _mount_report(app, pilot, report) -> None:
    step = app.screen.step_view
    await step.query_one("#result").mount(CheckReport(report, step.text))
    await settle(pilot, 3)


async def test_wrapped_cause_and_traceback_lines_hang_under_their_text(make_app):
    """Code that does not run: Python's traceback lines ("  File ...", "    return ...") wrapped
    to column 0 of the report, so the code line read as part of the sentence above it."""
    from tutor.grading.exercise import CheckResult, ExerciseReport

    traceback = (f'  File "exercise.py", line 4, in double FILE {WORDS}\n    return x * 2  # CODE {WORDS}\n'
                 f"    ^\nSyntaxError: invalid syntax, ERR {WORDS}")
    run = RunResult(status="error", error=LearnerError("SyntaxError", "invalid syntax", traceback, 4))
    report = ExerciseReport(exercise="double", passed=False, message="", run=run,
                            checks=[CheckResult("c1", "skipped", "d", "m")], cause=f"syntax error at line 4: {WORDS}")
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=TALL80) as pilot:
        await settle(pilot)
        await _mount_report(app, pilot, report)
        box = _box_lines(app)
        _hangs(box, '  File "exercise.py"', 2)
        _hangs(box, "    return x * 2", 4)
        _hangs(box, "Syntax error at line 4:", 0)  # a sentence at column 0 wraps to column 0: its own
        _hangs(box, "SyntaxError: invalid syntax, ERR", 0)


async def test_wrapped_lines_the_code_printed_hang_under_their_text(make_app):
    """What the code printed, its stderr and its traceback, in the report and in a Run's output:
    an indented line (a tensor's repr, a traceback's code line) wraps under its own indent."""
    from tutor.grading.exercise import CheckResult, ExerciseReport

    run = RunResult(status="error", stdout=f"OUT {WORDS}\n    INDENTED {WORDS}", stderr=f"  WARN {WORDS}",
                    error=LearnerError("ValueError", f"MSG {WORDS}", f"Traceback:\n  File x, line 3, TB {WORDS}\n"
                                                                    f"ValueError: MSG {WORDS}", 3))
    report = ExerciseReport(exercise="double", passed=False, message=f"SUMMARY {WORDS}", run=run,
                            checks=[CheckResult("c1", "failed", "d", "m")])
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=TALL80) as pilot:
        await settle(pilot)
        await _mount_report(app, pilot, report)
        for box in (_box_lines(app),):
            _hangs(box, "SUMMARY", 0)
            _hangs(box, "OUT the doubled", 0)
            _hangs(box, "    INDENTED", 4)
            _hangs(box, "  WARN", 2)
            _hangs(box, "  File x, line 3, TB", 2)
        step = app.screen.step_view
        step.query_one("#result").remove_children()
        step.run_finished(run, None)  # the same output from Run (F5), in its own box
        await settle(pilot, 3)
        box = _box_lines(app)
        _hangs(box, "    INDENTED", 4)
        _hangs(box, "  File x, line 3, TB", 2)


async def test_a_hostile_indent_or_word_in_the_output_loses_nothing(make_app):
    """A line printed after 500 spaces hangs at half the width at most (its word is on screen),
    and a 300-letter word folds inside the box, every letter shown."""
    word = "".join(chr(ord("a") + i % 26) for i in range(300))
    run = RunResult(status="ok", stdout=" " * 500 + "DEEP\n" + "      " + word + "\n\tTABBED " + WORDS)
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=TALL80) as pilot:
        await settle(pilot)
        app.screen.step_view.run_finished(run, None)
        await settle(pilot, 3)
        box = _box_lines(app)
        width = len(box[0])
        assert all(len(line) <= width for line in box)
        deep = next(line for line in box if "DEEP" in line)
        assert deep.index("DEEP") < width
        inner = [line.strip("│ ") for line in box]
        start = next(i for i, line in enumerate(inner) if line.startswith(word[:20]))
        assert "".join(inner[start:start + 6]).startswith(word)
        _hangs(box, "        TABBED", 8)  # a tab counts as the spaces it shows


async def test_a_selection_in_a_hanging_report_copies_the_text_as_it_is(make_app):
    """Dragging the mouse over the traceback in the report selects it for copying (a learner
    pasting an error into a search): what is copied is the text itself, without the hang's
    spaces or the wrap's line breaks."""
    from tutor.grading.exercise import CheckResult, ExerciseReport

    code_line = f"    return x * 2  # CODE {WORDS}"
    traceback = f'  File "exercise.py", line 4, in double\n{code_line}\nSyntaxError: invalid syntax'
    run = RunResult(status="error", error=LearnerError("SyntaxError", "invalid syntax", traceback, 4))
    report = ExerciseReport(exercise="double", passed=False, message="", run=run,
                            checks=[CheckResult("c1", "skipped", "d", "m")], cause="syntax error at line 4")
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=TALL80) as pilot:
        await settle(pilot)
        await _mount_report(app, pilot, report)
        widget = app.screen.query_one(CheckReport).query(".run").first()
        box = _box_lines(app)
        _hangs(box, "    return x * 2", 4)  # drawn wrapped, hanging
        await pilot.mouse_down(widget, offset=(0, 1))  # from the code line's start...
        await pilot.hover(widget, offset=(30, 3))
        await pilot.mouse_up(widget, offset=(30, 3))  # ...past its wrapped rest, into the next line
        await settle(pilot, 3)
        selected = app.screen.get_selected_text() or ""
        assert selected.startswith(code_line + "\nSyntaxError: invalid"), selected


def test_at_any_width_every_character_of_a_hanging_line_is_drawn_once():
    """Down to one column: every row fits, and the rows of each line give back all of its
    characters, in order (a hang never eats text, whatever the indent, mark or word length)."""
    from rich.text import Text

    from tutor.app.widgets.output import Hanging

    lines = ["✗ " + WORDS, "    " + "y" * 120, " " * 300 + "DEEP", "", "no indent " + WORDS, "\tTAB " + WORDS]
    hanging = Hanging.of(Text("\n".join(lines)), marked=True)
    source = hanging.plain.split("\n")
    for width in range(1, 90):
        rows = hanging.rows(width)
        for y, line in enumerate(source):
            drawn = [(x, pad, length) for row_y, x, pad, length in rows if row_y == y]
            assert drawn, (width, y)
            assert all(pad + len(line[x:x + length]) <= width for x, pad, length in drawn), (width, y, drawn)
            text = "".join(line[x:x + length] for x, _, length in drawn)
            assert text.replace(" ", "") == line.replace(" ", ""), (width, y, text)


def test_a_passed_flat_memory_check_is_drawn_against_what_flat_allows():
    """Issue 28: "memory stays flat: passed" sat above a bar chart rising 256 B -> 2.0 KiB (the
    sparkline scaled from the smallest value to the largest). The bars now start at zero and are
    scaled to what the check allows, which the report says in words."""
    from pathlib import Path

    from tutor.app.widgets.charts import columns, flat_limit
    from tutor.app.widgets.report import CheckReport
    from tutor.pack.loader import load_pack
    from tutor.grading.exercise import CheckResult, ExerciseReport
    from tutor.sandbox.result import RunResult

    pack = load_pack(Path(__file__).parents[2] / "lessons" / "debugging-and-speed")
    exercise = next(step for lesson in pack.lessons for step in lesson.steps
                    if any(getattr(c, "kind", "") == "memory" for c in getattr(step, "checks", ())))
    spec = next(c for c in exercise.checks if c.kind == "memory")
    curve = [[4, 256], [8, 384], [16, 512], [32, 768]]  # a list of floats: a little, not a leak
    report = ExerciseReport(exercise=exercise.id, passed=True, message="", run=RunResult(status="ok"),
                            checks=[CheckResult(spec.id, "passed", "memory stays flat", "",
                                                data={"curve": curve})])
    widget = CheckReport(report, lambda text: str(text or ""), exercise=exercise)
    limit = widget._flat_limit(spec.id, curve)
    assert limit == 256 * 1.25 + 64 * 28  # as tutor.child.checks.kinds.memory judges it
    assert limit == flat_limit([(4, 256), (8, 384), (16, 512), (32, 768)], spec.tolerance, spec.slack_per_step)
    bars = columns([b for _, b in curve], max(768, limit))
    assert bars[0].strip() == ""  # under what flat allows: the top row stays empty
    leak = columns([131072, 262144, 524288, 1048576], 1048576)
    assert leak[0].strip() and leak[0].split()[-1] == "███"  # a leak fills the chart
    assert CheckReport(report, str)._flat_limit(spec.id, curve) is None  # no exercise: no claim


@pytest.mark.parametrize("language, one, two, five, failed", [
    ("en", "The check passed. Solved!", "Both checks passed. Solved!", "All 5 checks passed. Solved!",
     "1/2 checks passed."),
    ("zh", "检查通过。解出来了！", "两项检查都通过了。解出来了！", "全部 5 项检查通过。解出来了！", None),
])
def test_a_reports_summary_counts_in_words(language, one, two, five, failed):
    """"All 2 checks passed" read as a form letter: one check, two, and more each have their words."""
    from tutor.app.widgets.report import summary_line
    from tutor.words import i18n

    with i18n.speaking(language):
        assert [summary_line(True, n, n) for n in (1, 2, 5)] == [one, two, five]
        if failed is not None:
            assert summary_line(False, 1, 2) == failed
