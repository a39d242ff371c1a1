"""The learner at 80x24, round 3 (issue 52): no key lost, runs in view, honest progress."""

from __future__ import annotations

import asyncio

import pytest
from textual import events
from textual.widgets import Input

from app_support import screen_text, settle
from tutor.core import i18n

SMALL = (80, 24)


@pytest.fixture(autouse=True)
def _english_after(monkeypatch):
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    yield
    i18n.set_language(None)


def _key(char: str) -> events.Key:
    """A key as the terminal's driver posts it to the app."""
    names = {" ": "space", "(": "left_parenthesis", ")": "right_parenthesis", "\n": "enter", "\t": "tab"}
    return events.Key(names.get(char, char), char if char not in "\n\t" else None)


async def _burst(app, text: str, gap: int) -> None:
    """``text`` posted key by key as a terminal's burst arrives: ``gap`` turns of the event loop
    between two keys (0: all queued at once)."""
    for char in text:
        app.post_message(_key(char))
        for _ in range(gap):
            await asyncio.sleep(0)


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("gap", [0, 1, 2, 3, 4, 5, 6, 8, 12, 20])
async def test_a_filter_typed_in_a_burst_keeps_every_key(make_app, language, gap):
    """Issue 52, item 4: "fixing code" typed in one burst left "fi" in the filter. The first key
    moves the focus to the filter; the keys behind it went to the list, reached the screen after
    the focus had moved and were dropped ("fng code", "fxing code" here before the fix)."""
    app = make_app(resume=False, language=language)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await _burst(app, "fixing code", gap)
        await settle(pilot, 4)
        assert app.screen.query_one("#filter", Input).value == "fixing code"


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("gap", [0, 1, 3, 8])
async def test_keys_typed_as_a_new_step_appears_go_to_its_editor_in_order(make_app, language, gap):
    """Issue 52, item 4: keys typed within a frame or two of F4 went to the page (the new step's
    editor had no focus yet) or to the old step. They are held and handed to the new focus."""
    from tutor.app.widgets.editor import CodeEditor

    app = make_app(start_lesson="basics", language=language)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        app.post_message(events.Key("f4", None))  # to the example, whose editor takes the keys
        await _burst(app, "# mine\n", gap)
        await settle(pilot, 6)
        editor = app.screen.query_one(CodeEditor)
        assert app.focused is editor
        assert editor.text.startswith("# mine\nimport torch"), editor.text


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_resuming_puts_the_cursor_back_where_it_was(make_app, tmp_path, language):
    """Issue 52, item 4: a resumed exercise had its cursor at line 1, column 0, so typing went
    before `import torch`. The cursor comes back where the learner left it, in the draft."""
    from tutor.app.widgets.editor import CodeEditor

    app = make_app(start_lesson="exercises", language=language)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+end", "up", "end")  # after `return x`
        await pilot.press(*" * 3")
        await settle(pilot)
        assert app.screen.query_one(CodeEditor).selection.end == (3, 16)
        await pilot.press("ctrl+q")
    again = make_app(data_dir=tmp_path, language=language)
    async with again.run_test(size=SMALL) as pilot:
        await settle(pilot)
        editor = again.screen.query_one(CodeEditor)
        assert again.focused is editor and editor.selection.end == (3, 16)
        await pilot.press("backspace", "2")
        await settle(pilot)
        assert editor.text.splitlines()[3] == "    return x * 2"
        assert editor.text.startswith("import torch")


