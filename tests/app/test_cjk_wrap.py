"""Chinese wraps between characters, by cell width, never splitting a Latin word or a key name,
never starting a line with closing punctuation; English wraps as it always did (issue 29)."""

from __future__ import annotations

import io
import re

import pytest
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text
from textual._wrap import compute_wrap_offsets

from tutor.app import cjk_wrap
from tutor.words import i18n

cjk_wrap.install()


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


# Issue 52, item 15: nothing dropped at any width; CJK breaks on the rules CJK readers expect.

from hypothesis import given, settings, strategies as st  # noqa: E402

from tutor.app.markdown_render import parse, render  # noqa: E402

_CLOSING = "，。、：；！？）》」』】…"
_OPENING = "（《「『【"
_PIECES = st.one_of(
    st.sampled_from("数据张量梯度的一个是在计算图中留住推理"),  # CJK characters
    st.sampled_from(_CLOSING + _OPENING),
    st.sampled_from([" ", "  ", ".clone()", "x", "requires_grad=False", "Linear", "mse_loss",
                     "torch.autocast(\"cpu\", dtype=torch.bfloat16)", "a", "1.5", "(", ")", ",", "."]),
)
_TEXT = st.lists(_PIECES, min_size=1, max_size=60).map("".join)


def _rendered(renderable, width: int) -> list[str]:
    console = Console(width=width, file=io.StringIO(), color_system=None, legacy_windows=False)
    with console.capture() as captured:
        console.print(renderable)
    return captured.get().splitlines()


def _letters(text: str) -> str:
    return re.sub(r"\s+", "", text)


@settings(max_examples=300, deadline=None)
@given(text=_TEXT, width=st.integers(min_value=2, max_value=100))
def test_wrapping_never_loses_a_character_at_any_width(text, width):
    """Rich's wrap as paragraphs and the app's table cells use it (fold): every character is kept,
    in order, and no line is wider than the width (a CJK character is two cells: width 2 and up).
    With an ellipsis (Rich's tables' default) only a unit wider than the whole line may be cut:
    before, a line that ended in a CJK character and a space lost that character to "…"."""
    widest = max(cell_len(word.rstrip()) for word in cjk_wrap.RICH_WORD.findall(text) or [""])
    for overflow in ("fold", "ellipsis") if widest <= width else ("fold",):
        lines = [str(line) for line in Text(text, overflow=overflow).wrap(Console(width=width), width)]
        assert _letters("".join(lines)) == _letters(text), (overflow, width, lines)
        assert all(cell_len(line) <= width for line in lines), (overflow, width, lines)


@settings(max_examples=150, deadline=None)
@given(text=_TEXT, width=st.integers(min_value=8, max_value=100))
def test_a_list_item_and_a_table_cell_never_lose_a_character(text, width):
    """The app's Markdown: a list item (a hanging indent, drawn as a grid) and a table's cell
    (one column, so that its lines read in order)."""
    text = text.replace("(", "").replace(")", "")  # "x(" could read as a link's text in Markdown
    for markdown in (f"- {text}\n- 二", f"| 列 |\n|---|\n| {text} |"):
        lines = _rendered(render(parse(markdown)), width)
        assert "…" not in "".join(lines) or "…" in text, (markdown, width, lines)
        assert _letters(text) in _letters("".join(lines).replace("•", "").replace("─", "")), (markdown, width, lines)


@settings(max_examples=300, deadline=None)
@given(text=_TEXT, width=st.integers(min_value=24, max_value=100))
def test_cjk_lines_follow_kinsoku(text, width):
    """No line starts with closing punctuation or ends with opening punctuation, unless a unit
    wider than the whole line had to be folded ("torch.autocast(...)", 43 cells, at 24 columns)."""
    # punctuation where no line break can put it: a text starting with "，", "（" before a space
    text = re.sub(rf"[{_OPENING}]+(?=\s|$)", "", re.sub(rf"(^|(?<=\s))[{_CLOSING}]+", "", text))
    lines = [str(line).rstrip() for line in Text(text).wrap(Console(width=width), width)]
    folded = max(cell_len(word.strip()) for word in cjk_wrap.RICH_WORD.findall(text) or [""]) > width
    for line in lines:
        if line.strip() and not folded:
            assert line.lstrip()[0] not in _CLOSING, (width, lines)
            assert line[-1] not in _OPENING, (width, lines)


