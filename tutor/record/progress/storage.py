"""The progress file itself: opening, crash recovery and migration of one SQLite file.

Why SQLite in WAL mode, one statement per transaction: a learner quits by closing the terminal
as often as by pressing a key, so every write must be durable the moment it returns, and a
second tutor open on the same data must not corrupt it. Why a schema version (SQLite's own
``PRAGMA user_version``): the file outlives the program that wrote it; an older tutor meeting a
newer file must leave it alone, and a file that is not a database at all must be set aside
(never deleted) with a message the learner can act on.

This module knows the tables but not what they mean: the parts beside it (positions, drafts,
steps and answers, preferences, cards) read and write them through :class:`Storage`. Nothing
here knows about Textual, torch or the review scheduler.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path
from typing import IO, Any, Callable, Iterator

SCHEMA_VERSION = 2
FILE_NAME = "progress.sqlite3"
LOCK_NAME = "app.lock"
#: Seconds to wait for another program that holds the file before calling it busy.
BUSY_WAIT = 5.0

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
TABLES = ("position", "steps", "drafts", "attempts", "solutions", "quiz", "cards", "reviews")


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


def read_float(value: Any, default: float = 0.0) -> float:
    """A number read from the file (which may be hand-edited or damaged): ``default`` for
    anything that is not a finite number."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    return number if number == number and abs(number) != float("inf") else default


def read_int(value: Any, default: int = 0) -> int:
    """A whole number read from the file: ``default`` for anything that is not one."""
    if isinstance(value, int):
        return value
    try:
        return int(float(value))
    except (TypeError, ValueError, OverflowError):
        return default


class Storage:
    """One open progress file; build one with :meth:`open` (or :meth:`in_memory` for tests).

    ``notice`` is a sentence for the learner when opening needed a rescue (corrupt, newer, busy
    or read-only file); ``persistent`` is False when this session's progress will not reach the
    disk. Writes never raise: :meth:`write` returns False when the disk refused it (full,
    read-only, locked), ``write_error`` says why, and the first write that succeeds again calls
    :attr:`after_recovery` (the drafts kept in memory are written then).
    """

    def __init__(self, conn: sqlite3.Connection, path: Path | None, *, notice: str | None = None):
        self._conn = conn
        self.path = path
        self.notice = notice
        self.backup: Path | None = None
        #: The sentence saying this open made the data folder private (also in ``notice``), for
        #: commands that print only that (``check``, ``handin``); None when nothing was repaired.
        self.repaired: str | None = None
        #: Why the last write failed (None once a write succeeds again).
        self.write_error: str | None = None
        #: Called after a write succeeds where the one before it failed.
        self.after_recovery: list[Callable[[], None]] = []
        #: Called by :meth:`close` before the file is closed (last writes).
        self.before_close: list[Callable[[], None]] = []
        self._lock_file: Any = None

    @property
    def persistent(self) -> bool:
        return self.path is not None

    # ------------------------------------------------------------------ opening

    @classmethod
    def in_memory(cls) -> "Storage":
        conn = _connect(":memory:")
        _create(conn)
        return cls(conn, None)

    @classmethod
    def open(cls, data_dir: Path, *, wait: float = BUSY_WAIT, config_dir: Path | None = None) -> "Storage":
        """Open (or create) the store in ``data_dir``; never raises for a bad file or folder.

        Only a file that is not a readable database (corrupt, foreign) is renamed aside and a
        fresh store started. A file that is healthy but cannot be written now (held by another
        program for ``wait`` seconds, a read-only folder, a full disk) is read into memory and
        left untouched; a file from a newer tutor is copied aside once and left untouched. In
        those cases this session runs on the in-memory copy and ``notice`` says so.

        The data folder is made 0700 and the file 0600 (``tutor.settings.private``); a data folder,
        a file in it, or ``config_dir`` that other users could read is made private first, and
        ``notice`` says so (once: nothing is left to repair the next time).
        """
        from tutor.settings import private
        from tutor.words.i18n import t

        try:
            private.make_folder(data_dir)
        except OSError as exc:
            return cls._in_memory_copy(data_dir / FILE_NAME, t("progress.unwritable", folder=data_dir,
                                                                reason=_reason(exc)))
        repaired = private.repair_data(data_dir, config_dir)
        storage = cls._open(data_dir, wait)
        if repaired:
            storage.repaired = t("progress.private", count=len(repaired), folder=data_dir)
            storage.notice = f"{storage.repaired} {storage.notice}" if storage.notice else storage.repaired
        return storage

    @classmethod
    def _open(cls, data_dir: Path, wait: float) -> "Storage":
        from tutor.settings import private
        from tutor.words.i18n import t

        path = data_dir / FILE_NAME
        private.make_file(path)  # SQLite gives -wal, -shm and -journal this file's mode
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
            private.make_file(path)
            conn = _connect(str(path), timeout=wait)
            _create(conn)
            storage = cls(conn, path, notice=t("progress.corrupt", reason=str(exc), backup=backup))
            storage.backup = backup
            return storage
        if found is not None and found > SCHEMA_VERSION:
            conn.close()
            copied = _newer_backup(path, found)
            storage = cls.in_memory()
            storage.notice = t("progress.newer", found=found, known=SCHEMA_VERSION, backup=copied)
            storage.backup = copied if isinstance(copied, Path) else None
            return storage
        try:
            _create(conn, found)
        except sqlite3.DatabaseError as exc:
            _close_quietly(conn)
            return cls._in_memory_copy(path, _unavailable(exc, path))
        return cls(conn, path)

    @classmethod
    def _in_memory_copy(cls, path: Path, notice: str, *, copy: bool = True) -> "Storage":
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
        from tutor.words.i18n import t

        from tutor.settings import private

        lock = self.path.with_name(LOCK_NAME)
        try:
            handle = private.open_private(lock)
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
        """Close the file (after :attr:`before_close`'s last writes) and drop the app's lock."""
        for hook in list(self.before_close):
            hook()
        _close_quietly(self._conn)
        if self._lock_file is not None:
            try:
                self._lock_file.close()
            except OSError:
                pass
            self._lock_file = None

    # ------------------------------------------------------------------ reading and writing

    def write(self, sql: str, params: tuple[Any, ...]) -> bool:
        """Run one write; False (and ``write_error``) when the disk refused it, never an exception."""
        try:
            self._conn.execute(sql, params)
        except sqlite3.OperationalError as exc:
            from tutor.words.i18n import t

            self.write_error = t(f"progress.write.{_kind(exc)}", reason=str(exc))
            return False
        if self.write_error is not None:
            self.write_error = None
            for hook in list(self.after_recovery):
                hook()
        return True

    def one(self, sql: str, params: tuple[Any, ...]) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self._conn.execute(sql, params).fetchone()
        return row

    def rows(self, sql: str, params: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
        return iter(self._conn.execute(sql, params).fetchall())

    def transaction(self) -> sqlite3.Connection:
        """``with storage.transaction() as conn:``: several statements, all or none."""
        return self._conn


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
    from tutor.words.i18n import t

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
