"""The lesson-pack format, version 1, defined once.

These records (frozen dataclasses, see ``tutor.pack.spec``) are the single source of truth: the
loader validates against them, ``torch-tutor schema`` prints their JSON Schema (a copy lives in
``assets/pack.schema.json`` for editors), and docs/authoring.md is checked against them by a
test. They import no validation library, so a cached pack opens without one.
"""

from __future__ import annotations

import re
from dataclasses import field
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args

from tutor.pack.check_models import Check, FormRules
# Each quiz type's record lives in its own module (tutor/pack/quizzes/); the names are this module's too.
from tutor.pack.quizzes import QuizBase as QuizBase, QuizType, declared
from tutor.pack.quizzes.choice import Choice as Choice, ChoiceQuiz as ChoiceQuiz
from tutor.pack.quizzes.free import FreeQuiz as FreeQuiz
from tutor.pack.quizzes.predict import PredictQuiz as PredictQuiz
from tutor.pack.spec import Meta, hidden, record
from tutor.pack.step_base import Id as Id, Requires as Requires, Seconds as Seconds, StepBase as StepBase
from tutor.pack.text import LangCode, Text

FORMAT_VERSION = 1

def _valid_regex(pattern: str | None) -> str | None:
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None
    return pattern


def _statements(source: str | None) -> str | None:
    if source is not None:
        import ast

        try:
            ast.parse(source)
        except SyntaxError as exc:
            raise ValueError(f"not valid Python (line {exc.lineno}): {exc.msg}") from None
    return source


def _english() -> list[str]:
    """A pack's languages when it names none (a named factory: see ``validation``'s cache)."""
    return ["en"]


def _valid_deadline(value: str | None) -> str | None:
    if value is not None:
        from datetime import datetime

        try:
            when = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
        except ValueError:
            raise ValueError("not an ISO 8601 date and time, e.g. 2026-12-01T23:59:00+01:00") from None
        if when.tzinfo is None:
            raise ValueError("a deadline needs a UTC offset (e.g. +01:00 or Z), so every grader reads the same instant")
    return value


#: How an exercise's points are earned: each passed check its weight's share, or all of them only
#: when every check passes (docs/authoring.md, "Points").
Scoring = Literal["partial", "all-or-nothing"]


@record
class LatePenalty:
    """What lateness costs in `grade`: per_day percent of the points for each started day late, at most max."""

    per_day: Annotated[float, Meta(gt=0, le=100), Meta("percent of the points lost per started day late")]
    max: Annotated[float, Meta(gt=0, le=100), Meta("the most, in percent, lateness can take")] = 100.0


# --------------------------------------------------------------------------- pack header


# --------------------------------------------------------------------------- steps


@record
class Prose(StepBase):
    """Markdown to read."""

    kind: Literal["prose"]
    body: Annotated[Text, Meta("Markdown")]


@record
class RaisesSpec:
    type: Annotated[str, Meta("exception class name, e.g. RuntimeError", examples=["RuntimeError"])]
    match: Annotated[str | None, Meta("regular expression searched in the message", after=_valid_regex)] = None


@record
class Expect:
    """What running an example must give: output matching a pattern, an exception, or both none."""

    output: Annotated[str | None, Meta("regular expression searched in stdout", after=_valid_regex)] = None
    raises: Annotated[RaisesSpec | None, Meta("the example must raise this")] = None


@record
class Example(StepBase):
    """Runnable, editable code with its expected outcome (examples that raise are first-class)."""

    kind: Literal["example"]
    intro: Annotated[Text | None, Meta("Markdown shown above the code")] = None
    code: str
    expect: Expect = field(default_factory=Expect)
    explain: Annotated[Text | None, Meta("Markdown shown after it ran")] = None
    timeout: Annotated[Seconds | None, Meta("seconds; the default is the sandbox's")] = None


#: Every quiz type, one module each under tutor/pack/quizzes/ (its record and its declaration): this
#: union is where a quiz type is registered (docs/architecture.md, "Adding a kind of anything").
Quiz = Annotated[Union[FreeQuiz, ChoiceQuiz, PredictQuiz], Meta(discriminator="style")]
#: The quiz records, in the union's order.
QUIZ_RECORDS: tuple[type[QuizBase], ...] = get_args(get_args(Quiz)[0])
#: Each quiz record's declaration (a record registered without one fails here, at import).
QUIZ_TYPES: dict[type, QuizType] = declared(QUIZ_RECORDS)


