"""One redraw of a screen's content at a time.

A screen that replaces its content (remove the old widgets, mount the new) must never have that
draw cancelled halfway, nor run two at once: a draw cancelled in the middle of its mount (as an
``exclusive`` worker is, when the next one starts) leaves widgets half mounted, and Textual then
waits on them for ever: the screen freezes (the review froze when its clock's poll asked for the
summary again while it was being drawn on a busy machine; the lesson froze when the language was
switched twice in a row). Draws asked for while one is under way wait their turn, in order."""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable

from textual.dom import DOMNode


class Draws:
    """The draws of one screen, one at a time, in the order asked for."""

    def __init__(self, owner: DOMNode, group: str):
        self._owner = owner
        self._group = group
        self._lock = asyncio.Lock()
        self._waiting = 0

    @property
    def busy(self) -> bool:
        """A draw is under way or waiting."""
        return self._lock.locked() or self._waiting > 0

    async def draw(self, make: Callable[[], Awaitable[None]]) -> None:
        """Run ``make()`` once every earlier draw has finished (``make`` is called then, so it
        draws the screen's state as it is by then)."""
        self._waiting += 1
        try:
            await self._lock.acquire()
        finally:
            self._waiting -= 1
        try:
            await make()
        finally:
            self._lock.release()

    def request(self, make: Callable[[], Awaitable[None]]) -> None:
        """:meth:`draw` from code that cannot wait: on a worker of the owner's."""
        self._owner.run_worker(self.draw(make), group=self._group)
