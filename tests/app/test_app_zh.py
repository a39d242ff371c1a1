"""The tutor in Chinese: chosen by flag, saved choice or locale; switched in the palette, every
screen redrawn at once (review too), kept for the next start (issue 29)."""

from __future__ import annotations

import re

import pytest

from app_support import screen_text, settle
from test_app_palette import _palette_entries

SMALL = (80, 24)
CJK = re.compile(r"[\u4e00-\u9fff]")


pytestmark = pytest.mark.usefixtures("no_locale")


async def _pick(pilot, app, typed: str) -> None:
    entries = await _palette_entries(pilot, app, typed)
    assert entries, typed
    await pilot.press("enter")
    await settle(pilot, 4)


async def test_language_zh_starts_the_contents_in_chinese(make_app):
    app = make_app(start_lesson=None, resume=False, language="zh")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        text = screen_text(app)
        for word in ("目录", "课程", "状态", "练习", "测验", "帮助", "退出"):
            assert word in text, text
        for english in ("Contents", "Lesson", "State", "Help", "Quit", "Filter lessons"):
            assert english not in text, (english, text)


async def test_the_system_locale_chooses_chinese(make_app, monkeypatch):
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    app = make_app(start_lesson=None, resume=False)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        assert app.language == "zh" and "目录" in screen_text(app)


async def test_a_flag_wins_over_the_locale(make_app, monkeypatch):
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    app = make_app(start_lesson=None, resume=False, language="en")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        assert app.language == "en" and "Contents" in screen_text(app)


async def test_the_palette_offers_the_tutors_languages_for_a_one_language_pack(make_app, mini_pack):
    """The mini pack has two languages; a pack with one must still list the tutor's two."""
    import dataclasses

    one = dataclasses.replace(mini_pack, languages=["en"])
    app = make_app(start_lesson=None, resume=False, pack=one)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        for typed in ("lang", "zh", "中文"):
            entries = " | ".join(await _palette_entries(pilot, app, typed))
            assert "中文 (zh)" in entries, (typed, entries)
            await pilot.press("escape")
            await settle(pilot)


async def test_switching_redraws_the_lesson_and_is_kept_for_the_next_start(make_app, tmp_path):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        before = screen_text(app)
        assert "Step " in before and "Check" in before, before
        await _pick(pilot, app, "中文")
        after = screen_text(app)
        assert app.language == "zh"
        assert "第 " in after and "检查" in after and "Check" not in after, after
        assert "帮助" in after and "Help" not in after, after  # the key bar too
    app = make_app(data_dir=tmp_path, start_lesson="exercises")  # the next start
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        assert app.language == "zh" and "检查" in screen_text(app)
    app = make_app(data_dir=tmp_path, start_lesson="exercises", language="en")  # a flag still wins
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        assert app.language == "en" and "Check" in screen_text(app)


async def test_switching_redraws_the_contents(make_app):
    app = make_app(start_lesson=None, resume=False)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        assert "Contents" in screen_text(app)
        await _pick(pilot, app, "中文")
        text = screen_text(app)
        for word in ("目录", "课程", "状态"):
            assert word in text, text
        assert "Lesson" not in text and "State" not in text, text
        await _pick(pilot, app, "English")
        text = screen_text(app)
        assert "Contents" in text and "Lesson" in text and not CJK.search(text.replace("中文", "")), text


async def test_help_lists_the_keys_in_chinese(make_app):
    app = make_app(start_lesson="exercises", language="zh")
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await settle(pilot, 3)
        text = screen_text(app)
        await pilot.press("end")  # the list's end (F1 says more about the editor since issue 52)
        await settle(pilot)
        text += screen_text(app)
        for word in ("按键", "运行", "检查", "剪切", "命令面板"):
            assert word in text, text
        for english in ("Cut", "Run", "Command palette"):
            assert english not in text, (english, text)


