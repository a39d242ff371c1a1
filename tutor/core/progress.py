"""The learner's progress and drafts, kept in one SQLite file under the data directory.

Why SQLite in WAL mode, one statement per transaction: a learner quits by closing the terminal
as often as by pressing a key, so every write must be durable the moment it returns, and a
second tutor open on the same data must not corrupt it. Why a schema version (SQLite's own
``PRAGMA user_version``): the file outlives the program that wrote it; an older tutor meeting a
newer file must leave it alone, and a file that is not a database at all must be set aside
(never deleted) with a message the learner can act on. Nothing here knows about Textual or torch.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, Iterator

if TYPE_CHECKING:
    from tutor.core.models import Pack

SCHEMA_VERSION = 2
FILE_NAME = "progress.sqlite3"
LOCK_NAME = "app.lock"


def _lock_exclusively(handle: IO[str]) -> None:
    """An exclusive lock on ``handle`` that the OS drops when this process dies, or OSError when
    another process holds it: flock on POSIX; on Windows, msvcrt's lock on the file's first byte
    (by design, untested: README, "Where it runs"). Where neither exists, no lock is taken."""
    try:
        import fcntl
    except ImportError:
        try:
            import msvcrt
        except ImportError:
            return
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        return
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
#: Seconds to wait for another program that holds the file before calling it busy.
BUSY_WAIT = 5.0
#: The lesson part of the key under which a review's own answers, hints and scratch draft are
#: kept (``review:<token>:<lesson>``), apart from the lesson's: a lesson id cannot contain ':'.
REVIEW_SCRATCH = "review:"
#: An idle learner should not look like one who studied for hours: one visit counts at most this.
MAX_SECONDS_PER_VISIT = 15 * 60

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS position (
    pack TEXT PRIMARY KEY, lesson TEXT NOT NULL, step TEXT NOT NULL, updated REAL NOT NULL);
CREATE TABLE IF NOT EXISTS steps (
    pack TEXT NOT NULL, lesson TEXT NOT NULL, step TEXT NOT NULL,
    first_seen REAL NOT NULL, last_seen REAL NOT NULL, seconds REAL NOT NULL DEFAULT 0,
    solved_at REAL, hints_used INTEGER NOT NULL DEFAULT 0, solution_seen INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (pack, lesson, step));
CREATE TABLE IF NOT EXISTS drafts (
    pack TEXT NOT NULL, lesson TEXT NOT NULL, step TEXT NOT NULL,
    code TEXT NOT NULL, updated REAL NOT NULL, PRIMARY KEY (pack, lesson, step));
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT, pack TEXT NOT NULL, lesson TEXT NOT NULL, step TEXT NOT NULL,
    kind TEXT NOT NULL, passed INTEGER, checks_passed INTEGER, checks_total INTEGER,
    wall_time REAL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS solutions (
    pack TEXT NOT NULL, lesson TEXT NOT NULL, step TEXT NOT NULL,
    code TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (pack, lesson, step));
CREATE TABLE IF NOT EXISTS quiz (
    pack TEXT NOT NULL, lesson TEXT NOT NULL, step TEXT NOT NULL,
    answer TEXT NOT NULL, correct INTEGER, tries INTEGER NOT NULL DEFAULT 1, at REAL NOT NULL,
    PRIMARY KEY (pack, lesson, step));
""" + """
CREATE TABLE IF NOT EXISTS cards (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    pack TEXT NOT NULL, lesson TEXT NOT NULL, step TEXT NOT NULL,
    kind TEXT, content TEXT, generation INTEGER NOT NULL DEFAULT 0,
    state INTEGER NOT NULL DEFAULT 1, fsrs_step INTEGER DEFAULT 0, stability REAL, difficulty REAL,
    due REAL NOT NULL, last_review REAL, retired REAL, created REAL NOT NULL, notice TEXT,
    UNIQUE (pack, lesson, step));
CREATE TABLE IF NOT EXISTS reviews (
    id INTEGER PRIMARY KEY AUTOINCREMENT, card INTEGER NOT NULL, generation INTEGER NOT NULL,
    pack TEXT NOT NULL, lesson TEXT NOT NULL, step TEXT NOT NULL,
    rating INTEGER NOT NULL, at REAL NOT NULL, duration_ms INTEGER, source TEXT NOT NULL,
    first INTEGER NOT NULL DEFAULT 0, retrievability REAL);
"""
_TABLES = ("position", "steps", "drafts", "attempts", "solutions", "quiz", "cards", "reviews")

