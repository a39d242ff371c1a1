"""Author warnings: things a valid pack may still get wrong.

These never block loading (the pack works); `torch-tutor validate` prints them as warnings so an
author sees them before learners do. Running code (starters that already pass, examples that do
not match) is the check engine's part of validate, not this module's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Iterator

from tutor.core.models import ChoiceQuiz, Example, Exercise, Pack, QuizBase, Step
from tutor.core.problems import Problem
from tutor.core.text import Text


def _texts(text: Text | None) -> list[str]:
    if text is None:
        return []
    return [text] if isinstance(text, str) else list(text.values())


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
    questions: dict[str, tuple[str, str]] = {}
    for lesson in pack.lessons:
        for step in lesson.steps:
            ids = (lesson.id, step.id)
            for text in _mapped_texts(step):
                missing = languages - set(text)
                extra = set(text) - languages
                if missing:
                    yield at(f"step {step.id!r}: no {', '.join(sorted(missing))} text "
                             f"(falls back to {pack.languages[0]})", *ids)
                if extra:
                    yield at(f"step {step.id!r}: text in {', '.join(sorted(extra))}, which the pack's "
                             f"languages ({', '.join(pack.languages)}) do not list", *ids)
            if isinstance(step, QuizBase):
                for question in _texts(step.question):
                    # predict quizzes share their question ("what does this print?"): the code differs
                    key = _normalise(question) + "\0" + getattr(step, "code", "")
                    if key in questions and questions[key] != ids:
                        first = "/".join(questions[key])
                        yield at(f"quiz {step.id!r} asks the same question as {first}", *ids)
                    questions.setdefault(key, ids)
            if isinstance(step, ChoiceQuiz):
                seen: set[str] = set()
                for choice in step.choices:
                    for label in _texts(choice.text):
                        if _normalise(label) in seen:
                            yield at(f"quiz {step.id!r} offers the choice {label!r} twice", *ids)
                        seen.add(_normalise(label))
            if isinstance(step, Example) and step.expect.output is None and step.expect.raises is None:
                yield at(f"example {step.id!r} has no expect: it only has to run; say what it should "
                         "print (expect.output) or raise (expect.raises)", *ids)
            if isinstance(step, Exercise):
                yield from _exercise_warnings(step, lesson.id, at)


def _exercise_warnings(step: Exercise, lesson_id: str, at: Callable[..., Problem]) -> Iterator[Problem]:
    ids = (lesson_id, step.id)
    hints = [h for hint in step.hints for h in _texts(hint)]
    if any(not h.strip() for h in hints):
        yield at(f"exercise {step.id!r} has an empty hint", *ids)
    if len({_normalise(h) for h in hints}) < len(hints):
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


def _mapped_texts(step: Step) -> Iterator[dict[str, str]]:
    """Every language mapping among a step's learner-facing texts."""
    for name in ("title", "body", "intro", "explain", "question", "answer"):
        value = getattr(step, name, None)
        if isinstance(value, dict):
            yield value
    for choice in getattr(step, "choices", ()):
        for value in (choice.text, choice.explain):
            if isinstance(value, dict):
                yield value
    for hint in getattr(step, "hints", ()):
        if isinstance(hint, dict):
            yield hint
