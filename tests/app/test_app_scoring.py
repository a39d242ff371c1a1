"""An all-or-nothing exercise says so in its header (issue 51), in English and Chinese; a partial
one says nothing new."""

from __future__ import annotations

import shutil

from app_support import MINI, settle, screen_text
from tutor.pack.loader import load_pack


def _mini(tmp_path, scoring: str | None):
    folder = tmp_path / "mini"
    shutil.copytree(MINI, folder)
    if scoring is not None:
        (folder / "pack.yaml").write_text((folder / "pack.yaml").read_text() + f"scoring: {scoring}\n")
    return load_pack(folder)


async def test_the_exercise_header_says_all_or_nothing(make_app, tmp_path):
    app = make_app(start_lesson="exercises", pack=_mini(tmp_path, "all-or-nothing"))
    async with app.run_test(size=(110, 45)) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "All or nothing: this exercise earns its points only when every check passes." in text, text


async def test_the_header_says_it_in_chinese(make_app, tmp_path):
    app = make_app(start_lesson="exercises", pack=_mini(tmp_path, "all-or-nothing"), language="zh")
    async with app.run_test(size=(110, 45)) as pilot:
        await settle(pilot)
        assert "全有或全无：每项检查都通过，这个练习才得分。" in screen_text(app)


async def test_a_partial_exercise_adds_nothing(make_app, tmp_path):
    app = make_app(start_lesson="exercises", pack=_mini(tmp_path, "partial"))
    async with app.run_test(size=(110, 45)) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "Exercise id:" in text and "All or nothing" not in text, text