async def test_the_palette_speaks_chinese_textuals_own_commands_too(make_app):
    app = make_app(start_lesson="exercises", language="zh")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        entries = " | ".join(await _palette_entries(pilot, app))
        for word in ("运行", "检查", "配色主题", "帮助"):
            assert word in entries, entries
        for english in ("Screenshot", "Keys", "Toggle"):
            assert english not in entries, (english, entries)


async def test_switching_redraws_the_review_keeping_its_verdict(make_app):
    """A review item answered, then the language switched: the same item, its verdict and the
    key bar again in Chinese; the rating stays given (no second rating)."""
    from test_review_screen import DAY, T0, WHICH, _app, _open_review

    from tutor.record import spaced_review as review

    app = _app(make_app, start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        app.store.answers.record_quiz(*WHICH, "0", True)
        app.store.cards.clock.now = T0 + 3 * DAY
        screen = await _open_review(pilot, app)
        await pilot.press("enter")  # the right choice
        await settle(pilot)
        assert "Good: back in" in screen_text(app)
        reviews = len(app.store.cards.reviews())
        await _pick(pilot, app, "中文")
        await settle(pilot, 3)
        assert app.screen is screen
        text = screen_text(app)
        assert "复习 1/1" in text and "选择题" in text, text
        assert "评为“良好”：" in text and "天后再复习" in text, text
        assert "Good" not in text and "Review" not in text, text
        assert screen.rating == review.GOOD and len(app.store.cards.reviews()) == reviews
        await pilot.press("f4")  # on to the summary, in Chinese too
        await settle(pilot, 3)
        text = screen_text(app)
        assert "本轮结束" in text and "今天" in text, text
        await _pick(pilot, app, "English")
        text = screen_text(app)
        assert "Session over" in text and "today" in text, text


@pytest.mark.parametrize("width", [80, 64, 48, 36])
async def test_the_chinese_key_bar_fits_by_cells_and_keeps_every_name(make_app, width):
    """A CJK name is two cells a character: counted by characters the bar overflowed and its
    last keys were cut to a bare `f1`. Each key shown keeps its name; the line fits."""
    from rich.cells import cell_len

    from tutor.app.widgets.keyfooter import KeyFooter

    app = make_app(start_lesson="exercises", language="zh")
    async with app.run_test(size=(width, 24)) as pilot:
        await settle(pilot)
        footer = app.screen.query_one(KeyFooter)
        line = footer.render().plain
        assert cell_len(line) <= width, line
        entries = footer.layout_entries(width)
        assert entries and all(entry.name for entry in entries), entries
        for entry in entries:
            assert f"{entry.shown} {entry.name}" in line, (entry, line)
        assert "f6 检查" in line, line  # the step's own actions stay longest
        if width == 80:  # the step's keys all stay (^q and f1 go first: F1 lists them)
            assert all(key in line for key in ("f2 目录", "f3 上一步", "f4 下一步", "f9 重置")), line
        # a click on a drawn key presses that key (positions are cells, not characters)
        start = line.index(" f6 ")
        column = cell_len(line[:start]) + 2
        pressed = []
        app.simulate_key = pressed.append  # type: ignore[method-assign]
        await pilot.click(KeyFooter, offset=(column, 0))
        assert pressed == ["f6"], (pressed, line)


async def test_switching_again_while_the_lesson_is_redrawn_never_freezes_it(make_app):
    """Each switch redrew the step on a worker that cancelled the redraw under way: one cancelled
    in the middle of its mount left the lesson frozen (Textual's WaitForScreenTimeout, 30 s)."""
    app = make_app(start_lesson="exercises", language="en")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        for code in ("zh", "en", "zh", "en", "zh"):
            app.set_language(code)
            await pilot.pause(0)
        await settle(pilot, 4)
        text = screen_text(app)
        assert "第 " in text and "检查" in text and "Check" not in text, text
        assert len(app.screen.query("StepView")) == 1  # one step shown, not one per switch
        before = app.screen.place.moved(-1)
        await pilot.press("f3")  # and the lesson still moves
        await settle(pilot, 3)
        assert app.screen.place.key == before.key
        assert len(app.screen.query("StepView")) == 1
