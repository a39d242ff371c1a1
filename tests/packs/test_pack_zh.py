"""Issue 29: the built-in pack in Chinese. Every text a learner reads has an English and a Chinese
version; what is code stays code: the inline code spans, fenced blocks, `{{...}}` placeholders and
numbers of the English are in the Chinese too, and the Chinese uses the glossary's words
(docs/glossary-zh.md)."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from tutor.pack.lint import lesson_texts, pack_texts

CJK = re.compile(r"[\u4e00-\u9fff]")
CODE_SPAN = re.compile(r"`+[^`]+`+")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
PLACEHOLDER = re.compile(r"\{\{.*?\}\}")
STRING_LITERAL = re.compile(r"'[^']*'|\"[^\"]*\"")
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:e-?\d+)?")

#: words a translation might reach for where the glossary has chosen another
NOT_THE_GLOSSARY_WORD = {
    "拷贝": "复制", "操作符": "算子", "剖析器": "性能分析器", "(?<!性能)分析器": "性能分析器", "渐变": "梯度",
    "计算图表": "计算图", "自动微分": "自动求导", "缓冲器": "缓冲区", "张量流": "张量", "批量": "批次",
    "优化程序": "优化器", "基准测量": "基准测试",
    # issue 52: the size of a dimension is 维度的大小 (第 n 维的大小), a Python list is 列表
    "尺寸": "维度的大小", r"(?<![`\w.])list(?![`\w(])": "列表",
}


def _texts(pack):
    yield from ((("pack.yaml",) + path, label, text) for path, label, text in pack_texts(pack))
    for lesson in pack.lessons:
        for path, label, text in lesson_texts(lesson):
            yield (lesson.id,) + path, label, text


def _code_free(text: str) -> str:
    return CODE_SPAN.sub("", FENCE.sub("", PLACEHOLDER.sub("", text)))


def test_the_pack_declares_english_and_chinese(pack):
    assert pack.languages == ["en", "zh"]


def test_every_text_has_english_and_chinese(pack):
    texts = list(_texts(pack))
    assert len(texts) > 300, "the enumeration lost the pack's texts"
    lacking = [f"{label} at {path}" for path, label, text in texts
               if not isinstance(text, dict) or set(text) != {"en", "zh"}]
    assert not lacking, "texts without both en and zh:\n" + "\n".join(lacking)


def test_chinese_is_chinese_where_english_has_words(pack):
    """A Chinese text with no Chinese character is English left in place, unless the English is
    only code (a choice such as `self.scale = torch.ones(width)` reads the same in both)."""
    untranslated = []
    for path, label, text in _texts(pack):
        prose = _code_free(text["en"])
        if re.search(r"[A-Za-z]{3,}\s+[A-Za-z]{3,}", prose) and not CJK.search(text["zh"]):
            untranslated.append(f"{label}: {text['zh']!r}")
    assert not untranslated, "\n".join(untranslated)


def test_code_stays_code(pack):
    """Inline code spans, fenced blocks and placeholders are the same in en and zh (placeholders up
    to their string literals, which may be words to translate); so are the numbers."""
    wrong = []
    for path, label, text in _texts(pack):
        en, zh = text["en"], text["zh"]
        spans_en, spans_zh = (Counter(re.sub(r"\s+", " ", span) for span in CODE_SPAN.findall(s)) for s in (en, zh))
        if spans_en != spans_zh:
            wrong.append(f"{label}: code spans only in en {sorted(spans_en - spans_zh)}, "
                         f"only in zh {sorted(spans_zh - spans_en)}")
        if FENCE.findall(en) != FENCE.findall(zh):
            wrong.append(f"{label}: fenced code differs")

        def holes(s: str) -> list[str]:
            return [STRING_LITERAL.sub("''", hole) for hole in PLACEHOLDER.findall(s)]

        if holes(en) != holes(zh):
            wrong.append(f"{label}: placeholders {holes(en)} != {holes(zh)}")
        numbers_en = Counter(NUMBER.findall(_code_free(en)))
        numbers_zh = Counter(NUMBER.findall(_code_free(zh)))
        if set(numbers_en) != set(numbers_zh):
            wrong.append(f"{label}: numbers {sorted(numbers_en)} != {sorted(numbers_zh)}")
    assert not wrong, "\n".join(wrong)


def test_chinese_keeps_markdown_structure(pack):
    """Paragraphs and list items line up, so a translated step reads in the same shape; and a
    Chinese paragraph is one line (a line break inside it would show as a space between
    characters)."""
    wrong = []
    for path, label, text in _texts(pack):
        en_blocks = [b for b in re.split(r"\n\s*\n", text["en"].strip()) if b.strip()]
        zh_blocks = [b for b in re.split(r"\n\s*\n", text["zh"].strip()) if b.strip()]
        if len(en_blocks) != len(zh_blocks):
            wrong.append(f"{label}: {len(en_blocks)} paragraphs in en, {len(zh_blocks)} in zh")
            continue
        for en_block, zh_block in zip(en_blocks, zh_blocks):
            items = lambda block: len(re.findall(r"^\s*(?:[-*]|\d+\.)\s", block, re.MULTILINE))  # noqa: E731
            if items(en_block) != items(zh_block):
                wrong.append(f"{label}: list items differ: {zh_block[:40]!r}")
            for line in zh_block.split("\n")[:-1]:
                if CJK.search(line[-1:]) and not re.match(r"\s*(?:[-*]|\d+\.)\s", zh_block.split("\n")[
                        zh_block.split("\n").index(line) + 1]):
                    wrong.append(f"{label}: a Chinese line breaks inside a paragraph: {line[-20:]!r}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("avoid,use", sorted(NOT_THE_GLOSSARY_WORD.items()))
def test_chinese_uses_the_glossary_words(pack, avoid, use):
    found = [label for path, label, text in _texts(pack) if re.search(avoid, _code_free(text["zh"]))]
    assert not found, f"{avoid!r} in {found}: the glossary's word is {use!r}"


def _chinese_number(word: str) -> int:
    digits = {c: i for i, c in enumerate("零一二三四五六七八九")}
    if "十" not in word:
        return digits[word]
    tens, _, ones = word.partition("十")
    return (digits[tens] if tens else 1) * 10 + (digits[ones] if ones else 0)


def test_self_test_summary_counts_its_questions_in_chinese(pack):
    """The Chinese table of contents promises the same number of questions as the lesson has."""
    lesson = pack.lesson("self-test")
    stated = re.search(r"([零一二三四五六七八九十]+|\d+) ?道题", lesson.summary["zh"])
    assert stated, lesson.summary["zh"]
    word = stated.group(1)
    number = int(word) if word.isdigit() else _chinese_number(word)
    assert number == sum(step.kind == "quiz" for step in lesson.steps)


def test_a_speed_up_of_one_to_two_is_not_said_as_faster_by_one_to_two(pack):
    """Issue 54: 快一到两倍 reads as "faster by one to two times" (2-3x) in Chinese; the English
    means a speed-up of 1-2x. Said as a ratio (加速比), it cannot be misread."""
    step = next(s for s in pack.lesson("labs").steps if s.id == "autocast-cuda")
    assert "A whole model usually runs one to two times as fast" in " ".join(step.explain["en"].split())
    assert "整个模型的加速比通常只有一到两倍" in step.explain["zh"]
    faster_by = re.compile(r"快(?:一|两|1|2|\s)*到?(?:一|两|1|2)\s*倍")  # 快一倍, 快一到两倍, 快 1 到 2 倍
    misread = [label for path, label, text in _texts(pack) if faster_by.search(text["zh"])]
    assert not misread, misread


def test_no_space_follows_full_width_punctuation(pack):
    """Issue 52: "**读懂报错。** 报错信息里就有答案。" showed a stray space: full-width punctuation
    carries its own spacing, a bold's closing marks too."""
    found = [label for path, label, text in _texts(pack)
             if re.search(r"[，。：；！？）（、]\*{0,2} +(?=\S)", text["zh"])]
    assert not found, found


