"""How one run reads to the learner: a one-line outcome, then stdout, stderr and the traceback.

Built as Rich ``Text`` (never markup): whatever the learner's code printed is shown as is, so
square brackets in a tensor repr cannot turn into styles. The sandbox has already neutralised
terminal control sequences
of the output; exception text and sandbox messages are neutralised here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.text import Text
from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual

from tutor.core.i18n import t
from tutor.core.textclean import neutralize

if TYPE_CHECKING:  # the sandbox loads with the first run, after start-up
    from tutor.sandbox.result import RunResult


def outcome_line(result: RunResult) -> tuple[str, str]:
    """(sentence, style) summing up a RunResult."""
    status = result.status
    error = result.error
    if status == "ok":
        return t("outcome.ok", time=result.wall_time or 0.0), "bold green"
    if status == "error" and error:
        return neutralize(t("outcome.raised", type=error.type, message=error.message)), "bold red"
    if status == "sandbox-failure":
        return neutralize(t("outcome.failure", message=result.message or status)), "bold red"
    return neutralize(t("outcome.limit", message=result.message or status)), "bold yellow"


def render_run(result: RunResult, *, headline: tuple[str, str] | None = None) -> Text:
    """The whole run as Text; ``headline`` replaces the default outcome sentence."""
    sentence, style = headline or outcome_line(result)
    out = Text(neutralize(sentence), style=style)
    stdout = neutralize(result.stdout or "")
    stderr = neutralize(result.stderr or "")
    error = result.error
    if stdout:
        out.append("\n\n")
        out.append(stdout.rstrip("\n"))
    if stderr:
        out.append("\n\n")
        out.append(stderr.rstrip("\n"), style="yellow")
    traceback = error.traceback if error else None
    traceback = neutralize(traceback) if traceback else traceback
    if traceback and traceback.strip() not in stderr:
        out.append("\n\n")
        out.append(traceback.rstrip("\n"), style="red")
    if not stdout and not stderr and not traceback:
        out.append("\n")
        out.append(t("step.nothing"), style="dim")
    return out


#: The marks a report line may start with ("✓ ", "✗ "...): a marked line hangs after its mark.
MARKS = frozenset("✓✗!–?")


class Hanging(Visual):
    """``text`` with each line's wrapped rest hanging under that line's own text instead of
    starting at column 0: under the words after its leading spaces (a traceback's code line, an
    indented line the code printed) or, where ``marked``, after the mark that starts its first
    line ("✗ " before a check's description). A line starting at column 0 wraps to column 0.

    A hang never takes more than half the width: a line indented deeper (say, 500 spaces printed
    before a word) hangs there, so its text always has room. Styles are converted as for any
    Text a Static shows (Textual's Content), so colours are the same as without the hang.
    """

    def __init__(self, text: Text, *, marked: bool = False):
        self.text = text
        self.marked = marked
        self._content: Content | None = None
        self._wrapped: tuple[int, Content] | None = None

    @staticmethod
    def hang(plain: str, marked: bool) -> int:
        """Cells before ``plain``'s own text: its leading spaces, or a mark and its space."""
        text = plain.lstrip(" ")
        indent = len(plain) - len(text)
        if marked and indent == 0 and len(text) > 1 and text[0] in MARKS and text[1] == " ":
            indent = cell_len(text[0]) + 1
        return indent

    @property
    def content(self) -> Content:
        if self._content is None:
            self._content = Content.from_rich_text(self.text).expand_tabs()
        return self._content

    def wrapped(self, width: int) -> Content:
        """The text with every line longer than ``width`` already wrapped, each rest hanging."""
        if self._wrapped is not None and self._wrapped[0] == width:
            return self._wrapped[1]
        lines: list[Content] = []
        for number, line in enumerate(self.content.split("\n", allow_blank=True)):
            indent = min(self.hang(line.plain, self.marked and number == 0), width // 2)
            if indent == 0 or line.cell_length <= width:
                lines.append(line)
                continue
            for index, piece in enumerate(line[indent:].wrap(width - indent)):
                lines.append((line[:indent] if index == 0 else Content(" " * indent)) + piece)
        wrapped = Content("\n").join(lines)
        self._wrapped = (width, wrapped)
        return wrapped

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        return self.wrapped(width).render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return self.content.get_optimal_width(rules, container_width)

    def get_minimal_width(self, rules: RulesMap) -> int:
        return self.content.get_minimal_width(rules)

    def get_height(self, rules: RulesMap, width: int) -> int:
        return self.wrapped(width).get_height(rules, width)
