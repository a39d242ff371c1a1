"""Lesson Markdown to Rich renderables, without a Markdown library.

Why our own: Textual's Markdown widget imports markdown-it (80 modules) and mounts a widget per
block; on a resumed start that alone was a sixth of the time to the first screen. Lessons use a
small, well-defined part of Markdown, which this module covers (docs/authoring.md lists it):

- blocks: paragraphs, ATX and setext headings, fenced code (``` or ~~~, with a language; Python
  by default, highlighted by pygments), indented code, bullet and ordered lists (nested),
  block quotes, horizontal rules, GitHub-style pipe tables;
- inline: `code`, **strong**, *emphasis* (and the underscore forms), ~~strike~~, [links](url),
  <https://autolinks>, backslash escapes, hard line breaks (two trailing spaces or a backslash).

Anything else is shown as the text it is, never dropped. Parsing (``parse``) is separate from
rendering (``render``) so it can be tested without a terminal and cached by the widget.
"""

from __future__ import annotations

import re
from typing import Any, Union

from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text

from tutor.words.safe_text import neutralize

# --------------------------------------------------------------------------- blocks


class _Node:
    """A parsed block: fields in ``__slots__`` order (plain classes: no dataclass ``exec`` cost
    on the app's start-up path)."""

    __slots__: tuple[str, ...] = ()

    def __init__(self, *values: Any):
        for name, value in zip(self.__slots__, values, strict=True):
            setattr(self, name, value)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(repr(getattr(self, n)) for n in self.__slots__)})"


class Heading(_Node):
    __slots__ = ("level", "text")
    level: int
    text: str


class Paragraph(_Node):
    __slots__ = ("text",)
    text: str


class Code(_Node):
    __slots__ = ("language", "code")
    language: str
    code: str


class Rule(_Node):
    __slots__ = ()


class Quote(_Node):
    __slots__ = ("blocks",)
    blocks: list["Block"]


class ListBlock(_Node):
    """``loose``: blank lines between or inside items, so its blocks are spaced as outside."""

    __slots__ = ("ordered", "start", "items", "loose")
    ordered: bool
    start: int
    items: list[list["Block"]]
    loose: bool

    def __init__(self, ordered: bool, start: int, items: list[list["Block"]] | None = None, loose: bool = False):
        super().__init__(ordered, start, items if items is not None else [], loose)


class TableBlock(_Node):
    __slots__ = ("header", "align", "rows")
    header: list[str]
    align: list[str]  # "left", "center", "right"
    rows: list[list[str]]


