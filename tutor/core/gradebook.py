"""`torch-tutor grade`: every learner's submissions checked by the learner's own engine.

A submissions folder holds one folder per learner with ``<exercise-id>.py`` files and/or hand-in
archives (``*.handin.zip``); archives may also sit at the top. Each (learner, exercise) becomes one
row. Problems with the files themselves (missing, empty, binary, not UTF-8, a symlink out of the
folder, a name that is no exercise) become rows with their own status, and nothing a submission
does at run time stops the batch. Results are cached by submission content + pack id/version.
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import io
import json
import os
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable
from xml.etree import ElementTree as ET

from tutor.core.handin import SUFFIX, HandinError, read_handin
from tutor.core.models import Exercise, Pack
from tutor.core.sourcefile import NotText, decode_text

if TYPE_CHECKING:
    from tutor.sandbox import Sandbox

MAX_SUBMISSION_BYTES = 512 * 1024
CACHE_SCHEMA = 1
COLUMNS = ("learner", "exercise", "passed", "checks_passed", "checks_total", "status", "message")

#: Statuses of a graded submission; the file statuses (missing, empty...) are listed in docs/authoring.md.
RUN_STATUS = {"timeout": "timeout", "memory": "memory", "output-limit": "output-limit", "killed": "crashed",
              "sandbox-failure": "sandbox-failure"}


@dataclass
class Submission:
    learner: str
    exercise: str
    origin: str
    code: str | None = None
    status: str | None = None  # set when the file itself is the problem: nothing to run
    message: str = ""


@dataclass
class Row:
    learner: str
    exercise: str
    passed: bool
    checks_passed: int
    checks_total: int
    status: str
    message: str
    origin: str = ""
    seconds: float = 0.0  # request to verdict, in this process
    run_seconds: float = 0.0  # of which the sandbox child ran (the learner's code and the checks)
    cached: bool = False

    def record(self) -> dict:
        return {name: getattr(self, name) for name in COLUMNS}


# --------------------------------------------------------------------------- collecting


def _decode(data: bytes) -> tuple[str | None, str | None, str]:
    """(code, status, message) for a submission's raw bytes."""
    if len(data) > MAX_SUBMISSION_BYTES:
        return None, "too-large", f"{len(data):,} bytes; a submission may have at most {MAX_SUBMISSION_BYTES:,}"
    try:
        code = decode_text(data)
    except NotText as exc:
        return None, exc.kind, f"{exc.message}, not Python source (line {exc.line})"
    if not code.strip():
        return None, "empty", "the file is empty"
    return code, None, ""


def _inside(path: Path, root: Path) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(root)


