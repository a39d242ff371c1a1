"""How one run reads to the learner: a one-line outcome, then stdout, stderr and the traceback.

Built as Rich ``Text`` (never markup): whatever the learner's code printed is shown as is, so
square brackets in a tensor repr cannot turn into styles. The sandbox has already neutralised
terminal control sequences
of the output; exception text and sandbox messages are neutralised here. ``Hanging`` draws it
(and every part of the check report, and both columns of a missed prediction) with each wrapped
line under its own text.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, ClassVar

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text
from textual.content import Content
from textual.binding import Binding, BindingType
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions
from textual.widgets import Static

from tutor.words.i18n import shown, t
from tutor.words.safe_text import neutralize

if TYPE_CHECKING:  # the sandbox loads with the first run, after start-up
    from tutor.sandbox.result import RunResult


def outcome_line(result: RunResult) -> tuple[str, str]:
    """(sentence, style) summing up a RunResult."""
    status = result.status
    error = result.error
    message = shown(result.message, result.extra.get("said"))  # the sandbox's sentence, in the language in use
    if status == "ok":
        return t("outcome.ok", time=result.wall_time or 0.0), "bold green"
    if status == "error" and error:
        return neutralize(t("outcome.raised", type=error.type, message=error.message)), "bold red"
    if status == "sandbox-failure":
        return neutralize(t("outcome.failure", message=message or status)), "bold red"
    return neutralize(t("outcome.limit", message=message or status)), "bold yellow"


#: The most of one stream (stdout, stderr) a run's box shows: its last lines, and of those at most
#: so many characters. A run may print up to the output limit (1 MiB, ~100,000 short lines);
#: laying all of it out froze the page for seconds per key. The rest is counted in a note above.
#: The characters allow 300 lines of 200 each, so the box shows the last 300 lines, as README says
#: (at 30,000 a print of 110-character lines showed 270 of them); only longer lines show fewer.
SHOWN_LINES = 300
SHOWN_CHARS = SHOWN_LINES * 200


def tail(text: str, lines: int = SHOWN_LINES, chars: int = SHOWN_CHARS) -> tuple[str, int]:
    """The last ``lines`` lines of ``text`` (at most ``chars`` characters of them), and how many
    lines were left out before them (a line cut in its middle counts as left out)."""
    body = text.rstrip("\n")
    if len(body) <= chars and body.count("\n") < lines:
        return body, 0
    total = body.count("\n") + 1
    start = len(body)
    for _ in range(lines):
        found = body.rfind("\n", 0, start)
        if found < 0:
            start = 0
            break
        start = found
    else:
        start += 1
    start = max(start, len(body) - chars)
    kept = body[start:]
    if start and body[start - 1] != "\n":  # cut inside a line: start at the next whole one
        newline = kept.find("\n")
        kept = kept[newline + 1:] if newline >= 0 else kept
    return kept, total - (kept.count("\n") + 1)


def _stream(out: Text, text: str, style: str = "") -> None:
    """Append one stream of output, bounded (see ``SHOWN_LINES``), after a blank line."""
    kept, cut = tail(text)
    out.append("\n\n")
    if cut:
        out.append(t("output.cut", count=cut, shown=kept.count("\n") + 1) + "\n", style="dim italic")
    out.append(neutralize(kept), style=style)


def render_run(result: RunResult, *, headline: tuple[str, str] | None = None, nothing: str | None = None) -> Text:
    """The whole run as Text; ``headline`` replaces the default outcome sentence, ``nothing``
    the line that says the run printed nothing."""
    sentence, style = headline or outcome_line(result)
    out = Text(neutralize(sentence), style=style)
    stdout = result.stdout or ""
    stderr = result.stderr or ""
    error = result.error
    if stdout.strip("\n"):
        _stream(out, stdout)
    if stderr.strip("\n"):
        _stream(out, stderr, "yellow")
    traceback = error.traceback if error else None
    traceback = neutralize(traceback) if traceback else traceback
    if traceback and traceback.strip() not in neutralize(stderr):
        _stream(out, traceback, "red")
    if not stdout.strip("\n") and not stderr.strip("\n") and not traceback:
        out.append("\n")
        out.append(nothing or t("step.nothing"), style="dim")
    return out


#: A table's rule: dashes (or = + |) in one or more runs, as the profiler's table draws them.
_RULE = re.compile(r"^\s*[-=+|]{3,}(?:\s+[-=+|]{3,})*\s*$")


def table_lines(lines: list[str]) -> frozenset[int]:
    """The lines of ``lines`` that belong to a table: in a run of lines without a blank one,
    from its first rule line (``-----  -----``) to its last, when it has two or more (the
    profiler's table has three: above and below its header, and at its end)."""
    found: set[int] = set()
    start = 0
    for end in range(len(lines) + 1):
        if end < len(lines) and lines[end].strip():
            continue
        rules = [i for i in range(start, end) if _RULE.match(lines[i])]
        if len(rules) >= 2:
            found.update(range(rules[0], rules[-1] + 1))
        start = end + 1
    return frozenset(found)


#: The marks a report line may start with ("✓ ", "✗ "...): a marked line hangs after its mark.
MARKS = frozenset("✓✗!–?")

#: A row as drawn: (source line, where in it the row starts, cells of hang before it, characters).
Row = tuple[int, int, int, int]


class Hanging(Content):
    """Text whose lines, when wrapped, go on under their own text instead of at column 0: under
    the words after a line's leading spaces (a traceback's code line, an indented line the code
    printed) or, where ``marked``, after the mark that starts its first line ("✗ " before a
    check's description). A line starting at column 0 wraps to column 0.

    A hang never takes more than half the width: a line indented deeper (say, 500 spaces printed
    before a word) hangs there, so its text always has room. It is Content, drawn with its own
    offsets, so the colours are those of any Text a Static shows and a selection (drag with the
    mouse, then copy) gives the text as it is, without the hang or the wrap. Where a Rich layout
    holds it (a cell of a table, a part of a Group) it wraps the same way (see ``__rich__``).
    """

    marked = False
    #: Cells a table's lines are shifted left by (OutputBox's ←/→): its rows are never wrapped.
    shift = 0

    @property
    def tables(self) -> frozenset[int]:
        """The lines that are a table's (see ``table_lines``): drawn one row each, never wrapped."""
        found = self.__dict__.get("_tables")
        if found is None:
            found = self.__dict__["_tables"] = table_lines(self.plain.split("\n"))
        return found

    @property
    def frozen(self) -> int:
        """Cells of a table's first column with the gap after it (the profiler's Name), which stay
        in place while ←/→ scroll the numbers (the names scrolled away with them): from the table's
        first rule line. 0: no table."""
        found = self.__dict__.get("_frozen")
        if found is None:
            lines = self.plain.split("\n")
            rules = [lines[y] for y in sorted(self.tables) if _RULE.match(lines[y])]
            first = re.match(r"\s*[-=+|]+\s+", rules[0]) if rules else None
            found = self.__dict__["_frozen"] = first.end() if first else 0
        return found

    def frozen_span(self, width: int) -> tuple[int, int]:
        """The part of the first column kept in place at ``width``: where its text is in the
        table's lines (the profiler right-aligns its names in 55 cells), at most half the width,
        and the gap after it."""
        frozen = self.frozen
        lines = self.plain.split("\n")
        cells = [lines[y][:frozen] for y in self.tables if lines[y][:frozen].strip(" -=+|")]
        start = min((len(cell) - len(cell.lstrip(" ")) for cell in cells), default=0)
        return start, min(frozen, start + max(1, width // 2))

    @property
    def table_width(self) -> int:
        """Cells of the widest table line (0: none)."""
        lines = self.plain.split("\n")
        return max((cell_len(lines[y]) for y in self.tables), default=0)

    @classmethod
    def of(cls, text: Text, *, marked: bool = False) -> Hanging:
        content = Content.from_rich_text(text).expand_tabs()
        hanging = cls(content.plain, list(content.spans))
        hanging.marked = marked
        return hanging

    @staticmethod
    def hang(plain: str, marked: bool) -> int:
        """Cells before ``plain``'s own text: its leading spaces, or a mark and its space."""
        text = plain.lstrip(" ")
        indent = len(plain) - len(text)
        if marked and indent == 0 and len(text) > 1 and text[0] in MARKS and text[1] == " ":
            indent = cell_len(text[0]) + 1
        return indent

    def rows(self, width: int) -> list[Row]:
        """The rows drawn at ``width``: each line wrapped, its rest hanging."""
        cache: dict[int, list[Row]] = self.__dict__.setdefault("_rows", {})
        if width in cache:
            return cache[width]
        rows: list[Row] = []
        tables = self.tables
        for y, line in enumerate(self.split("\n", allow_blank=True)):
            if y in tables:  # a row reads as a row: one line, cut at the edge (OutputBox scrolls it)
                rows.append((y, 0, 0, len(line.plain)))
                continue
            hang = 0
            if line.cell_length > width:
                hang = min(self.hang(line.plain, self.marked and y == 0), width // 2)
            rest = line[hang:]
            plain, position = rest.plain, 0
            for index, piece in enumerate(rest.wrap(max(1, width - hang))):
                found = plain.find(piece.plain, position) if piece.plain else -1
                offset = found if found >= 0 else position
                position = offset + len(piece.plain)
                if index == 0:
                    rows.append((y, 0, 0, hang + position))
                else:
                    rows.append((y, hang + offset, hang, len(piece.plain)))
        cache[width] = rows
        return rows

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        if not width:
            return []
        lines = self.split("\n", allow_blank=True)
        selection, selection_style = options.selection, options.selection_style
        strips: list[Strip] = []
        tables = self.tables
        for y, x, pad, length in self.rows(width)[:height]:
            line = lines[y]
            frozen = self.frozen if y in tables and self.shift else 0
            if frozen:  # the first column's text stays (at most half the box); the rest moves past it
                start, end = self.frozen_span(width)
                line = line[start:end] + line[frozen + min(self.shift, max(0, len(line.plain) - frozen)):]
                x, length = 0, width
            elif y in tables:
                x, length = min(self.shift, length), width
            if selection is not None and selection_style is not None and (span := selection.get_span(y)):
                start, end = span
                line = line.stylize(selection_style, start, len(line.plain) if end == -1 else end)
            if options.post_style is not None:
                line = line.stylize(options.post_style)
            piece = line[x:x + length]
            segments = [Segment(" " * pad, style.background_style.rich_style)] if pad else []
            for text, text_style in piece.render(style, end="", parse_style=options.get_style):
                segments.append(Segment(text, (style + text_style).rich_style_with_offset(x, y)))
                x += len(text)
            strip = Strip(segments, pad + piece.cell_length)
            strips.append(strip.crop(0, width) if strip.cell_length > width else strip)
        return strips

    def get_height(self, rules: RulesMap, width: int) -> int:
        return len(self.rows(width))

    def __rich__(self) -> RichHanging:
        """Rich's view of it, for a Rich layout (Content's own would not wrap at all)."""
        return RichHanging(self)


class RichHanging:
    """A ``Hanging`` as a Rich renderable: the same rows at the width Rich gives it, so a table's
    cell or a Group wraps its lines under their own text too. (No selection there: Rich draws it.)"""

    def __init__(self, hanging: Hanging):
        self.hanging = hanging

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        hanging = self.hanging
        lines = hanging.split("\n", allow_blank=True)
        for y, x, pad, length in hanging.rows(max(1, options.max_width)):
            if pad:
                yield Segment(" " * pad)
            yield from (segment for segment in lines[y][x:x + length].render_segments() if segment.text)
            yield Segment.line()

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        """As Rich measures the same text: its longest word at least, its longest line at most."""
        return Measurement.get(console, options, Text(self.hanging.plain))


class OutputBox(Static):
    """A box showing a run's output (a ``Hanging``). A table in it wider than the box (the
    profiler's, ~120 columns) is drawn a row per line, never wrapped onto two, and the box then
    takes the focus (Tab) for ←/→ (and Home/End) to scroll the table sideways, as its frame
    says; everything else in it wraps as before."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right", "shift(8)", show=False), Binding("left", "shift(-8)", show=False),
        Binding("end", "shift(100000)", show=False), Binding("home", "shift(-100000)", show=False),
    ]

    hanging: Hanging | None = None

    def __init__(self, content: object = "", **kwargs: object) -> None:
        super().__init__(content, **kwargs)  # type: ignore[arg-type]
        self.hanging = content if isinstance(content, Hanging) else None

    def on_mount(self) -> None:
        self.call_after_refresh(self._fit)

    def update(self, content: object = "", *, layout: bool = True) -> None:
        self.hanging = content if isinstance(content, Hanging) else None
        super().update(content, layout=layout)  # type: ignore[arg-type]
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self._fit()

    def _wide(self) -> bool:
        hanging = self.hanging
        return hanging is not None and self.display and hanging.table_width > self.content_region.width > 0

    def allow_focus(self) -> bool:
        """Focusable only while a table is wider than the box."""
        return self._wide()

    def _fit(self) -> None:
        """The frame says how to scroll a table wider than the box."""
        self.border_subtitle = t("output.table_scroll") if self._wide() else ""

    def action_shift(self, cells: int) -> None:
        hanging = self.hanging
        if hanging is None:
            return
        width = self.content_region.width
        most = max(0, hanging.table_width - width)
        if hanging.frozen:  # scrolled, the first column's text stays: the rest has less room
            start, end = hanging.frozen_span(width)
            most = max(0, hanging.table_width - hanging.frozen - (width - (end - start)))
        hanging.shift = max(0, min(most, hanging.shift + cells))
        self.refresh()
