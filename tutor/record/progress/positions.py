"""Where the learner is: the step last open in each pack, and the pack last open."""

from __future__ import annotations

import time

from tutor.record.progress.storage import Storage


class Positions:
    def __init__(self, storage: Storage):
        self._storage = storage

    def set(self, pack: str, lesson: str, step: str) -> None:
        self._storage.write("INSERT INTO position VALUES (?,?,?,?) ON CONFLICT(pack) DO UPDATE SET "
                            "lesson=excluded.lesson, step=excluded.step, updated=excluded.updated",
                            (pack, lesson, step, time.time()))

    def get(self, pack: str) -> tuple[str, str] | None:
        """(lesson, step) last open in ``pack``."""
        row = self._storage.one("SELECT lesson, step FROM position WHERE pack=?", (pack,))
        return (str(row[0]), str(row[1])) if row else None

    def last_pack(self) -> str | None:
        row = self._storage.one("SELECT pack FROM position ORDER BY updated DESC LIMIT 1", ())
        return row[0] if row else None
