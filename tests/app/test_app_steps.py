"""Quiz, hint, draft, reset and solution-gating behaviour: everything a step does without running code."""

from __future__ import annotations

import pytest
from textual.widgets import Checkbox, RadioSet, TextArea

from app_support import SIZE
from app_support import screen_text, settle
from tutor.app.modals.confirm import ConfirmScreen
from tutor.app.modals.solution import SolutionScreen
from tutor.app.widgets.editor import DEBOUNCE, CodeEditor
from tutor.record.progress import ProgressStore


SMALL = (80, 24)

async def _goto(pilot, app, step_id: str) -> None:
    while app.screen.place.step.id != step_id:
        await pilot.press("f4")
        await settle(pilot)


async def test_single_choice_gives_instant_feedback_and_is_recorded(make_app):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SIZE) as pilot:
        await _goto(pilot, app, "which-dim")
        assert isinstance(app.focused, RadioSet)
        await pilot.click("#choice-1")  # the second choice as written: wrong (shown in the learner's order)
        await settle(pilot)
        text = screen_text(app)
        assert "Not quite." in text and "Those are the outer dimensions" in text  # the pick explained
        assert "The inner dimensions of a matmul must match:" not in text  # not the answer
        assert "f8 Solution" in text
        assert app.store.steps.get("mini", "basics", "which-dim").quiz_correct is False
        await pilot.click("#choice-0")
        await settle(pilot)
        text = screen_text(app)
        assert "Correct." in text and "The inner dimensions of a matmul must match:" in text  # every choice
        assert "Those are the outer dimensions" in text and "f8 Solution" not in text
        assert app.store.steps.get("mini", "basics", "which-dim").quiz_correct is True


async def test_a_wrong_choice_then_the_solution_key_explains_every_choice(make_app, tmp_path):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SIZE) as pilot:
        await _goto(pilot, app, "which-dim")
        assert "f8 Solution" not in screen_text(app)  # no answer yet: nothing to give away
        await pilot.click("#choice-1")
        await settle(pilot)
        assert "The inner dimensions of a matmul must match:" not in screen_text(app)
        await pilot.press("f8")
        await settle(pilot)
        text = screen_text(app)
        assert "The inner dimensions of a matmul must match:" in text and "Those are the outer" in text
        assert "f8 Solution" not in text
        recorded = app.store.steps.get("mini", "basics", "which-dim")
        assert recorded.solution_seen and recorded.quiz_correct is False
        await pilot.press("ctrl+q")
    again = make_app(start_lesson="basics", data_dir=tmp_path)  # resumed: still all explained
    async with again.run_test(size=SIZE) as pilot:
        await _goto(pilot, again, "which-dim")
        assert "The inner dimensions of a matmul must match:" in screen_text(again)


async def test_a_resumed_wrong_choice_still_hides_the_other_explanations(make_app, tmp_path):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SIZE) as pilot:
        await _goto(pilot, app, "which-dim")
        await pilot.click("#choice-1")
        await settle(pilot)
        await pilot.press("ctrl+q")
    again = make_app(start_lesson="basics", data_dir=tmp_path)
    async with again.run_test(size=SIZE) as pilot:
        await _goto(pilot, again, "which-dim")
        text = screen_text(again)
        assert "Those are the outer dimensions" in text and "f8 Solution" in text
        assert "The inner dimensions of a matmul must match:" not in text


async def test_a_wrong_multiple_choice_explains_only_the_boxes_ticked(make_app):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SIZE) as pilot:
        await _goto(pilot, app, "which-modes")
        boxes = list(app.screen.query(Checkbox))
        await pilot.click(boxes[2])  # model.eval(): wrong
        await pilot.click("#submit")
        await settle(pilot)
        text = screen_text(app)
        assert "Not quite." in text and "No: it changes layers like Dropout" in text
        assert "Yes: no graph is recorded." not in text and "Yes, and stricter." not in text


async def test_multiple_choice_needs_every_correct_answer(make_app):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SIZE) as pilot:
        await _goto(pilot, app, "which-modes")
        boxes = list(app.screen.query(Checkbox))
        await pilot.click(boxes[0])
        await pilot.click("#submit")
        await settle(pilot)
        assert "Not quite." in screen_text(app)
        await pilot.click(boxes[1])
        await pilot.click("#submit")
        await settle(pilot)
        assert "Correct." in screen_text(app)
        assert app.store.steps.get("mini", "basics", "which-modes").quiz_answer == "0,1"


async def test_free_response_reveals_the_answer_and_takes_a_self_grade(make_app, tmp_path):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SIZE) as pilot:
        await _goto(pilot, app, "why-shapes")
        assert "Because the message names" not in screen_text(app)
        await pilot.press(*"the shapes say which operand")
        await pilot.click("#reveal")
        await settle(pilot)
        assert "Because the message names the two operands" in screen_text(app)
        await pilot.click("#rate-3")
        await settle(pilot)
        assert "Your grade is saved: 3 Good" in screen_text(app)
        assert "Answered earlier" not in screen_text(app)
        await pilot.press("ctrl+q")
    recorded = ProgressStore.open(tmp_path).steps.get("mini", "basics", "why-shapes")
    assert recorded.quiz_answer == "the shapes say which operand" and recorded.quiz_correct is True


