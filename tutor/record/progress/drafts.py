"""The learner's code as they type it. A draft is never lost: one the disk refuses (the file
locked by another program, a full disk) is kept in memory, read back from there, and written by
the next write that succeeds, the next retry, or closing."""

from __future__ import annotations

import time
from typing import Callable

from tutor.record.progress.storage import Storage

Key = tuple[str, str, str]


class Drafts:
    def __init__(self, storage: Storage):
        self._storage = storage
        #: Drafts the disk refused, by key: read back by :meth:`get`, written by the next write
        #: (None: a deletion still to be written).
        self.unsaved: dict[Key, str | None] = {}
        self._retrying = False
        self._failed_at = 0.0
        storage.after_recovery.append(self._recovered)
        storage.before_close.append(self._closing)

    def save(self, pack: str, lesson: str, step: str, code: str) -> bool:
        """Keep the learner's code; False when the disk refused it (it is then kept in memory,
        :meth:`get` returns it, and every later write tries again)."""
        self.unsaved[(pack, lesson, step)] = code
        return self.retry()

    def get(self, pack: str, lesson: str, step: str) -> str | None:
        if (pack, lesson, step) in self.unsaved:
            return self.unsaved[(pack, lesson, step)]
        row = self._storage.one("SELECT code FROM drafts WHERE pack=? AND lesson=? AND step=?", (pack, lesson, step))
        return None if row is None or row[0] is None else str(row[0])

    def clear(self, pack: str, lesson: str, step: str) -> None:
        self.unsaved[(pack, lesson, step)] = None
        self.retry()

    def retry(self, *, every: float = 0.0) -> bool:
        """Write the drafts the disk refused before; True when none is left in memory only.

        ``every``: skip the attempt if the last failed one is more recent than this many seconds
        (a poller must not make the UI wait on a busy file twice a second)."""
        if self._retrying or not self.unsaved:
            return not self.unsaved
        if every and time.monotonic() - self._failed_at < every:
            return False
        self._retrying = True
        try:
            for key, code in list(self.unsaved.items()):
                if code is None:
                    ok = self._storage.write("DELETE FROM drafts WHERE pack=? AND lesson=? AND step=?", key)
                else:
                    ok = self._storage.write("INSERT INTO drafts VALUES (?,?,?,?,?) ON CONFLICT DO UPDATE SET "
                                             "code=excluded.code, updated=excluded.updated",
                                             (*key, code, time.time()))
                if not ok:
                    self._failed_at = time.monotonic()
                    return False
                if key in self.unsaved and self.unsaved[key] == code:
                    del self.unsaved[key]
            return True
        finally:
            self._retrying = False

    def forget(self, matches: Callable[[Key], bool]) -> None:
        """Drop the drafts kept in memory whose key ``matches`` (their rows were deleted)."""
        for key in [k for k in self.unsaved if matches(k)]:
            del self.unsaved[key]

    def _closing(self) -> None:
        self.retry()

    def _recovered(self) -> None:
        if self.unsaved and not self._retrying:
            self.retry()