Block = Union[Heading, Paragraph, Code, Rule, Quote, ListBlock, TableBlock]

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_QUOTE = re.compile(r"^ {0,3}> ?(.*)$")
_ITEM = re.compile(r"^( {0,3})([-*+]|\d{1,9}[.)])(?:([ \t]+)(.*)|[ \t]*$)")
_TABLE_DELIMITER = re.compile(r"^ {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _dedent(line: str, amount: int) -> str:
    return line[min(amount, _indent(line)):]


def _starts_block(line: str) -> bool:
    """Whether ``line`` interrupts a paragraph (a lazy continuation line never does)."""
    return bool(_FENCE.match(line) or _ATX.match(line) or _RULE.match(line) or _QUOTE.match(line)
                or _ITEM.match(line))


def _interrupts_paragraph(line: str) -> bool:
    """Whether ``line`` ends a paragraph above it: as :func:`_starts_block`, except that a list
    item does so only when it has text and, if numbered, starts at 1 (CommonMark: otherwise
    "the year\n2024. was..." would turn into a list)."""
    item = _ITEM.match(line)
    if item is None:
        return _starts_block(line)
    marker = item.group(2)
    return bool((item.group(4) or "").strip()) and (marker[0] in "-*+" or int(marker[:-1]) == 1)


def _split_row(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip())
    if cells and cells[0].strip() == "":
        cells = cells[1:]
    if cells and cells[-1].strip() == "":
        cells = cells[:-1]
    return [cell.strip().replace("\\|", "|") for cell in cells]


def parse(markdown: str) -> list[Block]:
    """The blocks of ``markdown`` (tabs count as four spaces)."""
    lines = neutralize(markdown).expandtabs(4).splitlines()
    return _parse_lines(lines)


def _parse_lines(lines: list[str]) -> list[Block]:
    blocks: list[Block] = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        fence = _FENCE.match(line)
        if fence:
            indent, marker, language = len(fence.group(1)), fence.group(2), fence.group(3)
            body: list[str] = []
            i += 1
            while i < n:
                closing = lines[i].strip()
                if closing.startswith(marker[0] * len(marker)) and set(closing) == {marker[0]}:
                    i += 1
                    break
                body.append(_dedent(lines[i], indent))
                i += 1
            blocks.append(Code(language or "python", "\n".join(body)))
            continue
        heading = _ATX.match(line)
        if heading:
            blocks.append(Heading(len(heading.group(1)), (heading.group(2) or "").strip()))
            i += 1
            continue
        if _RULE.match(line):
            blocks.append(Rule())
            i += 1
            continue
        if _QUOTE.match(line):
            inner: list[str] = []
            while i < n and lines[i].strip():
                quoted = _QUOTE.match(lines[i])
                inner.append(quoted.group(1) if quoted else lines[i])
                i += 1
            blocks.append(Quote(_parse_lines(inner)))
            continue
        item = _ITEM.match(line)
        if item:
            i = _parse_list(lines, i, blocks)
            continue
        if _indent(line) >= 4:
            body = []
            while i < n and (not lines[i].strip() or _indent(lines[i]) >= 4):
                body.append(lines[i][4:])
                i += 1
            while body and not body[-1].strip():
                body.pop()
            blocks.append(Code("text", "\n".join(body)))
            continue
        if "|" in line and i + 1 < n and _TABLE_DELIMITER.match(lines[i + 1]) and "-" in lines[i + 1]:
            header = _split_row(line)
            align = []
            for cell in _split_row(lines[i + 1]):
                left, right = cell.startswith(":"), cell.endswith(":")
                align.append("center" if left and right else "right" if right else "left")
            rows = []
            i += 2
            while i < n and lines[i].strip() and "|" in lines[i]:
                rows.append(_split_row(lines[i]))
                i += 1
            blocks.append(TableBlock(header, align, rows))
            continue
        # a paragraph: until a blank line or a line that starts another block
        text = [line.strip()]
        i += 1
        while i < n and lines[i].strip():
            setext = _SETEXT.match(lines[i])
            if setext:
                blocks.append(Heading(1 if setext.group(1)[0] == "=" else 2, " ".join(text)))
                text = []
                i += 1
                break
            if _interrupts_paragraph(lines[i]):
                break
            text.append(lines[i] if lines[i].endswith(("  ", "\\")) else lines[i].strip())
            i += 1
        if text:
            blocks.append(Paragraph("\n".join(text)))
    return blocks


def _parse_list(lines: list[str], i: int, blocks: list[Block]) -> int:
    first = _ITEM.match(lines[i])
    assert first is not None
    ordered = not first.group(2)[0] in "-*+"
    kind = first.group(2)[-1]  # the bullet character, or . / ) after a number
    block = ListBlock(ordered, int(first.group(2)[:-1]) if ordered else 1)
    n = len(lines)
    while i < n:
        item = _ITEM.match(lines[i])
        if not item or item.group(2)[-1] != kind or (item.group(2)[0] in "-*+") == ordered:
            break
        content_indent = len(item.group(1)) + len(item.group(2)) + len(item.group(3) or " ")
        body = [item.group(4) or ""]
        i += 1
        blank = False
        while i < n:
            line = lines[i]
            if not line.strip():
                blank = True
                body.append("")
                i += 1
                continue
            if blank and (_indent(line) >= content_indent or _ITEM.match(line)):
                block.loose = True
            if _indent(line) >= content_indent:
                body.append(line[content_indent:])
            elif not blank and not _starts_block(line):
                body.append(line.strip())  # a lazy continuation of the item's paragraph
            else:
                break
            blank = False
            i += 1
        block.items.append(_parse_lines(body))
    blocks.append(block)
    return i


# --------------------------------------------------------------------------- inline

_ESCAPABLE = set("\\`*_{}[]()#+-.!|~<>\"'")
_LINK = re.compile(r"\[((?:[^\[\]\\]|\\.)*)\]\(\s*<?([^)\s>]*)>?(?:\s+[\"'][^\"']*[\"'])?\s*\)")
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^>\s]+)>")


