"""Steps that run code, with the real sandbox and the real check engine."""

from __future__ import annotations

import pytest
from app_support import SIZE, screen_text, settle
from tutor.app.widgets.editor import CodeEditor
from tutor.app.widgets.report import CheckReport


SMALL = (80, 24)

async def _goto(pilot, app, step_id: str) -> None:
    while app.screen.place.step.id != step_id:
        await pilot.press("f4")
        await settle(pilot)


async def _finish(pilot, app) -> None:
    """Wait for the background run the last key started, then for its result to be drawn."""
    await app.workers.wait_for_complete()
    await settle(pilot, 3)


async def test_example_run_says_the_error_was_expected(make_app, sandbox):
    app = make_app(start_lesson="basics", sandbox=sandbox)
    async with app.run_test(size=SIZE) as pilot:
        await _goto(pilot, app, "shape-error")
        await pilot.press("f5")
        await _finish(pilot, app)
        text = screen_text(app)
        assert "Raised as expected: RuntimeError" in text and "4x8 and 16x2" in text
        assert "The inner dimensions, 8 and 16, must agree." in text


async def test_run_pressed_right_after_typing_runs_what_was_typed(make_app, sandbox):
    """CI, under load: code typed and F5 pressed at once ran the code as it was before the typing
    (the screen's F5 is a priority binding, answered at once; the typed keys still waited in the
    editor's queue). Here the keys are queued and F5 answered before the editor's turn, as a
    busy machine orders them: the run is of the typed code."""
    from textual import events

    app = make_app(start_lesson="basics", sandbox=sandbox)
    async with app.run_test(size=SIZE) as pilot:
        await _goto(pilot, app, "shape-error")
        editor = app.screen.query_one(CodeEditor)
        editor.replace_all("")
        await settle(pilot)
        for char in "print(6 * 7)":  # queued, not yet taken by the editor
            editor.post_message(events.Key(char, char))
        app.screen.action_step("run")  # as F5 is answered: at once, before the editor's turn
        await settle(pilot)  # the editor takes its keys, then the run starts
        await _finish(pilot, app)
        text = screen_text(app)
        assert editor.text == "print(6 * 7)"
        assert "42" in text and "Raised as expected" not in text


async def test_an_example_the_learner_changed_is_an_experiment_not_a_failure(make_app, sandbox):
    """Issue 28: fixing lesson 1's example (so it no longer raises) was reported as "Not what
    the lesson expected: expected RuntimeError...". The learner's version shows what it did, and
    one quiet line says it is theirs and how to get the lesson's back."""
    app = make_app(start_lesson="basics", sandbox=sandbox)
    async with app.run_test(size=(80, 24)) as pilot:
        await _goto(pilot, app, "shape-error")
        app.screen.query_one(CodeEditor).replace_all("print('fine')\n")
        await pilot.press("f5")
        await _finish(pilot, app)
        text = screen_text(app)
        assert "Not what the lesson expected" not in text and "expected" not in text
        assert "fine" in text and "Finished without an error" in text
        assert "You changed this example" in text and "F9 puts the" in text
        await pilot.press("f9")  # the lesson's version back: compared with the lesson again
        await settle(pilot)
        await pilot.press("f5")
        await _finish(pilot, app)
        text = screen_text(app)
        assert "Raised as expected: RuntimeError" in text and "You changed" not in text


async def test_the_lessons_own_example_that_does_not_do_what_it_says_still_reports(make_app, sandbox,
                                                                                     tmp_path):
    """An unchanged example that does not match its expectation is the pack's problem: said."""
    import shutil

    from app_support import MINI
    from tutor.pack.loader import load_pack

    copy = tmp_path / "mini"
    shutil.copytree(MINI, copy)
    lesson = copy / "basics.yaml"
    lesson.write_text(lesson.read_text().replace('match: "4x8 and 16x2"', 'match: "4x8 and 16x3"'))
    app = make_app(start_lesson="basics", sandbox=sandbox, pack=load_pack(copy), data_dir=tmp_path / "data")
    async with app.run_test(size=(80, 24)) as pilot:
        await _goto(pilot, app, "shape-error")
        await pilot.press("f5")
        await _finish(pilot, app)
        text = screen_text(app)
        assert "Not what the lesson expected" in text and "You changed" not in text


