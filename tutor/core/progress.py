"""The learner's progress and drafts, kept in one SQLite file under the data directory.

Why SQLite in WAL mode, one statement per transaction: a learner quits by closing the terminal
as often as by pressing a key, so every write must be durable the moment it returns, and a
second tutor open on the same data must not corrupt it. Why a schema version table: the file
outlives the program that wrote it; an older tutor meeting a newer file must leave it alone,
and a file that is not a database at all must be set aside (never deleted) with a message the
learner can act on. Nothing here knows about Textual or torch.
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    from tutor.core.models import Pack

SCHEMA_VERSION = 1
FILE_NAME = "progress.sqlite3"
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
"""
_TABLES = ("position", "steps", "drafts", "attempts", "solutions", "quiz")


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

    ``notice`` is a sentence for the learner when opening needed a rescue (corrupt or newer
    file); ``persistent`` is False when this session's progress will not reach the disk.
    """

    def __init__(self, conn: sqlite3.Connection, path: Path | None, *, notice: str | None = None):
        self._conn = conn
        self.path = path
        self.notice = notice
        self.backup: Path | None = None

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
    def open(cls, data_dir: Path) -> "ProgressStore":
        """Open (or create) the store in ``data_dir``; never raises for a bad file.

        A corrupt file is renamed aside and a fresh store started; a file from a newer tutor is
        copied aside and left untouched while this session runs on an in-memory store.
        """
        from tutor.core.i18n import t

        data_dir.mkdir(parents=True, exist_ok=True)
        path = data_dir / FILE_NAME
        try:
            conn = _connect(str(path))
            found = _check(conn)
        except sqlite3.DatabaseError as exc:
            _close_quietly(locals().get("conn"))
            backup = _set_aside(path, "corrupt")
            conn = _connect(str(path))
            _create(conn)
            store = cls(conn, path, notice=t("progress.corrupt", reason=str(exc), backup=backup))
            store.backup = backup
            return store
        if found is not None and found > SCHEMA_VERSION:
            conn.close()
            backup = _unique(path.with_name(f"{path.name}.v{found}-backup"))
            shutil.copy2(path, backup)
            store = cls.in_memory()
            store.notice = t("progress.newer", found=found, known=SCHEMA_VERSION, backup=backup)
            store.backup = backup
            return store
        _create(conn)
        return cls(conn, path)

    def close(self) -> None:
        _close_quietly(self._conn)

    # ------------------------------------------------------------------ position

    def set_position(self, pack: str, lesson: str, step: str) -> None:
        self._exec("INSERT INTO position VALUES (?,?,?,?) ON CONFLICT(pack) DO UPDATE SET "
                   "lesson=excluded.lesson, step=excluded.step, updated=excluded.updated",
                   (pack, lesson, step, time.time()))

    def position(self, pack: str) -> tuple[str, str] | None:
        row = self._one("SELECT lesson, step FROM position WHERE pack=?", (pack,))
        return (row[0], row[1]) if row else None

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
        return self.step(pack, lesson, step).hints_used

    def mark_solution_seen(self, pack: str, lesson: str, step: str) -> None:
        self.visit(pack, lesson, step)
        self._exec("UPDATE steps SET solution_seen=1 WHERE pack=? AND lesson=? AND step=?", (pack, lesson, step))

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

    def solved_code(self, pack: str, lesson: str, step: str) -> str | None:
        """The code of the last Check that passed, if any."""
        row = self._one("SELECT code FROM solutions WHERE pack=? AND lesson=? AND step=?", (pack, lesson, step))
        return row[0] if row else None

    def record_quiz(self, pack: str, lesson: str, step: str, answer: str, correct: bool | None) -> None:
        self.visit(pack, lesson, step)
        self._exec("INSERT INTO quiz VALUES (?,?,?,?,?,1,?) ON CONFLICT DO UPDATE SET answer=excluded.answer, "
                   "correct=excluded.correct, tries=tries+1, at=excluded.at",
                   (pack, lesson, step, answer, None if correct is None else int(correct), time.time()))

    def step(self, pack: str, lesson: str, step: str) -> StepProgress:
        return self.steps(pack).get((lesson, step), StepProgress())

    def steps(self, pack: str) -> dict[tuple[str, str], StepProgress]:
        """Every recorded step of a pack, keyed by (lesson, step)."""
        out: dict[tuple[str, str], StepProgress] = {}

        def get(lesson: str, step: str) -> StepProgress:
            return out.setdefault((lesson, step), StepProgress())

        for lesson, step, seconds, solved_at, hints, solution in self._all(
                "SELECT lesson, step, seconds, solved_at, hints_used, solution_seen FROM steps WHERE pack=?", (pack,)):
            entry = get(lesson, step)
            entry.seen, entry.seconds, entry.solved = True, seconds, solved_at is not None
            entry.hints_used, entry.solution_seen = hints, bool(solution)
        for lesson, step, kind, count, failed in self._all(
                "SELECT lesson, step, kind, COUNT(*), SUM(passed=0) FROM attempts WHERE pack=? "
                "GROUP BY lesson, step, kind", (pack,)):
            entry = get(lesson, step)
            if kind == "check":
                entry.checks, entry.failed_checks = count, failed or 0
            else:
                entry.runs += count
        for lesson, step, answer, correct in self._all(
                "SELECT lesson, step, answer, correct FROM quiz WHERE pack=?", (pack,)):
            entry = get(lesson, step)
            entry.quiz_answer, entry.quiz_correct = answer, None if correct is None else bool(correct)
        for lesson, step in self._all("SELECT lesson, step FROM drafts WHERE pack=?", (pack,)):
            get(lesson, step).draft = True
        return out

    # ------------------------------------------------------------------ drafts

    def save_draft(self, pack: str, lesson: str, step: str, code: str) -> None:
        self._exec("INSERT INTO drafts VALUES (?,?,?,?,?) ON CONFLICT DO UPDATE SET code=excluded.code, "
                   "updated=excluded.updated", (pack, lesson, step, code, time.time()))

    def draft(self, pack: str, lesson: str, step: str) -> str | None:
        row = self._one("SELECT code FROM drafts WHERE pack=? AND lesson=? AND step=?", (pack, lesson, step))
        return row[0] if row else None

    def clear_draft(self, pack: str, lesson: str, step: str) -> None:
        self._exec("DELETE FROM drafts WHERE pack=? AND lesson=? AND step=?", (pack, lesson, step))

    # ------------------------------------------------------------------ whole-store views

    def packs(self) -> list[str]:
        rows = self._all(" UNION ".join(f"SELECT DISTINCT pack FROM {table}" for table in _TABLES), ())
        return sorted(row[0] for row in rows)

    def reset(self, pack: str | None = None, step: str | None = None, lesson: str | None = None) -> int:
        """Forget progress: everything, one pack, or one step of a pack. Returns rows removed."""
        where, params = "", ()
        if pack is not None:
            where, params = " WHERE pack=?", (pack,)
            if step is not None:
                where += " AND step=?"
                params += (step,)
                if lesson is not None:
                    where += " AND lesson=?"
                    params += (lesson,)
        removed = 0
        with self._conn:
            for table in _TABLES:
                if table == "position" and step is not None:
                    continue
                removed += self._conn.execute(f"DELETE FROM {table}{where}", params).rowcount
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

    def _exec(self, sql: str, params: tuple) -> None:
        self._conn.execute(sql, params)

    def _one(self, sql: str, params: tuple) -> tuple | None:
        return self._conn.execute(sql, params).fetchone()

    def _all(self, sql: str, params: tuple) -> Iterator[tuple]:
        return iter(self._conn.execute(sql, params).fetchall())


def _connect(target: str) -> sqlite3.Connection:
    # isolation_level=None: autocommit, so each write is durable when it returns.
    # check_same_thread=False: the app may write from a worker thread; SQLite serialises access.
    conn = sqlite3.connect(target, isolation_level=None, check_same_thread=False, timeout=5.0)
    return conn


def _check(conn: sqlite3.Connection) -> int | None:
    """The schema version of an existing store (None when new); raises DatabaseError if unusable."""
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    result = conn.execute("PRAGMA quick_check").fetchone()
    if result is None or result[0] != "ok":
        raise sqlite3.DatabaseError(f"integrity check failed: {result[0] if result else 'no answer'}")
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "meta" not in tables:
        if tables - {"sqlite_sequence"}:
            raise sqlite3.DatabaseError("not a torch-tutor progress file (no schema version)")
        return None
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    try:
        return int(row[0]) if row else None
    except ValueError:
        raise sqlite3.DatabaseError(f"unreadable schema version {row[0]!r}") from None


def _create(conn: sqlite3.Connection) -> None:
    conn.executescript(_SCHEMA)
    conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))


def _unique(path: Path) -> Path:
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.{n}")
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
