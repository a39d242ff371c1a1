"""One module per quiz type. Each holds the type's record (a :class:`QuizBase` with its own
``style``) and ends with ``QUIZ``, its :class:`QuizType` declaration: where its widget is, what
review hashes of it, and how `grade` marks an answer from a hand-in. ``tutor.pack.models``
registers the modules in its ``Quiz`` union, and every table (``models.QUIZ_TYPES``, the app's
``STEP_VIEWS``, review's ``content_hash``, the gradebook's graded quizzes, which steps `validate`
runs) is built from these declarations.

Adding a quiz type: docs/architecture.md, "Adding a kind of anything".
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Literal, NamedTuple, Protocol

from tutor.pack.spec import Meta, record
from tutor.pack.step_base import StepBase
from tutor.pack.text import Text


@record
class QuizBase(StepBase):
    kind: Literal["quiz"]
    question: Annotated[Text, Meta("Markdown")]


class Graded(Protocol):
    """A quiz of a graded type (its declaration has ``mark``, so its record has ``points``)."""

    @property
    def id(self) -> str: ...

    @property
    def points(self) -> float: ...


class Ran(NamedTuple):
    """What a quiz's own code did when `grade` ran it once (``QuizType.runs_code``)."""

    output: str
    raised: str | None  # the exception's class name


@dataclass(frozen=True, kw_only=True)
class QuizType:
    """One quiz type, declared once in its module (``QUIZ = QuizType(...)``)."""

    #: the record, a ``QuizBase`` whose ``style: Literal[...]`` names the type
    record: type[QuizBase]
    #: its widget, a ``tutor.app.widgets.steps.base.StepView``, as ``"module.Class"`` under
    #: ``tutor.app.widgets.steps`` (core may not import the app: the app imports it when a step of
    #: this type is shown, and tests/unit/test_registries.py imports every one)
    view: str
    #: what the learner is asked and what counts as the answer, as plain parts: review hashes them
    #: (``tutor.record.spaced_review.content_hash``), so changing either makes a card start again
    review: Callable[[Any], list[Any]]
    #: how `grade` marks an answer recorded in a hand-in: ``mark(quiz, answer, ran)`` -> (right,
    #: message); ``ran`` is what the quiz's own code did when ``runs_code``, else None. None: never
    #: graded. A graded type's record has a ``points`` field, and only a graded one.
    mark: Callable[[Any, str, Ran | None], tuple[bool, str]] | None
    #: the quiz has code of its own that runs: `validate` runs it as an example, `grade` runs it
    #: once before it marks answers (a run that fails makes every answer's row a sandbox-failure)
    runs_code: bool = False

    def __post_init__(self) -> None:
        where = f"{self.record.__module__}: {self.record.__name__}"
        if not (isinstance(self.record, type) and issubclass(self.record, QuizBase)):
            raise TypeError(f"{where}: a quiz type's record is a QuizBase")
        module, _, name = self.view.rpartition(".")
        if not module or not name:
            raise TypeError(f"{where}: view must be 'module.Class' under tutor.app.widgets.steps, not {self.view!r}")
        # the annotations, not dataclasses.fields: a record stays unmaterialized until it is used
        graded = any("points" in vars(cls).get("__annotations__", {}) for cls in self.record.__mro__)
        if graded != (self.mark is not None):
            raise TypeError(f"{where}: a quiz worth points needs a mark function, and only such a quiz has one")


def declared(records: tuple[type[QuizBase], ...]) -> dict[type, QuizType]:
    """Each record's declaration, read from its module's ``QUIZ``: a record registered without one
    fails here, at import."""
    out: dict[type, QuizType] = {}
    for record_class in records:
        quiz = getattr(sys.modules[record_class.__module__], "QUIZ", None)
        if not isinstance(quiz, QuizType) or quiz.record is not record_class:
            raise TypeError(f"{record_class.__module__} must end with QUIZ = QuizType(record={record_class.__name__}, ...)")
        out[record_class] = quiz
    return out
