"""Shared by the app, snapshot and e2e tests: the mini pack, sizes, settings, screen text."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from tutor.settings.config import load_settings

MINI = Path(__file__).parent / "packs" / "mini"
SIZE = (100, 32)


def make_settings(data_dir: Path, **flags):
    """Settings that ignore the developer's own config file and TORCH_TUTOR_* variables."""
    return load_settings({"data_dir": str(data_dir), **flags}, config_file=data_dir / "none.toml", environ={})


def screen_text(app) -> str:
    """The whole terminal as text, the way Textual's own screenshot renders it."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", record=True, legacy_windows=False, safe_box=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens,
                                                        simplify=True))
    return console.export_text()


async def settle(pilot, times: int = 2) -> None:
    """Let mounts, timers and refreshes that a key press started finish."""
    for _ in range(times):
        await pilot.pause()


def terminal_bytes(app) -> str:
    """What the app would write to the real terminal for its whole screen right now."""
    update = app.screen._compositor.render_full_update()
    return update.render_segments(app.console)


def hostile(text: str) -> bool:
    """True when ``text`` (terminal output) carries an escape a stranger could abuse: any OSC
    (title, clipboard, hyperlink), BEL, or a C1 control. Textual's own output is CSI only."""
    return "\x1b]" in text or "\x07" in text or any("\x80" <= ch <= "\x9f" for ch in text)


async def wait_for_text(pilot, app, text: str, tries: int = 50) -> str:
    """The screen once it shows ``text`` (a new screen may take a few frames); the last screen else.
    Words wrapped onto the next line still count: the screen's runs of spaces and line ends read as
    one space."""
    screen = screen_text(app)
    wanted = " ".join(text.split())
    for _ in range(tries):
        if text in screen or wanted in " ".join(screen.split()):
            break
        await pilot.pause()
        await pilot.pause(0.02)
        screen = screen_text(app)
    return screen


def learner_store(data_dir: Path):
    """The progress store as the app keeps it: the app subscribes the first graded meeting of
    an item to its review card (the store itself schedules nothing), so what a test records
    here makes the cards the app would have made."""
    from tutor.record import spaced_review as review
    from tutor.record.progress import ProgressStore

    store = ProgressStore.open(data_dir)
    review.keep_first_meetings(store)
    return store


def key_event(char: str):
    """A key as the terminal's driver posts it to the app."""
    from textual import events

    names = {" ": "space", "(": "left_parenthesis", ")": "right_parenthesis", "\n": "enter", "\t": "tab"}
    return events.Key(names.get(char, char), char if char not in "\n\t" else None)


async def burst(app, text: str, gap: int) -> None:
    """``text`` posted key by key as a terminal's burst arrives: ``gap`` turns of the event loop
    between two keys (0: all queued at once)."""
    import asyncio

    for char in text:
        app.post_message(key_event(char))
        for _ in range(gap):
            await asyncio.sleep(0)
