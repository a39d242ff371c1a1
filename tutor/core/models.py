"""The lesson-pack format, version 1, defined once.

These pydantic models are the single source of truth: the loader validates against them,
``torch-tutor schema`` prints their JSON Schema (a copy lives in ``assets/pack.schema.json``
for editors), and docs/authoring.md is checked against them by a test.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from tutor.core.checks import Check
from tutor.core.text import LangCode, Text

FORMAT_VERSION = 1

#: Ids are what progress, drafts and `torch-tutor check` refer to: keep them stable and simple.
Id = Annotated[
    str,
    Field(
        pattern=r"^[a-z0-9][a-z0-9_-]*$",
        max_length=64,
        description="lower-case letters, digits, '-' and '_'; stable, since progress refers to it",
    ),
]


class Strict(BaseModel):
    """Every model forbids unknown keys: a typo must be an error, not a silently ignored field."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _valid_regex(pattern: str | None) -> str | None:
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None
    return pattern


# --------------------------------------------------------------------------- pack header


class Requires(Strict):
    """What the learner's machine needs for the pack (or one step) to run."""

    torch: str | None = Field(
        None,
        description="a torch version range in PEP 440 form, e.g. '>=2.2' or '>=2.2,<3'",
        examples=[">=2.2"],
    )
    cuda: bool = Field(False, description="true: needs a CUDA device; skipped with a notice otherwise")

    @field_validator("torch")
    @classmethod
    def _range(cls, value: str | None) -> str | None:
        if value is not None:
            from tutor.core.versions import parse_specifier

            parse_specifier(value)
        return value


# --------------------------------------------------------------------------- steps


class StepBase(Strict):
    id: Id = Field(description="unique within the lesson")
    title: Text | None = None
    requires: Requires | None = Field(None, description="e.g. {cuda: true} for a GPU-only step")


class Prose(StepBase):
    """Markdown to read."""

    kind: Literal["prose"]
    body: Text = Field(description="Markdown")


class RaisesSpec(Strict):
    type: str = Field(description="exception class name, e.g. RuntimeError", examples=["RuntimeError"])
    match: str | None = Field(None, description="regular expression searched in the message")

    _match = field_validator("match")(_valid_regex)


class Expect(Strict):
    """What running an example must give: output matching a pattern, an exception, or both none."""

    output: str | None = Field(None, description="regular expression searched in stdout")
    raises: RaisesSpec | None = Field(None, description="the example must raise this")

    _output = field_validator("output")(_valid_regex)


class Example(StepBase):
    """Runnable, editable code with its expected outcome (examples that raise are first-class)."""

    kind: Literal["example"]
    intro: Text | None = Field(None, description="Markdown shown above the code")
    code: str
    expect: Expect = Field(default_factory=Expect)
    explain: Text | None = Field(None, description="Markdown shown after it ran")
    timeout: float | None = Field(None, gt=0, le=300, description="seconds; the default is the sandbox's")


class Choice(Strict):
    text: Text
    correct: bool = False
    explain: Text = Field(description="why this choice is right or wrong; shown once answered")


class QuizBase(StepBase):
    kind: Literal["quiz"]
    question: Text = Field(description="Markdown")


class FreeQuiz(QuizBase):
    """Free response: the learner writes, reveals the model answer, and grades themself."""

    style: Literal["free"]
    answer: Text = Field(description="the model answer, revealed on demand")


class ChoiceQuiz(QuizBase):
    """Multiple choice with one or several correct choices."""

    style: Literal["choice"]
    choices: list[Choice] = Field(min_length=2)

    @model_validator(mode="after")
    def _one_correct(self) -> "ChoiceQuiz":
        if not any(c.correct for c in self.choices):
            raise ValueError("at least one choice must have correct: true")
        return self

    @property
    def multiple(self) -> bool:
        return sum(c.correct for c in self.choices) > 1


class PredictQuiz(QuizBase):
    """Predict the output: the learner types what the code prints, then it runs and is compared."""

    style: Literal["predict"]
    code: str
    explain: Text | None = Field(None, description="shown after the comparison")
    timeout: float | None = Field(None, gt=0, le=300)