async def test_an_output_of_200000_lines_shows_its_last_lines_and_the_next_run_replaces_it(make_app, sandbox):
    """Issue 28: an example printing 200,000 lines left ~96,000 lines on the page (keys took
    10-20 s). The box shows the last lines and says how many came before; the next run's
    output replaces it."""
    from tutor.app.widgets.output import SHOWN_LINES

    app = make_app(start_lesson="basics", sandbox=sandbox)
    async with app.run_test(size=(80, 24)) as pilot:
        await _goto(pilot, app, "shape-error")
        app.screen.query_one(CodeEditor).replace_all("for i in range(200_000):\n    print('line', i)\n")
        await pilot.press("f5")
        await _finish(pilot, app)
        output = app.screen.query_one("#output")
        assert output.outer_size.height < SHOWN_LINES + 20
        plain = str(output.render())
        assert "earlier lines not shown" in plain and "Run 1" in plain
        assert "line 1000\n" not in plain  # the start is cut; the end is there
        last = plain.rsplit("line ", 1)[1].split()[0]
        assert int(last) > 50_000
        app.screen.query_one(CodeEditor).replace_all("print('second run')\n")
        await pilot.press("f5")
        await _finish(pilot, app)
        plain = str(app.screen.query_one("#output").render())
        assert "second run" in plain and "Run 2" in plain and "earlier lines" not in plain


async def test_predict_quiz_compares_the_prediction_with_the_output(make_app, sandbox):
    app = make_app(start_lesson="basics", sandbox=sandbox)
    async with app.run_test(size=SIZE) as pilot:
        await _goto(pilot, app, "predict-sum")
        await pilot.press("6")
        await pilot.press("f5")
        await _finish(pilot, app)
        assert "The output differs from your prediction." in screen_text(app)
        assert app.store.steps.get("mini", "basics", "predict-sum").quiz_correct is False
        await pilot.press("backspace", "5", "f5")
        await _finish(pilot, app)
        assert "Your prediction matches the output." in screen_text(app)
        assert app.store.steps.get("mini", "basics", "predict-sum").quiz_correct is True


async def test_failing_check_shows_expected_got_and_hint_then_passing_solves(make_app, sandbox):
    app = make_app(start_lesson="exercises", sandbox=sandbox)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        editor = app.screen.query_one(CodeEditor)
        editor.replace_all("# my first try\n" + app.screen.place.step.starter)  # changed, still wrong
        await pilot.press("f6")
        await _finish(pilot, app)
        text = screen_text(app)
        assert "0/1 checks passed." in text and "✗ double(x) is twice x" in text
        assert "expected:" in text and "got:" in text and "hint: Multiply by two." in text
        assert app.store.steps.get("mini", "exercises", "double").failed_checks == 1
        editor.move_cursor((4, 12))
        await pilot.press(*" * 2")
        await pilot.press("f6")
        await _finish(pilot, app)
        text = screen_text(app)
        assert "The check passed. Solved!" in text and "✓ solved" in text
        assert app.screen.query_one(CheckReport).has_class("-passed")
        progress = app.store.steps.get("mini", "exercises", "double")
        assert progress.solved and progress.checks == 2


async def test_run_shows_the_traceback_at_the_learners_line(make_app, sandbox):
    app = make_app(start_lesson="exercises", sandbox=sandbox)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.screen.query_one(CodeEditor).replace_all("x = 1\ny = undefined_name\n")
        await pilot.press("f5")
        await _finish(pilot, app)
        text = screen_text(app)
        assert "NameError" in text and "undefined_name" in text and "line 2" in text


