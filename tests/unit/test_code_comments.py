"""Code comments in the learner's language: ``#zh:`` lines under English ones (issue 52, item 18)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tutor.pack.comments import code_for, misplaced, same_code
from tutor.pack.lint import lint
from tutor.pack.loader import load_pack

CODE = """import torch
# w is stored (out, in)
#zh: w 按 (out, in) 存储
def f(x):
    # scale it
    #zh: 缩放它
    return x * 2  # inline stays English
"""


def test_english_drops_the_chinese_lines_and_nothing_else():
    assert code_for(CODE, "en") == ("import torch\n# w is stored (out, in)\ndef f(x):\n    # scale it\n"
                                    "    return x * 2  # inline stays English\n")
    assert code_for(CODE, None) == code_for(CODE, "en")


def test_chinese_replaces_each_paired_comment_at_its_indentation():
    for language in ("zh", "zh-CN"):
        assert code_for(CODE, language) == ("import torch\n# w 按 (out, in) 存储\ndef f(x):\n    # 缩放它\n"
                                            "    return x * 2  # inline stays English\n")


def test_both_versions_run_as_the_code_written():
    for language in ("en", "zh"):
        scope: dict = {}
        exec(compile(code_for(CODE.replace("import torch\n", ""), language), "<c>", "exec"), scope)
        assert scope["f"](3) == 6


def test_code_without_marks_is_unchanged():
    plain = "x = 1  # a comment with #zh: inside it\n"
    assert code_for("x = 1\n# one\n", "zh") == "x = 1\n# one\n"
    assert code_for(plain, "en") == plain and code_for(plain, "zh") == plain
    assert misplaced(plain) == []


def test_a_chinese_line_with_no_english_line_above():
    code = "x = 1  # inline\n#zh: 行内\n#zh: 又一行\n"
    assert code_for(code, "en") == "x = 1  # inline\n"
    assert code_for(code, "zh") == "x = 1  # inline\n# 行内\n# 又一行\n"  # nothing said is lost
    assert [(line, col) for line, col, _ in misplaced(code)] == [(1, 1), (2, 1)]
    assert "right after the English comment" in misplaced(code)[0][2]
    assert "#zh:" in misplaced("#zh: 开头\n")[0][2]


def test_a_chinese_line_at_another_indentation_or_empty():
    assert "indentation" in misplaced("def f():\n    # one\n#zh: 一\n    pass\n")[0][2]
    assert misplaced("def f():\n    # one\n    #zh: 一\n    pass\n") == []
    assert "empty" in misplaced("# one\n#zh:\n")[0][2]


def test_the_starter_in_any_language_is_the_starter():
    for language in ("en", "zh"):
        assert same_code(code_for(CODE, language), CODE)
        assert same_code("\n" + code_for(CODE, language).replace("\n", "  \n") + "\n\n", CODE)
    assert not same_code(code_for(CODE, "zh").replace("x * 2", "x * 3"), CODE)
    assert not same_code(CODE.replace("#zh: 缩放它", "#zh: 改了"), CODE)


MINI = Path(__file__).parents[1] / "app" / "packs" / "mini"


def test_lint_points_at_a_misplaced_chinese_line(tmp_path):
    folder = tmp_path / "mini"
    shutil.copytree(MINI, folder)
    lesson = folder / "exercises.yaml"
    text = lesson.read_text(encoding="utf-8")
    text = text.replace("      def double(x):\n          return x\n",
                        "      def double(x):\n          return x  # wrong\n          #zh: 错\n", 1)
    lesson.write_text(text, encoding="utf-8")
    line = text.split("\n").index("          #zh: 错") + 1
    found = [p for p in lint(load_pack(folder)) if "#zh:" in p.message]
    assert [(p.file.name, p.line, p.col) for p in found] == [("exercises.yaml", line, 11)]
    assert str(found[0]).startswith(f"{lesson}:{line}:11: warning: step 'double' starter: a #zh: line")


def test_lint_is_quiet_for_paired_lines(tmp_path):
    folder = tmp_path / "mini"
    shutil.copytree(MINI, folder)
    lesson = folder / "exercises.yaml"
    text = lesson.read_text(encoding="utf-8")
    lesson.write_text(text.replace("      def double(x):\n          return x\n",
                                   "      def double(x):\n          # wrong\n          #zh: 错\n"
                                   "          return x\n", 1), encoding="utf-8")
    assert [p for p in lint(load_pack(folder)) if "#zh:" in p.message] == []


def test_a_mark_inside_a_string_is_the_strings_text_not_a_comment():
    """What runs is what the pack wrote: a line reading `#zh:` inside a multi-line string is data,
    and showing the string without it (or with it in place of the line above) would show a
    learner code that prints something else than what runs."""
    code = 'text = """\n# one\n#zh: 一\n"""\nprint(text)  # prints both lines\n'
    for language in ("en", "zh"):
        assert code_for(code, language) == code
    assert misplaced(code) == []


def test_code_that_does_not_tokenize_is_still_shown_in_each_language():
    code = "def f(:\n    # broken on purpose\n    #zh: 故意写错\n    pass\n"
    assert code_for(code, "zh") == "def f(:\n    # 故意写错\n    pass\n"
    assert code_for(code, "en") == "def f(:\n    # broken on purpose\n    pass\n"
    unterminated = 'x = """\n# one\n#zh: 一\n'
    assert code_for(unterminated, "en") == unterminated  # no end to the string: all of it is data


def test_a_translated_comment_leaves_a_review_card_as_it_was(tmp_path):
    """Adding the Chinese of a comment asks nothing new: the exercise's review card is not stale."""
    from tutor.record import spaced_review as review

    folder = tmp_path / "mini"
    shutil.copytree(MINI, folder)
    lesson = folder / "exercises.yaml"
    text = lesson.read_text(encoding="utf-8")
    lesson.write_text(text.replace("      def double(x):\n          return x\n",
                                   "      def double(x):\n          # wrong\n          return x\n", 1), encoding="utf-8")
    english = load_pack(folder).lessons[1].steps[0]
    lesson.write_text(text.replace("      def double(x):\n          return x\n",
                                   "      def double(x):\n          # wrong\n          #zh: 错\n"
                                   "          return x\n", 1), encoding="utf-8")
    translated = load_pack(folder).lessons[1].steps[0]
    assert translated.starter != english.starter
    assert review.content_hash(translated) == review.content_hash(english)
    assert review.content_hash(translated) != review.content_hash(load_pack(MINI).lessons[1].steps[0])
