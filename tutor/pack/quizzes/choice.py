"""The multiple-choice quiz, with one or several correct choices."""

from __future__ import annotations

import random
import secrets
from typing import Annotated, Any, Literal, Protocol

from tutor.pack.quizzes import QuizBase, QuizType, Ran
from tutor.pack.spec import Meta, record
from tutor.pack.text import Text

#: The progress store's preference that seeds every shuffle for this learner.
SEED_PREFERENCE = "shuffle-seed"


@record
class Choice:
    text: Text
    correct: bool = False
    explain: Annotated[Text, Meta("why this choice is right or wrong; shown once answered")]


@record
class ChoiceQuiz(QuizBase):
    """Multiple choice with one or several correct choices."""

    style: Literal["choice"]
    choices: Annotated[list[Choice], Meta(min_length=2)]
    points: Annotated[
        float, Meta(ge=0), Meta("points for a correct answer in a graded hand-in (0: not graded)")
    ] = 0.0
    shuffle: Annotated[bool, Meta("false keeps the choices in the order written (for 'all of the above'); "
                                  "by default each learner sees them in an order of their own")] = True

    def __post_init__(self) -> None:
        if not any(c.correct for c in self.choices):
            raise ValueError("at least one choice must have correct: true")

    @property
    def multiple(self) -> bool:
        return sum(c.correct for c in self.choices) > 1

    @property
    def correct_choices(self) -> set[int]:
        """The indexes (in the order written) of the correct choices."""
        return {i for i, choice in enumerate(self.choices) if choice.correct}

    def is_right(self, picked: set[int]) -> bool:
        """An answer is right when it picks exactly the correct choices."""
        return picked == self.correct_choices


def answer_text(picked: set[int]) -> str:
    """How an answer is recorded (progress store, hand-in): the picked indexes in the order
    written, comma-separated."""
    return ",".join(map(str, sorted(picked)))


def picked_of(answer: str | None) -> set[int] | None:
    """The choices a recorded answer picked; None for text that is no such answer."""
    if not answer:
        return set()
    try:
        return {int(part) for part in answer.split(",") if part.strip()}
    except ValueError:
        return None


class _Preferences(Protocol):
    def get(self, name: str) -> str | None: ...

    def set(self, name: str, value: str) -> None: ...


class _Store(Protocol):
    """What the seed needs of the progress store (tutor.record, which the pack never imports)."""

    @property
    def preferences(self) -> _Preferences: ...


def learner_seed(store: _Store) -> str:
    """This learner's shuffle seed: made once, kept with their progress."""
    seed = store.preferences.get(SEED_PREFERENCE)
    if not seed:
        seed = secrets.token_hex(8)
        store.preferences.set(SEED_PREFERENCE, seed)
    return seed


def choice_order(count: int, seed: str, key: tuple[str, ...], shuffle: bool = True) -> list[int]:
    """The order (original indices) in which this learner sees the ``count`` choices of quiz ``key``
    (pack, lesson, step): the same in the app, in `torch-tutor quiz` and in every review."""
    order = list(range(count))
    if shuffle:
        random.Random("/".join((seed, *key))).shuffle(order)
    return order


def _review(step: ChoiceQuiz) -> list[Any]:
    return [step.question, [[c.text, c.correct] for c in step.choices], step.multiple]


def _mark(quiz: ChoiceQuiz, answer: str, ran: Ran | None) -> tuple[bool, str]:
    """A hand-in records the picked choices' indexes in the order written, comma-separated."""
    picked = picked_of(answer)
    right = picked is not None and quiz.is_right(picked)
    return right, "correct" if right else ("not an answer to this quiz" if picked is None else "not the right choices")


QUIZ = QuizType(record=ChoiceQuiz, view="quiz_choice.ChoiceQuizStep", review=_review, mark=_mark)
