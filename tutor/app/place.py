"""Where the learner is: one step of one lesson of one pack, and the text language in use."""

from __future__ import annotations

from dataclasses import dataclass

from tutor.pack.comments import code_for
from tutor.pack.models import Lesson, Pack, Step
from tutor.pack.text import resolve
from tutor.words.safe_text import neutralize


@dataclass(frozen=True)
class Place:
    pack: Pack
    lesson_index: int
    step_index: int

    @property
    def lesson(self) -> Lesson:
        return self.pack.lessons[self.lesson_index]

    @property
    def step(self) -> Step:
        return self.lesson.steps[self.step_index]

    @property
    def key(self) -> tuple[str, str, str]:
        """(pack, lesson, step) ids: how the progress store names this step."""
        return self.pack.id, self.lesson.id, self.step.id

    def moved(self, delta: int) -> "Place | None":
        """The step ``delta`` steps away, crossing into the next/previous lesson; None at the ends."""
        lesson, step = self.lesson_index, self.step_index + delta
        while step < 0:
            lesson -= 1
            if lesson < 0:
                return None
            step += len(self.pack.lessons[lesson].steps)
        while step >= len(self.pack.lessons[lesson].steps):
            step -= len(self.pack.lessons[lesson].steps)
            lesson += 1
            if lesson >= len(self.pack.lessons):
                return None
        return Place(self.pack, lesson, step)

    @classmethod
    def find(cls, pack: Pack, lesson_id: str | None, step_id: str | None = None) -> "Place":
        """The named lesson/step, falling back to the lesson's first step or the pack's first."""
        for li, lesson in enumerate(pack.lessons):
            if lesson.id == lesson_id:
                for si, step in enumerate(lesson.steps):
                    if step.id == step_id:
                        return cls(pack, li, si)
                return cls(pack, li, 0)
        return cls(pack, 0, 0)


class Texts:
    """Resolves pack text in the learner's language, falling back to the pack's first."""

    def __init__(self, pack: Pack, language: str | None):
        self.language = language
        self.fallback = pack.languages[0]

    def __call__(self, text: str | dict[str, str] | None) -> str:
        # Pack text never reaches a terminal with its control characters (see textclean).
        return neutralize(resolve(text, self.language, self.fallback))

    def code(self, code: str) -> str:
        """A pack's code as shown in the learner's language: its comments in that language."""
        return code_for(code, self.language or self.fallback)