async def test_stop_ends_a_runaway_run(make_app, sandbox):
    app = make_app(start_lesson="exercises", sandbox=sandbox)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.screen.query_one(CodeEditor).replace_all("while True:\n    pass\n")
        await pilot.press("f5")
        await pilot.pause(0.5)
        assert "Running…" in screen_text(app)
        assert "Stop" in screen_text(app).splitlines()[-1]
        await pilot.press("escape")
        await _finish(pilot, app)
        text = screen_text(app)
        assert "Running…" not in text
        assert app.screen.step_view.running is False
        # the pool recovered: the next run works
        app.screen.query_one(CodeEditor).replace_all("print('after stop')\n")
        await pilot.press("f5")
        await _finish(pilot, app)
        assert "after stop" in screen_text(app)


async def test_a_step_key_during_a_run_says_a_run_is_in_progress(make_app, sandbox):
    """Issue 28: F6 (Check) during a run was silently ignored."""
    app = make_app(start_lesson="exercises", sandbox=sandbox)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.screen.query_one(CodeEditor).replace_all("import time\ntime.sleep(20)\n")
        await pilot.press("f5")
        for _ in range(100):
            await pilot.pause(0.05)
            if app.screen.step_view.running:
                break
        await pilot.press("f6")
        await settle(pilot)
        assert any("A run is in progress" in n.message and "ESC stops it" in n.message
                   for n in app._notifications)
        await pilot.press("escape")  # Stop
        await _finish(pilot, app)
        assert not app.screen.step_view.running


async def test_a_checks_report_and_a_runs_output_come_in_the_frame_the_running_line_leaves(make_app, sandbox):
    """Issue 32: the screen was laid out and drawn with "Running…" gone and the result box still
    empty, and again ~50 ms later with the report: two frames of a screen whose layout and drawing
    take 10-30 ms each, and a blank where the report comes. Every frame drawn after the key shows
    either the running line or the outcome. (Frames are counted where the screen draws them,
    Textual's ``Screen._compositor_refresh``: no public hook says when a frame is drawn.)"""
    from tutor.app.widgets.output import OutputBox
    from tutor.app.widgets.running import RunningIndicator

    app = make_app(start_lesson="exercises", sandbox=sandbox)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        frames: list[tuple[bool, bool]] = []
        draw = screen._compositor_refresh

        def drawn() -> None:
            running = any(i.has_class("-running") for i in screen.query(RunningIndicator))
            outcome = any(w.is_mounted and w.region.height > 0  # on the screen, not only in the DOM
                          for w in screen.query("#result CheckReport, #result OutputBox"))
            frames.append((running, outcome))
            draw()

        screen._compositor_refresh = drawn  # type: ignore[method-assign]
        for key, outcome in (("f6", CheckReport), ("f5", OutputBox), ("f6", CheckReport)):
            frames.clear()
            await pilot.press(key)
            await _finish(pilot, app)
            assert screen.query_one("#result").query(outcome), key
            started = next(i for i, (running, _) in enumerate(frames) if running)
            assert (False, False) not in frames[started:], (key, frames)


async def test_an_outcome_that_never_mounts_still_gives_the_keys_back(make_app, sandbox, monkeypatch):
    """The running line waits for the outcome to mount (above), but not for ever: an outcome
    whose mounting never ends (its step left halfway) lets the line go after ``MOUNT_WAIT_S``, and
    the next Check runs and reports as usual."""
    import asyncio

    from tutor.app.widgets.steps import base
    from tutor.app.widgets.steps.exercise import ExerciseStep

    monkeypatch.setattr(base, "MOUNT_WAIT_S", 0.3)
    app = make_app(start_lesson="exercises", sandbox=sandbox)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = ExerciseStep.check_finished
        never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        monkeypatch.setattr(ExerciseStep, "check_finished", lambda self, report, error: never)
        await pilot.press("f6")
        await app.workers.wait_for_complete()
        for _ in range(100):
            await pilot.pause(0.05)
            if not app.screen.step_view.running:
                break
        assert not app.screen.step_view.running and "Running…" not in screen_text(app)
        monkeypatch.setattr(ExerciseStep, "check_finished", shown)
        await pilot.press("f6")
        await _finish(pilot, app)
        assert "checks passed" in screen_text(app)


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_run_on_code_that_only_defines_functions_says_nothing_calls_them(make_app, sandbox, language):
    """Issue 52, item 4: F5 on an exercise that only defines functions said "(no output)"."""
    from tutor.app.widgets.editor import CodeEditor

    app = make_app(start_lesson="exercises", sandbox=sandbox, language=language)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await app.workers.wait_for_complete()
        await settle(pilot, 3)
        text = " ".join(screen_text(app).split())
        said = {"en": "your code only defines double, and no line calls it", "zh": "只定义了 double"}[language]
        assert said in text, text
        app.screen.query_one(CodeEditor).replace_all("import torch\n\ndef double(x):\n    return x\n\ndouble(1)\n")
        await pilot.press("f5")
        await app.workers.wait_for_complete()
        await settle(pilot, 3)
        text = " ".join(screen_text(app).split())
        assert said not in text and {"en": "(no output)", "zh": "没有输出"}[language] in text


