"""The progress store in parts (issue 31): each part publishes typed messages after it records,
the store schedules no review itself (whoever opens it subscribes `review.first_meeting`, as the
app does), a subscriber's bug loses nothing, and the contents count any quiz type as a quiz."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Literal

import pytest

from tutor.record import spaced_review as review
from tutor.pack.models import ChoiceQuiz, QuizBase
from tutor.record.progress import CheckRecorded, HintShown, ProgressStore, QuizAnswered, Recorded, SolutionShown

QUIZ = ("p", "basics", "q")
EXERCISE = ("p", "basics", "ex")


@pytest.fixture
def store():
    s = ProgressStore.in_memory()
    yield s
    s.close()


def test_each_record_is_published_as_a_typed_message_after_it_is_written(store):
    heard: list[tuple[Recorded, bool]] = []
    # What a subscriber reads back when it hears a message is already on the disk.
    store.events.subscribe(lambda m: heard.append((m, store.steps.get(*m.key).seen)))
    store.answers.record_quiz(*QUIZ, "1", False)
    store.answers.record_quiz(*QUIZ, "0", True)
    store.answers.record_quiz(*QUIZ, "free text", None)
    store.steps.use_hint(*EXERCISE)
    store.answers.record_attempt(*EXERCISE, "run", passed=True)  # a Run is no message
    store.answers.record_attempt(*EXERCISE, "check", passed=False)
    store.steps.mark_solution_seen(*EXERCISE)
    store.answers.record_attempt(*EXERCISE, "check", passed=True, code="x")
    store.steps.mark_solution_seen(*EXERCISE)
    assert [m for m, _ in heard] == [
        QuizAnswered(QUIZ, False, 1), QuizAnswered(QUIZ, True, 2), QuizAnswered(QUIZ, None, 3),
        HintShown(EXERCISE, 1),
        CheckRecorded(EXERCISE, False),
        SolutionShown(EXERCISE, solved=False),
        CheckRecorded(EXERCISE, True, hints_used=1, solution_seen=True),
        SolutionShown(EXERCISE, solved=True),
    ]
    assert all(seen for m, seen in heard if not isinstance(m, CheckRecorded) or m.passed)


def test_the_store_schedules_no_review_itself(store):
    store.answers.record_quiz(*QUIZ, "0", True)
    store.answers.record_attempt(*EXERCISE, "check", passed=True)
    assert store.cards.all() == [] and store.cards.reviews() == []  # recorded, nothing scheduled

    review.keep_first_meetings(store)  # what the app (and `torch-tutor check`) does
    other = ("p", "basics", "q2")
    store.answers.record_quiz(*other, "1", False)
    store.steps.use_hint("p", "basics", "ex2")
    store.answers.record_attempt("p", "basics", "ex2", "check", passed=True)
    store.answers.record_quiz("p", "review:0:basics", "q3", "0", True)  # a review's scratch answer: no card
    assert [(c["step"], c["kind"]) for c in store.cards.all()] == [("q2", "quiz"), ("ex2", "exercise")]
    assert [(r["step"], r["rating"], r["source"], r["first"]) for r in store.cards.reviews()] == [
        ("q2", review.AGAIN, "lesson", 1), ("ex2", review.HARD, "lesson", 1)]


def test_a_subscriber_that_fails_loses_nothing(store, capsys):
    heard: list[Recorded] = []

    def broken(message: Recorded) -> None:
        raise RuntimeError("listener bug")

    store.events.subscribe(broken)
    store.events.subscribe(heard.append)
    store.answers.record_quiz(*QUIZ, "0", True)
    assert store.steps.get(*QUIZ).quiz_correct is True and heard == [QuizAnswered(QUIZ, True, 1)]
    assert "a progress listener failed: RuntimeError: listener bug" in capsys.readouterr().err
    store.events.unsubscribe(broken)
    store.events.unsubscribe(broken)  # twice: no error
    store.answers.record_quiz(*QUIZ, "1", False)
    assert capsys.readouterr().err == "" and len(heard) == 2


class TraceQuiz(QuizBase):
    """A quiz type the store has never heard of."""

    style: Literal["trace"]


def _step(cls: type, step_id: str) -> object:
    step = object.__new__(cls)
    object.__setattr__(step, "id", step_id)
    return step


def test_the_contents_count_any_quiz_type_as_a_quiz(store):
    """A new quiz type needs no change in the store: it counts what derives from QuizBase."""
    lesson = SimpleNamespace(id="basics", steps=[_step(TraceQuiz, "trace"), _step(ChoiceQuiz, "choice")])
    pack = SimpleNamespace(id="p", lessons=[lesson])
    store.answers.record_quiz("p", "basics", "trace", "3", True)
    store.positions.set("p", "basics", "trace")
    summary = store.summarize(pack)  # type: ignore[arg-type]
    (counts,) = summary.lessons
    assert (counts.quizzes, counts.quiz_answered, counts.quiz_correct) == (2, 1, 1)
    assert counts.state == "progress" and summary.position == ("basics", "trace")
