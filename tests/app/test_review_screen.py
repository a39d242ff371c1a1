"""The review screen at 80x24 with a controlled clock: the queue in the lesson's own step views,
ratings as the learner answers, the scratch draft, due counts, the summary and the chart."""

from __future__ import annotations

import time
from datetime import datetime, timezone

import pytest
from textual.widgets import RadioSet

from app_support import screen_text, settle
from tutor.app.screens.home import HomeScreen
from tutor.app.screens.lesson import LessonScreen
from tutor.app.screens.review import ReviewScreen
from tutor.app.widgets.editor import CodeEditor
from tutor.record import spaced_review as review

SMALL = (80, 24)
DAY = 86400.0
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc).timestamp()
WHICH = ("mini", "basics", "which-dim")
FREE = ("mini", "basics", "why-shapes")
DOUBLE = ("mini", "exercises", "double")


class Clock:
    def __init__(self, now: float = T0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def _app(make_app, **kwargs):
    app = make_app(**kwargs)
    app.store.cards.clock = Clock()
    _seed_right_choice_first(app)
    return app


def _seed_right_choice_first(app) -> None:
    """Choices are shuffled per learner: pick this learner's seed so that the review's choice
    shows its right answer first and a wrong one second, as the key presses below assume."""
    from tutor.app.widgets.steps.quiz_choice import SEED_PREFERENCE, choice_order

    pack = next(p for p in app.packs if p.id == WHICH[0])
    step = next(s for s in pack.lesson(WHICH[1]).steps if s.id == WHICH[2])
    seed = next(f"s{i}" for i in range(10_000)
                if choice_order(len(step.choices), f"s{i}", WHICH)[:2] == [0, 1])
    app.store.preferences.set(SEED_PREFERENCE, seed)


async def _open_review(pilot, app, *, seconds_on_item: float = 30.0) -> ReviewScreen:
    await pilot.press("f10")
    await settle(pilot, 3)
    screen = app.screen
    assert isinstance(screen, ReviewScreen)
    screen._elapsed = lambda since: seconds_on_item
    return screen


async def test_a_choice_answered_in_the_lesson_comes_back_and_a_right_answer_is_good(make_app):
    app = _app(make_app, start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        app.store.answers.record_quiz(*WHICH, "0", True)  # met in the lesson on day 0
        app.store.cards.clock.now = T0 + 3 * DAY
        screen = await _open_review(pilot, app)
        text = screen_text(app)
        assert "Review 1/1" in text and "Which numbers" in text
        assert isinstance(app.focused, RadioSet)
        assert "Correct." not in text  # the lesson's answer is not shown: a review starts afresh
        await pilot.press("enter")  # the first choice: right, at the first try, not quick
        await settle(pilot)
        text = screen_text(app)
        assert "Good: back in" in text
        assert app.store.cards.reviews()[-1]["rating"] == review.GOOD
        assert app.store.cards.reviews()[-1]["source"] == "review"
        assert app.store.steps.get(*WHICH).quiz_answer == "0"  # the lesson's record is untouched
        await pilot.press("f4")
        await settle(pilot, 3)
        text = screen_text(app)
        assert "Session over: 1 reviewed, 1 right." in text
        assert "Reviews due, next 14 days" in text and "Remembered" in text


async def test_moving_on_is_again_wrong_then_right_is_hard_and_quick_is_easy(make_app):
    app = _app(make_app, start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        app.store.answers.record_quiz(*WHICH, "0", True)
        app.store.cards.clock.now = T0 + 30 * DAY
        await _open_review(pilot, app)
        await pilot.press("down", "enter")  # wrong
        await pilot.press("f4")  # moved on after a wrong answer: Again, back in 10 minutes
        await settle(pilot, 3)
        assert app.store.cards.reviews()[-1]["rating"] == review.AGAIN
        assert "Session over: 1 reviewed, 0 right." in screen_text(app)
        await pilot.press("f2")
        await settle(pilot)

        app.store.cards.clock.now += 600
        await _open_review(pilot, app)
        await pilot.press("down", "enter")  # wrong
        await settle(pilot)
        assert "Not this time" in screen_text(app)
        await pilot.press("up", "enter")  # right after a wrong try
        await settle(pilot)
        assert app.store.cards.reviews()[-1]["rating"] == review.HARD
        assert "Hard: back in" in screen_text(app)
        await pilot.press("f2")
        await settle(pilot)

        app.store.cards.clock.now += 90 * DAY
        await _open_review(pilot, app, seconds_on_item=4.0)
        await pilot.press("enter")  # right at once, within 10 s
        await settle(pilot)
        assert app.store.cards.reviews()[-1]["rating"] == review.EASY
        assert "Easy: back in" in screen_text(app)


async def test_a_free_answer_is_rated_with_keys_one_to_four(make_app):
    app = _app(make_app, start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        app.store.answers.record_quiz(*FREE, "shapes", None)
        app.store.answers.record_quiz(*FREE, "shapes", True)
        app.store.cards.clock.now = T0 + 30 * DAY
        await _open_review(pilot, app)
        await pilot.press("3")  # before the reveal, digits are typed into the answer
        await settle(pilot)
        assert app.screen.query_one("#answer").text == "3"
        assert len(app.store.cards.reviews()) == 1
        await pilot.click("#reveal")
        await settle(pilot)
        text = screen_text(app)
        assert "1 Again" in text and "4 Easy" in text
        await pilot.press("2")
        await settle(pilot)
        assert app.store.cards.reviews()[-1]["rating"] == review.HARD
        assert app.screen.query_one("#answer").text == "3"  # the rating key was not typed


async def test_an_exercise_review_starts_from_the_starter_and_keeps_the_lessons_draft(make_app):
    app = _app(make_app, start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        app.store.drafts.save(*DOUBLE, "# my lesson draft\n")
        app.store.answers.record_attempt(*DOUBLE, "check", passed=True, code="solved")
        app.store.cards.clock.now = T0 + 30 * DAY
        screen = await _open_review(pilot, app)
        assert screen.current.kind == "exercise"
        editor = app.screen.query_one(CodeEditor)
        assert editor.text == app.pack("mini").lessons[1].steps[0].starter
        editor.focus()
        await pilot.press("end")
        await pilot.press(*"# review work")
        scratch = screen._scratch
        await pilot.press("f2")  # away in the middle of the review, and back: nothing typed is lost
        await settle(pilot, 3)
        assert "# review work" in (app.store.drafts.get(*scratch) or "")
        screen = await _open_review(pilot, app)
        assert screen._scratch == scratch and "# review work" in app.screen.query_one(CodeEditor).text
        assert len(app.store.cards.reviews()) == 1  # leaving is not a rating
        app.store.answers.record_attempt(*scratch, "check", passed=False)  # a Check that failed
        await settle(pilot)
        assert "F4 to move on (counts as Again)" in screen_text(app)
        await pilot.press("f4")  # gave up after a failed check: Again
        await settle(pilot, 3)
        assert app.store.cards.reviews()[-1]["rating"] == review.AGAIN
        assert app.store.drafts.get(*DOUBLE) == "# my lesson draft\n"  # the lesson's draft, untouched
        assert app.store.answers.solved_code(*DOUBLE) == "solved"
        await pilot.press("f2")
        await settle(pilot)
        app.store.cards.clock.now += DAY  # the next review starts from the starter again
        screen = await _open_review(pilot, app)
        assert screen._scratch != scratch
        assert app.screen.query_one(CodeEditor).text == app.pack("mini").lessons[1].steps[0].starter
        assert app.store.drafts.get(*scratch) is None  # the finished review's scratch is forgotten


async def test_the_review_editor_says_it_has_the_keys_and_that_esc_leaves_it(make_app):
    """In a review, as in a lesson, Esc leaves the editor for the card's page (issue 52; it went
    back from the whole review): its frame says it has the keys and that Esc leaves it."""
    app = _app(make_app, start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        app.store.answers.record_attempt(*DOUBLE, "check", passed=True, code="solved")
        app.store.cards.clock.now = T0 + 30 * DAY
        screen = await _open_review(pilot, app)
        assert screen.current.kind == "exercise"
        editor = app.screen.query_one(CodeEditor)
        editor.focus()
        await settle(pilot, 3)
        frame = screen_text(app).splitlines()[editor.region.y]
        assert "editing: keys type into your code · Esc leaves" in frame, frame


async def test_a_review_answer_box_says_it_has_the_keys_and_that_esc_leaves_it(make_app):
    """A written answer in a review: its box's frame says the keys type into it and, as in a
    lesson, that Esc leaves it (the next Esc goes back from the review)."""
    from tutor.app.widgets.editor import AnswerBox

    app = _app(make_app, start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        app.store.answers.record_quiz(*FREE, "shapes", True)
        app.store.cards.clock.now = T0 + 30 * DAY
        await _open_review(pilot, app)
        box = app.screen.query_one(AnswerBox)
        box.focus()
        await settle(pilot, 3)
        frame = screen_text(app).splitlines()[box.region.y]
        assert "editing: keys type into your answer · Esc leaves" in frame, frame


async def test_due_counts_on_the_contents_and_the_status_bar(make_app):
    app = _app(make_app, resume=False)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
        assert "Review:" not in screen_text(app)  # nothing due: nothing shown
        app.store.answers.record_quiz(*WHICH, "0", True)
        app.store.answers.record_quiz(*FREE, "x", False)
        app.store.cards.clock.now = T0 + 3 * DAY
        app.screen.refresh_contents()
        for bar in app.screen.query("StatusBar"):
            bar.refresh_status()
        await settle(pilot)
        text = screen_text(app)
        assert "Review: 2 due, 0 new  F10" in text
        assert "review: 2 due F10" in text
        await pilot.click("#review-due")
        await settle(pilot, 3)
        assert isinstance(app.screen, ReviewScreen)
        await pilot.press("f2")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)


async def test_nothing_due_shows_when_the_next_review_is_and_the_chart(make_app):
    app = _app(make_app, start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        app.store.answers.record_quiz(*WHICH, "0", True)
        await _open_review(pilot, app)
        text = screen_text(app)
        assert "Nothing to review now. Next review in 2 days." in text
        assert "Reviews due, next 14 days" in text


@pytest.fixture
def utc(monkeypatch):
    """The chart's days are local days: pin the zone so 12:00 + 10 min is the same day."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.delenv("TZ")
    time.tzset()


async def test_the_message_and_the_chart_agree_on_cards_due_later_today(make_app, utc):
    """A card moved on from comes back in 10 min: the chart counts it in today's column, and
    the message says it is due later today (it used to read "now" over a "nothing to review")."""
    app = _app(make_app, start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        app.store.answers.record_quiz(*WHICH, "0", True)
        app.store.cards.clock.now = T0 + 3 * DAY
        await _open_review(pilot, app)
        await pilot.press("down", "enter", "f4")  # wrong, moved on: Again, back in 10 minutes
        await settle(pilot, 3)
        text = screen_text(app)
        assert "Next review in 10 min (1 due later today)." in text
        chart = text[text.index("Reviews due"):]
        assert "today" in chart and "now" not in chart
        assert chart.splitlines()[1].strip() == "1"  # today's column holds it

        app.store.cards.clock.now += 60
        await pilot.press("escape")
        await settle(pilot)
        await _open_review(pilot, app)
        assert "Nothing to review now. Next review in 9 min (1 due later today)." in screen_text(app)

        app.store.cards.clock.now = app.store.cards.get(*WHICH)["due"] - 30  # due in 30 s: not "now" under
        await pilot.press("escape")  # "nothing to review now"
        await settle(pilot)
        await _open_review(pilot, app)
        assert "Nothing to review now. Next review in less than a minute (1 due later today)." in screen_text(app)


async def test_escape_goes_back_to_the_screen_the_review_was_opened_over(make_app):
    app = _app(make_app, start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        app.store.answers.record_quiz(*WHICH, "0", True)
        app.store.cards.clock.now = T0 + 3 * DAY
        await settle(pilot)
        assert isinstance(app.screen, LessonScreen)
        await _open_review(pilot, app)
        assert "esc Back" in screen_text(app).splitlines()[-1]  # the footer names the way out
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, LessonScreen)
        await pilot.press("f2")
        await settle(pilot)
        await _open_review(pilot, app)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)


async def test_escape_from_a_review_opened_first_goes_to_the_contents(make_app):
    app = _app(make_app, resume=False)
    app.start_review = ""  # as `torch-tutor review`
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, 3)
        assert isinstance(app.screen, ReviewScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, HomeScreen)
        assert "1. Basics" in screen_text(app)


async def test_a_wrong_choice_in_review_explains_only_the_pick_until_the_solution_key(make_app):
    app = _app(make_app, start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        app.store.answers.record_quiz(*WHICH, "0", True)
        app.store.cards.clock.now = T0 + 30 * DAY
        await _open_review(pilot, app)
        await pilot.press("down", "enter")  # wrong (this learner sees the right answer first)
        await settle(pilot)
        text = screen_text(app)
        assert "Not this time" in text and "Those are the outer dimensions" in text
        assert "The inner dimensions of a matmul must match" not in text
        await pilot.press("f8")  # every choice explained: rated Again
        await settle(pilot)
        assert "The inner dimensions of a matmul must match" in " ".join(screen_text(app).split())
        assert app.store.cards.reviews()[-1]["rating"] == review.AGAIN
        assert app.store.steps.get(*WHICH).solution_seen is False  # the lesson's record is untouched


def test_the_charts_today_label_covers_no_other_day(utc):
    """Found by a new-user review: "today" (5 cells) under a 4-cell column ran over tomorrow's
    place, and tomorrow's label was left out."""
    from tutor.app.screens.review_chart import CELL, forecast_chart

    counts = [2, 3] + [0] * 11 + [1]
    lines = forecast_chart(counts, T0).plain.splitlines()  # 1 March 2026
    labels = lines[-2]
    for day in range(14):
        at = day * CELL
        assert labels[at:at + 2] == f"{day + 1:02d}", labels  # every day, tomorrow's too
        assert labels[at + 2:at + CELL].strip() == "", labels
    bars = lines[-3]
    assert bars[:CELL - 1] == bars[CELL:2 * CELL - 1] != "   "  # today's and tomorrow's columns, both drawn
    assert lines[-1] == "↑ today"  # on a line of its own, under today's column


async def test_cards_that_came_due_during_the_session_are_offered_at_its_end(make_app):
    """Found by a new-user review: "Session over" counted only the queue made when the review
    opened; a card that came due meanwhile was neither offered nor counted."""
    app = _app(make_app, start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        app.store.answers.record_quiz(*WHICH, "0", True)  # day 0
        app.store.cards.clock.now = T0 + DAY
        app.store.answers.record_quiz(*FREE, "shapes", None)
        app.store.answers.record_quiz(*FREE, "shapes", True)  # a day later: due a day later
        app.store.cards.clock.now = app.store.cards.get(*WHICH)["due"] + 60
        assert app.store.cards.get(*FREE)["due"] > app.store.cards.clock.now
        await _open_review(pilot, app)
        assert "Review 1/1" in screen_text(app)
        app.store.cards.clock.now = app.store.cards.get(*FREE)["due"] + 60  # a long look at the question
        await pilot.press("enter")  # right: Good
        await settle(pilot)
        await pilot.press("f4")
        await settle(pilot, 3)
        text = screen_text(app)
        assert "Session over: 1 reviewed, 1 right." in text
        assert "1 more came due while you reviewed: F4 goes on with them." in text
        await pilot.press("f4")
        await settle(pilot, 3)
        text = screen_text(app)
        assert "Review 2/2" in text and "more came due" not in text
        await pilot.press("f8", "1", "f4")  # revealed, rated Again: back in 10 minutes (not due now)
        await settle(pilot, 3)
        text = screen_text(app)
        assert "Session over: 2 reviewed, 1 right." in text and "more came due" not in text
        assert not app.screen.check_action("next", ())  # nothing more to go on with


# ------------------------------------------------------------- rough edges (issue 28, item 8)
# A summary that keeps up with the clock, F4 that never grades silently, one way to grade a free
# answer, ratings that match what was shown, and titles instead of ids.

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

    from tutor.pack.loader import load_pack
    from tutor.pack.titles import step_title

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

    from tutor.record.progress import ProgressStore

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
    from tutor.words.i18n import TABLE

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
    from tutor.words.i18n import TABLE

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