async def test_a_cursor_kept_for_longer_code_stays_inside_the_code_now(make_app, tmp_path):
    """The code was reset (or the kept place is not a place at all): the cursor stays inside."""
    from tutor.app.widgets.editor import CodeEditor
    from tutor.core.progress import ProgressStore

    store = ProgressStore.open(tmp_path)
    store.preferences.set("cursor:mini/exercises/double", "40,99")
    store.close()
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        assert app.screen.query_one(CodeEditor).selection.end == (4, 0)  # the code's last line (empty)
    store = ProgressStore.open(tmp_path)
    store.preferences.set("cursor:mini/exercises/double", "not a place")
    store.close()
    again = make_app(data_dir=tmp_path)
    async with again.run_test(size=SMALL) as pilot:
        await settle(pilot)
        assert again.screen.query_one(CodeEditor).selection.end == (0, 0)  # as if none were kept


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


def _pasted(text: str) -> list[events.Key]:
    """``text`` as a terminal without bracketed paste types it: one read, so one time for all
    of its keys (``textual_compat.stamp_reads``), a line break as Enter."""
    keys = [_key(char) for char in text]
    for key in keys:
        key.time = keys[0].time
    return keys


PASTED = "def double(x):\n    if x is None:\n        return 0\n    return x * 2\n\nprint(double(21))\n"


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_a_paste_typed_as_keys_keeps_its_indentation_and_undoes_as_one_step(make_app, language):
    """Issue 52, item 1: each pasted line took the auto-indent of the line before it (a
    staircase), and ctrl+z undid the paste one line at a time. Typed by hand, the same keys
    still indent."""
    from tutor.app.widgets.editor import CodeEditor

    app = make_app(start_lesson="exercises", language=language)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        editor = app.screen.query_one(CodeEditor)
        await pilot.press("ctrl+end")
        await pilot.press(*"# mine")  # typed: its own undo step
        await settle(pilot)
        for key in _pasted(PASTED):
            app.post_message(key)
        await settle(pilot, 4)
        starter = "import torch\n\ndef double(x):\n    return x\n"
        assert editor.text == starter + "# mine" + PASTED
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert editor.text == starter + "# mine"
        await pilot.press("ctrl+y")  # redo brings all of it back at once
        await settle(pilot)
        assert editor.text == starter + "# mine" + PASTED
        editor.replace_all("")
        await pilot.press(*"if x:", "enter", *"y = 1")  # typed: Enter still indents
        await settle(pilot)
        assert editor.text == "if x:\n    y = 1"


def test_keys_of_one_read_share_its_time():
    """The parser's keys from one read carry that read's time; keys of the next read their own."""
    import time

    from textual._xterm_parser import XTermParser

    from tutor.app import textual_compat

    assert textual_compat.stamp_reads()
    parser = XTermParser()
    first = [m for m in parser.feed("ab\rc") if isinstance(m, events.Key)]
    time.sleep(0.02)
    second = [m for m in parser.feed("d") if isinstance(m, events.Key)]
    assert [k.key for k in first] == ["a", "b", "enter", "c"]
    assert len({k.time for k in first}) == 1 and second[0].time - first[0].time >= 0.02


@pytest.mark.parametrize("typed, expected", [
    ("def f(x):\nif x:\nreturn(x)\nz", "def f(x):\n    if x:\n        return(x)\n    z"),
    ("def f(x):\nif x:\nraise ValueError\nz", "def f(x):\n    if x:\n        raise ValueError\n    z"),
    ("for i in x:\nif i:\ncontinue\nbreak\nz", "for i in x:\n    if i:\n        continue\n    break\nz"),
    ("def f(x):\nreturn_value = 1\nz", "def f(x):\n    return_value = 1\n    z"),  # not `return`
    ("try:\npass\nfinally:\npass", "try:\n    pass\nfinally:\n    pass"),
])
async def test_enter_dedents_after_the_words_that_end_a_block_and_only_those(make_app, typed, expected):
    """Issue 52, item 2: Enter after `return ...` dedented while F1 said only "Enter keeps the
    indentation": the rule (one level less after return, pass, raise, break, continue) is now
    the same for `return(x)` as for `return x`, and F1 says it."""
    from tutor.app.widgets.editor import CodeEditor

    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        editor = app.screen.query_one(CodeEditor)
        editor.replace_all("")
        await settle(pilot)
        await pilot.press(*[("enter" if c == "\n" else c) for c in typed])
        await settle(pilot)
        assert editor.text == expected


