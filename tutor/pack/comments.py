"""Code comments in the learner's language, with no second copy of the code.

A pack's code (an example's ``code``, an exercise's ``starter`` and ``solution``, a predict
quiz's ``code``) may follow an English whole-line comment with its Chinese version, on the next
line, at the same indentation::

    # w is stored (out, in)
    #zh: w 按 (out, in) 存储

Both are comments, so the code runs the same either way. :func:`code_for` is the code as a
learner sees it: in English the ``#zh:`` lines are gone; in Chinese each English comment with a
``#zh:`` line after it is replaced by the Chinese text. Only whole-line comments are paired: an
inline English comment gets its own line first when it is translated.
"""

from __future__ import annotations

import io
import tokenize

MARK = "#zh:"

#: The languages a pack's code has comments in: what :func:`versions` shows.
LANGUAGES = ("en", "zh")


def _chinese(language: str | None) -> bool:
    return bool(language) and (language == "zh" or str(language).startswith("zh-"))


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _comment_rows(code: str, lines: list[str]) -> set[int]:
    """The indexes of the lines that are a whole-line comment, as Python reads the code: a line
    reading ``# ...`` inside a multi-line string is the string's text, and stays as written. Code
    that does not tokenize (a starter broken on purpose) is read line by line from where the
    tokenizer stopped, except inside a string left open, which runs to the end."""
    rows: set[int] = set()
    read = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            read = max(read, token.end[0])
            if token.type == tokenize.COMMENT and not token.line[: token.start[1]].strip():
                rows.add(token.start[0] - 1)
    except tokenize.TokenError as error:
        if "string" in str(error.args[0]):
            return rows
        rows |= {i for i in range(read, len(lines)) if lines[i].lstrip().startswith("#")}
    except SyntaxError:  # IndentationError: a dedent that matches no block
        rows |= {i for i in range(read, len(lines)) if lines[i].lstrip().startswith("#")}
    return rows


def _marks(code: str) -> tuple[list[str], set[int], set[int]]:
    """The lines of ``code``, the indexes of its ``#zh:`` lines and of its other comment lines."""
    lines = code.split("\n")
    rows = _comment_rows(code, lines)
    marks = {i for i in rows if lines[i].lstrip().startswith(MARK)}
    return lines, marks, rows - marks


def _chinese_text(line: str) -> str:
    text = line.lstrip()[len(MARK):]
    return text[1:] if text.startswith(" ") else text


def code_for(code: str, language: str | None) -> str:
    """``code`` as shown to a learner reading ``language`` (``zh``, ``zh-CN``: Chinese comments;
    anything else: English). A ``#zh:`` line with no English comment line right above it
    (a problem `validate` reports) is dropped in English and shown as a comment in Chinese."""
    if MARK not in code:
        return code
    lines, marks, english = _marks(code)
    chinese = _chinese(language)
    shown: list[str] = []
    for index, line in enumerate(lines):
        if index not in marks:
            shown.append(line)
            continue
        if not chinese:
            continue
        text = _chinese_text(line)
        if index - 1 in english:
            shown[-1] = f"{_indent(lines[index - 1])}# {text}".rstrip()
        else:
            shown.append(f"{_indent(line)}# {text}".rstrip())
    return "\n".join(shown)


def versions(code: str) -> list[str]:
    """Every version of ``code`` a learner may have been shown: as written, and in each language."""
    found = [code]
    for language in LANGUAGES:
        shown = code_for(code, language)
        if shown not in found:
            found.append(shown)
    return found


def same_code(code: str, original: str) -> bool:
    """True when ``code`` is ``original`` as shown in any language (blank edges and trailing
    spaces aside): a learner who switched language has not changed their starter."""
    mine = _normal(code)
    return any(mine == _normal(version) for version in versions(original))


def _normal(code: str) -> str:
    return "\n".join(line.rstrip() for line in code.strip("\n").splitlines()).strip()


def misplaced(code: str) -> list[tuple[int, int, str]]:
    """The ``#zh:`` lines of ``code`` that pair with no English comment: (line index from 0,
    column from 1 of the mark, what is wrong)."""
    found: list[tuple[int, int, str]] = []
    if MARK not in code:
        return found
    lines, marks, english = _marks(code)
    for index in sorted(marks):
        line = lines[index]
        col = len(_indent(line)) + 1
        if index - 1 not in english:
            found.append((index, col, "a #zh: line must come right after the English comment line it "
                                      "translates (an inline comment needs its own line first)"))
        elif _indent(lines[index - 1]) != _indent(line):
            found.append((index, col, "a #zh: line must have the indentation of the English comment "
                                      "line above it"))
        elif not _chinese_text(line).strip():
            found.append((index, col, "this #zh: line is empty: write the Chinese comment after #zh:"))
    return found