async def test_free_response_reveals_the_answer_with_the_solution_key_shown_on_its_button(make_app):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SIZE) as pilot:
        await _goto(pilot, app, "why-shapes")
        assert "Reveal answer F8" in screen_text(app)  # the key, as the screen binds it
        await pilot.press("f8")
        await settle(pilot)
        assert "Because the message names the two operands" in screen_text(app)
        await pilot.click("#rate-3")
        await pilot.press("f8")  # again, after the self-grade: the grade stays
        await settle(pilot)
        assert app.store.steps.get("mini", "basics", "why-shapes").quiz_correct is True
        await pilot.press("ctrl+q")


async def test_a_free_answer_is_self_graded_with_the_keyboard_alone(make_app):
    """A new learner pressed F8, read the model answer, and pressed Enter: nothing happened (the
    grade buttons took three Tabs to reach). Revealing moves the keys to "3 Good"; Enter grades,
    Left/Right move between the four grades, 1-4 grade at once."""
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SIZE) as pilot:
        await _goto(pilot, app, "why-shapes")
        await pilot.press(*"the shapes say which operand")
        await pilot.press("f8")
        await settle(pilot)
        assert app.focused is not None and app.focused.id == "rate-3"
        await pilot.press("enter")
        await settle(pilot)
        assert "Your grade is saved: 3 Good" in screen_text(app)
        assert app.store.steps.get("mini", "basics", "why-shapes").quiz_correct is True
        await pilot.press("ctrl+q")


async def test_edits_are_kept_as_a_draft_and_come_back_after_a_restart(make_app, tmp_path):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.focused, CodeEditor)
        await pilot.press("ctrl+end" if False else "end")
        editor = app.focused
        editor.move_cursor((3, 12))
        await pilot.press(*" * 2")
        await pilot.pause(DEBOUNCE + 0.3)  # the debounce passes while the app keeps running
        assert "return x * 2" in (app.store.drafts.get("mini", "exercises", "double") or "")
        await pilot.press(*"  # more")  # typed just before quitting: quitting flushes it
        await pilot.press("ctrl+q")
    again = make_app(data_dir=tmp_path)
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "return x * 2  # more" in again.screen.query_one(CodeEditor).text
        assert again.store.summarize(again.packs[0]).lessons[1].state == "progress"


async def test_reset_asks_then_restores_the_starter(make_app):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.focused.insert("# my change\n")
        await pilot.press("f9")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")  # no: nothing changes
        await settle(pilot)
        assert "# my change" in app.screen.query_one(CodeEditor).text
        await pilot.press("f9")
        await settle(pilot)
        await pilot.click("#yes")
        await settle(pilot)
        editor = app.screen.query_one(CodeEditor)
        assert editor.text == app.screen.place.step.starter
        assert app.store.drafts.get("mini", "exercises", "double") is None


async def test_hints_are_progressive_counted_and_kept(make_app, tmp_path):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f7")
        await settle(pilot)
        text = screen_text(app)
        assert "Hint 1/2" in text and "Look at what the function returns." in text and "Hint 2/2" not in text
        await pilot.press("f7")
        await settle(pilot)
        assert "Hint 2/2" in screen_text(app)
        await pilot.press("f7")  # no third hint: a notice, no count
        await settle(pilot)
        assert app.store.steps.get("mini", "exercises", "double").hints_used == 2
        await pilot.press("ctrl+q")
    again = make_app(data_dir=tmp_path)
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "Hint 2/2" in screen_text(again)


async def test_solution_is_locked_before_any_failed_check(make_app):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f8")
        await settle(pilot)
        assert not isinstance(app.screen, (SolutionScreen, ConfirmScreen))
        assert any("solution opens once you solve" in n.message for n in app._notifications)
        assert not app.store.steps.get("mini", "exercises", "double").solution_seen


async def test_solution_after_three_failed_checks_needs_a_confirmation(make_app):
    app = make_app(start_lesson="exercises")
    for _ in range(3):  # three Checks that failed, as the exercise step records them
        app.store.answers.record_attempt("mini", "exercises", "double", "check", passed=False, checks_passed=0,
                                         checks_total=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f8")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.click("#yes")
        await settle(pilot)
        assert isinstance(app.screen, SolutionScreen)
        assert "return x * 2" in screen_text(app)
        await pilot.click("#use")
        await settle(pilot)
        assert "return x * 2" in app.screen.query_one(CodeEditor).text
        assert app.store.steps.get("mini", "exercises", "double").solution_seen


async def test_solution_opens_directly_once_solved(make_app):
    app = make_app(start_lesson="exercises")
    app.store.answers.record_attempt("mini", "exercises", "double", "check", passed=True, checks_passed=1, checks_total=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "✓ solved" in screen_text(app)
        await pilot.press("f8")
        await settle(pilot)
        assert isinstance(app.screen, SolutionScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert "return x\n" in app.screen.query_one(CodeEditor).text  # closing leaves the code alone


async def test_running_code_without_a_sandbox_says_why(make_app):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert "Running code needs the sandbox" in screen_text(app)
        assert isinstance(app.screen.query_one(TextArea), CodeEditor)


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_a_key_pressed_under_f9s_question_is_not_swallowed_silently(make_app, language):
    """Issue 52, item 12: F6 pressed under F9's "put the starter back?" did nothing, silently."""
    from tutor.app.modals.confirm import ConfirmScreen
    from tutor.words.i18n import TABLE

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
