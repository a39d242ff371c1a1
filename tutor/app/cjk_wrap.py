"""Line breaks for Chinese (and Japanese, Korean) text: between any two CJK characters, on the
rules CJK readers expect (kinsoku shori), and never losing a character.

Textual and Rich wrap at whitespace only, so a sentence of Chinese, which has no spaces, is one
"word": it is moved whole to the next line (leaving the line before it short) and, longer than
the width, folded wherever the width ends, "Esc" cut into "Es" and "c". Here each CJK character
is a chunk of its own, so lines fill by cell width (a CJK character is two cells) and Latin words
and key names are never split, and:

- closing punctuation (，。：）…) stays on the line of the character before it: no line starts
  with it;
- opening punctuation (（《「…) goes with whatever follows it, a CJK character or a Latin word:
  no line ends with it, and "（.clone()）" is one unit, never "（." and "clone()）";
- a paragraph's last line is not one character alone when the character before it can join it
  (the line above gives up its last character);
- a line's trailing space is counted in cells, not characters: Rich's ``Text.rstrip_end`` counted
  characters, so a CJK line followed by a space came out one cell too wide and a table cell (whose
  overflow is an ellipsis) lost its last character to "…".

Text without CJK characters breaks exactly as before (Rich's own ``divide_line``).
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache
from typing import Any, Iterator

from rich._wrap import divide_line as _rich_divide_line

#: CJK ideographs, kana, hangul, full-width forms and CJK punctuation.
_CJK = "\u2e80-\u2fff\u3000-\u303f\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
#: Punctuation that must not start a line: it stays with the character before it.
_CLOSING = "，。、：；！？）》」』】〉…,.:;!?)"
#: Punctuation that must not end a line: it goes with what follows it.
_OPENING = "（《「『【〈"
#: A chunk: opening punctuation, then one CJK character or one Latin word, then closing
#: punctuation; opening punctuation with nothing after it (at a space or the end) is one too, so
#: that every character that is not whitespace is in some chunk.
_CHUNK = rf"[{_OPENING}]*(?:(?![{_OPENING}])[{_CJK}]|[^\s{_CJK}]+)[{_CLOSING}]*|[{_OPENING}]+"

#: The patterns' sources: compiled on first need (``_pattern``), since their large character
#: classes take ~10 ms to compile, which an English start never needs (see ``_ByText``).
_SOURCES = {
    #: Textual's chunks: a word and the whitespace after it, or whitespace alone.
    "TEXTUAL_CHUNK": rf"(?:{_CHUNK})\s*|\s+",
    #: Rich's words: whitespace, a word, whitespace.
    "RICH_WORD": rf"\s*(?:{_CHUNK})\s*",
    "_HAS_CJK": rf"[{_CJK}]",
    #: One CJK character with the punctuation around it: a line of only this is an orphan.
    "_ONE_CHARACTER": rf"\s*[{_OPENING}]*(?![{_OPENING}{_CLOSING}])[{_CJK}][{_CLOSING}]*\s*",
}
#: Below the first CJK character (and every opening punctuation mark): a text whose largest
#: character is below it has no CJK character, which ``max`` tells without a pattern.
_FIRST_CJK = "\u2e80"


@lru_cache(maxsize=None)
def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(_SOURCES[name])


def __getattr__(name: str) -> re.Pattern[str]:
    """``TEXTUAL_CHUNK``, ``RICH_WORD``, ... as compiled patterns, compiled when first asked for."""
    if name in _SOURCES:
        return _pattern(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def has_cjk(text: str) -> bool:
    return bool(text) and max(text) >= _FIRST_CJK and _pattern("_HAS_CJK").search(text) is not None


class _ByText:
    """Stands in for Textual's or Rich's word pattern (``re_chunk``, ``re_word``): their own
    pattern for a text without CJK characters, on which ours breaks exactly as theirs does, and
    ours (compiled on first need) for a text with them. Both call ``match(text, position)`` word
    by word on one text, so the answer for the last text is kept (one tuple: threads that share
    the pattern each see a text with its own answer)."""

    def __init__(self, theirs: re.Pattern[str], ours: str):
        self.theirs = theirs
        self.ours = ours
        self.pattern = theirs.pattern  # what a reader of the pattern expects to find
        self._last: tuple[str, bool] = ("", False)

    def _for(self, text: str) -> re.Pattern[str]:
        last = self._last
        if last[0] is not text:
            last = self._last = (text, has_cjk(text))
        return _pattern(self.ours) if last[1] else self.theirs

    def match(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self._for(text).match(text, pos, endpos)

    def finditer(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self._for(text).finditer(text, pos, endpos)

    def findall(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self._for(text).findall(text, pos, endpos)


def divide_line(text: str, width: int, fold: bool = True) -> list[int]:
    """Where to break ``text`` (one line, no newlines) to fit ``width`` cells: Rich's
    ``divide_line`` with the chunks and rules above when the text has CJK characters, Rich's own
    otherwise."""
    if not has_cjk(text):
        return _rich_divide_line(text, width, fold)
    from rich.cells import cell_len, chop_cells

    breaks: list[int] = []
    words: list[tuple[int, int]] = []  # every word's (start, end), to look back for an orphan
    offset = 0  # cells on the current line
    position = 0
    rich_word = _pattern("RICH_WORD")
    while (match := rich_word.match(text, position)) is not None:
        start, end = match.span()
        position = end
        word = match.group(0)
        words.append((start, end))
        length = cell_len(word.rstrip())
        if length <= width - offset:
            offset += cell_len(word)
        elif length > width:
            if fold:
                pieces = chop_cells(word, width)
                for index, piece in enumerate(pieces):
                    if start:
                        breaks.append(start)
                    if index == len(pieces) - 1:
                        offset = cell_len(piece)
                    else:
                        start += len(piece)
            else:
                if start:
                    breaks.append(start)
                offset = cell_len(word)
        elif offset and start:
            breaks.append(start)
            offset = cell_len(word)
    if position < len(text) and text[position:].strip():  # pragma: no cover - every non-space is a chunk
        raise AssertionError(f"cjk_wrap: no chunk at {text[position:position + 10]!r}")
    return _no_orphan(text, width, breaks, words)


def _no_orphan(text: str, width: int, breaks: list[int], words: list[tuple[int, int]]) -> list[int]:
    """Move the last break back one word when the last line would be one CJK character alone and
    that word fits beside it, and the line above keeps at least one word of its own."""
    from rich.cells import cell_len

    if not breaks or not _pattern("_ONE_CHARACTER").fullmatch(text[breaks[-1]:]):
        return breaks
    line_start = breaks[-2] if len(breaks) > 1 else 0
    last_line = [start for start, _end in words if line_start <= start < breaks[-1]]
    if len(last_line) < 2:
        return breaks
    moved = last_line[-1]
    if not _pattern("_ONE_CHARACTER").fullmatch(text[moved:breaks[-1]]):  # a Latin word stays where it is
        return breaks
    if cell_len(text[moved:].strip()) > width:
        return breaks
    return [*breaks[:-1], moved]


def _rstrip_end(self: Any, size: int) -> None:
    """``Text.rstrip_end`` counted in cells: remove whitespace beyond ``size`` cells at the end."""
    from rich.cells import cell_len

    excess = self.cell_len - size
    if excess <= 0:
        return
    plain = self.plain
    crop = 0
    while excess > 0 and crop < len(plain) and plain[len(plain) - 1 - crop].isspace():
        excess -= cell_len(plain[len(plain) - 1 - crop])
        crop += 1
    if crop:
        self.right_crop(crop)


def install() -> bool:
    """Break CJK text on the rules above in Textual's and Rich's wrapping; True when all took it."""
    done = 0
    try:
        from textual import _wrap as textual_wrap

        if isinstance(getattr(textual_wrap, "re_chunk", None), re.Pattern):  # the editor's soft wrap
            textual_wrap.re_chunk = _ByText(textual_wrap.re_chunk, "TEXTUAL_CHUNK")  # type: ignore[assignment]
        done += isinstance(getattr(textual_wrap, "re_chunk", None), _ByText)
    except ImportError:  # pragma: no cover - a Textual without the module: wraps as it does
        pass
    try:
        from rich import _wrap as rich_wrap
        from rich import text as rich_text

        if isinstance(getattr(rich_wrap, "re_word", None), re.Pattern):
            rich_wrap.re_word = _ByText(rich_wrap.re_word, "RICH_WORD")  # type: ignore[assignment]
        done += isinstance(getattr(rich_wrap, "re_word", None), _ByText)
        if callable(getattr(rich_text, "divide_line", None)) and hasattr(rich_text.Text, "rstrip_end"):
            setattr(rich_text, "divide_line", divide_line)  # (not a name rich.text exports)
            rich_text.Text.rstrip_end = _rstrip_end  # type: ignore[method-assign]
            done += 1
    except ImportError:  # pragma: no cover
        pass
    try:
        from textual import content as textual_content

        if callable(getattr(textual_content, "divide_line", None)):
            setattr(textual_content, "divide_line", divide_line)  # Textual's own Content wraps with Rich's
            done += 1
    except ImportError:  # pragma: no cover
        pass
    return done == 4