#: The columns of a card row, in the order :meth:`ProgressStore.card` returns them.
CARD_COLUMNS = ("id", "pack", "lesson", "step", "kind", "content", "generation", "state", "fsrs_step",
                "stability", "difficulty", "due", "last_review", "retired", "created", "notice")


@dataclass
class StepProgress:
    """Everything recorded about one step."""

    seen: bool = False
    seconds: float = 0.0
    solved: bool = False
    hints_used: int = 0
    solution_seen: bool = False
    checks: int = 0
    failed_checks: int = 0
    runs: int = 0
    quiz_answer: str | None = None
    quiz_correct: bool | None = None
    draft: bool = False


@dataclass
class LessonSummary:
    lesson: str
    state: str  # "done", "progress" or "new"
    steps_seen: int
    steps: int
    exercises_solved: int
    exercises: int
    quiz_correct: int
    quiz_answered: int
    quizzes: int
    seconds: float


@dataclass
class PackSummary:
    pack: str
    lessons: list[LessonSummary] = field(default_factory=list)
    position: tuple[str, str] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"pack": self.pack, "position": list(self.position) if self.position else None,
                "lessons": [vars(lesson) for lesson in self.lessons]}


class ProgressStore:
    """Reads and writes progress; build one with :meth:`open` (or :meth:`in_memory` for tests).

    ``notice`` is a sentence for the learner when opening needed a rescue (corrupt, newer, busy
    or read-only file); ``persistent`` is False when this session's progress will not reach the
    disk. Writes never raise: a write the disk refuses (full, read-only, locked) is kept in
    memory where it matters (drafts, see :meth:`save_draft`), ``write_error`` says why, and the
    next write tries again.
    """

    def __init__(self, conn: sqlite3.Connection, path: Path | None, *, notice: str | None = None):
        self._conn = conn
        self.path = path
        self.notice = notice
        self.backup: Path | None = None
        #: Why the last write failed (None once a write succeeds again).
        self.write_error: str | None = None
        #: Drafts the disk refused, by key: read back by :meth:`draft`, written by the next write.
        self.unsaved: dict[tuple[str, str, str], str | None] = {}
        #: Seconds since the epoch, for review cards; tests replace it to control the clock.
        self.clock: Callable[[], float] = time.time
        #: Called as ``listener(event, (pack, lesson, step), details)`` after each recorded answer,
        #: hint, solution view or check; the review screen listens to its scratch keys.
        self.listeners: list[Callable[[str, tuple[str, str, str], dict[str, Any]], None]] = []
        self._lock_file: Any = None
        self._retrying = False
        self._failed_at = 0.0

    @property
    def persistent(self) -> bool:
        return self.path is not None

    # ------------------------------------------------------------------ opening

    @classmethod
    def in_memory(cls) -> "ProgressStore":
        conn = _connect(":memory:")
        _create(conn)
        return cls(conn, None)

    @classmethod
    def open(cls, data_dir: Path, *, wait: float = BUSY_WAIT) -> "ProgressStore":
        """Open (or create) the store in ``data_dir``; never raises for a bad file or folder.

        Only a file that is not a readable database (corrupt, foreign) is renamed aside and a
        fresh store started. A file that is healthy but cannot be written now (held by another
        program for ``wait`` seconds, a read-only folder, a full disk) is read into memory and
        left untouched; a file from a newer tutor is copied aside once and left untouched. In
        those cases this session runs on the in-memory copy and ``notice`` says so.
        """
        from tutor.core.i18n import t

        path = data_dir / FILE_NAME
        try:
            data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return cls._in_memory_copy(path, t("progress.unwritable", folder=data_dir, reason=_reason(exc)))
        conn = None
        try:
            conn = _connect(str(path), timeout=wait)
            found = _check(conn)
        except sqlite3.DatabaseError as exc:
            _close_quietly(conn)
            if _kind(exc) != "corrupt":
                return cls._in_memory_copy(path, _unavailable(exc, path))
            try:
                backup = _set_aside(path, "corrupt")
            except OSError as move:
                return cls._in_memory_copy(path, t("progress.corrupt.stuck", reason=str(exc), error=_reason(move)),
                                           copy=False)
            conn = _connect(str(path), timeout=wait)
            _create(conn)
            store = cls(conn, path, notice=t("progress.corrupt", reason=str(exc), backup=backup))
            store.backup = backup
            return store
        if found is not None and found > SCHEMA_VERSION:
            conn.close()
            copied = _newer_backup(path, found)
            store = cls.in_memory()
            store.notice = t("progress.newer", found=found, known=SCHEMA_VERSION, backup=copied)
            store.backup = copied if isinstance(copied, Path) else None
            return store
        try:
            _create(conn, found)
        except sqlite3.DatabaseError as exc:
            _close_quietly(conn)
            return cls._in_memory_copy(path, _unavailable(exc, path))
        return cls(conn, path)

    @classmethod
    def _in_memory_copy(cls, path: Path, notice: str, *, copy: bool = True) -> "ProgressStore":
        """A session store in memory holding what ``path`` has (read without writing to it)."""
        conn = _connect(":memory:")
        if copy and path.exists():
            for uri in (f"file:{path}?mode=ro", f"file:{path}?immutable=1"):
                source = None
                try:
                    source = sqlite3.connect(uri, uri=True, timeout=1.0)
                    # A read first: it gives up after the timeout, where backup() would retry a
                    # locked source for ever.
                    source.execute("BEGIN")
                    source.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
                    source.execute("COMMIT")
                    source.backup(conn)
                    break
                except sqlite3.Error:
                    conn.close()
                    conn = _connect(":memory:")
                finally:
                    _close_quietly(source)
        try:
            found = _check(conn)
            if found is not None and found <= SCHEMA_VERSION:
                _create(conn, found)
            else:
                raise sqlite3.DatabaseError("unusable")
        except sqlite3.DatabaseError:
            conn.close()
            conn = _connect(":memory:")
            _create(conn)
        return cls(conn, None, notice=notice)

    def claim(self) -> str | None:
        """Mark this data folder as in use by this app; a sentence if another app already is.

        Both keep saving (SQLite keeps each write whole), but for a step open in both, the last
        one to save wins: the learner is told, instead of it happening silently.
        """
        if self.path is None:
            return None
        from tutor.core.i18n import t

        lock = self.path.with_name(LOCK_NAME)
        try:
            handle = open(lock, "a+")
        except OSError:
            return None
        try:
            _lock_exclusively(handle)
        except OSError:
            handle.seek(0)
            other = handle.read().strip() or "?"
            handle.close()
            message = t("progress.shared", pid=other)
            self.notice = f"{self.notice} {message}" if self.notice else message
            return message
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self._lock_file = handle
        return None

    def close(self) -> None:
        self.retry_unsaved()
        _close_quietly(self._conn)
        if self._lock_file is not None:
            try:
                self._lock_file.close()
            except OSError:
                pass
            self._lock_file = None

    # ------------------------------------------------------------------ position

    def set_position(self, pack: str, lesson: str, step: str) -> None:
        self._exec("INSERT INTO position VALUES (?,?,?,?) ON CONFLICT(pack) DO UPDATE SET "
                   "lesson=excluded.lesson, step=excluded.step, updated=excluded.updated",
                   (pack, lesson, step, time.time()))

    def position(self, pack: str) -> tuple[str, str] | None:
        row = self._one("SELECT lesson, step FROM position WHERE pack=?", (pack,))
        return (str(row[0]), str(row[1])) if row else None

    def last_pack(self) -> str | None:
        row = self._one("SELECT pack FROM position ORDER BY updated DESC LIMIT 1", ())
        return row[0] if row else None

    # ------------------------------------------------------------------ preferences

    def preference(self, name: str) -> str | None:
        """A choice made in the app (e.g. the theme), kept with the progress it belongs to."""
        row = self._one("SELECT value FROM meta WHERE key=?", (f"pref.{name}",))
        return row[0] if row else None

    def set_preference(self, name: str, value: str) -> None:
        self._exec("INSERT INTO meta VALUES (?,?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                   (f"pref.{name}", value))

    # ------------------------------------------------------------------ steps

    def visit(self, pack: str, lesson: str, step: str, seconds: float = 0.0) -> None:
        """Mark a step seen; ``seconds`` (capped) is the time just spent on it."""
        now = time.time()
        seconds = max(0.0, min(seconds, MAX_SECONDS_PER_VISIT))
        self._exec("INSERT INTO steps (pack, lesson, step, first_seen, last_seen, seconds) VALUES (?,?,?,?,?,?) "
                   "ON CONFLICT DO UPDATE SET last_seen=excluded.last_seen, seconds=seconds+excluded.seconds",
                   (pack, lesson, step, now, now, seconds))

    def mark_solved(self, pack: str, lesson: str, step: str) -> None:
        self.visit(pack, lesson, step)
        self._exec("UPDATE steps SET solved_at=COALESCE(solved_at, ?) WHERE pack=? AND lesson=? AND step=?",
                   (time.time(), pack, lesson, step))

    def use_hint(self, pack: str, lesson: str, step: str) -> int:
        """Count one more hint shown; returns how many this step has used."""
        self.visit(pack, lesson, step)
        self._exec("UPDATE steps SET hints_used=hints_used+1 WHERE pack=? AND lesson=? AND step=?",
                   (pack, lesson, step))
        used = self.step(pack, lesson, step).hints_used
        self._tell("hint", (pack, lesson, step), hints=used)
        return used

    def mark_solution_seen(self, pack: str, lesson: str, step: str) -> None:
        solved = self.step(pack, lesson, step).solved
        self.visit(pack, lesson, step)
        self._exec("UPDATE steps SET solution_seen=1 WHERE pack=? AND lesson=? AND step=?", (pack, lesson, step))
        if not solved:  # seen before solving: the first meeting is rated Again
            self._met((pack, lesson, step), "exercise", 1)
        self._tell("solution", (pack, lesson, step), solved=solved)

    def record_attempt(self, pack: str, lesson: str, step: str, kind: str, *, passed: bool | None = None,
                       checks_passed: int | None = None, checks_total: int | None = None,
                       wall_time: float | None = None, code: str | None = None) -> None:
        """One Run or Check; a passing Check also marks the step solved and keeps its ``code``
        (what `torch-tutor handin` hands in, whatever the learner typed afterwards)."""
        self._exec("INSERT INTO attempts (pack, lesson, step, kind, passed, checks_passed, checks_total, "
                   "wall_time, at) VALUES (?,?,?,?,?,?,?,?,?)",
                   (pack, lesson, step, kind, None if passed is None else int(passed), checks_passed,
                    checks_total, wall_time, time.time()))
        if kind == "check" and passed:
            self.mark_solved(pack, lesson, step)
            if code is not None:
                self._exec("INSERT INTO solutions VALUES (?,?,?,?,?) ON CONFLICT DO UPDATE SET "
                           "code=excluded.code, at=excluded.at", (pack, lesson, step, code, time.time()))
            progress = self.step(pack, lesson, step)
            # Solved without hints: Good; with hints: Hard; after seeing the solution: Again.
            self._met((pack, lesson, step), "exercise",
                      1 if progress.solution_seen else 2 if progress.hints_used else 3)
        if kind == "check":
            self._tell("check", (pack, lesson, step), passed=bool(passed))

    def solved_code(self, pack: str, lesson: str, step: str) -> str | None:
        """The code of the last Check that passed, if any."""
        row = self._one("SELECT code FROM solutions WHERE pack=? AND lesson=? AND step=?", (pack, lesson, step))
        return row[0] if row else None

    def record_quiz(self, pack: str, lesson: str, step: str, answer: str, correct: bool | None) -> None:
        self.visit(pack, lesson, step)
        self._exec("INSERT INTO quiz VALUES (?,?,?,?,?,1,?) ON CONFLICT DO UPDATE SET answer=excluded.answer, "
                   "correct=excluded.correct, tries=tries+1, at=excluded.at",
                   (pack, lesson, step, answer, None if correct is None else int(correct), time.time()))
        if correct is not None:  # the first graded answer in the lesson is the card's first review
            self._met((pack, lesson, step), "quiz", 3 if correct else 1)
        row = self._one("SELECT tries FROM quiz WHERE pack=? AND lesson=? AND step=?", (pack, lesson, step))
        self._tell("quiz", (pack, lesson, step), correct=correct, tries=_int(row[0], 1) if row else 1)

    def step(self, pack: str, lesson: str, step: str) -> StepProgress:
        return self.steps(pack).get((lesson, step), StepProgress())

    def steps(self, pack: str) -> dict[tuple[str, str], StepProgress]:
        """Every recorded step of a pack, keyed by (lesson, step).

        Values of the wrong type (a hand-edited or damaged file) read as nothing recorded,
        never as a crash.
        """
        out: dict[tuple[str, str], StepProgress] = {}

        def get(lesson: str, step: str) -> StepProgress:
            return out.setdefault((str(lesson), str(step)), StepProgress())

        for lesson, step, seconds, solved_at, hints, solution in self._all(
                "SELECT lesson, step, seconds, solved_at, hints_used, solution_seen FROM steps WHERE pack=?", (pack,)):
            entry = get(lesson, step)
            entry.seen, entry.seconds, entry.solved = True, _float(seconds), solved_at is not None
            entry.hints_used, entry.solution_seen = _int(hints), bool(_int(solution))
        for lesson, step, kind, count, failed in self._all(
                "SELECT lesson, step, kind, COUNT(*), SUM(passed=0) FROM attempts WHERE pack=? "
                "GROUP BY lesson, step, kind", (pack,)):
            entry = get(lesson, step)
            if kind == "check":
                entry.checks, entry.failed_checks = _int(count), _int(failed)
            else:
                entry.runs += _int(count)
        for lesson, step, answer, correct in self._all(
                "SELECT lesson, step, answer, correct FROM quiz WHERE pack=?", (pack,)):
            entry = get(lesson, step)
            entry.quiz_answer = None if answer is None else str(answer)
            entry.quiz_correct = None if correct is None or _int(correct, -1) not in (0, 1) else bool(correct)
        for lesson, step in self._all("SELECT lesson, step FROM drafts WHERE pack=?", (pack,)):
            get(lesson, step).draft = True
        for (p, lesson, step), code in self.unsaved.items():
            if p == pack and code is not None:
                get(lesson, step).draft = True
        return out

    # ------------------------------------------------------------------ drafts

    def save_draft(self, pack: str, lesson: str, step: str, code: str) -> bool:
        """Keep the learner's code; False when the disk refused it (it is then kept in memory,
        :meth:`draft` returns it, and every later write tries again)."""
        self.unsaved[(pack, lesson, step)] = code
        return self.retry_unsaved()

    def draft(self, pack: str, lesson: str, step: str) -> str | None:
        if (pack, lesson, step) in self.unsaved:
            return self.unsaved[(pack, lesson, step)]
        row = self._one("SELECT code FROM drafts WHERE pack=? AND lesson=? AND step=?", (pack, lesson, step))
        return None if row is None or row[0] is None else str(row[0])

    def clear_draft(self, pack: str, lesson: str, step: str) -> None:
        self.unsaved[(pack, lesson, step)] = None
        self.retry_unsaved()

    def retry_unsaved(self, *, every: float = 0.0) -> bool:
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
                    ok = self._exec("DELETE FROM drafts WHERE pack=? AND lesson=? AND step=?", key)
                else:
                    ok = self._exec("INSERT INTO drafts VALUES (?,?,?,?,?) ON CONFLICT DO UPDATE SET "
                                    "code=excluded.code, updated=excluded.updated", (*key, code, time.time()))
                if not ok:
                    self._failed_at = time.monotonic()
                    return False
                if key in self.unsaved and self.unsaved[key] == code:
                    del self.unsaved[key]
            return True
        finally:
            self._retrying = False

    # ------------------------------------------------------------------ review cards (see tutor.core.review)

    def scratch_key(self, pack: str, lesson: str, step: str) -> tuple[str, str, str]:
        """Where the coming review of an item keeps its own answers, hints and draft, apart from
        the lesson's: one key per review (``review:<last review>:<lesson>``), so a review left
        unfinished resumes where it was, and the next one starts afresh."""
        card = self.card(pack, lesson, step)
        token = _int(card["last_review"]) if card is not None and card["last_review"] is not None else 0
        return pack, f"{REVIEW_SCRATCH}{token}:{lesson}", step

    def clear_scratch(self, pack: str, lesson: str, step: str, *, keep: str | None = None) -> None:
        """Forget the answers, hints and drafts of an item's earlier, finished reviews (all but
        the scratch lesson ``keep``); the lesson's own rows are not touched."""
        suffix = ":" + lesson
        for table in ("steps", "drafts", "attempts", "solutions", "quiz"):
            self._exec(f"DELETE FROM {table} WHERE pack=? AND step=? AND lesson LIKE 'review:%' "
                       "AND substr(lesson, ?) = ? AND lesson != ?", (pack, step, -len(suffix), suffix, keep or ""))
        for key in [k for k in self.unsaved if k[0] == pack and k[2] == step and k[1] != keep
                    and k[1].startswith(REVIEW_SCRATCH) and k[1].endswith(suffix)]:
            del self.unsaved[key]

    def _met(self, key: tuple[str, str, str], kind: str, rating: int) -> None:
        """The first graded meeting of an item in its lesson is its card's first review."""
        if key[1].startswith(REVIEW_SCRATCH):
            return
        if self.card(*key) is not None:
            return
        from tutor.core.review import first_review

        first_review(self, key, kind, rating)

    def _tell(self, event: str, key: tuple[str, str, str], **details: Any) -> None:
        for listener in list(self.listeners):
            try:
                listener(event, key, details)
            except Exception as exc:  # what was recorded stays recorded; the listener's bug is shown
                import sys

                print(f"torch-tutor: a progress listener failed: {type(exc).__name__}: {exc}", file=sys.stderr)

    def card(self, pack: str, lesson: str, step: str) -> dict[str, Any] | None:
        row = self._one(f"SELECT {', '.join(CARD_COLUMNS)} FROM cards WHERE pack=? AND lesson=? AND step=?",
                        (pack, lesson, step))
        return dict(zip(CARD_COLUMNS, row)) if row else None

    def cards(self, packs: list[str] | None = None, *, retired: bool = False) -> list[dict[str, Any]]:
        """Every card (of ``packs``), live ones only unless ``retired``."""
        where = [] if retired else ["retired IS NULL"]
        params: tuple[Any, ...] = ()
        if packs is not None:
            where.append(f"pack IN ({','.join('?' * len(packs))})")
            params = tuple(packs)
        sql = f"SELECT {', '.join(CARD_COLUMNS)} FROM cards"
        if where:
            sql += " WHERE " + " AND ".join(where)
        return [dict(zip(CARD_COLUMNS, row)) for row in self._all(sql + " ORDER BY due, id", params)]

    def put_card(self, card: dict[str, Any]) -> bool:
        """Insert or update a card (keyed by pack, lesson, step); False if the disk refused it."""
        columns = [c for c in CARD_COLUMNS if c != "id"]
        updates = ", ".join(f"{c}=excluded.{c}" for c in columns if c not in ("pack", "lesson", "step", "created"))
        return self._exec(f"INSERT INTO cards ({', '.join(columns)}) VALUES ({','.join('?' * len(columns))}) "
                          f"ON CONFLICT(pack, lesson, step) DO UPDATE SET {updates}",
                          tuple(card.get(c) for c in columns))

    def log_review(self, card: dict[str, Any], rating: int, at: float, *, source: str, first: bool,
                   duration_ms: int | None = None, retrievability: float | None = None) -> bool:
        return self._exec("INSERT INTO reviews (card, generation, pack, lesson, step, rating, at, duration_ms, "
                          "source, first, retrievability) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                          (card["id"], card["generation"], card["pack"], card["lesson"], card["step"], rating,
                           at, duration_ms, source, int(first), retrievability))

    def reviews(self, packs: list[str] | None = None, *, since: float | None = None) -> list[dict[str, Any]]:
        columns = ("card", "generation", "pack", "lesson", "step", "rating", "at", "duration_ms", "source",
                   "first", "retrievability")
        where: list[str] = []
        params: list[str | float] = []
        if packs is not None:
            where.append(f"pack IN ({','.join('?' * len(packs))})")
            params += list(packs)
        if since is not None:
            where.append("at >= ?")
            params.append(since)
        sql = f"SELECT {', '.join(columns)} FROM reviews" + (" WHERE " + " AND ".join(where) if where else "")
        return [dict(zip(columns, row)) for row in self._all(sql + " ORDER BY at, id", tuple(params))]

    def due_counts(self, packs: list[str], now: float, new_per_day: int) -> tuple[int, int]:
        """(cards due now, new cards allowed in today) among the live cards of ``packs``.

        Plain SQL, so the status bar and the contents can show it without loading the scheduler.
        """
        if not packs:
            return 0, 0
        marks = ",".join("?" * len(packs))
        row = self._one(f"SELECT SUM(last_review IS NOT NULL AND due <= ?), SUM(last_review IS NULL) FROM cards "
                        f"WHERE retired IS NULL AND pack IN ({marks})", (now, *packs))
        due, new = (_int(row[0]), _int(row[1])) if row else (0, 0)
        return due, min(new, self.new_allowance(now, new_per_day))

    def new_allowance(self, now: float, new_per_day: int) -> int:
        """How many new cards may still be introduced on ``now``'s (local) day."""
        start = day_start(now)
        row = self._one("SELECT COUNT(*) FROM reviews WHERE first=1 AND source='review' AND at >= ? AND at < ?",
                        (start, start + 86400))
        return max(0, new_per_day - (_int(row[0]) if row else 0))

    # ------------------------------------------------------------------ whole-store views

    def packs(self) -> list[str]:
        rows = self._all(" UNION ".join(f"SELECT DISTINCT pack FROM {table}" for table in _TABLES), ())
        return sorted(str(row[0]) for row in rows)

    def reset(self, pack: str | None = None, step: str | None = None, lesson: str | None = None) -> int:
        """Forget progress: everything, one pack, or one step of a pack (its review card and the
        review's scratch answers too). Returns rows removed."""
        where, params = "", tuple[str | int, ...]()
        if pack is not None:
            where, params = " WHERE pack=?", (pack,)
            if step is not None:
                where += " AND step=?"
                params += (step,)
                if lesson is not None:  # the lesson's rows and its reviews' scratch rows
                    where += " AND (lesson=? OR (lesson LIKE 'review:%' AND substr(lesson, ?) = ?))"
                    params += (lesson, -len(lesson) - 1, ":" + lesson)
        removed = 0
        with self._conn:
            for table in _TABLES:
                if table == "position" and step is not None:
                    continue
                removed += self._conn.execute(f"DELETE FROM {table}{where}", params).rowcount
        for key in [k for k in self.unsaved if pack is None or (k[0] == pack and (step is None or k[2] == step))]:
            del self.unsaved[key]
        return removed

    def summarize(self, pack: "Pack") -> PackSummary:
        from tutor.core.models import ChoiceQuiz, Exercise, FreeQuiz, PredictQuiz

        recorded = self.steps(pack.id)
        summary = PackSummary(pack.id, position=self.position(pack.id))
        for lesson in pack.lessons:
            entries = [(s, recorded.get((lesson.id, s.id), StepProgress())) for s in lesson.steps]
            exercises = [e for s, e in entries if isinstance(s, Exercise)]
            quizzes = [e for s, e in entries if isinstance(s, (FreeQuiz, ChoiceQuiz, PredictQuiz))]
            seen = sum(e.seen for _, e in entries)
            solved = sum(e.solved for e in exercises)
            answered = [e for e in quizzes if e.quiz_answer is not None]
            if seen == len(entries) and solved == len(exercises):
                state = "done"
            elif seen or any(e.draft for _, e in entries):
                state = "progress"
            else:
                state = "new"
            summary.lessons.append(LessonSummary(
                lesson=lesson.id, state=state, steps_seen=seen, steps=len(entries),
                exercises_solved=solved, exercises=len(exercises),
                quiz_correct=sum(bool(e.quiz_correct) for e in answered), quiz_answered=len(answered),
                quizzes=len(quizzes), seconds=round(sum(e.seconds for _, e in entries), 1)))
        return summary

    # ------------------------------------------------------------------ plumbing

    def _exec(self, sql: str, params: tuple[Any, ...]) -> bool:
        """Run one write; False (and ``write_error``) when the disk refused it, never an exception."""
        try:
            self._conn.execute(sql, params)
        except sqlite3.OperationalError as exc:
            from tutor.core.i18n import t

            self.write_error = t(f"progress.write.{_kind(exc)}", reason=str(exc))
            return False
        if self.write_error is not None:
            self.write_error = None
            if self.unsaved and not self._retrying:
                self.retry_unsaved()
        return True

    def _one(self, sql: str, params: tuple[Any, ...]) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self._conn.execute(sql, params).fetchone()
        return row

    def _all(self, sql: str, params: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
        return iter(self._conn.execute(sql, params).fetchall())


def day_start(now: float) -> float:
    """The epoch second at which ``now``'s local day began."""
    local = time.localtime(now)
    return time.mktime((local.tm_year, local.tm_mon, local.tm_mday, 0, 0, 0, 0, 0, -1))


def _float(value: Any, default: float = 0.0) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    return number if number == number and abs(number) != float("inf") else default


def _int(value: Any, default: int = 0) -> int:
    if isinstance(value, int):
        return value
    try:
        return int(float(value))
    except (TypeError, ValueError, OverflowError):
        return default


def _connect(target: str, timeout: float = BUSY_WAIT) -> sqlite3.Connection:
    # isolation_level=None: autocommit, so each write is durable when it returns.
    # check_same_thread=False: the app may write from a worker thread; SQLite serialises access.
    conn = sqlite3.connect(target, isolation_level=None, check_same_thread=False, timeout=timeout)
    return conn


class NotProgress(sqlite3.DatabaseError):
    """The file is a database, but not a usable torch-tutor progress file: set it aside."""


def _kind(exc: BaseException) -> str:
    """What a SQLite error means for the learner's file: corrupt (set aside), busy (another
    program holds it), readonly (cannot be written here), full (no space), or io."""
    if isinstance(exc, NotProgress):
        return "corrupt"
    name = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc).lower()
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text or "busy" in text:
        return "busy"
    if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")) or \
            "readonly" in text or "read-only" in text or "unable to open" in text:
        return "readonly"
    if name.startswith("SQLITE_FULL") or "full" in text:
        return "full"
    if name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")) or "not a database" in text or "malformed" in text:
        return "corrupt"
    if isinstance(exc, sqlite3.OperationalError):
        return "io"
    return "corrupt"


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _unavailable(exc: BaseException, path: Path) -> str:
    """The notice for a healthy file that cannot be used for writing this session."""
    from tutor.core.i18n import t

    kind = _kind(exc)
    key = {"busy": "progress.busy", "readonly": "progress.readonly", "full": "progress.full"}.get(kind, "progress.io")
    return t(key, path=path, reason=str(exc), seconds=f"{BUSY_WAIT:g}")


