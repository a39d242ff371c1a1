"""Nothing the learner typed is lost, and a healthy progress file is never "repaired" (issue 11):
a full disk, a read-only data folder, a locked file, a newer file, wrong-typed values, and two
apps on one data folder."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tutor.cli.main import main
from tutor.record.progress import FILE_NAME, SCHEMA_VERSION, ProgressStore

from app_support import MINI, SIZE, screen_text, settle

KEY = ("mini", "exercises", "double")
BIG = "x = 1  # " + "typed " * 20000  # larger than the pages a nearly full file has left


def _fill_up(store: ProgressStore) -> None:
    """Make SQLite see a full disk: the file may not grow by one more page."""
    pages = store.storage._conn.execute("PRAGMA page_count").fetchone()[0]
    store.storage._conn.execute(f"PRAGMA max_page_count = {pages}")


def _free_up(store: ProgressStore) -> None:
    store.storage._conn.execute("PRAGMA max_page_count = 1073741823")


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


# ---------------------------------------------------------------------------- full disk

def test_a_full_disk_keeps_the_draft_in_memory_says_so_and_retries(tmp_path):
    store = ProgressStore.open(tmp_path)
    store.drafts.save(*KEY, "small")
    _fill_up(store)
    assert store.drafts.save(*KEY, BIG) is False  # no exception
    assert "disk is full" in store.storage.write_error
    assert store.drafts.get(*KEY) == BIG and store.steps.get(*KEY).draft  # the app reads back what was typed
    store.steps.visit(*KEY)  # other writes fail quietly too
    _free_up(store)
    store.positions.set("mini", "exercises", "double")  # the next write that succeeds...
    assert store.drafts.unsaved == {} and store.storage.write_error is None  # ...writes the draft kept in memory
    store.close()
    again = ProgressStore.open(tmp_path)
    assert again.drafts.get(*KEY) == BIG
    again.close()


def test_a_full_disk_on_a_real_small_filesystem(tmp_path):
    """The same on a real full disk: a 1 MiB tmpfs (root only; skipped elsewhere)."""
    mount = tmp_path / "small"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        store = ProgressStore.open(mount)
        store.drafts.save(*KEY, "small")
        with contextlib.suppress(OSError), open(mount / "filler", "wb", buffering=0) as filler:
            while True:  # until the disk is full
                filler.write(b"\0" * 4096)
        assert store.drafts.save(*KEY, BIG) is False
        assert store.drafts.get(*KEY) == BIG and store.storage.write_error
        (mount / "filler").unlink()
        assert store.drafts.retry() is True
        store.close()
        again = ProgressStore.open(mount)
        assert again.drafts.get(*KEY) == BIG
        again.close()
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


async def test_the_app_keeps_working_on_a_full_disk_and_will_not_quit_with_unsaved_work(make_app):
    from tutor.app.modals.confirm import ConfirmScreen
    from tutor.app.widgets.editor import CodeEditor

    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        editor = app.screen.query_one(CodeEditor)
        _fill_up(app.store)
        editor.focus()
        editor.insert(BIG[:20000])
        await settle(pilot)
        editor.flush()  # as the debounce would, 0.4 s later
        await settle(pilot)
        for bar in app.screen.query("StatusBar"):
            bar.refresh_status()
        await settle(pilot)
        assert app.is_running
        text = screen_text(app)
        assert "NOT SAVED: 1 draft(s) in memory only" in text, text
        await pilot.press("ctrl+q")
        await settle(pilot)
        assert app.is_running and isinstance(app.screen, ConfirmScreen)  # asks before losing it
        assert "could not be saved" in screen_text(app)
        await pilot.press("escape")
        await settle(pilot)
        _free_up(app.store)
        await pilot.press("ctrl+q")  # space again: the draft is written and the app quits
        await settle(pilot)
        assert not app.is_running or not isinstance(app.screen, ConfirmScreen)
    assert app.store.drafts.unsaved == {}
    assert BIG[:20000] in app.store.drafts.get(*KEY)


# ---------------------------------------------------------------------------- read-only folder

@pytest.fixture
def readonly_data(tmp_path):
    """A data folder holding a healthy progress file, then made read-only (a read-only mount
    as root, for whom permissions do not count; file modes otherwise)."""
    folder = tmp_path / "data"
    folder.mkdir()
    root = os.geteuid() == 0
    if root and subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(folder)],
                               capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    store = ProgressStore.open(folder)
    store.drafts.save(*KEY, "my draft")
    store.answers.record_quiz("mini", "basics", "which-dim", "0", True)
    store.close()
    if root:
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
    else:
        for path in folder.iterdir():
            path.chmod(0o444)
        folder.chmod(0o555)
    try:
        yield folder
    finally:
        if root:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True)
        else:
            folder.chmod(0o755)


def test_a_read_only_folder_shows_progress_and_renames_nothing(readonly_data):
    before = _files(readonly_data)
    store = ProgressStore.open(readonly_data)
    assert not store.storage.persistent and "read-only" in store.storage.notice
    assert store.drafts.get(*KEY) == "my draft"  # what is there is shown
    store.drafts.save(*KEY, "typed now")  # works in memory for this session
    assert store.drafts.get(*KEY) == "typed now"
    store.close()
    assert _files(readonly_data) == before  # nothing renamed, nothing written


def test_progress_and_reset_on_a_read_only_folder_give_no_traceback(readonly_data, tmp_path, capsys):
    before = _files(readonly_data)
    assert main(["--data-dir", str(readonly_data), "--pack", str(MINI), "progress"]) == 0
    out = capsys.readouterr()
    assert "Mini pack" in out.out and "read-only" in out.err and "Traceback" not in out.err
    assert main(["--data-dir", str(readonly_data), "--pack", str(MINI), "reset", "mini", "--yes"]) == 1
    out = capsys.readouterr()
    assert "Nothing was reset" in out.err and "Traceback" not in out.err
    assert _files(readonly_data) == before


async def test_the_app_opens_on_a_read_only_folder(readonly_data, make_app):
    app = make_app(data_dir=readonly_data, start_lesson="exercises")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "progress not saved" in text and "my draft" in text


# ---------------------------------------------------------------------------- locks

def test_a_file_held_by_a_writer_is_waited_on_then_busy_never_moved(tmp_path):
    ProgressStore.open(tmp_path).close()
    other = sqlite3.connect(tmp_path / FILE_NAME, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO meta VALUES ('other', 'writer')")
    try:
        store = ProgressStore.open(tmp_path, wait=0.3)
        assert store.storage.notice is None  # reading is not blocked by a writer
        assert store.drafts.save(*KEY, "typed") is False
        assert "busy" in store.storage.write_error and store.drafts.get(*KEY) == "typed"
        other.execute("COMMIT")
        assert store.drafts.retry() is True
        store.close()
    finally:
        other.close()
    assert not list(tmp_path.glob("*corrupt*"))
    again = ProgressStore.open(tmp_path)
    assert again.drafts.get(*KEY) == "typed"
    again.close()


def test_an_exclusively_locked_file_is_reported_busy_never_moved_aside(tmp_path):
    store = ProgressStore.open(tmp_path)
    store.drafts.save(*KEY, "keep me")
    store.close()
    other = sqlite3.connect(tmp_path / FILE_NAME, isolation_level=None)
    other.execute("PRAGMA locking_mode=EXCLUSIVE")
    other.execute("BEGIN EXCLUSIVE")
    try:
        locked = ProgressStore.open(tmp_path, wait=0.3)
        assert "busy" in locked.storage.notice and not locked.storage.persistent
        assert locked.storage.backup is None
        locked.close()
    finally:
        other.execute("COMMIT")
        other.close()
    assert not list(tmp_path.glob("*corrupt*"))
    again = ProgressStore.open(tmp_path)
    assert again.storage.notice is None and again.drafts.get(*KEY) == "keep me"
    again.close()


def test_two_apps_on_one_data_folder_are_told(tmp_path):
    first = ProgressStore.open(tmp_path)
    assert first.claim() is None
    second = ProgressStore.open(tmp_path)
    message = second.claim()
    assert message and f"process {os.getpid()}" in message and "last one to save wins" in second.storage.notice
    second.close()
    first.close()
    third = ProgressStore.open(tmp_path)
    assert third.claim() is None  # the first has gone: no warning
    third.close()


# ---------------------------------------------------------------------------- newer file, wrong types

def test_a_newer_file_is_backed_up_once_not_at_every_start(tmp_path):
    store = ProgressStore.open(tmp_path)
    store.drafts.save(*KEY, "keep me")
    store.storage._conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")  # what a newer tutor writes
    store.close()
    for _ in range(3):
        ProgressStore.open(tmp_path).close()
    assert len(list(tmp_path.glob(f"{FILE_NAME}.v*-backup*"))) == 1


def test_wrong_typed_values_do_not_crash_progress(tmp_path, capsys):
    store = ProgressStore.open(tmp_path)
    store.answers.record_quiz("mini", "basics", "which-dim", "0", True)
    store.answers.record_attempt(*KEY, "check", passed=True)
    store.steps.use_hint(*KEY)
    store.close()
    conn = sqlite3.connect(tmp_path / FILE_NAME)
    conn.execute("UPDATE steps SET seconds='lots', hints_used='some', solution_seen=x'00ff'")
    conn.execute("UPDATE quiz SET correct='yes', tries='many', answer=x'ff'")
    conn.execute("UPDATE attempts SET passed='?'")
    conn.execute("UPDATE cards SET due='soon', stability='high', state='x'")
    conn.commit()
    conn.close()
    for argv in (["progress"], ["progress", "--json"], ["review", "--due"], ["review", "--due", "--json"]):
        assert main(["--data-dir", str(tmp_path), "--pack", str(MINI), *argv]) == 0, argv
        assert "Traceback" not in capsys.readouterr().err