@pytest.mark.parametrize("language, said", [
    ("en", "one level less after a line starting with return, pass, raise, break or continue"),
    ("zh", "在以 return、pass、raise、break 或 continue 开头的行之后少缩进一级"),
])
async def test_f1_says_when_enter_dedents_and_what_a_paste_does(make_app, language, said):
    app = make_app(start_lesson="exercises", language=language)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await settle(pilot, 3)
        from textual.widgets import Static

        body = "".join(str(w.render()) for w in app.screen.query(Static))
        assert said in body
        assert {"en": "Pasted code keeps its own indentation", "zh": "粘贴的代码保留它自己的缩进"}[language] in body


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


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("typed, lesson", [("numpy", "1. "), ("view-inplace", "2. "), ("view inplace", "2. ")])
async def test_the_filter_finds_step_titles_and_exercise_ids(make_app, language, typed, lesson):
    """Issue 52, item 8: the filter matched lesson titles only: `numpy` (a step's title) and
    `view-inplace` (an exercise id the app itself shows) found nothing."""
    from pathlib import Path

    from tutor.core.loader import load_pack

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


@pytest.mark.parametrize("language, done, left", [("en", "done", "in progress"), ("zh", "已完成", "进行中")])
def test_a_lesson_paged_through_is_not_done_until_its_questions_are_answered(tmp_path, mini_pack, language,
                                                                            done, left):
    """Issue 52, item 7: paging past the questions made a lesson "done … quiz 0/2" in
    `torch-tutor progress` (Chinese: "已完成 20/20 步，测验 0/19"). Done means every exercise
    solved and every question answered; until then the lesson is in progress, its counts say
    what is left."""
    import os
    import subprocess
    import sys

    from app_support import MINI, learner_store

    store = learner_store(tmp_path)
    for step in mini_pack.lessons[0].steps:  # every step of Basics seen, no question answered
        store.steps.visit("mini", "basics", step.id)
    assert store.summarize(mini_pack).lessons[0].state == "progress"
    store.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    env["TORCH_TUTOR_CONFIG_DIR"] = str(tmp_path / "config")

    def progress() -> str:
        out = subprocess.run([sys.executable, "-m", "tutor", "--data-dir", str(tmp_path), "--pack", str(MINI),
                              "--language", language, "progress"], capture_output=True, text=True, env=env,
                             timeout=120, check=True).stdout
        return next(line for line in out.splitlines() if "Basics" in line or "基础" in line)

    row = progress()
    assert left in row and done not in row, row
    store = learner_store(tmp_path)
    for step in mini_pack.lessons[0].steps:
        if step.id.startswith(("which", "why", "predict")):
            store.answers.record_quiz("mini", "basics", step.id, "x", False)
    assert store.summarize(mini_pack).lessons[0].state == "done"  # answered: wrong answers count too
    store.close()
    row = progress()
    assert done in row, row


def test_predictions_are_compared_as_values_where_only_the_number_format_differs():
    """Issue 52, item 6: `[[0, 5], [0, 5]]` against the output `[[0.0, 5.0], [0.0, 5.0]]` was a miss."""
    from tutor.core.predict import judge

    printed = "[[0.0, 5.0], [0.0, 5.0]]\n"
    verdict = judge("[[0, 5], [0, 5]]", printed)
    assert verdict.right and verdict.number_format
    exact = judge("[[0.0, 5.0], [0.0, 5.0]]", printed)
    assert exact.right and not exact.number_format
    assert judge("tensor([1, 2])", "tensor([1., 2.])\n").number_format
    assert judge("tensor([0.33333, 1.0])", "tensor([0.3333, 1.0000])\n").right  # printed rounded
    assert judge("1e3", "1000.0\n").right
    # Not the same values, or not only the numbers: still a miss.
    assert not judge("[[0, 5], [0, 6]]", printed).right
    assert not judge("[0, 5, 0, 5]", printed).right
    assert not judge("0.3", "0.30000000000000004\n").right  # the output is not rounded: a different value
    assert not judge("torch.float32", "torch.float64\n").right  # a number inside a word is a word
    assert not judge("tensor([1, 2])", "tensor([1., 2.])\n", compare="exact").right  # the author's choice