Quiz = Annotated[Union[FreeQuiz, ChoiceQuiz, PredictQuiz], Field(discriminator="style")]


class ContractItem(Strict):
    """A name the checks read from the learner's code."""

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    signature: str = Field(description="how the checks call or build it, e.g. 'project(x, w)'")
    description: Text


class Exercise(StepBase):
    """Fix or write code until every check passes."""

    kind: Literal["exercise"]
    body: Text = Field(description="Markdown: the task")
    contract: list[ContractItem] = Field(min_length=1)
    starter: str = Field(description="the code the learner starts from; must fail a check")
    solution: str = Field(description="a reference solution; must pass every check")
    checks: list[Check] = Field(min_length=1)
    hints: list[Text] = Field(min_length=2, description="progressive: the last nearly gives it away")
    timeout: float | None = Field(None, gt=0, le=600, description="seconds for the whole check run")


Step = Annotated[Union[Prose, Example, Quiz, Exercise], Field(discriminator="kind")]


# --------------------------------------------------------------------------- lesson and pack


class Lesson(Strict):
    id: Id = Field(description="unique within the pack")
    title: Text
    summary: Text | None = Field(None, description="one line for the table of contents")
    steps: list[Step] = Field(min_length=1)


class PackHeader(Strict):
    """Everything in pack.yaml except the lessons themselves."""

    format_version: Literal[1] = Field(description="the version of this format; always 1 for now")
    id: Id
    title: Text
    version: str = Field(pattern=r"^\d+(\.\d+){0,2}([.-]?[A-Za-z0-9.]+)?$", examples=["1.0.0"])
    authors: list[str] = Field(default_factory=list)
    description: Text | None = None
    requires: Requires = Field(default_factory=Requires)
    languages: list[LangCode] = Field(
        default_factory=lambda: ["en"],
        min_length=1,
        description="the first is the fallback for text missing in another language",
    )


class PackFile(PackHeader):
    """pack.yaml: the header plus the ordered lessons, each inline or a path to a lesson file."""

    lessons: list[Union[str, Lesson]] = Field(
        min_length=1,
        description="each entry is a lesson, or a path (relative to pack.yaml) to a YAML file holding one",
    )


class Pack(PackHeader):
    """A loaded pack: lesson files resolved."""

    lessons: list[Lesson] = Field(min_length=1)
    _locations: dict[tuple[str, ...], tuple[Path, int, int]] = PrivateAttr(default_factory=dict)
    _root: Path | None = PrivateAttr(default=None)

    @property
    def root(self) -> Path | None:
        """The pack's folder, when it was loaded from disk."""
        return self._root

    def locate(self, *ids: str) -> tuple[Path, int, int] | None:
        """Where (file, line, col) a lesson, a step or a check starts: ``locate(lesson, step, check)``."""
        return self._locations.get(tuple(ids))

    def lesson(self, lesson_id: str) -> Lesson | None:
        return next((lesson for lesson in self.lessons if lesson.id == lesson_id), None)

    def exercises(self) -> list[tuple[Lesson, Exercise]]:
        return [(lesson, step) for lesson in self.lessons for step in lesson.steps if isinstance(step, Exercise)]

    def find_exercise(self, ref: str) -> tuple[Lesson, Exercise] | None:
        """``exercise-id`` (unique in the pack) or ``lesson-id/exercise-id``."""
        lesson_id, _, exercise_id = ref.rpartition("/")
        for lesson, exercise in self.exercises():
            if exercise.id == exercise_id and lesson_id in ("", lesson.id):
                return lesson, exercise
        return None


def pack_json_schema() -> dict[str, Any]:
    """The JSON Schema of pack.yaml (lessons inline or as paths)."""
    schema = PackFile.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "torch-tutor lesson pack (pack.yaml), format_version 1"
    return schema


def lesson_json_schema() -> dict[str, Any]:
    schema = Lesson.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "torch-tutor lesson file, format_version 1"
    return schema
