"""The progress file's schema version lives in SQLite's header (``PRAGMA user_version``).

Files written before that kept it in a ``meta`` row: they are read and migrated with every row
kept, and the row is still written so that a tutor from before the change (which reads only the
row) goes on telling its own files from newer ones.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from tutor.words.i18n import t
from tutor.record.progress import storage
from tutor.record.progress import FILE_NAME, SCHEMA_VERSION, ProgressStore

FIXTURES = Path(__file__).resolve().parents[1] / "app" / "fixtures"
TABLES = ("meta", "position", "steps", "drafts", "attempts", "solutions", "quiz")
V2_TABLES = TABLES + ("cards", "reviews")


def _rows(path: Path, tables: tuple[str, ...]) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(path)
    try:
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in tables}
    finally:
        conn.close()


def _header(path: Path) -> tuple[int, str | None]:
    """(user_version, the meta row) as any reader of the file sees them."""
    conn = sqlite3.connect(path)
    try:
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return conn.execute("PRAGMA user_version").fetchone()[0], row[0] if row else None
    finally:
        conn.close()


@pytest.mark.parametrize(("fixture", "tables"), [("progress-v1.sqlite3", TABLES), ("progress-v2.sqlite3", V2_TABLES)])
def test_a_file_from_before_user_version_keeps_every_row(tmp_path, fixture, tables):
    shutil.copy(FIXTURES / fixture, tmp_path / FILE_NAME)
    os.chmod(tmp_path / FILE_NAME, 0o644)  # as those tutors left it (issue 50)
    assert _header(tmp_path / FILE_NAME)[0] == 0  # the version was only in the row
    before = _rows(tmp_path / FILE_NAME, tables)
    assert all(before[t] for t in ("meta", "position", "drafts", "quiz"))

    store = ProgressStore.open(tmp_path)
    # the one thing said: the file is made the learner's alone (test_private_data)
    assert store.storage.notice == t("progress.private", count=1, folder=tmp_path) and store.storage.persistent
    assert store.drafts.get("mini", "exercises", "double").endswith("# draft\n")
    assert store.preferences.get("theme") == "light"
    store.close()

    assert _header(tmp_path / FILE_NAME) == (SCHEMA_VERSION, str(SCHEMA_VERSION))
    after = _rows(tmp_path / FILE_NAME, tables)
    for table in tables:
        if table == "meta":  # only the version row may change (1 -> 2)
            assert [r for r in after[table] if r[0] != "schema_version"] == \
                   [r for r in before[table] if r[0] != "schema_version"]
        elif table != "cards" or fixture.endswith("v2.sqlite3"):  # v1 gains cards, tested in tests/app
            assert after[table] == before[table], table


def test_a_migrated_file_opens_without_writing_again(tmp_path):
    shutil.copy(FIXTURES / "progress-v2.sqlite3", tmp_path / FILE_NAME)
    ProgressStore.open(tmp_path).close()
    statements: list[str] = []
    store = ProgressStore.open(tmp_path)
    store.storage._conn.set_trace_callback(statements.append)
    assert store.cards.all() and store.cards.reviews()
    store.close()
    assert not [s for s in statements if s.lstrip().upper().startswith(("BEGIN", "CREATE", "INSERT", "PRAGMA"))]


def test_someone_elses_database_is_set_aside_even_with_our_version_number(tmp_path):
    """A foreign database whose header happens to say 2 is not written into."""
    path = tmp_path / FILE_NAME
    foreign = sqlite3.connect(path)
    foreign.execute("CREATE TABLE accounts (name TEXT, balance REAL)")
    foreign.execute("INSERT INTO accounts VALUES ('alice', 12.5)")
    foreign.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    foreign.commit()
    foreign.close()
    original = path.read_bytes()

    store = ProgressStore.open(tmp_path)
    assert store.storage.persistent and store.storage.notice and "not a torch-tutor progress file" in store.storage.notice
    assert store.storage.backup is not None and store.storage.backup.read_bytes() == original
    store.close()
    assert _header(path) == (SCHEMA_VERSION, str(SCHEMA_VERSION))


def test_a_migration_that_fails_leaves_the_old_version_and_every_row(tmp_path, monkeypatch):
    """user_version is set inside the migration's transaction, so it is undone with it."""
    shutil.copy(FIXTURES / "progress-v1.sqlite3", tmp_path / FILE_NAME)
    before = _rows(tmp_path / FILE_NAME, TABLES)

    def full_disk(conn: sqlite3.Connection) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(storage, "_seed_cards", full_disk)
    store = ProgressStore.open(tmp_path)
    assert not store.storage.persistent and store.storage.notice  # this session runs in memory; the file is left alone
    store.close()
    assert _header(tmp_path / FILE_NAME) == (0, "1")
    assert _rows(tmp_path / FILE_NAME, TABLES) == before
    monkeypatch.undo()
    assert ProgressStore.open(tmp_path).storage.notice is None
    assert _header(tmp_path / FILE_NAME) == (SCHEMA_VERSION, str(SCHEMA_VERSION))


def test_a_new_store_has_its_version_in_the_header(tmp_path):
    ProgressStore.open(tmp_path).close()
    assert _header(tmp_path / FILE_NAME) == (SCHEMA_VERSION, str(SCHEMA_VERSION))
