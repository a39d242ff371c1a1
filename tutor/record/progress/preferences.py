"""Choices made in the app (the theme, the language, a shuffle's seed, fitted FSRS parameters),
kept with the progress they belong to."""

from __future__ import annotations

from tutor.record.progress.storage import Storage


class Preferences:
    def __init__(self, storage: Storage):
        self._storage = storage

    def get(self, name: str) -> str | None:
        row = self._storage.one("SELECT value FROM meta WHERE key=?", (f"pref.{name}",))
        return row[0] if row else None

    def set(self, name: str, value: str) -> None:
        self._storage.write("INSERT INTO meta VALUES (?,?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                            (f"pref.{name}", value))
