"""Author warnings: things a valid pack may still get wrong.

These never block loading (the pack works); `torch-tutor validate` prints them as warnings so an
author sees them before learners do. Running code (starters that already pass, examples that do
not match) is the check engine's part of validate, not this module's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Iterator

from tutor.pack.comments import misplaced
from tutor.pack.models import ChoiceQuiz, Example, Exercise, Lesson, Pack, PackHeader, QuizBase
from tutor.pack.problems import Problem
from tutor.pack.text import Text, resolve


#: A step's code fields: what a learner is shown, with its comments in their language.
CODE_FIELDS = ("code", "starter", "solution")


def _texts(text: Text | None) -> list[str]:
    if text is None:
        return []
    return [text] if isinstance(text, str) else list(text.values())


#: A step's learner-facing text fields, in the order an author writes them.
_STEP_TEXTS = ("title", "body", "intro", "explain", "question", "answer")


def lesson_texts(lesson: Lesson) -> Iterator[tuple[tuple[Any, ...], str, Text]]:
    """Every learner-facing text of a lesson: (its path in the lesson's data, a label, the text).

    The path is the one the YAML has (``("steps", 3, "choices", 1, "explain")``), so the loader
    can record where each text starts and `validate` can point at it."""
    for name in ("title", "summary"):
        value = getattr(lesson, name)
        if value is not None:
            yield (name,), f"lesson {lesson.id!r} {name}", value
    for index, step in enumerate(lesson.steps):
        at: tuple[Any, ...] = ("steps", index)
        for name in _STEP_TEXTS:
            value = getattr(step, name, None)
            if value is not None:
                yield at + (name,), f"step {step.id!r} {name}", value
        for position, choice in enumerate(getattr(step, "choices", ())):
            yield at + ("choices", position, "text"), f"step {step.id!r} choice {position + 1}", choice.text
            yield (at + ("choices", position, "explain"), f"step {step.id!r} choice {position + 1} explain",
                   choice.explain)
        for position, item in enumerate(getattr(step, "contract", ())):
            yield (at + ("contract", position, "description"), f"step {step.id!r} contract {item.name!r}",
                   item.description)
        for position, hint in enumerate(getattr(step, "hints", ())):
            yield at + ("hints", position), f"step {step.id!r} hint {position + 1}", hint
        for position, check in enumerate(getattr(step, "checks", ())):
            where = at + ("checks", position)
            for name in ("description", "hint", "message"):
                value = getattr(check, name, None)
                if value is not None:
                    yield where + (name,), f"check {check.id!r} {name}", value
            for number, rule in enumerate(check.hints):
                yield where + ("hints", number, "text"), f"check {check.id!r} hints[{number}]", rule.text


def pack_texts(pack: PackHeader) -> Iterator[tuple[tuple[Any, ...], str, Text]]:
    """pack.yaml's own learner-facing texts (title, description), as :func:`lesson_texts`."""
    for name in ("title", "description"):
        value = getattr(pack, name)
        if value is not None:
            yield (name,), f"pack {name}", value


def _normalise(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text.lower()).strip()


def lint(pack: Pack) -> list[Problem]:
    """Warnings for a loaded pack, located at the step or check they concern."""
    return list(_warnings(pack))


def _warnings(pack: Pack) -> Iterator[Problem]:
    fallback = pack.root / "pack.yaml" if pack.root else Path("pack.yaml")

    def at(message: str, *ids: str) -> Problem:
        where = pack.locate(*ids)
        if where is None:
            return Problem(fallback, None, None, message, severity="warning")
        return Problem(where[0], where[1], where[2], message, severity="warning")

    languages = set(pack.languages)

    def coverage(texts: Iterator[tuple[tuple[Any, ...], str, Text]], *ids: str) -> Iterator[Problem]:
        """A text written per language must have every language the pack declares, and no other;
        a plain string is every language's text. Located at the text itself."""
        for path, label, text in texts:
            if not isinstance(text, dict):
                continue
            missing, extra = languages - set(text), set(text) - languages
            found = pack.locate("text", *ids, *map(str, path)) or pack.locate(*ids)
            file, line, col = found if found is not None else (fallback, None, None)
            if missing:
                yield Problem(file, line, col, f"{label}: no {', '.join(sorted(missing))} text "
                                               f"(falls back to {pack.languages[0]})", severity="warning")
            if extra:
                yield Problem(file, line, col, f"{label}: text in {', '.join(sorted(extra))}, which the "
                                               f"pack's languages ({', '.join(pack.languages)}) do not list",
                              severity="warning")

    yield from coverage(pack_texts(pack))
    questions: dict[str, tuple[str, str]] = {}
    for lesson in pack.lessons:
        yield from coverage(lesson_texts(lesson), lesson.id)
        for step in lesson.steps:
            ids = (lesson.id, step.id)
            if isinstance(step, QuizBase):
                for question in _texts(step.question):
                    # predict quizzes share their question ("what does this print?"): the code differs
                    key = _normalise(question) + "\0" + getattr(step, "code", "")
                    if key in questions and questions[key] != ids:
                        first = "/".join(questions[key])
                        yield at(f"quiz {step.id!r} asks the same question as {first}", *ids)
                    questions.setdefault(key, ids)
            if isinstance(step, ChoiceQuiz):
                reported: set[str] = set()
                for language in pack.languages:  # within one language: a choice may read the same in two
                    seen: set[str] = set()
                    for choice in step.choices:
                        label = resolve(choice.text, language, pack.languages[0])
                        if _normalise(label) in seen and label not in reported:
                            reported.add(label)
                            yield at(f"quiz {step.id!r} offers the choice {label!r} twice", *ids)
                        seen.add(_normalise(label))
            if isinstance(step, Example) and step.expect.output is None and step.expect.raises is None:
                yield at(f"example {step.id!r} has no expect: it only has to run; say what it should "
                         "print (expect.output) or raise (expect.raises)", *ids)
            if isinstance(step, Exercise):
                yield from _exercise_warnings(step, lesson.id, at, pack.languages)
            yield from _comment_warnings(pack, step, ids, fallback)


def _comment_warnings(pack: Pack, step: Any, ids: tuple[str, str], fallback: Path) -> Iterator[Problem]:
    """A ``#zh:`` line that pairs with no English comment, at its line in the YAML where the code
    is a literal block (``code: |``), else at the step."""
    for name in CODE_FIELDS:
        code = getattr(step, name, None)
        if not isinstance(code, str):
            continue
        for index, col, message in misplaced(code):
            block = pack.locate("code", *ids, name)
            where: tuple[Path, int | None, int | None]
            if block is not None:
                where = (block[0], block[1] + index, block[2] + col)
            else:
                where = pack.locate(*ids) or (fallback, None, None)
            yield Problem(where[0], where[1], where[2], f"step {ids[1]!r} {name}: {message}",
                          severity="warning")


def _exercise_warnings(step: Exercise, lesson_id: str, at: Callable[..., Problem],
                       languages: list[str]) -> Iterator[Problem]:
    ids = (lesson_id, step.id)
    hints = [h for hint in step.hints for h in _texts(hint)]
    if any(not h.strip() for h in hints):
        yield at(f"exercise {step.id!r} has an empty hint", *ids)
    # within one language (a hint that is only code reads the same in every language)
    if any(len({_normalise(h) for h in shown}) < len(shown)
           for shown in ([resolve(hint, language, languages[0]) for hint in step.hints] for language in languages)):
        yield at(f"exercise {step.id!r} repeats a hint: each hint should say more than the last", *ids)
    if len(step.hints) < 3:
        yield at(f"exercise {step.id!r} has {len(step.hints)} hints; three (the last nearly the answer) "
                 "help a stuck learner most", *ids)
    if step.starter.strip() == step.solution.strip():
        yield at(f"exercise {step.id!r}: the starter is the solution", *ids)
    for check in step.checks:
        descriptions = _texts(check.description)
        if not any(d.strip() for d in descriptions) or any(_normalise(d) == _normalise(check.id)
                                                          for d in descriptions):
            yield at(f"check {check.id!r} has no description a learner can read (it only repeats the id)",
                     *ids, check.id)
    contract_names = {item.name for item in step.contract if not item.optional}
    for name in sorted(contract_names):
        if not re.search(rf"\b{re.escape(name)}\b", step.starter):
            yield at(f"exercise {step.id!r}: the starter never mentions {name!r} from the contract", *ids)
