"""The predict-the-output quiz: the learner types what the code prints, then it runs and is compared."""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Annotated, Any, Literal

from tutor.pack.comments import code_for
from tutor.pack.quizzes import QuizBase, QuizType, Ran
from tutor.pack.spec import Meta, record
from tutor.pack.step_base import Seconds
from tutor.pack.text import Text

if TYPE_CHECKING:
    from tutor.pack.predict_compare import Verdict


@record
class PredictQuiz(QuizBase):
    """Predict the output: the learner types what the code prints, then it runs and is compared."""

    style: Literal["predict"]
    code: str
    explain: Annotated[Text | None, Meta("shown after the comparison")] = None
    timeout: Seconds | None = None
    compare: Annotated[Literal["whitespace", "exact"],
                       Meta("how a prediction is compared with the output: 'whitespace' (spacing, "
                            "blank lines and spaces inside lines do not count) or 'exact'")] = "whitespace"
    accept: Annotated[list[str], Meta("other answers counted as right (e.g. 'float64' for "
                                      "'torch.float64'), compared the same way")] = field(default_factory=list)
    raises: Annotated[str | None, Meta("the exception class the code raises, e.g. RuntimeError: the right "
                                       "answer is then the exception ('RuntimeError' or 'raises RuntimeError'), "
                                       "and validate checks that the code raises it",
                                       pattern=r"^[A-Za-z_][A-Za-z0-9_.]*$")] = None
    points: Annotated[
        float, Meta(ge=0), Meta("points for a right prediction in a graded hand-in (0: not graded)")
    ] = 0.0


def _review(step: PredictQuiz) -> list[Any]:
    return [step.question, code_for(step.code, "en")]  # a translated comment asks nothing new


def judge_run(quiz: PredictQuiz, prediction: str, output: str, error_type: str | None) -> "Verdict":
    """A prediction against a run of the quiz's code that printed ``output`` and raised an exception
    of type ``error_type`` (its qualified name, or None): the app, `torch-tutor quiz` and `grade`
    (through ``_mark``) judge by this."""
    from tutor.pack.predict_compare import judge

    raised = error_type.rsplit(".", 1)[-1] if error_type is not None else None
    return judge(prediction, output, compare=quiz.compare, accept=quiz.accept, raises=quiz.raises, raised=raised)


def _mark(quiz: PredictQuiz, answer: str, ran: Ran | None) -> tuple[bool, str]:
    """Judged against what the quiz's own code printed (or raised) when `grade` ran it."""
    from tutor.pack.predict_compare import judge

    if ran is None:
        raise ValueError("a predict quiz is marked against its code's run")
    right = judge(answer, ran.output, compare=quiz.compare, accept=quiz.accept, raises=quiz.raises,
                  raised=ran.raised).right
    return right, "right prediction" if right else "not what the code printed"


QUIZ = QuizType(record=PredictQuiz, view="quiz_predict.PredictQuizStep", review=_review, mark=_mark,
                runs_code=True)