def inline(text: str, style: Style | str = "", *, code_style: str = "bold cyan") -> Text:
    """``text`` with its inline Markdown applied, as Rich Text."""
    out = Text(style=style)
    _inline(neutralize(text), out, Style(), code_style)
    return out


def _inline(text: str, out: Text, style: Style, code_style: str) -> None:
    i, n = 0, len(text)
    plain: list[str] = []

    def flush() -> None:
        if plain:
            out.append("".join(plain), style)
            plain.clear()

    while i < n:
        char = text[i]
        if char == "\\" and i + 1 < n and text[i + 1] in _ESCAPABLE:
            plain.append(text[i + 1])
            i += 2
            continue
        if char == "\\" and i + 1 < n and text[i + 1] == "\n":
            plain.append("\n")
            i += 2
            continue
        if char == "\n":
            # a soft break is a space; two trailing spaces made it hard
            if plain and "".join(plain).endswith("  "):
                joined = "".join(plain).rstrip(" ")
                plain.clear()
                plain.append(joined + "\n")
            else:
                plain.append(" ")
            i += 1
            continue
        if char == "`":
            run = len(text[i:]) - len(text[i:].lstrip("`"))
            ticks = text[i:i + run]
            end = text.find(ticks, i + run)
            while end != -1 and end + run < n and text[end + run] == "`":
                end = text.find(ticks, end + run + 1)
            if end != -1:
                flush()
                code = text[i + run:end].replace("\n", " ")
                if code.startswith(" ") and code.endswith(" ") and code.strip():
                    code = code[1:-1]
                out.append(code, style + Style.parse(code_style))
                i = end + run
                continue
            plain.append(ticks)
            i += run
            continue
        if char == "[":
            link = _LINK.match(text, i)
            if link:
                flush()
                _inline(link.group(1), out, style + Style(underline=True, link=link.group(2) or None),
                        code_style)
                i = link.end()
                continue
        if char == "<":
            auto = _AUTOLINK.match(text, i)
            if auto:
                flush()
                out.append(auto.group(1), style + Style(underline=True, link=auto.group(1)))
                i = auto.end()
                continue
        if char in "*_~":
            span = _emphasis(text, i)
            if span is not None:
                end, inner, kind = span
                flush()
                extra = {"strong": Style(bold=True), "em": Style(italic=True),
                         "strike": Style(strike=True)}[kind]
                _inline(inner, out, style + extra, code_style)
                i = end
                continue
        plain.append(char)
        i += 1
    flush()


def _emphasis(text: str, i: int) -> tuple[int, str, str] | None:
    """(end, inner text, kind) for an emphasis span opening at ``i``, or None."""
    char = text[i]
    run = len(text[i:]) - len(text[i:].lstrip(char))
    if char == "~":
        if run != 2:
            return None
        delimiter, kind = "~~", "strike"
    elif run >= 2:
        delimiter, kind = char * 2, "strong"
    else:
        delimiter, kind = char, "em"
    start = i + len(delimiter)
    if start >= len(text) or text[start].isspace():
        return None  # not left-flanking
    if char == "_" and i > 0 and text[i - 1].isalnum():
        return None  # snake_case_names are not emphasis
    search = start
    while True:
        end = text.find(delimiter, search)
        if end == -1:
            return None
        after = end + len(delimiter)
        closes = not text[end - 1].isspace() and end > start
        if char == "_" and after < len(text) and text[after].isalnum():
            closes = False
        if kind == "em" and after < len(text) and text[after] == char:
            closes = False  # part of a longer run: ** inside *...*
        if closes and text.count("`", start, end) % 2 == 0:
            return after, text[start:end], kind
        search = end + 1


# --------------------------------------------------------------------------- rendering

_HEADING_STYLES = {1: "bold underline", 2: "bold", 3: "bold italic"}


