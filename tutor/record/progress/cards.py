"""Review cards and the review log as rows (``cards``, ``reviews``); the rules and the scheduler
that fill them are :mod:`tutor.record.spaced_review`'s. Due counts are plain SQL here, so the status bar
and the contents show them without loading the scheduler."""

from __future__ import annotations

import time
from typing import Any, Callable

from tutor.record.progress.storage import Storage, read_int

#: The lesson part of the key under which a review's own answers, hints and scratch draft are
#: kept (``review:<token>:<lesson>``), apart from the lesson's: a lesson id cannot contain ':'.
REVIEW_SCRATCH = "review:"

#: The columns of a card row, in the order :meth:`Cards.get` returns them.
CARD_COLUMNS = ("id", "pack", "lesson", "step", "kind", "content", "generation", "state", "fsrs_step",
                "stability", "difficulty", "due", "last_review", "retired", "created", "notice")
REVIEW_COLUMNS = ("card", "generation", "pack", "lesson", "step", "rating", "at", "duration_ms", "source",
                  "first", "retrievability")


def day_start(now: float) -> float:
    """The epoch second at which ``now``'s local day began."""
    local = time.localtime(now)
    return time.mktime((local.tm_year, local.tm_mon, local.tm_mday, 0, 0, 0, 0, 0, -1))


class Cards:
    def __init__(self, storage: Storage):
        self._storage = storage
        #: Seconds since the epoch, for review cards; tests replace it to control the clock.
        self.clock: Callable[[], float] = time.time

    def get(self, pack: str, lesson: str, step: str) -> dict[str, Any] | None:
        row = self._storage.one(f"SELECT {', '.join(CARD_COLUMNS)} FROM cards WHERE pack=? AND lesson=? AND step=?",
                                (pack, lesson, step))
        return dict(zip(CARD_COLUMNS, row)) if row else None

    def all(self, packs: list[str] | None = None, *, retired: bool = False) -> list[dict[str, Any]]:
        """Every card (of ``packs``), live ones only unless ``retired``."""
        where = [] if retired else ["retired IS NULL"]
        params: tuple[Any, ...] = ()
        if packs is not None:
            where.append(f"pack IN ({','.join('?' * len(packs))})")
            params = tuple(packs)
        sql = f"SELECT {', '.join(CARD_COLUMNS)} FROM cards"
        if where:
            sql += " WHERE " + " AND ".join(where)
        return [dict(zip(CARD_COLUMNS, row)) for row in self._storage.rows(sql + " ORDER BY due, id", params)]

    def put(self, card: dict[str, Any]) -> bool:
        """Insert or update a card (keyed by pack, lesson, step); False if the disk refused it."""
        columns = [c for c in CARD_COLUMNS if c != "id"]
        updates = ", ".join(f"{c}=excluded.{c}" for c in columns if c not in ("pack", "lesson", "step", "created"))
        return self._storage.write(f"INSERT INTO cards ({', '.join(columns)}) VALUES ({','.join('?' * len(columns))}) "
                                   f"ON CONFLICT(pack, lesson, step) DO UPDATE SET {updates}",
                                   tuple(card.get(c) for c in columns))

    def log_review(self, card: dict[str, Any], rating: int, at: float, *, source: str, first: bool,
                   duration_ms: int | None = None, retrievability: float | None = None) -> bool:
        return self._storage.write(
            f"INSERT INTO reviews ({', '.join(REVIEW_COLUMNS)}) VALUES ({','.join('?' * len(REVIEW_COLUMNS))})",
            (card["id"], card["generation"], card["pack"], card["lesson"], card["step"], rating,
             at, duration_ms, source, int(first), retrievability))

    def reviews(self, packs: list[str] | None = None, *, since: float | None = None) -> list[dict[str, Any]]:
        where: list[str] = []
        params: list[str | float] = []
        if packs is not None:
            where.append(f"pack IN ({','.join('?' * len(packs))})")
            params += list(packs)
        if since is not None:
            where.append("at >= ?")
            params.append(since)
        sql = f"SELECT {', '.join(REVIEW_COLUMNS)} FROM reviews" + (" WHERE " + " AND ".join(where) if where else "")
        return [dict(zip(REVIEW_COLUMNS, row)) for row in self._storage.rows(sql + " ORDER BY at, id", tuple(params))]

    def due_counts(self, packs: list[str], now: float, new_per_day: int) -> tuple[int, int]:
        """(cards due now, new cards allowed in today) among the live cards of ``packs``.

        Plain SQL, so the status bar and the contents can show it without loading the scheduler.
        """
        if not packs:
            return 0, 0
        marks = ",".join("?" * len(packs))
        row = self._storage.one(f"SELECT SUM(last_review IS NOT NULL AND due <= ?), SUM(last_review IS NULL) "
                                f"FROM cards WHERE retired IS NULL AND pack IN ({marks})", (now, *packs))
        due, new = (read_int(row[0]), read_int(row[1])) if row else (0, 0)
        return due, min(new, self.new_allowance(now, new_per_day))

    def new_allowance(self, now: float, new_per_day: int) -> int:
        """How many new cards may still be introduced on ``now``'s (local) day."""
        start = day_start(now)
        row = self._storage.one("SELECT COUNT(*) FROM reviews WHERE first=1 AND source='review' AND at >= ? AND at < ?",
                                (start, start + 86400))
        return max(0, new_per_day - (read_int(row[0]) if row else 0))

    def scratch_key(self, pack: str, lesson: str, step: str) -> tuple[str, str, str]:
        """Where the coming review of an item keeps its own answers, hints and draft, apart from
        the lesson's: one key per review (``review:<last review>:<lesson>``), so a review left
        unfinished resumes where it was, and the next one starts afresh."""
        card = self.get(pack, lesson, step)
        token = read_int(card["last_review"]) if card is not None and card["last_review"] is not None else 0
        return pack, f"{REVIEW_SCRATCH}{token}:{lesson}", step
