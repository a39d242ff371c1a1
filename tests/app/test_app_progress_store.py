"""The progress store: durable, versioned, and never losing a learner's file silently."""

from __future__ import annotations

import sqlite3

import pytest

from tutor.pack.loader import load_pack
from tutor.record.progress import FILE_NAME, SCHEMA_VERSION, ProgressStore

from app_support import MINI


def test_everything_written_is_read_back_after_reopening(tmp_path):
    store = ProgressStore.open(tmp_path)
    store.positions.set("mini", "basics", "which-dim")
    store.drafts.save("mini", "exercises", "double", "def double(x):\n    return 2 * x\n")
    store.answers.record_attempt("mini", "exercises", "double", "check", passed=False, checks_passed=0, checks_total=1)
    store.answers.record_attempt("mini", "exercises", "double", "run", passed=True, wall_time=0.1)
    store.steps.use_hint("mini", "exercises", "double")
    store.answers.record_quiz("mini", "basics", "which-dim", "0", True)
    store.close()

    again = ProgressStore.open(tmp_path)
    assert again.storage.notice is None and again.storage.persistent
    assert again.positions.get("mini") == ("basics", "which-dim")
    assert again.drafts.get("mini", "exercises", "double").endswith("return 2 * x\n")
    step = again.steps.get("mini", "exercises", "double")
    assert (step.checks, step.failed_checks, step.runs, step.hints_used, step.solved) == (1, 1, 1, 1, False)
    assert again.steps.get("mini", "basics", "which-dim").quiz_correct is True
    assert again.positions.last_pack() == "mini"


def test_store_uses_wal_and_records_its_schema_version(tmp_path):
    ProgressStore.open(tmp_path).close()
    conn = sqlite3.connect(tmp_path / FILE_NAME)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)


def test_a_corrupt_file_is_set_aside_with_a_message_and_a_fresh_store_starts(tmp_path):
    (tmp_path / FILE_NAME).write_bytes(b"this is not a database" * 100)
    store = ProgressStore.open(tmp_path)
    assert store.storage.notice and "could not be read" in store.storage.notice
    assert store.storage.backup is not None and store.storage.backup.read_bytes().startswith(b"this is not a database")
    assert str(store.storage.backup) in store.storage.notice
    store.drafts.save("p", "l", "s", "x = 1")  # the fresh store works
    assert store.drafts.get("p", "l", "s") == "x = 1"


def test_a_foreign_sqlite_file_is_not_mistaken_for_progress(tmp_path):
    conn = sqlite3.connect(tmp_path / FILE_NAME)
    conn.execute("CREATE TABLE something_else (x)")
    conn.commit()
    conn.close()
    store = ProgressStore.open(tmp_path)
    assert store.storage.notice and "not a torch-tutor progress file" in store.storage.notice
    assert store.storage.backup is not None and store.storage.backup.exists()


def test_a_newer_file_is_left_untouched_and_copied(tmp_path):
    store = ProgressStore.open(tmp_path)
    store.drafts.save("p", "l", "s", "keep me")
    store.storage._conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")  # what a newer tutor writes
    store.close()
    before = (tmp_path / FILE_NAME).read_bytes()

    newer = ProgressStore.open(tmp_path)
    assert not newer.storage.persistent and "newer torch-tutor" in newer.storage.notice
    newer.drafts.save("p", "l", "s", "not saved to the newer file")
    newer.close()
    assert (tmp_path / FILE_NAME).read_bytes() == before
    assert newer.storage.backup.exists()
    copy = sqlite3.connect(newer.storage.backup)
    assert copy.execute("SELECT code FROM drafts").fetchone()[0] == "keep me"


def test_reset_forgets_one_exercise_one_pack_or_everything(tmp_path):
    store = ProgressStore.open(tmp_path)
    for pack in ("a", "b"):
        store.positions.set(pack, "l", "s1")
        store.drafts.save(pack, "l", "s1", "one")
        store.drafts.save(pack, "l", "s2", "two")
    store.reset("a", step="s1", lesson="l")
    assert store.drafts.get("a", "l", "s1") is None and store.drafts.get("a", "l", "s2") == "two"
    assert store.positions.get("a") == ("l", "s1")  # resetting an exercise keeps where you are
    store.reset("a")
    assert store.drafts.get("a", "l", "s2") is None and store.positions.get("a") is None
    assert store.drafts.get("b", "l", "s1") == "one"
    store.reset()
    assert store.packs() == []


def test_summary_follows_what_the_learner_did(tmp_path):
    pack = load_pack(MINI)
    store = ProgressStore.open(tmp_path)
    assert [s.state for s in store.summarize(pack).lessons] == ["new", "new"]
    store.steps.visit("mini", "exercises", "double", seconds=12.5)
    lesson = store.summarize(pack).lessons[1]
    assert (lesson.state, lesson.exercises_solved, lesson.seconds) == ("progress", 0, 12.5)
    store.answers.record_attempt("mini", "exercises", "double", "check", passed=True, checks_passed=1, checks_total=1)
    assert store.summarize(pack).lessons[1].state == "done"
    store.answers.record_quiz("mini", "basics", "which-dim", "1", False)
    basics = store.summarize(pack).lessons[0]
    assert (basics.quiz_answered, basics.quiz_correct, basics.quizzes) == (1, 0, 6)


def test_time_on_a_step_is_capped_per_visit(tmp_path):
    store = ProgressStore.open(tmp_path)
    store.steps.visit("p", "l", "s", seconds=10 * 3600)  # a learner who walked away
    assert store.steps.get("p", "l", "s").seconds == pytest.approx(15 * 60)


def test_reset_forgets_the_cursor_and_the_free_grade_it_kept_for_the_steps_it_resets(tmp_path):
    """A reset progress opened the exercise with the cursor where the old one left it (a browser
    test's arrows then went one line too far)."""
    from tutor.record.progress import ProgressStore

    store = ProgressStore.open(tmp_path)
    for pack in ("mini", "other"):
        store.preferences.set(f"cursor:{pack}/exercises/double", "3,12")
        store.answers.record_quiz(pack, "basics", "why-shapes", "x", True, rating=4)
    store.reset("mini", step="double", lesson="exercises")
    assert store.preferences.get("cursor:mini/exercises/double") is None
    assert store.answers.rating("mini", "basics", "why-shapes") == 4  # another step: kept
    store.reset("mini")
    assert store.answers.rating("mini", "basics", "why-shapes") is None
    assert store.preferences.get("cursor:other/exercises/double") == "3,12"  # another pack: kept
    store.reset()
    assert store.preferences.get("cursor:other/exercises/double") is None
    assert store.answers.rating("other", "basics", "why-shapes") is None
    store.close()