def render(blocks: list[Block], *, dark: bool = True, tight: bool = False) -> RenderableType:
    """The blocks as one Rich renderable, a blank line between blocks (none when ``tight``)."""
    parts: list[RenderableType] = []
    for block in blocks:
        if parts and not tight:
            parts.append(Text(""))
        parts.append(_render_block(block, dark))
    return Group(*parts)


def _render_block(block: Block, dark: bool) -> RenderableType:
    if isinstance(block, Paragraph):
        return inline(block.text)
    if isinstance(block, Heading):
        return inline(block.text, _HEADING_STYLES.get(block.level, "bold dim"))
    if isinstance(block, Code):
        return _code(block, dark)
    if isinstance(block, Rule):
        from rich.rule import Rule as RichRule

        return RichRule(style="dim")
    if isinstance(block, Quote):
        return _QuoteBar(render(block.blocks, dark=dark))
    if isinstance(block, ListBlock):
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True, justify="right" if block.ordered else "left")
        grid.add_column(ratio=1, overflow="fold")  # a word wider than the column folds, never "…"
        for index, item in enumerate(block.items):
            marker = f"{block.start + index}." if block.ordered else "•"
            content = render(item, dark=dark, tight=not block.loose) if item else Text("")
            grid.add_row(Text(marker, style="bold"), content)
        return grid
    if isinstance(block, TableBlock):
        from rich import box

        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
        for index, cell in enumerate(block.header):
            align = block.align[index] if index < len(block.align) else "left"
            table.add_column(inline(cell), justify=align, overflow="fold")  # type: ignore[arg-type]
        for row in block.rows:
            cells = [inline(cell) for cell in row[:len(block.header)]]
            table.add_row(*cells, *[Text("")] * (len(block.header) - len(cells)))
        return table
    raise TypeError(f"unknown block {block!r}")  # pragma: no cover


class _QuoteBar:
    """A bar down the left of a block quote, as tall as its content."""

    def __init__(self, content: RenderableType):
        self.content = content

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.segment import Segment

        width = max(1, options.max_width - 2)
        lines = console.render_lines(self.content, options.update(width=width), style=Style(italic=True))
        bar = Segment("▌ ", Style(dim=True))
        for line in lines:
            yield bar
            yield from line
            yield Segment.line()


class _HangingCode:
    """A highlighted code block as Rich's ``Syntax`` draws it (the code theme's background across
    the width, a cell of padding each side), except that a line too long for the width goes on
    under its own indentation (``Hanging``, as in a run's output), not at the block's column 0:
    a wrapped ``return ...`` must not read as a new statement."""

    def __init__(self, syntax: Any):
        self.syntax = syntax
        self._drawn: tuple[Any, Style] | None = None  # highlighted once, its rows kept per width

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.segment import Segment

        if self._drawn is None:
            from tutor.app.widgets.output import Hanging

            syntax = self.syntax
            code = syntax.code.expandtabs(syntax.tab_size)
            text = syntax.highlight(code if code.endswith("\n") else code + "\n")
            text.remove_suffix("\n")
            self._drawn = Hanging.of(text), text.style if isinstance(text.style, Style) else Style.parse(text.style)
        hanging, base = self._drawn
        pad = Segment(" ", base)
        width = max(1, options.max_width - 2)
        for line in console.render_lines(hanging, options.update(width=width, height=None), style=base, pad=True):
            yield pad
            yield from line
            yield pad
            yield Segment.line()

    def __rich_measure__(self, console: Any, options: Any) -> Any:
        from rich.measure import Measurement

        return Measurement.get(console, options, self.syntax)  # the same code and padding


def _code(block: Code, dark: bool) -> RenderableType:
    """A highlighted code block (pygments), or plain if the language is unknown to pygments."""
    from rich.syntax import Syntax

    language = {"py": "python", "pycon": "pycon", "sh": "bash", "shell": "bash", "": "python"}.get(
        block.language.lower(), block.language.lower())
    try:
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound

        get_lexer_by_name(language)
    except ClassNotFound:
        language = "text"
    return _HangingCode(Syntax(block.code, language, theme="monokai" if dark else "friendly", word_wrap=True,
                               padding=(0, 1), background_color=None))