@pytest.mark.parametrize("width", range(12, 44))
def test_opening_punctuation_goes_with_the_word_after_it_and_no_character_is_left_alone(width):
    text = "如果你想保留它，就先复制一份（.clone()），然后再修改这份副本里的数"
    lines = _rich_lines(text, width)
    assert _letters("".join(lines)) == _letters(text)
    assert not any(line.endswith("（") or line.endswith("（.") for line in lines), lines
    if width >= 16:  # "（.clone()）" (14 cells) fits a line with room to spare
        assert any("（.clone()），" in line for line in lines), lines
    if len(lines) > 1:
        assert len(re.findall(r"[\u4e00-\u9fff]", lines[-1])) >= 2, lines  # "数" never alone


def test_english_text_breaks_where_rich_breaks_it():
    import rich._wrap

    text = "torch.no_grad() turns recording off (the result is a plain tensor), and you can use it"
    for width in (10, 40, 79):
        assert cjk_wrap.divide_line(text, width) == rich._wrap.divide_line(text, width)


def _whole(app, selector: str) -> list[str]:
    """A widget's whole content as the terminal draws it at the widget's width (scrolled or not)."""
    from textual.widgets import Static

    widget = app.screen.query_one(selector)
    drawn = widget.content if isinstance(widget, Static) else widget.render()
    return _rendered(drawn, widget.content_size.width)


@pytest.mark.parametrize("lesson, forward, selector, words", [
    ("no-grad-and-inference", 0, "Markdown", ["被记录操作（一个", "requires_grad=False", "mse_loss）都会报错"]),
    ("autocast", 8, "#contract", ["下计算", "torch.autocast(\"cpu\",", "autocast 关闭"]),
])
async def test_the_two_lessons_steps_keep_every_character_at_80_columns(make_app, lesson, forward, selector, words):
    """Issue 52: at 80x24 lesson 3 step 1 lost "个" ("…被记录操作（一 …") and lesson 4 step 9 lost
    "算" ("在 torch.autocast(…) 下计 …")."""
    from pathlib import Path

    from app_support import settle
    from tutor.pack.loader import load_pack

    pack = load_pack(Path(__file__).parents[2] / "lessons" / "debugging-and-speed")
    step = next(item for item in pack.lessons if item.id == lesson).steps[forward]
    app = make_app(start_lesson=lesson, resume=False, pack=pack, language="zh")
    app.start_pack = pack.id
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for _ in range(forward):
            await pilot.press("f4")
            await settle(pilot)
        assert app.screen.place.step.id == step.id
        lines = _whole(app, selector)
        shown = _letters("".join(lines))
        assert "…" not in shown, lines
        for word in words:
            assert _letters(word) in shown, (word, lines)
        source = step.body["zh"] if selector == "Markdown" else step.contract[0].description["zh"]
        plain = re.sub(r"^\s*- ", "", re.sub(r"[`*]", "", source), flags=re.MULTILINE)  # the Markdown's marks
        assert _letters(plain) in shown.replace("•", ""), lines
        for line in lines:
            assert cell_len(line.rstrip()) <= app.screen.query_one(selector).content_size.width
            assert not re.match(rf"\s*[{_CLOSING}]", line) and not line.rstrip().endswith(tuple(_OPENING)), line


def test_english_wraps_without_compiling_the_cjk_patterns_and_chinese_after_it_still_breaks_right():
    """The CJK patterns take ~10 ms to compile, which an English start never pays (issue 55);
    the stand-ins for Rich's and Textual's patterns answer each text by its own characters."""
    import subprocess
    import sys

    script = """
from rich.console import Console
from rich.text import Text
from textual._wrap import compute_wrap_offsets
from tutor.app import cjk_wrap
assert cjk_wrap.install() and cjk_wrap.install()  # a second install keeps the first
english = "torch.no_grad() turns recording off … and the result is a plain tensor"
lines = [str(line) for line in Text(english).wrap(Console(width=20), 20)]
cuts = compute_wrap_offsets(english, 20, 4)
print(cjk_wrap._pattern.cache_info().currsize, len(lines), cuts)
chinese = "如果你想保留它，就先复制一份（.clone()），然后再修改"
print(compute_wrap_offsets(chinese, 16, 4), [str(line) for line in Text(chinese).wrap(Console(width=16), 16)])
print(compute_wrap_offsets(english, 20, 4) == cuts)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    compiled, *_ = out.stdout.split()
    assert compiled == "0", out.stdout
    lines = out.stdout.splitlines()
    # Between characters by cells, the comma kept with its line, "（.clone()），" one unit.
    assert lines[1] == "[8, 14, 26] ['如果你想保留它，', '就先复制一份', '（.clone()），然', '后再修改']"
    assert lines[2] == "True"
