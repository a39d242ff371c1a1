"""Comparing a learner's prediction with what the code printed (predict-the-output quizzes).

One module for the app (the learner's verdict and the side-by-side difference) and ``validate``
(which prints the output every prediction will be compared against). Plain functions on strings:
no torch, no Textual.

Comparisons (the quiz's ``compare``):

- ``whitespace`` (the default): blank lines at either end, trailing spaces, runs of spaces and
  the spaces beside punctuation do not count, so ``[[0.0,5.0]]`` matches ``[[0.0, 5.0]]``; spaces
  between two words or numbers still do (``1 2`` is not ``12``).
- ``exact``: only a final newline is forgiven.

With the default comparison, a prediction that differs from the output only in how its numbers are
written is right too, and says so (``Verdict.number_format``): ``[[0, 5], [0, 5]]`` for
``[[0.0, 5.0], [0.0, 5.0]]``, ``tensor([1, 2])`` for ``tensor([1., 2.])``, ``0.33333`` for a
printed ``0.3333``. The rest (brackets, words, ``float64``) must still match, and a value the
output prints more precisely than the prediction is not the same value (``0.3`` is not
``0.30000000000000004``).

A quiz with ``raises: TypeName`` is right when the answer names that exception: ``TypeName``,
``raises TypeName``, ``TypeName: message`` (any message). ``accept`` lists more right answers,
compared the same way as the output.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_SPACE = re.compile(r"\s+")
_AROUND_PUNCT = re.compile(r" ?([^\w\s]) ?")
_RAISES = re.compile(r"^(?:it\s+)?(?:raises|throws|error|exception)?\s*:?\s*(?:an?\s+)?([A-Za-z_][\w.]*)",
                     re.IGNORECASE)


def normalize(text: str, compare: str = "whitespace") -> str:
    """``text`` as the comparison sees it."""
    text = text.replace("\r\n", "\n")
    if compare == "exact":
        return text[:-1] if text.endswith("\n") else text
    return _AROUND_PUNCT.sub(r"\1", _SPACE.sub(" ", text).strip())


def raised_name(answer: str) -> str | None:
    """The exception an answer names ("raises TypeError", "TypeError: ...", "torch.OutOfMemoryError")."""
    # Whitespace runs made one space first: on raw runs the pattern's optional spaces backtrack
    # cubically (a 2,000-space answer took minutes, and `grade` judges answers from hand-ins).
    match = _RAISES.match(_SPACE.sub(" ", answer.strip()))
    if match is None:
        return None
    return match.group(1).rsplit(".", 1)[-1]


#: A number as printed: not part of a word (``float64``) nor of a longer number.
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")


def _decimals(number: str) -> int | None:
    """Digits after the point (None with an exponent: compared as values only)."""
    if "e" in number.lower():
        return None
    return len(number.split(".", 1)[1]) if "." in number else 0


def _same_number(mine: str, printed: str) -> bool:
    """``mine`` is ``printed``'s value: equal, or ``printed`` is ``mine`` rounded as printed."""
    a, b = float(mine), float(printed)
    if a == b:
        return True
    shown, typed = _decimals(printed), _decimals(mine)
    return shown is not None and typed is not None and shown < typed and round(a, shown) == b


def same_values(prediction: str, output: str) -> bool:
    """True when the two texts (as the comparison sees them) differ only in how their numbers
    are written: the same text between the numbers, and each number the same value."""
    mine, printed = _NUMBER.split(prediction), _NUMBER.split(output)
    if mine != printed:
        return False
    numbers = _NUMBER.findall(prediction), _NUMBER.findall(output)
    return len(numbers[0]) == len(numbers[1]) and all(_same_number(a, b) for a, b in zip(*numbers))


@dataclass(frozen=True)
class Verdict:
    """``right``; ``expected``: what the prediction was compared with (for the side-by-side);
    ``number_format``: right, though its numbers are written otherwise than the output's."""

    right: bool
    expected: str
    number_format: bool = False


def expected_answer(output: str, raised: str | None, raises: str | None) -> str:
    """What the learner should have typed: the output, or the exception the quiz is about."""
    if raises is not None:
        return f"raises {raises}" if raised is None or raised == raises else f"raises {raised}"
    return output


def judge(prediction: str, output: str, *, compare: str = "whitespace", accept: list[str] | tuple[str, ...] = (),
          raises: str | None = None, raised: str | None = None) -> Verdict:
    """Is ``prediction`` right for a run that printed ``output`` (and raised ``raised``, a type name)?"""
    expected = expected_answer(output, raised, raises)
    if raises is not None:
        named = raised_name(prediction)
        actual = raised or raises
        if named is not None and named == actual and (raised is None or raised == raises):
            return Verdict(True, expected)
    else:
        mine, theirs = normalize(prediction, compare), normalize(output, compare)
        if mine == theirs:
            return Verdict(True, expected)
        if compare != "exact" and same_values(mine, theirs):
            return Verdict(True, expected, number_format=True)
    mine = normalize(prediction, compare)
    if any(mine == normalize(answer, compare) for answer in accept):
        return Verdict(True, expected)
    return Verdict(False, expected)


def side_by_side(prediction: str, expected: str) -> list[tuple[str, str, bool]]:
    """Rows (yours, actual, differs) pairing the two texts line by line, aligned by difflib."""
    mine, theirs = prediction.rstrip("\n").split("\n"), expected.rstrip("\n").split("\n")
    rows: list[tuple[str, str, bool]] = []
    matcher = difflib.SequenceMatcher(a=[normalize(x) for x in mine], b=[normalize(x) for x in theirs],
                                      autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            rows += [(mine[a0 + k], theirs[b0 + k], False) for k in range(a1 - a0)]
            continue
        left, right = mine[a0:a1], theirs[b0:b1]
        for k in range(max(len(left), len(right))):
            rows.append((left[k] if k < len(left) else "", right[k] if k < len(right) else "", True))
    return rows


def char_spans(a: str, b: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The character ranges of ``a`` and of ``b`` that differ (to mark them)."""
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    left: list[tuple[int, int]] = []
    right: list[tuple[int, int]] = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op != "equal":
            if a1 > a0:
                left.append((a0, a1))
            if b1 > b0:
                right.append((b0, b1))
    return left, right
