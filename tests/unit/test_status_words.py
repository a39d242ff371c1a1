"""docs/authoring.md's "Status words" table is the one definition of every status (issue 27, item 6):
each word a check, a run or a grade row can carry is in it, said of what the code says it is said
of, and the table holds no word the code never produces."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

from tutor.grading import gradebook
from tutor.grading.exercise import Status
from tutor.sandbox.result import RunStatus

DOCS = Path(__file__).parents[2] / "docs" / "authoring.md"


def _table() -> dict[str, set[str]]:
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## Status words", 1)[1].split("\n## ", 1)[0]
    words: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        for word in re.findall(r"`([a-z0-9-]+)`", cells[0]):
            words[word] = {part.strip() for part in cells[1].split(",")}
    return words


def _row_words() -> set[str]:
    """What `grade` can write in a row's status column: read from its source, not restated."""
    source = Path(gradebook.__file__).read_text(encoding="utf-8")
    literal = set(re.findall(r'status="([a-z-]+)"', source)) | set(re.findall(r'status = "([a-z-]+)"', source))
    return literal | set(gradebook.RUN_STATUS.values()) | {"unknown-exercise", "passed", "failed", "too-large",
                                                          "empty", "binary", "not-utf8"}


def test_every_check_run_and_row_word_is_defined_once_in_the_docs():
    table = _table()
    for word in get_args(Status):
        assert "check" in table.get(word, set()), word
    for word in get_args(RunStatus):
        assert "run" in table.get(word, set()), word
    rows = _row_words()
    for word in rows:
        assert "row" in table.get(word, set()), word
    produced = set(get_args(Status)) | set(get_args(RunStatus)) | rows
    assert set(table) == produced, set(table) ^ produced


def test_no_row_word_outside_the_shared_vocabulary_but_the_documented_ones():
    """The shared vocabulary: check and run words, `missing`, and the file words; `exited` is the
    one row word of grade's own (documented in the table)."""
    shared = set(get_args(Status)) | set(get_args(RunStatus)) | {"missing"}
    files = {"empty", "binary", "not-utf8", "too-large", "refused", "unknown-exercise", "unrecognised",
             "bad-archive", "wrong-pack"}
    assert _row_words() - shared - files == {"exited"}
