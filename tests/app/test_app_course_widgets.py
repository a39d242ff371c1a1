"""Two layout slips an instructor met at 80 columns (issue 27, item 9): a contract's long
description wrapped to column 0, and the profile table's header showed `Cal…`."""

from __future__ import annotations

import dataclasses

import pytest
from rich.console import Console

from app_support import screen_text, settle

LONG = ("returns a new tensor equal to twice x with the same shape and dtype, leaving x itself "
        "untouched so that the caller can use it again afterwards")


async def test_a_long_contract_description_wraps_under_its_item(make_app, mini_pack):
    lesson = next(lesson for lesson in mini_pack.lessons if lesson.id == "exercises")
    exercise = lesson.steps[0]
    item = dataclasses.replace(exercise.contract[0], description=LONG)
    exercise = dataclasses.replace(exercise, contract=[item])
    lesson = dataclasses.replace(lesson, steps=[exercise, *lesson.steps[1:]])
    pack = dataclasses.replace(mini_pack, lessons=[lesson if l.id == "exercises" else l for l in mini_pack.lessons])
    app = make_app(pack=pack, start_lesson="exercises")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        lines = screen_text(app).splitlines()
        start = next(i for i, line in enumerate(lines) if "double(x)" in line and "returns a new" in line)
        follow = lines[start + 1]
        assert "untouched" in "\n".join(lines[start:start + 4])
        column = len(follow) - len(follow.lstrip())
        assert follow.strip() and column == lines[start].index("returns a new"), (lines[start], follow)


@pytest.mark.parametrize("width", [60, 66, 72, 80])
def test_the_profile_table_keeps_its_headers_and_numbers(width):
    from tutor.app.widgets.charts import profile_table

    rows = [{"op": "aten::addmm_with_a_rather_long_name", "self_us": 12345, "share": 0.5, "calls": 128},
            {"op": "aten::mm", "self_us": 345, "share": 0.1, "calls": 1}]
    console = Console(width=width, record=True)
    console.print(profile_table(rows))
    text = console.export_text()
    header = text.splitlines()[0]
    assert "Self µs" in header and "Share" in header and "Calls" in header and "…" not in header, text
    assert "12,345" in text and "128" in text
