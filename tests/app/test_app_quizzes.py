"""Quizzes that test knowledge (issue 14): shuffled choices, Markdown, wrapping, meaningful colours,
and predictions compared by meaning with a side-by-side difference on a miss."""

from __future__ import annotations

import pytest
from rich.text import Text

from app_support import screen_text, settle
from tutor.app.widgets.steps.quiz_choice import ChoiceRadio, choice_order, learner_seed, soft_join
from tutor.pack.predict_compare import judge, normalize, raised_name, side_by_side
from tutor.record.progress import ProgressStore

SMALL = (80, 24)


async def _goto(pilot, app, step_id: str) -> None:
    while app.screen.place.step.id != step_id:
        await pilot.press("f4")
        await settle(pilot)


# ------------------------------------------------------------------ shuffle


def test_choice_order_is_stable_for_a_learner_and_differs_across_learners():
    key = ("pack", "lesson", "quiz")
    assert choice_order(4, "learner-a", key) == choice_order(4, "learner-a", key)
    orders = {tuple(choice_order(4, f"learner-{n}", key)) for n in range(40)}
    assert len(orders) > 5  # not one order for everybody
    firsts = {choice_order(4, f"learner-{n}", key)[0] for n in range(40)}
    assert firsts == {0, 1, 2, 3}  # the first-written (often the right) answer is not always on top
    other_quiz = {tuple(choice_order(4, "learner-a", ("pack", "lesson", f"q{n}"))) for n in range(40)}
    assert len(other_quiz) > 5  # seeded by the item too
    assert choice_order(4, "learner-a", key, shuffle=False) == [0, 1, 2, 3]


def test_the_seed_is_made_once_and_kept_with_progress(tmp_path):
    store = ProgressStore.open(tmp_path)
    seed = learner_seed(store)
    store.close()
    again = ProgressStore.open(tmp_path)
    assert learner_seed(again) == seed and len(seed) >= 8
    again.close()
    other = ProgressStore.open(tmp_path / "someone-else")
    assert learner_seed(other) != seed
    other.close()


def _shown_order(app) -> list[str]:
    return [radio.id for radio in app.screen.query(ChoiceRadio)]


async def test_a_resumed_quiz_keeps_its_order_and_another_learner_gets_another(make_app, tmp_path):
    orders = []
    for learner in range(12):
        data = tmp_path / f"learner{learner}"
        app = make_app(start_lesson="basics", data_dir=data)
        async with app.run_test(size=SMALL) as pilot:
            await _goto(pilot, app, "which-dim")
            orders.append(_shown_order(app))
        if learner == 0:  # the same learner again: the same order
            again = make_app(start_lesson="basics", data_dir=data)
            async with again.run_test(size=SMALL) as pilot:
                await _goto(pilot, again, "which-dim")
                assert _shown_order(again) == orders[0]
    assert {tuple(o) for o in orders} == {("choice-0", "choice-1"), ("choice-1", "choice-0")}


async def test_fixed_order_when_the_author_asks(make_app):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        await _goto(pilot, app, "which-modes")
        assert [box.id for box in app.screen.query("#choices > *")] == ["choice-0", "choice-1", "choice-2"]


# ------------------------------------------------------------------ Markdown, wrapping, colours


def test_soft_line_breaks_are_joined_and_hard_ones_kept():
    assert soft_join("The inner dimensions\nmust match.\n") == "The inner dimensions must match."
    assert soft_join("one\n\ntwo") == "one\n\ntwo"
    assert soft_join("hard  \nbreak") == "hard  \nbreak"


