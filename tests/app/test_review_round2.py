"""Review's rough edges at 80x24 (issue 28, item 8): a summary that keeps up with the clock,
F4 that never grades silently, one way to grade a free answer, ratings that match what was
shown, and titles instead of ids."""

from __future__ import annotations

import pytest

from app_support import screen_text, settle
from test_review_screen import DAY, DOUBLE, FREE, SMALL, T0, WHICH, _app, _open_review
from tutor.app.screens.review import ReviewScreen
from tutor.core import review

PREDICT = ("mini", "basics", "predict-sum")


async def test_the_open_summary_offers_cards_as_they_come_due_and_f4_or_f10_start_them(make_app):
    """It said "Nothing to review now. Next review in less than a minute" while its own status
    bar said "review: 3 due F10"; F10 and F4 did nothing."""
    app = _app(make_app, start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        app.store.answers.record_quiz(*WHICH, "0", True)
        screen = await _open_review(pilot, app)
        assert "Nothing to review now. Next review in 2 days." in screen_text(app)
        app.store.cards.clock.now = app.store.cards.get(*WHICH)["due"] + 1  # the card comes due, screen open
        await pilot.pause(ReviewScreen.POLL_SECONDS * 2.5)
        await settle(pilot, 3)
        text = screen_text(app)
        assert "1 due now: F4 starts them." in text and "Nothing to review now" not in text
        assert "review: 1 due F10" in text  # the status bar agrees
        await pilot.press("f10")
        await settle(pilot, 3)
        assert app.screen is screen and "Review 1/1" in screen_text(app)
        await pilot.press("enter")  # right
        await settle(pilot)
        await pilot.press("f4")
        await settle(pilot, 3)
        assert "Session over: 1 reviewed, 1 right." in screen_text(app)


async def test_f4_on_a_card_not_tried_skips_it_without_a_grade(make_app):
    app = _app(make_app, start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        app.store.answers.record_quiz(*WHICH, "0", True)
        app.store.cards.clock.now = T0 + 30 * DAY
        await _open_review(pilot, app)
        before = len(app.store.cards.reviews())
        due = app.store.cards.get(*WHICH)["due"]
        await pilot.press("f4")
        await settle(pilot, 3)
        assert len(app.store.cards.reviews()) == before  # not graded: no Again
        assert app.store.cards.get(*WHICH)["due"] == due  # still due
        text = screen_text(app)
        assert "1 skipped (not graded, still due)." in text
        assert "more came due" not in text and "due now" not in text  # not offered again at once


async def test_a_free_answer_in_review_is_graded_only_with_the_digits(make_app):
    app = _app(make_app, start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        app.store.answers.record_quiz(*FREE, "shapes", None)
        app.store.answers.record_quiz(*FREE, "shapes", True)
        app.store.cards.clock.now = T0 + 30 * DAY
        await _open_review(pilot, app)
        await pilot.press("f8")  # reveal the model answer
        await settle(pilot)
        text = screen_text(app)
        assert "1 Again · 2 Hard · 3 Good · 4 Easy" in text
        assert "I got it" not in text and "I missed it" not in text and "How did you do?" not in text
        assert not [b for b in app.screen.query("#grade-buttons KeyButton") if b.display and b.parent.display]


async def test_a_prediction_right_only_after_the_output_was_shown_is_again(make_app):
    """A missed prediction shows the real output beside it: retyping that earned Hard."""
    app = _app(make_app, start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        app.store.answers.record_quiz(*PREDICT, "5", True)
        app.store.cards.clock.now = T0 + 30 * DAY
        screen = await _open_review(pilot, app)
        assert screen.current.step == "predict-sum"
        app.store.answers.record_quiz(*screen._scratch, "6", False)  # as the step records a miss
        await settle(pilot)
        app.store.answers.record_quiz(*screen._scratch, "5", True)  # the output, retyped
        await settle(pilot)
        assert app.store.cards.reviews()[-1]["rating"] == review.AGAIN
    assert review.quiz_rating("predict", True, 2, 5.0) == review.AGAIN
    assert review.quiz_rating("choice", True, 2, 5.0) == review.HARD  # only the pick was explained


async def _review_one_while_another_comes_due(pilot, app) -> None:
    """One card due, reviewed (right, F4) while a second comes due: the summary then offers it."""
    app.store.answers.record_quiz(*WHICH, "0", True)
    app.store.cards.clock.now = T0 + DAY
    app.store.answers.record_quiz(*FREE, "shapes", None)
    app.store.answers.record_quiz(*FREE, "shapes", True)
    app.store.cards.clock.now = app.store.cards.get(*WHICH)["due"] + 60
    await _open_review(pilot, app)
    app.store.cards.clock.now = app.store.cards.get(*FREE)["due"] + 60
    await pilot.press("enter", "f4")
    await settle(pilot, 3)


async def test_the_summary_does_not_give_a_next_review_time_beside_cards_due_now(make_app):
    app = _app(make_app, start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        await _review_one_while_another_comes_due(pilot, app)
        text = screen_text(app)
        assert "1 more came due while you reviewed: F4 goes on with them." in text
        assert "Next review" not in text


def test_when_says_now_only_once_a_card_is_due():
    assert review.when(100.0, 100.0) == "now"
    assert review.when(130.0, 100.0) == "in less than a minute"  # `progress` said "0 due now, next now"
    assert review.when(100.0 + 600, 100.0) == "in 10 min"


def test_untitled_steps_are_named_by_what_they_say_never_by_their_id():
    from pathlib import Path

    from tutor.core.loader import load_pack
    from tutor.core.titles import step_title

    pack = load_pack(Path(__file__).parents[2] / "lessons" / "debugging-and-speed")
    names = {}
    for lesson in pack.lessons:
        for index, step in enumerate(lesson.steps):
            name = step_title(step, "en", "en", index)
            assert name and name != step.id, (step.id, name)
            assert step.title or len(name) <= 40, (step.id, name)
            names[step.id] = name
    assert names["inner-dims"] == "An error says mat1 and mat2 shapes…"
    assert names["q-dtype-source"].startswith("RuntimeError: mat1 and mat2")
    queue_titles = [d.title for d in review.queue(_store_with_every_card(pack), [pack], T0, 1000)]
    assert "Reading the error message › An error says mat1 and mat2 shapes…" in queue_titles
    assert not any("inner-dims" in title for title in queue_titles)


def _store_with_every_card(pack):
    import tempfile
    from pathlib import Path

    from tutor.core.progress import ProgressStore

    store = ProgressStore.open(Path(tempfile.mkdtemp(prefix="titles-")))
    store.cards.clock = lambda: T0
    for lesson in pack.lessons:
        for step in lesson.steps:
            kind = review.item_kind(step)
            if kind is not None:
                store.cards.put(review._new_card((pack.id, lesson.id, step.id), kind, T0))
    return store


async def test_the_review_title_names_the_kind_in_words(make_app):
    app = _app(make_app, start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        app.store.answers.record_quiz(*FREE, "shapes", None)
        app.store.answers.record_quiz(*FREE, "shapes", True)
        app.store.cards.clock.now = T0 + 30 * DAY
        await _open_review(pilot, app)
        top = screen_text(app).splitlines()[0]
        assert "Review 1/1 · Basics › In your words · written answer" in top


async def test_a_poll_of_the_clock_while_the_summary_is_drawn_never_freezes_the_review(make_app, monkeypatch):
    """CI froze here for 30 s (Textual's WaitForScreenTimeout): on a busy machine the one-second
    poll asked for the summary again while it was being drawn, the draw under way was cancelled
    in the middle of its mount, and the screen waited on half-mounted widgets for ever. A poll
    every 3 ms makes that race happen every time."""
    monkeypatch.setattr(ReviewScreen, "POLL_SECONDS", 0.003)
    app = _app(make_app, start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        await _review_one_while_another_comes_due(pilot, app)
        assert "1 more came due while you reviewed: F4 goes on with them." in screen_text(app)
        await pilot.press("f4")  # on with them: the card that came due is shown, whole
        await settle(pilot, 3)
        assert "Review 2/2" in screen_text(app)


@pytest.mark.parametrize("language, kind", [("en", "written answer"), ("zh", "简答题")])
async def test_a_review_title_too_long_for_the_line_shortens_its_title_not_its_end(make_app, language, kind):
    """Issue 52, item 9: at 80 columns a long step's title ran the header off the line, cut after
    a separator ("… shapes… ·"). The step's title is shortened instead; the kind stays whole."""
    from tutor.core.i18n import TABLE

    app = _app(make_app, start_lesson="basics", language=language)
    async with app.run_test(size=(40, 24)) as pilot:
        app.store.answers.record_quiz(*FREE, "shapes", None)
        app.store.answers.record_quiz(*FREE, "shapes", True)
        app.store.cards.clock.now = T0 + 30 * DAY
        await _open_review(pilot, app)
        top = screen_text(app).splitlines()[0].rstrip()
        assert TABLE[language]["review.kind.free"] == kind
        assert top.endswith(kind) and "…" in top, top


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_escape_in_a_review_cards_editor_leaves_the_editor_not_the_review(make_app, language):
    """Issue 52, item 9: Esc in a review card's code editor left the whole review (in a lesson
    it only leaves the editor). Now the first Esc leaves the editor, the next the review."""
    from tutor.app.widgets.editor import CodeEditor
    from tutor.core.i18n import TABLE

    app = _app(make_app, start_lesson="basics", language=language)
    async with app.run_test(size=SMALL) as pilot:
        app.store.answers.record_attempt(*DOUBLE, "check", passed=True, checks_passed=1, checks_total=1)
        app.store.cards.clock.now = T0 + 30 * DAY
        screen = await _open_review(pilot, app)
        editor = screen.query_one(CodeEditor)
        assert app.focused is editor
        assert TABLE[language]["editor.title.escape"].strip() in str(editor.border_title)  # it says so
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and app.focused is not editor
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, ReviewScreen)
