"""Lesson Markdown: what each construct becomes, and that no text is ever dropped or crashes."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from tutor.app.markdown_render import Code, Heading, ListBlock, Paragraph, Quote, Rule, TableBlock, inline, parse, render


def shown(markdown: str, width: int = 60) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(render(parse(markdown)))
    return console.export_text()


def test_blocks():
    blocks = parse("# Title\n\nA paragraph\ncontinued.\n\n---\n\n> quoted\n\n```python\nx = 1\n```\n\n    indented\n")
    assert blocks == [Heading(1, "Title"), Paragraph("A paragraph\ncontinued."), Rule(), Quote([Paragraph("quoted")]),
                      Code("python", "x = 1"), Code("text", "indented")]


def test_setext_heading_and_fence_defaults_to_python():
    assert parse("Title\n=====\nSub\n---") == [Heading(1, "Title"), Heading(2, "Sub")]
    assert parse("```\nprint(1)\n```") == [Code("python", "print(1)")]
    assert parse("~~~~\na\n~~~~") == [Code("python", "a")]


def test_unclosed_fence_keeps_the_rest_as_code():
    assert parse("```\nx = 1\ny = 2") == [Code("python", "x = 1\ny = 2")]


def test_lists_nested_tight_and_loose():
    tight = parse("- one\n- two\n  - inner\n3. not a new list item of the bullet list")
    assert isinstance(tight[0], ListBlock) and not tight[0].loose
    assert tight[0].items[1] == [Paragraph("two"), ListBlock(False, 1, [[Paragraph("inner")]])]
    loose = parse("1. first\n\n2. second\n")
    assert loose == [ListBlock(True, 1, [[Paragraph("first")], [Paragraph("second")]], True)]
    assert parse("7) seven\n8) eight")[0].start == 7


def test_table():
    assert parse("| op | ms |\n|:--|--:|\n| mm | 1.5 |\n| a\\|b | 2 |") == [
        TableBlock(["op", "ms"], ["left", "right"], [["mm", "1.5"], ["a|b", "2"]])]


def test_inline_styles():
    text = inline("`x.grad` **bold** *em* _em_ ~~gone~~ [link](https://pytorch.org) <https://a.b> \\*not em\\*")
    assert text.plain == "x.grad bold em em gone link https://a.b *not em*"
    styles = {text.plain[s.start:s.end]: s.style for s in text.spans}
    assert styles["bold"].bold and styles["em"].italic and styles["gone"].strike
    assert styles["link"].link == "https://pytorch.org" and styles["x.grad"].bold


def test_snake_case_and_stray_markers_stay_text():
    assert inline("use torch.no_grad_ and snake_case_name, 2 * 3 * 4, a ` b").plain == \
        "use torch.no_grad_ and snake_case_name, 2 * 3 * 4, a ` b"
    assert inline("``code with ` inside``").plain == "code with ` inside"


def test_hard_breaks():
    assert inline("one  \ntwo\\\nthree\nfour").plain == "one\ntwo\nthree four"


def test_rendered_layout():
    out = shown("Intro.\n\n- alpha\n- beta\n\n1. one\n2. two\n\n> careful\n")
    assert "• alpha\n• beta" in out and "1. one\n2. two" in out and "▌ careful" in out
    assert "Intro.\n\n•" in out


def test_code_blocks_are_highlighted_and_unknown_languages_are_plain():
    console = Console(width=60, record=True, color_system="truecolor", force_terminal=True)
    console.print(render(parse("```python\nimport torch\n```")))
    assert "\x1b[" in console.export_text(styles=True)
    assert "nonsense code" in shown("```no-such-language\nnonsense code\n```")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab *_`#>-|:~[]()\\\n1.   ")) , max_size=80))
def test_any_text_renders_and_keeps_its_letters(markdown):
    out = shown(markdown)
    for word in re.findall(r"[ab]+", markdown):
        assert word in out.replace("\n", "").replace(" ", "") or word in out
