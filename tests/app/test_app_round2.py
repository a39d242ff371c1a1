"""The learner at 80x24, round 2 (issue 28): keys that never trap, an editor that indents
blocks, experiments welcomed, review that keeps up with the clock."""

from __future__ import annotations

import pytest
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


CODE = "import torch\n\ndef double(x):\n    y = x\n    return y\n"


async def _editor(pilot, app, code: str = CODE):
    from tutor.app.widgets.editor import CodeEditor

    await settle(pilot)
    editor = app.screen.query_one(CodeEditor)
    editor.replace_all(code)
    editor.focus()
    await settle(pilot)
    return editor


async def test_tab_and_shift_tab_indent_and_dedent_the_selected_lines(make_app):
    """Issue 28: Tab with lines 4-5 selected made them one indented blank line; Shift+Tab left
    the editor. Now they shift by a level, as one undo, the selection kept on the same text."""
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        editor = await _editor(pilot, app)
        editor.move_cursor((3, 0))
        await pilot.press("shift+down", "shift+end")  # lines 4 and 5, as the learner did
        await pilot.press("tab")
        await settle(pilot)
        assert editor.text == "import torch\n\ndef double(x):\n        y = x\n        return y\n"
        assert app.focused is editor
        assert editor.selected_text == "        y = x\n        return y"
        await pilot.press("shift+tab", "shift+tab")
        await settle(pilot)
        assert editor.text == "import torch\n\ndef double(x):\ny = x\nreturn y\n"
        assert app.focused is editor  # Shift+Tab with a selection dedents, it does not leave
        await pilot.press("tab")
        await settle(pilot)
        assert editor.text == CODE
        await pilot.press("ctrl+z")  # one undo per key
        await settle(pilot)
        assert editor.text == "import torch\n\ndef double(x):\ny = x\nreturn y\n"


async def test_a_selection_ending_at_a_line_start_leaves_that_line_and_blank_lines_stay_blank(make_app):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        editor = await _editor(pilot, app)
        editor.move_cursor((0, 0))
        await pilot.press("shift+down", "shift+down", "shift+down")  # lines 1-3, ends at line 4's start
        await pilot.press("tab")
        await settle(pilot)
        assert editor.text == "    import torch\n\n    def double(x):\n    y = x\n    return y\n"
        await pilot.press("shift+tab")
        await settle(pilot)
        assert editor.text == CODE


async def _goto(pilot, app, step_id: str) -> None:
    while app.screen.place.step.id != step_id:
        await pilot.press("f4")
        await settle(pilot)


async def test_pick_all_that_apply_works_with_up_down_space_and_enter(make_app):
    """Issue 28: Space, Down and Enter did nothing until Tab; Up/Down never moved between the
    boxes; ticked and not were both drawn ▐X▌. Now the boxes have the keys as the question opens."""
    from tutor.app.widgets.steps.quiz_choice import ChoiceBoxes

    app = make_app(start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        await _goto(pilot, app, "which-modes")
        assert isinstance(app.focused, ChoiceBoxes)
        text = screen_text(app)
        assert "Up/Down to move, Space to tick, Enter to submit" in text
        assert "[ ] torch.no_grad()" in text and "▐X▌" not in text
        await pilot.press("space", "down", "space", "down", "space", "up", "up")
        await settle(pilot)
        text = screen_text(app)
        assert "[x] torch.no_grad()" in text and "[x] torch.inference_mode()" in text
        assert "[x] model.eval()" in text
        await pilot.press("down", "down", "space")  # clears model.eval()
        await settle(pilot)
        assert "[ ] model.eval()" in screen_text(app)
        await pilot.press("enter")
        await settle(pilot)
        assert "Correct." in screen_text(app)
        assert app.store.steps.get("mini", "basics", "which-modes").quiz_correct is True
        await pilot.press("up", "space", "enter")  # a second answer, by keys alone: wrong
        await settle(pilot)
        assert app.store.steps.get("mini", "basics", "which-modes").quiz_correct is False


async def test_page_down_in_an_editor_longer_than_it_shows_scrolls_the_lesson(make_app):
    """Issue 28: PgDn in a focused editor whose code is longer than the editor paged the code,
    and keeping its cursor in view pulled the lesson back to the editor."""
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        editor = await _editor(pilot, app, "\n".join(f"x{i} = {i}" for i in range(60)) + "\n")
        scroll = app.screen.query_one("#step-scroll")
        await settle(pilot, 3)
        assert editor.max_scroll_y > 0  # the code is longer than the editor
        editor.move_cursor((0, 0))
        scroll.scroll_home(animate=False)
        await settle(pilot)
        top = scroll.scroll_y
        await pilot.press("pagedown")
        await settle(pilot, 3)
        assert scroll.scroll_y > top and app.focused is editor
        assert editor.selection.end == (0, 0)  # the cursor stays where it was
        await pilot.press("pagedown")
        await settle(pilot, 3)
        assert scroll.scroll_y == scroll.max_scroll_y  # on past the editor to the lesson's end
        assert "You reached the end of the pack." in screen_text(app)
        await pilot.press("pageup", "pageup", "pageup")
        await settle(pilot, 3)
        assert scroll.scroll_y == 0


async def test_the_footer_at_80_columns_keeps_f2_and_f3(make_app):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        await _goto(pilot, app, "shape-error")  # an example, its editor focused
        footer = screen_text(app).splitlines()[-1]
        for key in ("f2 Contents", "f3 Previous", "f4 Next", "f5 Run", "f9 Reset", "PgDn Page"):
            assert key in footer, footer
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        footer = screen_text(app).splitlines()[-1]
        for key in ("f2 Contents", "f3 Previous", "f4 Next", "f5 Run", "f6 Check", "f7 Hint",
                    "f8 Solution", "f9 Reset"):
            assert key in footer, footer


async def test_an_answered_choice_revisited_opens_at_its_question(make_app, tmp_path):
    """Issue 28: revisiting an answered choice opened scrolled past the question (focusing the
    choices scrolled to them): on the first screen and after F3/F4 alike."""
    import shutil

    from app_support import MINI
    from tutor.core.loader import load_pack

    copy = tmp_path / "mini"
    shutil.copytree(MINI, copy)
    lesson = copy / "basics.yaml"
    code = "\n".join(f"      x{i} = {i}" for i in range(12))
    lesson.write_text(lesson.read_text().replace(
        "    question: In `(4x8 and 16x2)`, which two numbers must agree?",
        "    question: |\n      Look at this code first.\n\n      ```python\n" + code + "\n      ```\n\n"
        "      In `(4x8 and 16x2)`, which two numbers must agree?"))
    app = make_app(pack=load_pack(copy), data_dir=tmp_path / "data")
    app.store.answers.record_quiz("mini", "basics", "which-dim", "1", False)
    app.store.positions.set("mini", "basics", "which-dim")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, 3)
        assert "Look at this code first." in screen_text(app)
        await pilot.press("f3")
        await settle(pilot, 3)
        await pilot.press("f4")
        await settle(pilot, 3)
        assert "Look at this code first." in screen_text(app)
        await pilot.press("pagedown")  # the choices focused, PgDn pages the lesson
        await settle(pilot, 3)
        text = screen_text(app)
        assert "(•) 4 and 2" in text and "( ) 8 and 16" in text  # picked or not, without colour


