"""A run's output box at 80x24: the last 300 lines of a long print, a wide profiler table that
keeps a row per line and its name column as it scrolls, and a run's line and headline in view
while an old outcome says it is old (issues 28 and 52)."""

from __future__ import annotations

import pytest

from app_support import screen_text, settle

SMALL = (80, 24)


async def _goto(pilot, app, step_id: str) -> None:
    while app.screen.place.step.id != step_id:
        await pilot.press("f4")
        await settle(pilot)


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


def test_a_runs_box_shows_the_last_300_lines_of_an_ordinary_print():
    """Issue 52, item 11: README says the box keeps the last 300 lines; a print of 5,000 lines of
    ~110 characters showed 270 (the character cap came first). Lines up to 200 characters now
    show 300; only longer ones fewer, and the note says how many."""
    from tutor.app.widgets.output import SHOWN_LINES, tail

    printed = "".join(f"line {i:5d} " + "of a long output " * 6 + "\n" for i in range(5000))
    kept, cut = tail(printed)
    assert len(kept.split("\n")) == SHOWN_LINES == 300 and cut == 4700
    assert kept.split("\n")[-1].startswith("line  4999")
    wide = "".join("x" * 400 + "\n" for _ in range(1000))
    kept, cut = tail(wide)
    assert len(kept.split("\n")) == 149 and cut == 851  # 60,000 characters: 149 whole lines, counted


async def _until(pilot, predicate, seconds: float = 30.0) -> None:
    import time

    deadline = time.monotonic() + seconds
    while not predicate() and time.monotonic() < deadline:
        await pilot.pause(0.05)


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_a_runs_line_and_headline_stay_in_view_and_an_old_outcome_says_it_is_old(make_app, sandbox, language):
    """Issue 52, item 3: after a run printing 5000 lines, a second run's "Running… (Esc stops)"
    was scrolled out of view, the old box kept "Finished without an error" while it ran, and
    the new headline could be above the top edge."""
    from tutor.app.widgets.editor import CodeEditor

    words = {"en": ("Running…", "Finished without an error", "earlier result · your code has changed since",
                    "earlier result · a new run has started"),
             "zh": ("运行中…", "运行结束，没有报错", "上一次的结果 · 之后你改过代码", "上一次的结果 · 新的运行已开始")}
    running, finished, edited, restarted = words[language]
    app = make_app(start_lesson="exercises", sandbox=sandbox, language=language)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        editor = app.screen.query_one(CodeEditor)
        editor.replace_all("for i in range(5000):\n    print('line', i, 'of a long output ' * 3)\n")
        await pilot.press("f5")
        await app.workers.wait_for_complete()
        await settle(pilot, 3)
        assert finished in screen_text(app)
        assert edited not in screen_text(app)
        await pilot.press("ctrl+home", *"import time; time.sleep(1.5)", "enter")  # an edit: the box is old now
        await settle(pilot)
        assert edited in "".join(str(w.border_title) for w in app.screen.query(".output"))
        await pilot.press("f5")
        await settle(pilot)
        await _until(pilot, lambda: running in screen_text(app))
        text = screen_text(app)
        assert running in text and "Esc" in text  # on the screen while it runs, wherever the page is
        assert restarted in "".join(str(w.border_title) for w in app.screen.query(".output"))
        await app.workers.wait_for_complete()
        await settle(pilot, 4)
        text = screen_text(app)
        assert finished in text, text  # the new outcome's headline is in view
        assert running not in text and restarted not in text and edited not in text
