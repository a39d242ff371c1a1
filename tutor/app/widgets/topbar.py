"""The lesson's top bar: where the learner is, shortened by dropping the least useful part first.

At 80 columns "Self-test › Which is slower   Step 3/9 · Lesson 4/9 · Debugging and speed" does
not fit. Parts go in this order: the pack's title, the lesson number, the lesson's title; only
then is the step's title shortened. "Step n/m" always stays.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static


def top_line(lesson: str, step: str, step_pos: str, lesson_pos: str, pack: str, width: int) -> Text:
    """The bar's text for ``width`` cells (pack text is already neutralised by the caller)."""
    width = max(width - 2, 10)  # the bar's padding
    heading = [lesson, step] if step else [lesson]
    tail = [step_pos, lesson_pos, pack]
    candidates = [
        (heading, tail),
        (heading, tail[:2]),
        (heading, tail[:1]),
        (heading[-1:], tail[:1]),
    ]
    for head, where in candidates:
        left, right = " › ".join(head), " · ".join(where)
        if cell_len(left) + 3 + cell_len(right) <= width:
            break
    room = width - 3 - cell_len(right)
    if cell_len(left) > room:  # the last resort: a long step title shortened, "Step n/m" kept
        left = _cut(left, max(room, 1))
    out = Text(left, style="bold")
    out.append("   ")
    out.append(right, style="dim")
    return out


def _cut(text: str, cells: int) -> str:
    if cell_len(text) <= cells:
        return text
    out = ""
    for char in text:
        if cell_len(out + char) > cells - 1:
            break
        out += char
    return out + "…"


class TopBar(Static):
    """One line; redrawn to fit whenever its width changes."""

    def __init__(self, *, id: str | None = None, classes: str | None = None):
        super().__init__(id=id, classes=classes)
        self._parts: tuple[str, str, str, str, str] = ("", "", "", "", "")

    def show(self, lesson: str, step: str, step_pos: str, lesson_pos: str, pack: str) -> None:
        self._parts = (lesson, step, step_pos, lesson_pos, pack)
        self.refresh()

    def render(self) -> Text:
        return top_line(*self._parts, width=self.size.width or 80)