def test_a_passed_flat_memory_check_is_drawn_against_what_flat_allows():
    """Issue 28: "memory stays flat: passed" sat above a bar chart rising 256 B -> 2.0 KiB (the
    sparkline scaled from the smallest value to the largest). The bars now start at zero and are
    scaled to what the check allows, which the report says in words."""
    from pathlib import Path

    from tutor.app.widgets.charts import columns, flat_limit
    from tutor.app.widgets.report import CheckReport
    from tutor.core.loader import load_pack
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
    assert limit == 256 * 1.25 + 64 * 28  # as tutor.checks.kinds.memory judges it
    assert limit == flat_limit([(4, 256), (8, 384), (16, 512), (32, 768)], spec.tolerance, spec.slack_per_step)
    bars = columns([b for _, b in curve], max(768, limit))
    assert bars[0].strip() == ""  # under what flat allows: the top row stays empty
    leak = columns([131072, 262144, 524288, 1048576], 1048576)
    assert leak[0].strip() and leak[0].split()[-1] == "███"  # a leak fills the chart
    assert CheckReport(report, str)._flat_limit(spec.id, curve) is None  # no exercise: no claim


def test_the_predict_difference_marks_whole_words():
    """Issue 28: characters two different words share were left unmarked ("float32" against
    "bfloat16" marked "32" and "b", "16"), so the marks fell on the wrong words."""
    from tutor.app.widgets.steps.quiz_predict import word_spans

    def marked(a, b):
        left, right = word_spans(a, b)
        return [a[x:y] for x, y in left], [b[x:y] for x, y in right]

    assert marked("torch.float32", "torch.bfloat16") == (["float32"], ["bfloat16"])
    assert marked("True False", "False False") == (["True"], ["False"])
    assert marked("tensor([1., 2.])", "tensor([2., 4.])") == (["1.", "2."], ["2.", "4."])
    assert marked("same", "same") == ([], [])


async def test_a_free_answer_box_has_room_to_write(make_app):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        await _goto(pilot, app, "why-shapes")
        box = app.screen.query_one("#answer")
        assert box.outer_size.height >= 8  # six lines inside its frame (it was three)
        assert "Reveal answer" in screen_text(app)  # and the way on still shows at 80x24


PROFILE = """\
-------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------
                                                   Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls
-------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------
                                            aten::addmm        71.43%     500.000us        80.00%     560.000us     280.000us             2
                                            aten::copy_        14.29%     100.000us        14.29%     100.000us      50.000us             2
                                        aten::clamp_min         7.14%      50.000us         7.14%      50.000us      50.000us             1
-------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------
Self CPU time total: 700.000us

linear: total >= self: True and this closing line is long enough that it has to wrap at eighty columns here
"""