def collect(pack: Pack, root: Path) -> list[Submission]:
    """Every (learner, exercise) of the folder, plus a row for each file that is not one."""
    root_real = Path(os.path.realpath(root))
    exercise_ids = [exercise.id for _lesson, exercise in pack.exercises()]
    found: dict[str, dict[str, Submission]] = {}
    strays: list[Submission] = []

    def note(learner: str, sub: Submission) -> None:
        slot = found.setdefault(learner, {})
        if sub.exercise in slot and slot[sub.exercise].status is None and sub.origin.endswith(SUFFIX):
            return  # a loose .py file wins over the same exercise inside an archive
        slot[sub.exercise] = sub

    def from_archive(path: Path, learner: str | None) -> None:
        try:
            handin = read_handin(path)
        except HandinError as exc:
            strays.append(Submission(learner or path.name, "-", str(path), status="bad-archive", message=str(exc)))
            return
        who = learner or handin.learner
        if handin.pack and handin.pack != pack.id:
            strays.append(Submission(who, "-", str(path), status="wrong-pack",
                                     message=f"archive is for pack {handin.pack!r}, not {pack.id!r}"))
            return
        for eid, data in handin.exercises.items():
            if eid not in exercise_ids:
                strays.append(_unknown(who, eid, str(path), exercise_ids))
                continue
            code, status, message = _decode(data)
            note(who, Submission(who, eid, f"{path}:exercises/{eid}.py", code, status, message))

    for entry in sorted(root.iterdir(), key=lambda p: p.name):
        if entry.name.startswith("."):
            continue
        if entry.is_symlink() and not _inside(entry, root_real):
            strays.append(Submission(entry.name, "-", str(entry), status="refused",
                                     message="a symlink pointing outside the submissions folder"))
            continue
        if entry.is_dir():
            learner = entry.name
            found.setdefault(learner, {})
            for item in sorted(entry.iterdir(), key=lambda p: p.name):
                if item.name.startswith("."):
                    continue
                if item.is_symlink() and not _inside(item, root_real):
                    strays.append(Submission(learner, item.stem, str(item), status="refused",
                                             message="a symlink pointing outside the submissions folder"))
                    continue
                if item.name.endswith(SUFFIX) and item.is_file():
                    from_archive(item, learner)
                elif item.suffix == ".py" and item.is_file():
                    if item.stem not in exercise_ids:
                        strays.append(_unknown(learner, item.stem, str(item), exercise_ids))
                        continue
                    code, status, message = _decode(item.read_bytes())
                    note(learner, Submission(learner, item.stem, str(item), code, status, message))
                else:
                    strays.append(Submission(learner, item.name, str(item), status="unrecognised",
                                             message="not an <exercise-id>.py file or a hand-in archive"))
        elif entry.name.endswith(SUFFIX) and entry.is_file():
            from_archive(entry, None)
        else:
            strays.append(Submission(entry.name, "-", str(entry), status="unrecognised",
                                     message="expected a folder per learner or a hand-in archive"))

    submissions: list[Submission] = []
    for learner in sorted(found):
        for eid in exercise_ids:
            sub = found[learner].get(eid)
            if sub is None:
                sub = Submission(learner, eid, "", status="missing", message=f"no {eid}.py")
            submissions.append(sub)
    return submissions + strays


