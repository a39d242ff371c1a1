"""Chinese wraps between characters, by cell width, never splitting a Latin word or a key name,
never starting a line with closing punctuation; English wraps as it always did (issue 29)."""

from __future__ import annotations

import re

import pytest
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text
from textual._wrap import compute_wrap_offsets

from tutor.app import cjk_wrap
from tutor.core import i18n

cjk_wrap.install()


@pytest.fixture(autouse=True)
def _english_after():
    yield
    i18n.set_language(None)


def _rich_lines(text: str, width: int) -> list[str]:
    return [str(line).rstrip() for line in Text(text).wrap(Console(width=width), width)]


def _textual_lines(text: str, width: int) -> list[str]:
    cuts = [0, *compute_wrap_offsets(text, width, 4), len(text)]
    return [text[a:b].rstrip() for a, b in zip(cuts, cuts[1:])]


@pytest.mark.parametrize("lines_of", [_rich_lines, _textual_lines])
@pytest.mark.parametrize("width", [24, 40, 76])
def test_chinese_fills_its_lines_and_keeps_words_whole(lines_of, width):
    i18n.set_language("zh")
    for key in ("help.body", "outcome.no_cuda", "run.compile_note", "progress.newer"):
        text = i18n.t(key, found=3, known=2, backup="/tmp/progress.db.bak").replace("\n", " ")
        lines = lines_of(text, width)
        assert "".join(line.replace(" ", "") for line in lines) == text.replace(" ", ""), key  # nothing lost
        for index, line in enumerate(lines):
            assert cell_len(line) <= width, (key, line)
            assert not re.match(r"[，。、：；！？）]", line), (key, line)  # no line starts with closing punctuation
            # filled, not left short, unless a Latin word (a path) that did not fit comes next
            if index < len(lines) - 1 and re.search(r"[\u4e00-\u9fff]$", line) \
                    and re.match(r"[\u4e00-\u9fff]", lines[index + 1]):
                assert cell_len(line) >= width - 5, (key, width, line)  # a character and its punctuation
        for word in re.findall(r"[A-Za-z][\w+./'\"=-]*", text):
            if cell_len(word) <= width:
                assert any(word in line for line in lines), (key, word, lines)  # never split


@pytest.mark.parametrize("width", [12, 30, 57])
def test_english_wraps_as_before(monkeypatch, width):
    """Without CJK the chunks are Textual's and Rich's own: the same lines as unpatched."""
    import rich._wrap
    import textual._wrap

    text = i18n.TABLE["en"]["help.body"].replace("\n", " ") + " (a path: /tmp/x.py, and 'quoted', too!)"
    patched = (_rich_lines(text, width), _textual_lines(text, width))
    monkeypatch.setattr(rich._wrap, "re_word", re.compile(r"\s*\S+\s*"))
    monkeypatch.setattr(textual._wrap, "re_chunk", re.compile(r"\S+\s*|\s+"))
    assert patched == (_rich_lines(text, width), _textual_lines(text, width))