async def test_choices_wrap_at_80_columns_and_render_markdown(make_app):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        await _goto(pilot, app, "which-dim")
        text = screen_text(app)
        assert "…" not in "\n".join(text.splitlines()[:-2])  # nothing cut (the status bar may say "warming up…")
        assert "`" not in text and "**" not in text
        assert "the columns of the first operand" in text and "second one" in text  # the whole choice
        await pilot.click("#choice-0")  # right: every choice explained
        await settle(pilot, 3)
        text = screen_text(app)
        assert "Correct." in text
        # the explanation's YAML line break is joined into one sentence, its code shown as code
        assert "must match: (4x8) @ (8x2) works." in " ".join(text.split())
        step = app.screen.step_view
        table = step.feedback({1}).renderables[1]
        cells = {str(mark.plain): body for mark, body in zip(table.columns[0]._cells, table.columns[1]._cells)
                 if str(mark.plain)}
        right = cells["✓"]
        explain = right.plain.index("The inner dimensions")
        styles = [str(span.style) for span in right.spans if span.start <= explain < span.end]
        assert not any("red" in style for style in styles) and "red" not in str(right.style)


# ------------------------------------------------------------------ predict


def test_predictions_compare_meaning_not_spacing():
    assert judge("[[0.0,5.0],[0.0,5.0]]", "[[0.0, 5.0], [0.0, 5.0]]\n").right
    assert judge("  5\n\n", "5\n").right
    assert judge("tensor([1., 2.])\nfloat32", "tensor([1.,  2.])\nfloat32\n").right
    assert not judge("1 2", "12\n").right  # spaces between words still count
    assert not judge("6", "5\n").right


def test_exact_comparison_and_accepted_answers():
    assert not judge("[[0.0,5.0]]", "[[0.0, 5.0]]\n", compare="exact").right
    assert judge("[[0.0, 5.0]]", "[[0.0, 5.0]]\n", compare="exact").right
    assert judge("float64", "torch.float64\n", accept=["float64"]).right
    assert not judge("float32", "torch.float64\n", accept=["float64"]).right


def test_raises_answers():
    assert raised_name("raises RuntimeError") == "RuntimeError"
    assert raised_name("RuntimeError: mat1 and mat2 shapes") == "RuntimeError"
    assert raised_name("it raises a torch.OutOfMemoryError") == "OutOfMemoryError"
    assert judge("ValueError", "", raises="ValueError", raised="ValueError").right
    assert judge("raises ValueError: invalid literal", "", raises="ValueError", raised="ValueError").right
    verdict = judge("TypeError", "", raises="ValueError", raised="ValueError")
    assert not verdict.right and verdict.expected == "raises ValueError"
    assert not judge("5", "5\n", raises="ValueError", raised=None).right  # the quiz is about the error


def test_side_by_side_pairs_lines_and_marks_the_differing_ones():
    rows = side_by_side("tensor([1, 2])\nfloat32", "tensor([1, 2])\nint64\n")
    assert rows == [("tensor([1, 2])", "tensor([1, 2])", False), ("float32", "int64", True)]
    assert normalize("a ,  b") == "a,b"


async def test_a_missed_prediction_shows_both_side_by_side(make_app, sandbox):
    app = make_app(start_lesson="basics", sandbox=sandbox)
    async with app.run_test(size=SMALL) as pilot:
        await _goto(pilot, app, "predict-list")
        await pilot.press(*"[[0.0,5.0],[0.0,5.0]]")  # no spaces: still right
        await pilot.press("f5")
        await app.workers.wait_for_complete()
        await settle(pilot, 3)
        assert "Your prediction matches the output." in screen_text(app)
        assert app.store.steps.get("mini", "basics", "predict-list").quiz_correct is True

        await _goto(pilot, app, "predict-sum")
        await pilot.press("6", "f5")
        await app.workers.wait_for_complete()
        await settle(pilot, 3)
        text = screen_text(app)
        assert "The output differs from your prediction." in text  # scrolled into view at 80x24
        assert "Your prediction" in text and "Actual output" in text
        row = next(line for line in text.splitlines() if " 6 " in f" {line} " and " 5 " in f" {line} ")
        assert row.index("6") < row.index("5")  # yours on the left, the real output on the right


