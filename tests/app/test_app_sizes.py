"""Every step of the mini pack at the design size and at the small and large ends (issue 14)."""

from __future__ import annotations

import pytest

from app_support import screen_text, settle

SMALL = (80, 24)


async def _goto(pilot, app, step_id: str) -> None:
    while app.screen.place.step.id != step_id:
        await pilot.press("f4")
        await settle(pilot)


@pytest.mark.parametrize("size", [(80, 24), (60, 20), (200, 60)])
async def test_every_step_reads_whole_at(size, make_app, mini_pack):
    app = make_app(start_lesson="basics")
    steps = sum(len(lesson.steps) for lesson in mini_pack.lessons)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        for index in range(steps):
            text = screen_text(app)
            lines = text.splitlines()
            assert "Step " in lines[0], lines[0]  # the top bar keeps where the learner is
            assert "…" not in "\n".join(lines[:-2]), text  # nothing cut (status and key bars aside)
            assert len(lines[-1].rstrip()) <= size[0]
            if index < steps - 1:
                await pilot.press("f4")
                await settle(pilot)
        assert app.screen.place.key == ("mini", "exercises", "double")


async def test_a_long_resume_line_is_shortened_and_keeps_its_key_at_80_columns(make_app, mini_pack):
    """Found by a new-user review: a long lesson and step title ran the Resume line off the
    screen, cut mid-word with no sign of it, and its key (ctrl+r) was lost."""
    import dataclasses

    lesson = mini_pack.lessons[0]
    first = dataclasses.replace(lesson.steps[0], title="A step whose title is long enough to need cutting")
    lesson = dataclasses.replace(lesson, title="A lesson with a rather long title",
                                 steps=[first, *lesson.steps[1:]])
    pack = dataclasses.replace(mini_pack, lessons=[lesson, *mini_pack.lessons[1:]])
    app = make_app(pack=pack)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        line = next(line for line in screen_text(app).splitlines() if "Start:" in line)
        assert line.rstrip().endswith("^R"), line
        assert "Start: A lesson with a rather long title › A step whose" in line and "…" in line, line
        assert len(line.rstrip()) <= 80


_KEY = r"(?:f\d+|\^\w|PgDn|PgUp|esc|enter|tab)"


def _footer_pairs(text: str) -> list[str]:
    """The footer's "key name" pairs, spaced by two or (closed up, see KeyFooter) by one."""
    import re

    line = text.splitlines()[-1].strip()
    return [pair.strip() for pair in re.findall(rf"{_KEY} .*?(?= {_KEY} |$)", line)]


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_every_key_in_the_footer_has_its_name(size, make_app, mini_pack):
    """Found by a new-user review: at 80 columns the exercise footer showed `f2  f3` with no
    names and `^q` without "Quit", which a newcomer read as cut off."""
    app = make_app(start_lesson="basics")
    steps = sum(len(lesson.steps) for lesson in mini_pack.lessons)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        footers = []
        for index in range(steps):
            footers.append(_footer_pairs(screen_text(app)))
            if index < steps - 1:
                await pilot.press("f4")
                await settle(pilot)
        await pilot.press("f2")
        await settle(pilot)
        footers.append(_footer_pairs(screen_text(app)))
        for pairs in footers:
            assert pairs, footers
            for pair in pairs:
                key, _, name = pair.partition(" ")
                assert key and name.strip() and "…" not in pair, (pair, pairs)
    if size == (80, 24):  # the exercise keeps its actions and the way back (F1 lists the rest)
        assert footers[-2] == ["f2 Contents", "f3 Previous", "f4 Next", "f5 Run", "f6 Check", "f7 Hint",
                               "f8 Solution", "f9 Reset"]


async def test_the_footer_at_80_columns_keeps_f2_and_f3(make_app):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        await _goto(pilot, app, "shape-error")  # an example, its editor focused
        footer = screen_text(app).splitlines()[-1]
        for key in ("f2 Contents", "f3 Previous", "f4 Next", "f5 Run", "f9 Reset", "PgDn Page"):
            assert key in footer, footer
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        footer = screen_text(app).splitlines()[-1]
        for key in ("f2 Contents", "f3 Previous", "f4 Next", "f5 Run", "f6 Check", "f7 Hint",
                    "f8 Solution", "f9 Reset"):
            assert key in footer, footer