def _code_fields(pack):
    for lesson in pack.lessons:
        for step in lesson.steps:
            for name in ("code", "starter", "solution"):
                code = getattr(step, name, None)
                if isinstance(code, str):
                    yield f"{lesson.id}/{step.id} {name}", code


def _docstrings(code: str) -> list[str]:
    """The docstrings in a piece of the pack's code (a learner reading Chinese would see them in
    English: only comments have `#zh:` lines)."""
    import ast

    try:
        tree = ast.parse(code)
    except SyntaxError:  # a starter broken on purpose
        return []
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))]
    return [doc.split("\n")[0] for doc in map(ast.get_docstring, nodes) if doc]


def test_every_comment_in_the_packs_code_has_its_chinese_line(pack):
    """Issue 52, item 18: a comment in an example, a starter or a solution is Chinese in Chinese
    mode: each English comment line has its `#zh:` line right after it (tutor/pack/comments.py),
    which uses the glossary's words and fits the editor at 80x24 (a CJK character takes two
    columns; the editor shows 66). No docstrings: they have no Chinese line, so they are comments."""
    from rich.cells import cell_len

    from tutor.pack.comments import code_for, misplaced

    lacking, wrong, wide, comments = [], [], [], 0
    for label, code in _code_fields(pack):
        lines = code.split("\n")
        for index, line in enumerate(lines):
            stripped = line.lstrip()
            if "#" in line and not stripped.startswith("#") and re.search(r"\s#\s", line):
                lacking.append(f"{label}: inline comment (give it its own line): {stripped}")
            if stripped.startswith("#") and not stripped.startswith("#zh:"):
                comments += 1
                after = lines[index + 1].lstrip() if index + 1 < len(lines) else ""
                if not after.startswith("#zh:"):
                    lacking.append(f"{label}: {stripped}")
        wrong += [f"{label}: line {i + 1}: {message}" for i, _col, message in misplaced(code)]
        lacking += [f"{label}: a docstring has no Chinese (make it a comment): {doc!r}" for doc in _docstrings(code)]
        shown = code_for(code, "zh")
        wide += [f"{label}: {line.strip()}" for line in shown.split("\n") if cell_len(line) > 66]
        for avoid, use in NOT_THE_GLOSSARY_WORD.items():
            chinese = "\n".join(line for line in shown.split("\n") if CJK.search(line))
            if re.search(avoid, chinese):
                wrong.append(f"{label}: {avoid!r} (the glossary's word is {use!r})")
        if CJK.search(code_for(code, "en")):
            wrong.append(f"{label}: Chinese left in the English code")
    assert comments >= 24, "the scan lost the pack's comments"
    assert not lacking, "\n".join(lacking)
    assert not wrong, "\n".join(wrong)
    assert not wide, "\n".join(wide)