# The output of a tensor's print: its rows after the first are indented under the first.
LONG_ROW = "tensor([[0.1000, 0.2000, 0.3000, 0.4000, 0.5000, 0.6000, 0.7000, 0.8000, 0.9000, 1.0000],"
INDENTED_ROW = "        [1.1000, 1.2000, 1.3000, 1.4000, 1.5000, 1.6000, 1.7000, 1.8000, 1.9000, 2.0000]])"
WARNING = "  UserWarning: the prediction box and the output box wrap long lines under their own text"


def _hangs_at(lines: list[str], head: str, hang: int, after: int = 0) -> int:
    """The first line from ``after`` holding ``head`` wraps, and the next line's text starts
    ``hang`` cells in from where ``head`` starts (under its own text), not at its column's start.
    Returns the index of the line."""
    index = next((i for i in range(after, len(lines)) if head in lines[i]), None)
    assert index is not None, (head, lines)
    column = lines[index].index(head)
    follow = lines[index + 1]
    assert follow[column:column + hang].strip() == "" and follow[column + hang:column + hang + 1].strip(), \
        (head, lines[index:index + 2])
    return index


async def test_a_missed_prediction_wraps_each_line_under_its_own_text(make_app):
    """Found by a new-user review at 80x24: in the wrong-answer box, a long line of the
    prediction, of the output beside it, or of what the code printed below wrapped to the start of
    its column, so a tensor's indented row read as a new line of its own. As in the check report
    (``Hanging``), each wraps under its own text, in its own colour."""
    from tutor.sandbox.result import RunResult

    prediction = f"{LONG_ROW}\n{INDENTED_ROW}\n{' ' * 500}DEEP"  # a hostile indent: at most half the column
    printed = f"{LONG_ROW.replace('0.1', '9.1')}\n{INDENTED_ROW}"
    app = make_app(start_lesson="basics")
    async with app.run_test(size=(80, 60)) as pilot:
        await _goto(pilot, app, "predict-sum")
        step = app.screen.step_view
        step.query_one("#prediction").load_text(prediction)
        step.run_finished(RunResult(status="ok", stdout=printed, stderr=WARNING), None)
        await settle(pilot, 3)
        lines = [line.rstrip() for line in screen_text(app).splitlines()]
        assert any("The output differs from your prediction." in line for line in lines)
        table = next(i for i, line in enumerate(lines) if "Your prediction" in line)
        yours = _hangs_at(lines, "        [1.1000", 8, table)  # the left column, the prediction
        right = lines[yours].index("        [1.1000", lines[yours].index("[1.1000") + 1)
        assert lines[yours + 1][right:right + 8].strip() == "" and lines[yours + 1][right + 8] != " "
        ran = next(i for i, line in enumerate(lines) if "What the code did:" in line)
        mark = next(i for i in range(table, len(lines)) if "[[9.1000" in lines[i])  # the output's column
        looks = [app.screen.get_style_at(lines[mark].index(text), mark) for text in ("9.1000", "0.2000")]
        assert looks[0] != looks[1]  # the differing characters still stand out
        # the hostile indent loses nothing: every letter in the prediction's column, in the box
        start, end = lines[table].index("Your prediction"), lines[table].index("Actual output")
        column = "".join("".join(line[start:end].split()) for line in lines[table + 1:ran])
        assert column.endswith("2.0000]])DEEP"), column
        border = lines[table].rindex("│")
        assert all(line[border] == "│" for line in lines[table:ran])
        _hangs_at(lines, "tensor([[9.1000", 0, ran)  # a line from column 0 wraps to column 0
        _hangs_at(lines, "        [1.1000", 8, ran)
        warning = _hangs_at(lines, "  UserWarning:", 2, ran)
        # the wrapped rest of the stderr line keeps the colour of its first row
        first = app.screen.get_style_at(lines[warning].index("UserWarning"), warning)
        rest = app.screen.get_style_at(len(lines[warning + 1].rstrip(" │")) - 1, warning + 1)
        assert first.color == rest.color and first.color != app.screen.get_style_at(
            lines[ran].index("What"), ran).color