def test_only_defines_reads_what_the_code_does():
    from tutor.app.widgets.steps.exercise import only_defines

    assert only_defines("import torch\nN = 3\n\ndef f(x):\n    return x\n\nclass A:\n    pass\n") == ["f"]
    assert only_defines('"""doc"""\ndef f(): pass\nasync def g(): pass\n') == ["f", "g"]
    assert only_defines("def f(): pass\nf()\n") == []
    assert only_defines("def f(): pass\nx = f()\n") == []
    assert only_defines("def f(:\n") == []  # the run says why
    assert only_defines("x = 1\n") == []  # no function: nothing to say


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_the_solution_gate_says_how_many_checks_failed_and_checks_go_on_counting(make_app, sandbox, language):
    """Issue 52, item 9: the gate's toast said "after 3 checks that failed" but not how many so
    far, and "Check N" began again at 1 after a restart while the gate's count carried over."""
    from tutor.words.i18n import TABLE

    app = make_app(start_lesson="exercises", sandbox=sandbox, language=language)
    app.store.answers.record_attempt("mini", "exercises", "double", "check", passed=False, checks_passed=0,
                                     checks_total=1)
    app.store.answers.record_attempt("mini", "exercises", "double", "check", passed=False, checks_passed=0,
                                     checks_total=1)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f8")
        await settle(pilot)
        said = TABLE[language]["exercise.solution.locked"].format(n=3, failed=2)
        assert any(said == str(n.message) for n in app._notifications), list(app._notifications)
        await pilot.press("ctrl+end", *"# mine")  # not the starter: counted
        await pilot.press("f6")
        await app.workers.wait_for_complete()
        await settle(pilot, 3)
        stamp = TABLE[language]["exercise.stamp"].split("{n}")[0] + "3"
        assert stamp in screen_text(app)


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_the_starter_note_sits_above_the_report_and_no_toast_outlives_its_outcome(make_app, sandbox, language):
    """Issue 52, item 10: "That is still the starter code…" was a toast over the right half of
    the report for seconds, and could still sit on top of a later "Solved!"."""
    from tutor.app.widgets.editor import CodeEditor
    from tutor.words.i18n import TABLE

    app = make_app(start_lesson="exercises", sandbox=sandbox, language=language)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f6")  # the starter as given
        await app.workers.wait_for_complete()
        await settle(pilot, 3)
        said = TABLE[language]["exercise.starter_unchanged"]
        assert not [n for n in app._notifications if str(n.message) == said]
        notes = app.screen.query(".starter-note")
        assert len(notes) == 1 and str(notes.first().render()) == said
        await pilot.press("f8")  # the gate's toast, then a new Check: the toast goes with the old outcome
        await settle(pilot)
        assert list(app._notifications)
        app.screen.query_one(CodeEditor).replace_all("import torch\n\ndef double(x):\n    return x * 2\n")
        await pilot.press("f6")
        await settle(pilot)
        assert not list(app._notifications)
        await app.workers.wait_for_complete()
        await settle(pilot, 3)
        assert not app.screen.query(".starter-note")  # an attempt: no note