@pytest.mark.parametrize("language, said", [
    ("en", "only the number format differs"), ("zh", "只是数字的写法不同")])
async def test_a_prediction_right_but_for_its_number_format_says_so(make_app, sandbox, language, said):
    from tutor.core.i18n import TABLE

    app = make_app(start_lesson="basics", sandbox=sandbox, language=language)
    async with app.run_test(size=SMALL) as pilot:
        while app.screen.place.step.id != "predict-list":
            await pilot.press("f4")
            await settle(pilot)
        await settle(pilot)
        await pilot.press(*"[[0, 5], [0, 5]]")
        await pilot.press("f5")
        await app.workers.wait_for_complete()
        await settle(pilot, 3)
        text = " ".join(screen_text(app).split())
        assert said in text, text
        assert TABLE[language]["quiz.predict.wrong"] not in text
        assert app.store.steps.get("mini", "basics", "predict-list").quiz_correct


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_a_key_pressed_under_f9s_question_is_not_swallowed_silently(make_app, language):
    """Issue 52, item 12: F6 pressed under F9's "put the starter back?" did nothing, silently."""
    from tutor.app.modals.confirm import ConfirmScreen
    from tutor.core.i18n import TABLE

    app = make_app(start_lesson="exercises", language=language)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f9")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        notice = app.screen.query_one("#answer-first")
        assert not notice.display
        await pilot.press("f6")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)  # still the question, which now says why
        assert notice.display and notice.region.height and str(notice.render()).startswith(
            TABLE[language]["confirm.answer_first"][:8])
        await pilot.press("left")  # Left/Right move between the answers
        assert app.focused.id == "yes"
        await pilot.press("right")
        assert app.focused.id == "no"
        await pilot.press("n")
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmScreen)


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_a_free_answer_is_graded_1_to_4_by_key_or_button_and_can_be_graded_again(make_app, tmp_path, language):
    """Issue 52, item 5: README promised a 1-4 rating (Again, Hard, Good, Easy), the screen
    showed two buttons and `3` did nothing; Left/Right did not move between them; "Your grade is
    saved" was below the fold. One design: 1-4 in the lesson as in the review queue."""
    from tutor.core import review
    from tutor.core.i18n import TABLE

    words = TABLE[language]
    app = make_app(start_lesson="basics", language=language)
    async with app.run_test(size=SMALL) as pilot:
        while app.screen.place.step.id != "why-shapes":
            await pilot.press("f4")
            await settle(pilot)
        await pilot.press(*"the shapes")
        await pilot.press("3")  # typed in the answer box: text, not a grade
        await settle(pilot)
        assert app.screen.query_one("#answer").text == "the shapes3"
        await pilot.press("f8")
        await settle(pilot, 3)
        assert app.focused.id == "rate-3"
        await pilot.press("right", "right", "left")  # Right/Left move between the grades
        assert app.focused.id == "rate-4"
        await pilot.press("2")  # a key grades at once
        await settle(pilot, 3)
        saved = words["quiz.graded"].split("{")[0]
        text = screen_text(app)
        assert saved in text and f"2 {words['review.rate.2']}" in text  # in view, not below the fold
        card = app.store.cards.get("mini", "basics", "why-shapes")
        assert card is not None and app.store.steps.get("mini", "basics", "why-shapes").quiz_correct is True
        await pilot.press("1")  # graded again: Again is a miss
        await settle(pilot, 3)
        assert f"1 {words['review.rate.1']}" in screen_text(app)
        assert app.store.steps.get("mini", "basics", "why-shapes").quiz_correct is False
        await pilot.press("ctrl+q")
    again = make_app(data_dir=tmp_path, language=language)
    async with again.run_test(size=SMALL) as pilot:
        await settle(pilot, 3)
        text = str(again.screen.query_one("#verdict").render())  # (the question opens at its top)
        assert words["quiz.answered"].split("{")[0] in text and f"1 {words['review.rate.1']}" in text
        assert again.screen.query_one("#grade-buttons").display  # still there to grade again