async def test_a_model_answers_code_wraps_under_its_own_indentation(make_app, mini_pack):
    """The free quiz's feedback, its model answer, checked the same way: a code line too long for
    80 columns went on at the code block's column 0, so the rest of a ``return`` read as a
    statement of its own. It hangs under its indentation, on the code's own background."""
    import dataclasses

    code_line = "    return torch.where(x > 0, x * 2, torch.zeros_like(x)) + some_long_function_name(x, y, z)"
    lesson = mini_pack.lessons[0]
    steps = [dataclasses.replace(step, answer=f"Like this:\n\n```python\ndef f(x):\n{code_line}\n```")
             if step.id == "why-shapes" else step for step in lesson.steps]
    pack = dataclasses.replace(mini_pack, lessons=[dataclasses.replace(lesson, steps=steps), *mini_pack.lessons[1:]])
    app = make_app(start_lesson="basics", pack=pack)
    async with app.run_test(size=(80, 40)) as pilot:
        await _goto(pilot, app, "why-shapes")
        await pilot.press("f8")  # the model answer
        await settle(pilot, 3)
        lines = [line.rstrip() for line in screen_text(app).splitlines()]
        index = _hangs_at(lines, "    return torch.where", 4)
        column = lines[index].index("return")
        below = index + 1
        assert lines[below][column:].startswith("some_long_function_name"), lines[index:index + 2]
        code = app.screen.get_style_at(column, index).bgcolor
        page = app.screen.get_style_at(0, below).bgcolor
        assert code != page  # (the code block has a background of its own)
        assert {app.screen.get_style_at(x, below).bgcolor for x in (column - 2, column, column + 30)} == {code}


async def test_an_answer_rewraps_when_a_scrollbar_narrows_its_box(make_app, mini_pack):
    """Seen at 80x24: revealing a long model answer gives the page a scrollbar, the answer box
    narrows by two columns, and its lines stayed as drawn for the old width; in the terminal the
    cursor's line was redrawn when the cursor blinked, so a word showed twice ("at eighty" /
    "eighty columns"). What is drawn is the answer as wrapped for the box's width now."""
    import dataclasses

    lesson = mini_pack.lessons[0]
    long_answer = ("A model answer long enough that it has to wrap at eighty columns of the terminal, really.\n\n"
                   "```python\ndef f(x):\n    return torch.where(x > 0, x * 2, torch.zeros_like(x))\n```")
    steps = [dataclasses.replace(step, answer=long_answer) if step.id == "why-shapes" else step
             for step in lesson.steps]
    pack = dataclasses.replace(mini_pack, lessons=[dataclasses.replace(lesson, steps=steps), *mini_pack.lessons[1:]])
    answer = "because   it is so and this answer is also long enough to wrap at eighty columns of width"
    app = make_app(start_lesson="basics", pack=pack)
    async with app.run_test(size=SMALL) as pilot:
        await _goto(pilot, app, "why-shapes")
        await pilot.press(*answer)
        await settle(pilot, 3)
        box = app.screen.query_one("#answer")
        before = box.size.width
        await pilot.press("f8")  # the model answer: the page scrolls now
        await settle(pilot, 5)
        assert box.size.width < before
        # (the box, six lines tall since issue 28, may be scrolled above the model answer: back to it)
        app.screen.query_one("#step-scroll").scroll_to_widget(box, top=True, animate=False)
        await settle(pilot, 3)
        top = box.content_region.y
        rows = screen_text(app).splitlines()[top:top + 2]
        shown = [row[box.content_region.x:box.content_region.right].strip() for row in rows]
        # as wrapped for the box's width now, and each word once
        assert shown == [section.strip() for section in box.wrapped_document.get_sections(0)], rows
        assert " ".join(shown).split() == answer.split(), rows


