"""The progress store: durable, versioned, and never losing a learner's file silently."""

from __future__ import annotations

import sqlite3

import pytest

from tutor.core.loader import load_pack
from tutor.core.progress import FILE_NAME, SCHEMA_VERSION, ProgressStore

from app_support import MINI


def test_everything_written_is_read_back_after_reopening(tmp_path):
    store = ProgressStore.open(tmp_path)
    store.set_position("mini", "basics", "which-dim")
    store.save_draft("mini", "exercises", "double", "def double(x):\n    return 2 * x\n")
    store.record_attempt("mini", "exercises", "double", "check", passed=False, checks_passed=0, checks_total=1)
    store.record_attempt("mini", "exercises", "double", "run", passed=True, wall_time=0.1)
    store.use_hint("mini", "exercises", "double")
    store.record_quiz("mini", "basics", "which-dim", "0", True)
    store.close()

    again = ProgressStore.open(tmp_path)
    assert again.notice is None and again.persistent
    assert again.position("mini") == ("basics", "which-dim")
    assert again.draft("mini", "exercises", "double").endswith("return 2 * x\n")
    step = again.step("mini", "exercises", "double")
    assert (step.checks, step.failed_checks, step.runs, step.hints_used, step.solved) == (1, 1, 1, 1, False)
    assert again.step("mini", "basics", "which-dim").quiz_correct is True
    assert again.last_pack() == "mini"


def test_store_uses_wal_and_records_its_schema_version(tmp_path):
    ProgressStore.open(tmp_path).close()
    conn = sqlite3.connect(tmp_path / FILE_NAME)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)


def test_a_corrupt_file_is_set_aside_with_a_message_and_a_fresh_store_starts(tmp_path):
    (tmp_path / FILE_NAME).write_bytes(b"this is not a database" * 100)
    store = ProgressStore.open(tmp_path)
    assert store.notice and "could not be read" in store.notice
    assert store.backup is not None and store.backup.read_bytes().startswith(b"this is not a database")
    assert str(store.backup) in store.notice
    store.save_draft("p", "l", "s", "x = 1")  # the fresh store works
    assert store.draft("p", "l", "s") == "x = 1"


def test_a_foreign_sqlite_file_is_not_mistaken_for_progress(tmp_path):
    conn = sqlite3.connect(tmp_path / FILE_NAME)
    conn.execute("CREATE TABLE something_else (x)")
    conn.commit()
    conn.close()
    store = ProgressStore.open(tmp_path)
    assert store.notice and "not a torch-tutor progress file" in store.notice
    assert store.backup is not None and store.backup.exists()


def test_a_newer_file_is_left_untouched_and_copied(tmp_path):
    store = ProgressStore.open(tmp_path)
    store.save_draft("p", "l", "s", "keep me")
    store._conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")  # what a newer tutor writes
    store.close()
    before = (tmp_path / FILE_NAME).read_bytes()

    newer = ProgressStore.open(tmp_path)
    assert not newer.persistent and "newer torch-tutor" in newer.notice
    newer.save_draft("p", "l", "s", "not saved to the newer file")
    newer.close()
    assert (tmp_path / FILE_NAME).read_bytes() == before
    assert newer.backup.exists()
    copy = sqlite3.connect(newer.backup)
    assert copy.execute("SELECT code FROM drafts").fetchone()[0] == "keep me"


def test_reset_forgets_one_exercise_one_pack_or_everything(tmp_path):
    store = ProgressStore.open(tmp_path)
    for pack in ("a", "b"):
        store.set_position(pack, "l", "s1")
        store.save_draft(pack, "l", "s1", "one")
        store.save_draft(pack, "l", "s2", "two")
    store.reset("a", step="s1", lesson="l")
    assert store.draft("a", "l", "s1") is None and store.draft("a", "l", "s2") == "two"
    assert store.position("a") == ("l", "s1")  # resetting an exercise keeps where you are
    store.reset("a")
    assert store.draft("a", "l", "s2") is None and store.position("a") is None
    assert store.draft("b", "l", "s1") == "one"
    store.reset()
    assert store.packs() == []


def test_summary_follows_what_the_learner_did(tmp_path):
    pack = load_pack(MINI)
    store = ProgressStore.open(tmp_path)
    assert [s.state for s in store.summarize(pack).lessons] == ["new", "new"]
    store.visit("mini", "exercises", "double", seconds=12.5)
    lesson = store.summarize(pack).lessons[1]
    assert (lesson.state, lesson.exercises_solved, lesson.seconds) == ("progress", 0, 12.5)
    store.record_attempt("mini", "exercises", "double", "check", passed=True, checks_passed=1, checks_total=1)
    assert store.summarize(pack).lessons[1].state == "done"
    store.record_quiz("mini", "basics", "which-dim", "1", False)
    basics = store.summarize(pack).lessons[0]
    assert (basics.quiz_answered, basics.quiz_correct, basics.quizzes) == (1, 0, 6)


def test_time_on_a_step_is_capped_per_visit(tmp_path):
    store = ProgressStore.open(tmp_path)
    store.visit("p", "l", "s", seconds=10 * 3600)  # a learner who walked away
    assert store.step("p", "l", "s").seconds == pytest.approx(15 * 60)