def _check(conn: sqlite3.Connection) -> int | None:
    """The schema version of an existing store (None when new); raises DatabaseError if unusable."""
    result = conn.execute("PRAGMA quick_check").fetchone()
    if result is None or result[0] != "ok":
        raise NotProgress(f"integrity check failed: {result[0] if result else 'no answer'}")
    found = _version(conn)
    if found is None or found <= SCHEMA_VERSION:
        mode = conn.execute("PRAGMA journal_mode").fetchone()
        if not mode or str(mode[0]).lower() != "wal":
            conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return found


def _version(conn: sqlite3.Connection) -> int | None:
    """The schema version: the file header's ``user_version``, or for a file written before the
    version was kept there (``user_version`` 0) the ``meta`` row. None for a new store (no
    tables); a database with tables but no ``meta`` table is someone else's, whatever its header
    says."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "meta" not in tables:
        if tables - {"sqlite_sequence"}:
            raise NotProgress("not a torch-tutor progress file (no schema version)")
        return None
    found = _user_version(conn)
    if found:
        return found
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    try:
        return int(row[0]) if row else None
    except (TypeError, ValueError):
        raise NotProgress(f"unreadable schema version {row[0]!r}") from None


def _user_version(conn: sqlite3.Connection) -> int:
    """The schema version in the file's header (0 until this tutor's first write)."""
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0]) if row else 0


def _create(conn: sqlite3.Connection, found: int | None = None) -> None:
    """Create the tables (a new store) or bring an older one up to this version, in one
    transaction: a migration is either all there or not at all, and every row is kept."""
    if found == SCHEMA_VERSION and _user_version(conn) == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        if found is not None and found < 2:
            _seed_cards(conn)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION:d}")  # in the transaction: undone with it
        # Tutors from before user_version read only this row: it keeps them off a newer file.
        conn.execute("INSERT INTO meta VALUES ('schema_version', ?) ON CONFLICT(key) DO UPDATE SET "
                     "value=excluded.value", (str(SCHEMA_VERSION),))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _seed_cards(conn: sqlite3.Connection) -> None:
    """Schema 1 -> 2: every quiz item answered and every exercise solved or whose solution was
    seen before review cards existed becomes a new card, due now (the daily cap for new cards
    spreads them out). Their kind and content are filled in when their pack is next read."""
    now = time.time()
    conn.execute("INSERT OR IGNORE INTO cards (pack, lesson, step, state, fsrs_step, due, created) "
                 "SELECT pack, lesson, step, 1, 0, ?, ? FROM quiz WHERE lesson NOT LIKE 'review:%' "
                 "ORDER BY at", (now, now))
    conn.execute("INSERT OR IGNORE INTO cards (pack, lesson, step, kind, state, fsrs_step, due, created) "
                 "SELECT pack, lesson, step, 'exercise', 1, 0, ?, ? FROM steps "
                 "WHERE (solved_at IS NOT NULL OR solution_seen != 0) AND lesson NOT LIKE 'review:%' "
                 "ORDER BY first_seen", (now, now))


def _unique(path: Path) -> Path:
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.{n}")
    return candidate


def _newer_backup(path: Path, found: int) -> "Path | str":
    """A copy of a newer tutor's file, made once: a start that finds an identical copy reuses it."""
    base = path.with_name(f"{path.name}.v{found}-backup")
    size, data = path.stat().st_size, None
    candidate, n = base, 1
    while candidate.exists():
        try:
            if candidate.stat().st_size == size:
                data = path.read_bytes() if data is None else data
                if candidate.read_bytes() == data:
                    return candidate
        except OSError:
            pass
        n += 1
        candidate = base.with_name(f"{base.name}.{n}")
    try:
        shutil.copy2(path, candidate)
    except OSError as exc:
        return f"nowhere: it could not be copied ({_reason(exc)})"
    return candidate


def _set_aside(path: Path, why: str) -> Path:
    """Rename a bad store (and its WAL files) so nothing is lost and a fresh one can start."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup = _unique(path.with_name(f"{path.name}.{why}-{stamp}"))
    path.replace(backup)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.replace(backup.with_name(backup.name + suffix))
    return backup


def _close_quietly(conn: sqlite3.Connection | None) -> None:
    if conn is not None:
        try:
            conn.close()
        except sqlite3.Error:
            pass