async def test_a_wide_profiler_table_in_a_runs_output_keeps_a_row_per_line_and_scrolls(make_app):
    """Issue 28: the profiler table, in the lesson about reading it, wrapped every row onto two
    lines. Its rows stay one line each; Tab reaches the box and ←/→ scroll the table; the rest
    of the output still wraps."""
    from tutor.app.widgets.output import Hanging, OutputBox, render_run
    from tutor.sandbox.result import RunResult

    app = make_app(start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        await _goto(pilot, app, "shape-error")
        box = app.screen.query_one("#output", OutputBox)
        box.add_class("-shown")
        box.update(Hanging.of(render_run(RunResult(status="ok", stdout=PROFILE, wall_time=0.1))))
        box.scroll_visible(animate=False, top=True)
        await settle(pilot, 3)
        text = screen_text(app)
        rows = [line for line in text.splitlines() if "aten::" in line]
        assert len(rows) == 3  # one screen line per row
        assert all("71.43%" not in row for row in rows[1:])
        assert "← → scroll the table (Esc, then Shift+Tab, to get here)" in text
        assert "wrap at eighty" in text.replace("\n", " ")  # ordinary lines still wrap...
        assert any(line.rstrip(" │").endswith("here") for line in text.splitlines())  # ...whole
        await pilot.press("escape", "shift+tab")  # from the editor to the page, back to the box
        await settle(pilot)
        assert app.focused is box
        await pilot.press("end")
        await settle(pilot)
        text = screen_text(app)
        assert "# of Calls" in text and "280.000us" in text  # the last columns, on the rows' lines
        row = next(line for line in text.splitlines() if "280.000us" in line)
        assert row.rstrip(" │").endswith("2")
        await pilot.press("home")
        await settle(pilot)
        assert "aten::addmm" in screen_text(app)


async def test_editor_columns_at_80_is_what_the_editor_shows(make_app):
    """EDITOR_COLUMNS_AT_80 (the pack's code lines must fit it) against the real layout: a line
    that long shows whole with the cursor at its end (also beside a longer line: the editor
    scrolls sideways to keep a cell free right of the cursor once it can); two cells more scroll."""
    from tutor.app.widgets.editor import EDITOR_COLUMNS_AT_80

    width = EDITOR_COLUMNS_AT_80
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        lines = [f"{i:02d}" + "x" * (width - 2) for i in range(30)]
        lines[5] = "y" * (width + 2)
        editor = await _editor(pilot, app, "\n".join(lines) + "\n")
        await settle(pilot, 3)
        assert editor.max_scroll_y > 0 and app.screen.query_one("#step-scroll").max_scroll_y > 0
        editor.move_cursor((4, width))  # the end of a line exactly that long
        await settle(pilot, 3)
        assert editor.scroll_x == 0
        shown = next(line for line in screen_text(app).splitlines() if "04xxx" in line)
        assert "04" + "x" * (width - 2) in shown
        editor.move_cursor((5, width + 2))  # two cells more: the view moves sideways
        await settle(pilot, 3)
        assert editor.scroll_x > 0


def test_the_filter_reads_underscores_and_dashes_as_spaces():
    """A new learner typed `inference mode` for the lesson titled `no_grad or inference_mode?` and
    was told no lesson matches; `no grad` and `self test` find theirs too."""
    from tutor.app.screens.home import _rank

    assert _rank("inference mode", "no-grad-and-inference", "no_grad or inference_mode?", "") is not None
    assert _rank("no grad", "no-grad-and-inference", "no_grad or inference_mode?", "") is not None
    assert _rank("self test", "self-test", "Self-test", "") is not None
    assert _rank("inference mode", "profiler", "Reading the profiler", "time in copies") is None


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_a_scrolled_profiler_table_keeps_its_name_column(make_app, language):
    """Issue 52, item 9: ←/→ scrolled the profiler table's Name column away with the numbers, so
    a row's numbers no longer said whose they were. The first column stays in place."""
    from tutor.app.widgets.output import Hanging, OutputBox, render_run
    from tutor.sandbox.result import RunResult

    app = make_app(start_lesson="basics", language=language)
    async with app.run_test(size=SMALL) as pilot:
        await _goto(pilot, app, "shape-error")
        box = app.screen.query_one("#output", OutputBox)
        box.add_class("-shown")
        box.update(Hanging.of(render_run(RunResult(status="ok", stdout=PROFILE, wall_time=0.1))))
        box.scroll_visible(animate=False, top=True)
        await settle(pilot, 3)
        box.focus()
        await pilot.press("end")
        await settle(pilot)
        text = screen_text(app)
        row = next(line for line in text.splitlines() if "280.000us" in line)
        assert "aten::" in row and row.rstrip(" │").endswith("2"), row  # whose numbers, and the last
        assert "Name" in next(line for line in text.splitlines() if "# of Calls" in line)