async def test_a_prediction_about_an_exception(make_app, sandbox):
    app = make_app(start_lesson="basics", sandbox=sandbox)
    async with app.run_test(size=SMALL) as pilot:
        await _goto(pilot, app, "predict-raises")
        assert "type the exception's name" in screen_text(app)
        await pilot.press(*"raises ValueError", "f5")
        await app.workers.wait_for_complete()
        await settle(pilot, 3)
        assert "Your prediction matches the output." in screen_text(app)
        assert app.store.steps.get("mini", "basics", "predict-raises").quiz_correct is True


def test_validate_prints_what_every_prediction_is_compared_with(tmp_path, capsys):
    from app_support import MINI
    from tutor.cli.main import main

    assert main(["--data-dir", str(tmp_path), "validate", str(MINI)]) == 0
    out = capsys.readouterr().out
    assert out.count("learners' predictions are compared with:") == 3
    assert "| [[0.0, 5.0], [0.0, 5.0]]" in out
    assert "| raises ValueError" in out
    assert "       | 5\n" in out


def test_validate_fails_a_raises_quiz_whose_code_runs_cleanly(tmp_path, capsys):
    import shutil

    from app_support import MINI
    from tutor.cli.main import main

    pack = tmp_path / "pack"
    shutil.copytree(MINI, pack)
    lesson = pack / "basics.yaml"
    lesson.write_text(lesson.read_text(encoding="utf-8").replace('int("five")', 'int("5")'), encoding="utf-8")
    assert main(["--data-dir", str(tmp_path), "validate", str(pack)]) == 1
    out = capsys.readouterr().out
    assert "predict 'predict-raises': expected ValueError, but the code ran without an error" in out


async def test_a_choice_quiz_says_how_to_choose_with_the_keys(make_app):
    """Found by a new-user review: "Pick one answer." above radio buttons left a keyboard learner
    guessing (Tab? Space? Enter?)."""
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        await _goto(pilot, app, "which-dim")
        assert "Up/Down to move, Enter to choose" in screen_text(app)
        await pilot.press("enter")
        await settle(pilot, 3)
        assert "Not quite." in screen_text(app) or "Correct." in screen_text(app)  # Enter did choose


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


async def test_an_answered_choice_revisited_opens_at_its_question(make_app, tmp_path):
    """Issue 28: revisiting an answered choice opened scrolled past the question (focusing the
    choices scrolled to them): on the first screen and after F3/F4 alike."""
    import shutil

    from app_support import MINI
    from tutor.pack.loader import load_pack

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


def test_predictions_are_compared_as_values_where_only_the_number_format_differs():
    """Issue 52, item 6: `[[0, 5], [0, 5]]` against the output `[[0.0, 5.0], [0.0, 5.0]]` was a miss."""
    from tutor.pack.predict_compare import judge

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
    from tutor.words.i18n import TABLE

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
async def test_a_free_answer_is_graded_1_to_4_by_key_or_button_and_can_be_graded_again(make_app, tmp_path, language):
    """Issue 52, item 5: README promised a 1-4 rating (Again, Hard, Good, Easy), the screen
    showed two buttons and `3` did nothing; Left/Right did not move between them; "Your grade is
    saved" was below the fold. One design: 1-4 in the lesson as in the review queue."""
    from tutor.record import spaced_review as review
    from tutor.words.i18n import TABLE

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
    from tutor.record import spaced_review as review

    store = learner_store(tmp_path)
    store.answers.record_quiz("mini", "basics", "why-shapes", "x", None)
    store.answers.record_quiz("mini", "basics", "why-shapes", "x", True, rating=review.EASY)
    logged = store.storage.rows("SELECT rating FROM reviews WHERE step='why-shapes'", ())
    assert [row[0] for row in logged] == [review.EASY]
    assert store.answers.rating("mini", "basics", "why-shapes") == review.EASY
    store.close()