def _unknown(learner: str, name: str, origin: str, exercise_ids: list[str]) -> Submission:
    close = difflib.get_close_matches(name, exercise_ids, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return Submission(learner, name, origin, status="unknown-exercise",
                      message=f"{name!r} is not an exercise of this pack{hint}")


# --------------------------------------------------------------------------- cache


class GradeCache:
    """Finished rows by sha256(pack id, pack version, exercise, code): a re-run resumes."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = self._open(path)
        except sqlite3.DatabaseError:
            path.replace(path.with_name(path.name + f".corrupt-{int(time.time())}"))
            self._db = self._open(path)

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        db = sqlite3.connect(path, check_same_thread=False, timeout=30)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        db.execute("CREATE TABLE IF NOT EXISTS rows (key TEXT PRIMARY KEY, row TEXT NOT NULL, at REAL)")
        version = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if version is None:
            db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(CACHE_SCHEMA),))
        elif version[0] != str(CACHE_SCHEMA):
            db.execute("DELETE FROM rows")  # a cache is disposable: start over rather than misread
            db.execute("UPDATE meta SET value=? WHERE key='schema'", (str(CACHE_SCHEMA),))
        db.commit()
        return db

    @staticmethod
    def key(pack: Pack, exercise: str, code: str) -> str:
        digest = hashlib.sha256()
        for part in (pack.id, pack.version, exercise, code):
            digest.update(part.encode("utf-8", "surrogatepass") + b"\x00")
        return digest.hexdigest()

    def get(self, key: str) -> dict | None:
        with self._lock:
            found = self._db.execute("SELECT row FROM rows WHERE key=?", (key,)).fetchone()
        return json.loads(found[0]) if found else None

    def put(self, key: str, row: Row) -> None:
        data = json.dumps(asdict(row))
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO rows VALUES (?,?,?)", (key, data, time.time()))
            self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()


# --------------------------------------------------------------------------- grading


def _row_from_report(sub: Submission, report, seconds: float) -> Row:
    total = len(report.checks)
    good = sum(check.passed for check in report.checks)
    run = report.run
    if report.passed:
        status = "passed"
    elif run.status == "sandbox-failure" and run.exit_code is not None and run.error is None:
        status = "exited"  # the learner's code ended its own process (os._exit) before the checks
    elif run.status in RUN_STATUS:
        status = RUN_STATUS[run.status]
    elif run.error is not None:
        status = "error"
    else:
        status = "failed"
    message = report.message
    first_bad = next((c for c in report.checks if not c.passed and c.status != "skipped"), None)
    if status == "failed" and first_bad is not None:
        message += f"; {first_bad.id}: {first_bad.message}"
    elif status in ("timeout", "memory", "output-limit", "crashed", "sandbox-failure", "exited") and run.message:
        message = run.message
    return Row(sub.learner, sub.exercise, report.passed, good, total, status, " ".join(message.split()),
               origin=sub.origin, seconds=seconds, run_seconds=run.wall_time)


def grade_all(pack: Pack, submissions: Iterable[Submission], sandbox: "Sandbox", *,
              cache: GradeCache | None = None, threads: int = 1,
              progress: Callable[[Row, int, int], None] | None = None) -> list[Row]:
    """Grade every submission; the order of the result is the order of ``submissions``."""
    from tutor.core.grading import check_exercise

    subs = list(submissions)
    exercises: dict[str, Exercise] = {ex.id: ex for _lesson, ex in pack.exercises()}
    rows: list[Row | None] = [None] * len(subs)
    done = 0
    lock = threading.Lock()

    def finish(index: int, row: Row) -> None:
        nonlocal done
        rows[index] = row
        with lock:
            done += 1
            if progress is not None:
                progress(row, done, len(subs))

    def one(index: int) -> None:
        sub = subs[index]
        exercise = exercises.get(sub.exercise)
        if sub.status is not None or exercise is None or sub.code is None:
            total = len(exercise.checks) if exercise else 0
            finish(index, Row(sub.learner, sub.exercise, False, 0, total, sub.status or "unknown-exercise",
                              sub.message, origin=sub.origin))
            return
        key = GradeCache.key(pack, sub.exercise, sub.code) if cache else ""
        hit = cache.get(key) if cache else None
        if hit is not None:
            hit.update(learner=sub.learner, origin=sub.origin, cached=True)
            finish(index, Row(**hit))
            return
        started = time.monotonic()
        try:
            report = check_exercise(sandbox, exercise, sub.code)
        except Exception as exc:  # the batch goes on; the row says what broke
            finish(index, Row(sub.learner, sub.exercise, False, 0, len(exercise.checks), "sandbox-failure",
                              f"could not run: {type(exc).__name__}: {exc}", origin=sub.origin))
            return
        row = _row_from_report(sub, report, time.monotonic() - started)
        if cache and row.status not in ("sandbox-failure",):
            cache.put(key, row)
        finish(index, row)

    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        list(pool.map(one, range(len(subs))))
    return [row for row in rows if row is not None]


# --------------------------------------------------------------------------- writing


def to_csv(rows: list[Row]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        record = row.record()
        record["passed"] = "true" if row.passed else "false"
        writer.writerow([record[name] for name in COLUMNS])
    return out.getvalue()


def to_json(pack: Pack, rows: list[Row]) -> str:
    summary = {
        "pack": pack.id, "pack_version": pack.version,
        "learners": len({r.learner for r in rows}),
        "rows": len(rows), "passed": sum(r.passed for r in rows),
        "statuses": _count(r.status for r in rows),
    }
    return json.dumps({"summary": summary, "rows": [r.record() | {"origin": r.origin, "cached": r.cached}
                                                    for r in rows]}, indent=2, ensure_ascii=False)


def to_junit(pack: Pack, rows: list[Row]) -> str:
    suites = ET.Element("testsuites", name=f"torch-tutor grade {pack.id} {pack.version}")
    for learner in sorted({r.learner for r in rows}):
        mine = [r for r in rows if r.learner == learner]
        suite = ET.SubElement(suites, "testsuite", name=learner, tests=str(len(mine)),
                              failures=str(sum(r.status in ("failed",) for r in mine)),
                              errors=str(sum(not r.passed and r.status != "failed" for r in mine)),
                              time=f"{sum(r.seconds for r in mine):.3f}")
        for row in mine:
            case = ET.SubElement(suite, "testcase", classname=f"{pack.id}.{learner}", name=row.exercise,
                                 time=f"{row.seconds:.3f}")
            if row.passed:
                continue
            tag = "failure" if row.status == "failed" else "error"
            ET.SubElement(case, tag, type=row.status,
                          message=f"{row.checks_passed}/{row.checks_total} checks: {row.message}"[:2000])
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _count(items: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return dict(sorted(counts.items()))
