"""Line breaks for Chinese (and Japanese, Korean) text: between any two CJK characters.

Textual and Rich wrap at whitespace only, so a sentence of Chinese, which has no spaces, is one
"word": it is moved whole to the next line (leaving the line before it short) and, longer than
the width, folded wherever the width ends, "Esc" cut into "Es" and "c". Here each CJK character
is a chunk of its own, with the closing punctuation after it (，。：）...) kept on its line, so
lines fill by cell width (a CJK character is two cells) and Latin words and key names are never
split. Text without CJK characters breaks exactly as before.
"""

from __future__ import annotations

import re

#: CJK ideographs, kana, hangul, full-width forms and CJK punctuation.
_CJK = "\u2e80-\u2fff\u3000-\u303f\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
#: Punctuation that must not start a line: it stays with the character before it.
_CLOSING = "，。、：；！？）》」』】〉…,.:;!?)"
_OPENING = "（《「『【〈"
_CHUNK = rf"[{_OPENING}]*[{_CJK}][{_CLOSING}]*|[^\s{_CJK}]+[{_CLOSING}]*"

#: Textual's chunks: a word and the whitespace after it, or whitespace alone.
TEXTUAL_CHUNK = re.compile(rf"(?:{_CHUNK})\s*|\s+")
#: Rich's words: whitespace, a word, whitespace.
RICH_WORD = re.compile(rf"\s*(?:{_CHUNK})\s*")


def install() -> bool:
    """Break CJK text by character in Textual's and Rich's wrapping; True when both took it."""
    done = 0
    try:
        from textual import _wrap as textual_wrap

        if isinstance(getattr(textual_wrap, "re_chunk", None), re.Pattern):
            textual_wrap.re_chunk = TEXTUAL_CHUNK
            done += 1
    except ImportError:  # pragma: no cover - a Textual without the module: wraps as it does
        pass
    try:
        from rich import _wrap as rich_wrap

        if isinstance(getattr(rich_wrap, "re_word", None), re.Pattern):
            rich_wrap.re_word = RICH_WORD
            done += 1
    except ImportError:  # pragma: no cover
        pass
    return done == 2
