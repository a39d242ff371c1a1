"""The multiple-choice quiz, with one or several correct choices."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from tutor.core.quizzes import QuizBase, QuizType, Ran
from tutor.core.spec import Meta, record
from tutor.core.text import Text


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


def _review(step: ChoiceQuiz) -> list[Any]:
    return [step.question, [[c.text, c.correct] for c in step.choices], step.multiple]


def _mark(quiz: ChoiceQuiz, answer: str, ran: Ran | None) -> tuple[bool, str]:
    """A hand-in records the picked choices' indexes in the order written, comma-separated."""
    correct = {i for i, choice in enumerate(quiz.choices) if choice.correct}
    picked: set[int] | None
    try:
        picked = {int(part) for part in answer.split(",") if part.strip()}
    except ValueError:
        picked = None
    right = picked == correct
    return right, "correct" if right else ("not an answer to this quiz" if picked is None else "not the right choices")


QUIZ = QuizType(record=ChoiceQuiz, view="quiz_choice.ChoiceQuizStep", review=_review, mark=_mark)
