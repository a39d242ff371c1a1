"""Every step of the mini pack at the design size and at the small and large ends (issue 14)."""

from __future__ import annotations

import pytest

from app_support import screen_text, settle


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
