"""The grade cache: keyed by everything that decides a verdict, says why it missed, and never
stops a batch when it is damaged or unusable (no sandbox needed)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from dataclasses import replace

import pytest

from tutor.grading.gradebook import GradeCache, Row, exercise_fingerprint
from tutor.pack.loader import load_pack
from tutor.pack.scaffold import scaffold

CODE = "def bumped(t):\n    return t + 1\n"
LIMITS = {"wall_time": 10.0, "isolation": "bwrap"}


@pytest.fixture(scope="module")
def exercise(tmp_path_factory):
    folder = tmp_path_factory.mktemp("p") / "pack"
    scaffold(folder)
    return load_pack(folder).exercises()[0][1]


def key(exercise, code=CODE, limits=LIMITS, torch="2.13.0", fingerprint=None):
    return GradeCache.key(exercise, code, fingerprint=fingerprint or exercise_fingerprint(exercise),
                          limits=limits, torch=torch)


def row(passed=True) -> Row:
    return Row("ann", "add-to-copy", passed, 3 if passed else 1, 3, "passed" if passed else "failed", "m")


def test_hit_and_every_reason_for_a_miss(exercise, tmp_path):
    notices = []
    cache = GradeCache(tmp_path / "c.sqlite", notice=notices.append)
    assert cache.get(key(exercise)) == (None, "new")
    cache.put(key(exercise), row())
    hit, why = cache.get(key(exercise))
    assert hit["status"] == "passed" and why == ""
    looser = replace(exercise, checks=exercise.checks[:1])  # same id, one check dropped
    assert cache.get(key(looser)) == (None, "the exercise changed")
    assert cache.get(key(exercise, torch="2.14.0")) == (None, "the engine or torch changed")
    assert cache.get(key(exercise, limits={**LIMITS, "wall_time": 1.5})) == (None, "the limits or isolation changed")
    assert cache.get(key(exercise, limits={**LIMITS, "isolation": "none"})) == (None, "the limits or isolation changed")
    assert cache.get(key(exercise, code=CODE + "\n")) == (None, "new")
    assert notices == []


def test_the_exercise_fingerprint_follows_content_not_names(exercise):
    assert exercise_fingerprint(exercise) == exercise_fingerprint(replace(exercise))
    changed = replace(exercise.checks[0], atol=1e-3)
    assert exercise_fingerprint(replace(exercise, checks=[changed, *exercise.checks[1:]])) != \
        exercise_fingerprint(exercise)
    assert exercise_fingerprint(replace(exercise, points=2.0)) != exercise_fingerprint(exercise)


def test_a_damaged_cache_is_bypassed_and_left_alone(exercise, tmp_path):
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"garbage" * 1000)
    notices = []
    cache = GradeCache(path, notice=notices.append)
    assert not cache.usable and "is damaged" in notices[-1] and "grading without it" in notices[-1]
    assert cache.get(key(exercise)) == (None, "cache unavailable")
    cache.put(key(exercise), row())  # nothing happens, nothing raises
    assert path.read_bytes() == b"garbage" * 1000


def test_an_unusable_place_is_bypassed(exercise, tmp_path):
    (tmp_path / "file").write_text("x")
    notices = []
    cache = GradeCache(tmp_path / "file" / "c.sqlite", notice=notices.append)  # its folder is a file
    assert not cache.usable and "cannot be used" in notices[0]


def test_a_cache_that_fails_mid_batch_is_dropped_with_one_notice(exercise, tmp_path):
    notices = []
    cache = GradeCache(tmp_path / "c.sqlite", notice=notices.append)
    cache.put(key(exercise), row())
    blocker = sqlite3.connect(tmp_path / "c.sqlite", timeout=0)
    blocker.execute("BEGIN EXCLUSIVE")  # another process holds it: writes fail
    cache._db.execute("PRAGMA busy_timeout=0")
    cache.put(key(exercise, code="x = 1\n"), row(False))
    blocker.rollback()
    blocker.close()
    assert not cache.usable and len(notices) == 1 and "could not be written" in notices[0]
    cache.put(key(exercise, code="y = 1\n"), row())
    assert len(notices) == 1


def test_an_older_cache_schema_starts_over(exercise, tmp_path):
    path = tmp_path / "c.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    db.execute("INSERT INTO meta VALUES ('schema', '1')")
    db.execute("CREATE TABLE rows (key TEXT PRIMARY KEY, row TEXT NOT NULL, at REAL)")
    db.execute("INSERT INTO rows VALUES ('k', '{}', 0)")
    db.commit()
    db.close()
    cache = GradeCache(path)
    assert cache.usable and cache.get(key(exercise)) == (None, "new")
    cache.put(key(exercise), row())
    assert cache.get(key(exercise))[0]["status"] == "passed"


def test_the_engine_fingerprint_reads_the_grader_that_runs(monkeypatch):
    """Every file the engine's fingerprint covers exists (a moved module once left it hashing a
    missing path, so a change to the grader kept stale verdicts), and changing one changes it."""
    import tutor.grading.gradebook as gradebook

    files = gradebook.engine_files()
    names = {path.as_posix().split("/tutor/", 1)[1] for path in files}
    assert {"grading/exercise.py", "grading/gradebook.py", "child/checks/probe.py"} <= names
    assert all(path.is_file() for path in files)
    monkeypatch.setattr(gradebook, "_ENGINE", None)
    before = gradebook.engine_fingerprint()
    real = Path.read_bytes

    def edited(path: Path) -> bytes:
        data = real(path)
        return data + b"\n# edited\n" if path.name == "exercise.py" and path.parent.name == "grading" else data

    monkeypatch.setattr(Path, "read_bytes", edited)
    monkeypatch.setattr(gradebook, "_ENGINE", None)
    assert gradebook.engine_fingerprint() != before
