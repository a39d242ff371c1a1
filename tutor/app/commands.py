"""A screen's own commands in the command palette, through Textual's ``Screen.COMMANDS``.

A screen lists its commands (``SystemCommand``: title, help, callback) by defining a provider,
a subclass of :class:`ScreenCommands` whose :meth:`~ScreenCommands.commands` reads them off the
screen the palette was opened over; the palette shows them before anything is typed and finds
them by fuzzy match, like the app-wide ones.
"""

from __future__ import annotations

from typing import Iterable

from textual.app import SystemCommand
from textual.command import DiscoveryHit, Hit, Hits, Provider


class ScreenCommands(Provider):
    """Base of the screens' command providers."""

    def commands(self) -> Iterable[SystemCommand]:
        """The commands of ``self.screen`` now (a step shows only the actions it answers)."""
        raise NotImplementedError

    async def discover(self) -> Hits:
        for command in sorted(self.commands(), key=lambda c: c.title):
            if command.discover:
                yield DiscoveryHit(command.title, command.callback, help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self.commands():
            score = matcher.match(command.title)
            if score > 0:
                yield Hit(score, matcher.highlight(command.title), command.callback, help=command.help)