@record
class ContractItem:
    """A name the checks read from the learner's code."""

    name: Annotated[str, Meta(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
    signature: Annotated[str, Meta("how the checks call or build it, e.g. 'project(x, w)'")]
    description: Text
    optional: Annotated[
        bool, Meta("learners may leave it out (a helper the checks use when it is there); not required in the starter")
    ] = False


@record
class Exercise(StepBase):
    """Fix or write code until every check passes."""

    kind: Literal["exercise"]
    body: Annotated[Text, Meta("Markdown: the task")]
    contract: Annotated[list[ContractItem], Meta(min_length=1)]
    starter: Annotated[str, Meta("the code the learner starts from; must fail a check")]
    solution: Annotated[str, Meta("a reference solution; must pass every check")]
    solutions: Annotated[
        list[str],
        Meta("more reference solutions, written another way (so bounds are not tuned to one); `validate` "
             "runs each, and each must pass every check"),
    ] = field(default_factory=list)
    checks: Annotated[list[Check], Meta(min_length=1)]
    hints: Annotated[list[Text], Meta(min_length=2),
                     Meta("progressive: the last nearly gives it away")]
    timeout: Annotated[float | None, Meta(gt=0, le=600), Meta("seconds for the whole check run")] = None
    points: Annotated[
        float, Meta(ge=0), Meta("what the exercise is worth when graded; each check earns its weight's share")
    ] = 1.0
    scoring: Annotated[
        Scoring | None,
        Meta("`partial` (each passed check earns its weight's share of the points) or `all-or-nothing` "
             "(the points only when every check passes); default: the pack's `scoring`"),
    ] = None
    deadline: Annotated[
        str | None,
        Meta("hand-in deadline, ISO 8601 with a UTC offset, e.g. 2026-12-01T23:59:00+01:00; "
             "`grade` flags later hand-ins as late", after=_valid_deadline),
    ] = None
    late_penalty: Annotated[LatePenalty | None,
                            Meta("what lateness costs on this exercise; replaces the pack's")] = None
    prelude: Annotated[
        bool, Meta("false: this exercise's code and checks run without the pack's prelude")
    ] = True
    uses: Annotated[
        list[Id],
        Meta("ids of earlier exercises of the pack whose answers this one builds on: the learner's own "
             "answer to each (and to what it uses) runs after the prelude and before this code, in the "
             "sandbox only; a missing one is the one thing the report asks for"),
    ] = field(default_factory=list)
    _prelude: str | None = hidden(default=None)
    _pack_scoring: str = hidden(default="partial")
    #: the contract names of the exercises this one ``uses`` (transitively), given by the loader: a
    #: learner's own definition of one in this file is that exercise's answer, not a helper of this one
    _used_names: tuple[str, ...] = hidden(default=())

    @property
    def prelude_code(self) -> str:
        """The pack's prelude as this exercise runs it ('' for none); set by the loader."""
        return (self._prelude or "") if self.prelude else ""

    @property
    def all_or_nothing(self) -> bool:
        """Whether the exercise earns its points only when every check passes: its own `scoring`,
        else the pack's (given by the loader)."""
        return (self.scoring or self._pack_scoring) == "all-or-nothing"


Step = Annotated[Union[Prose, Example, Quiz, Exercise], Meta(discriminator="kind")]
#: The step records, quizzes in their place, in the union's order.
STEP_RECORDS: tuple[type[StepBase], ...] = tuple(
    record_class for member in get_args(get_args(Step)[0])
    for record_class in (QUIZ_RECORDS if member is Quiz else (member,)))


# --------------------------------------------------------------------------- lesson and pack


@record
class Lesson:
    id: Annotated[Id, Meta("unique within the pack")]
    title: Text
    summary: Annotated[Text | None, Meta("one line for the table of contents")] = None
    steps: Annotated[list[Step], Meta(min_length=1)]


@record
class PackHeader:
    """Everything in pack.yaml except the lessons themselves."""

    format_version: Annotated[Literal[1], Meta("the version of this format; always 1 for now")]
    id: Id
    title: Text
    version: Annotated[str, Meta(pattern=r"^\d+(\.\d+){0,2}([.-]?[A-Za-z0-9.]+)?$", examples=["1.0.0"])]
    authors: list[str] = field(default_factory=list)
    description: Text | None = None
    requires: Requires = field(default_factory=Requires)
    languages: Annotated[
        list[LangCode],
        Meta(min_length=1),
        Meta("the first is the fallback for text missing in another language"),
    ] = field(default_factory=_english)
    late_penalty: Annotated[LatePenalty | None,
                            Meta("what lateness costs in `grade`, e.g. {per_day: 10, max: 50}; "
                                 "without it late rows are flagged, never marked down")] = None
    prelude: Annotated[
        str | None,
        Meta("Python run before every exercise's code, in the same namespace (helpers such as `arange = "
             "torch.arange`), and run again, by itself, for every check: the checks use the prelude's names, "
             "never the learner's redefinitions of them", after=_statements),
    ] = None
    form_rules: Annotated[
        FormRules | None,
        Meta("rules every `form` check of the pack starts from, e.g. {max_lines: 1, loops: false, names_deny: "
             "[torch]}; a check's own keys replace them"),
    ] = None
    prelude_file: Annotated[
        str | None,
        Meta("a .py file (relative to pack.yaml, inside the pack folder) holding the prelude, instead of "
             "`prelude`", pattern=r"\.py$"),
    ] = None

    scoring: Annotated[
        Scoring,
        Meta("how every exercise's points are earned: `partial` (each passed check earns its weight's share) "
             "or `all-or-nothing` (the points only when every check passes); an exercise's own `scoring` "
             "replaces it"),
    ] = "partial"

    def __post_init__(self) -> None:
        if self.prelude is not None and self.prelude_file is not None:
            raise ValueError("give the prelude as `prelude` (code) or `prelude_file` (a path), not both")


@record
class PackFile(PackHeader):
    """pack.yaml: the header plus the ordered lessons, each inline or a path to a lesson file."""

    lessons: Annotated[
        list[Union[str, Lesson]],
        Meta(min_length=1),
        Meta("each entry is a lesson, or a path (relative to pack.yaml) to a YAML file holding one"),
    ]


@record
class Pack(PackHeader):
    """A loaded pack: lesson files resolved."""

    lessons: Annotated[list[Lesson], Meta(min_length=1)]
    _locations: dict[tuple[str, ...], tuple[Path, int, int]] = hidden(default_factory=dict)
    _root: Path | None = hidden()
    _sources: tuple[Path, ...] = hidden(default=())

    @property
    def root(self) -> Path | None:
        """The pack's folder, when it was loaded from disk."""
        return self._root

    @property
    def sources(self) -> tuple[Path, ...]:
        """The files the pack was read from (pack.yaml first), when it was loaded from disk."""
        return self._sources

    def locate(self, *ids: str) -> tuple[Path, int, int] | None:
        """Where (file, line, col) a lesson, a step or a check starts: ``locate(lesson, step, check)``;
        ``locate("text", lesson, *path)`` (or ``locate("text", field)`` in pack.yaml): where a text
        written per language starts, its path as strings (``"steps", "3", "body"``)."""
        return self._locations.get(tuple(ids))

    def lesson(self, lesson_id: str) -> Lesson | None:
        return next((lesson for lesson in self.lessons if lesson.id == lesson_id), None)

    def exercises(self) -> list[tuple[Lesson, Exercise]]:
        return [(lesson, step) for lesson in self.lessons for step in lesson.steps if isinstance(step, Exercise)]

    def used_by(self, exercise: Exercise) -> list[tuple[Lesson, Exercise]]:
        """The earlier exercises whose answers ``exercise``'s code runs after: its ``uses`` and
        theirs, each once, in the pack's order (the order they run in)."""
        wanted: set[str] = set()
        todo = list(exercise.uses)
        known = {ex.id: ex for _lesson, ex in self.exercises()}
        while todo:
            ident = todo.pop()
            if ident in wanted or ident not in known or ident == exercise.id:
                continue
            wanted.add(ident)
            todo.extend(known[ident].uses)
        return [(lesson, ex) for lesson, ex in self.exercises() if ex.id in wanted]

    def find_exercise(self, ref: str) -> tuple[Lesson, Exercise] | None:
        """``exercise-id`` (unique in the pack) or ``lesson-id/exercise-id``."""
        lesson_id, _, exercise_id = ref.rpartition("/")
        for lesson, exercise in self.exercises():
            if exercise.id == exercise_id and lesson_id in ("", lesson.id):
                return lesson, exercise
        return None


def pack_json_schema() -> dict[str, Any]:
    """The JSON Schema of pack.yaml (lessons inline or as paths)."""
    from tutor.pack.validation import json_schema

    schema = json_schema(PackFile)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "torch-tutor lesson pack (pack.yaml), format_version 1"
    return schema


def lesson_json_schema() -> dict[str, Any]:
    from tutor.pack.validation import json_schema

    schema = json_schema(Lesson)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "torch-tutor lesson file, format_version 1"
    return schema
