"""What names a step to the learner where a title is shown (the review queue, Resume, `progress`):
its title, else the start of what it says, never its id."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tutor.pack.text import resolve

if TYPE_CHECKING:
    from tutor.pack.models import Step

#: The most characters of a step's text that stand in for its missing title.
TITLE_CHARS = 40


def step_title(step: "Step", language: str | None, fallback: str = "en", index: int | None = None) -> str:
    """What names a step to the learner: its title, else the start of what it says (a quiz's
    question, an example's intro, a prose step's first heading or sentence) as plain words,
    cut at a word; never its id. ``index`` (0-based) gives "step N" when it says nothing."""
    if step.title:
        return resolve(step.title, language, fallback)
    for name in ("question", "intro", "body"):
        text = resolve(getattr(step, name, None), language, fallback)
        words = _first_sentence(text)
        if words:
            return words
    if index is not None:
        from tutor.words.i18n import t

        return t("home.step_number", n=index + 1)
    return step.id


def _first_sentence(markdown: str) -> str:
    """The first heading or sentence of ``markdown`` as plain text, at most TITLE_CHARS long."""
    fence = ""
    for line in markdown.splitlines():
        line = line.strip()
        if fence:  # inside a code block
            fence = "" if line.startswith(fence) else fence
            continue
        if line.startswith(("```", "~~~")):
            fence = line[:3]
            continue
        if not line or line.startswith(("|", ">", "    ")):
            continue
        line = re.sub(r"^#+\s*|^[-*+]\s+|^\d+[.)]\s+", "", line)
        line = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line)  # a link's words
        line = re.sub(r"`+", "", line)
        line = re.sub(r"(?<!\w)(\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1(?!\w)", r"\2", line).strip()
        if not line:
            continue
        sentence = re.split(r"(?<=[.?!])\s", line, maxsplit=1)[0].rstrip(":")
        if len(sentence) <= TITLE_CHARS:
            return sentence
        cut = sentence[:TITLE_CHARS - 1].rsplit(" ", 1)[0].rstrip(" ,;")
        return cut + "…"
    return ""