def test_a_free_answers_own_grade_is_its_cards_first_rating(tmp_path):
    from app_support import learner_store
    from tutor.core import review

    store = learner_store(tmp_path)
    store.answers.record_quiz("mini", "basics", "why-shapes", "x", None)
    store.answers.record_quiz("mini", "basics", "why-shapes", "x", True, rating=review.EASY)
    logged = store.storage.rows("SELECT rating FROM reviews WHERE step='why-shapes'", ())
    assert [row[0] for row in logged] == [review.EASY]
    assert store.answers.rating("mini", "basics", "why-shapes") == review.EASY
    store.close()


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_the_solution_gate_says_how_many_checks_failed_and_checks_go_on_counting(make_app, sandbox, language):
    """Issue 52, item 9: the gate's toast said "after 3 checks that failed" but not how many so
    far, and "Check N" began again at 1 after a restart while the gate's count carried over."""
    from tutor.core.i18n import TABLE

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


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_the_starter_note_sits_above_the_report_and_no_toast_outlives_its_outcome(make_app, sandbox, language):
    """Issue 52, item 10: "That is still the starter code…" was a toast over the right half of
    the report for seconds, and could still sit on top of a later "Solved!"."""
    from tutor.app.widgets.editor import CodeEditor
    from tutor.core.i18n import TABLE

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


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_f1s_scrollbar_has_a_track_of_its_own(make_app, language):
    """Issue 52, item 9: F1 showed stray "▁▁", "▇▇" inside the key list: its scrollbar's thumb,
    drawn in partial blocks on a track the colour of the dialog. The track now shows."""
    app = make_app(start_lesson="exercises", language=language)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await settle(pilot, 3)
        scroll = app.screen.query_one("#help-scroll")
        assert scroll.max_scroll_y > 0  # it scrolls at 80x24: the bar is drawn
        dialog = scroll.parent
        styles = scroll.styles
        assert styles.scrollbar_size_vertical == 1
        track = styles.scrollbar_background
        assert track.a > 0 and dialog.background_colors[1].blend(track, track.a) != dialog.background_colors[1]


def test_reset_forgets_the_cursor_and_the_free_grade_it_kept_for_the_steps_it_resets(tmp_path):
    """A reset progress opened the exercise with the cursor where the old one left it (a browser
    test's arrows then went one line too far)."""
    from tutor.core.progress import ProgressStore

    store = ProgressStore.open(tmp_path)
    for pack in ("mini", "other"):
        store.preferences.set(f"cursor:{pack}/exercises/double", "3,12")
        store.answers.record_quiz(pack, "basics", "why-shapes", "x", True, rating=4)
    store.reset("mini", step="double", lesson="exercises")
    assert store.preferences.get("cursor:mini/exercises/double") is None
    assert store.answers.rating("mini", "basics", "why-shapes") == 4  # another step: kept
    store.reset("mini")
    assert store.answers.rating("mini", "basics", "why-shapes") is None
    assert store.preferences.get("cursor:other/exercises/double") == "3,12"  # another pack: kept
    store.reset()
    assert store.preferences.get("cursor:other/exercises/double") is None
    assert store.answers.rating("other", "basics", "why-shapes") is None
    store.close()
