"""The free-response quiz: the learner writes, reveals the model answer, and grades themself."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from tutor.pack.quizzes import QuizBase, QuizType
from tutor.pack.spec import Meta, record
from tutor.pack.text import Text


@record
class FreeQuiz(QuizBase):
    """Free response: the learner writes, reveals the model answer, and grades themself."""

    style: Literal["free"]
    answer: Annotated[Text, Meta("the model answer, revealed on demand")]


def _review(step: FreeQuiz) -> list[Any]:
    return [step.question, step.answer]


QUIZ = QuizType(record=FreeQuiz, view="quiz_free.FreeQuizStep", review=_review, mark=None)
