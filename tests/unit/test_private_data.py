"""Issue 50: on a shared hub (homes 755, umask 022) a learner's progress database was created 644
in a 755 folder, and another user read its `drafts` table. The tutor's data folder is 0700 and
its files 0600 whatever the umask; a layout made before is repaired, and said once."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tutor.pack.discovery import discover
from tutor.record.progress import ProgressStore
from tutor.record.progress.storage import Storage
from tutor.grading.gradebook import GradeCache

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
pytestmark = posix_only


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture
def shared_home():
    """A home folder as `useradd` makes it (755) under a folder every user can pass through, as
    /home is: pytest's own tmp_path is 700 and would hide everything from another user."""
    root = Path(tempfile.mkdtemp(prefix="tt-hub-"))
    os.chmod(root, 0o755)
    home = root / "alice"
    home.mkdir()
    os.chmod(home, 0o755)
    try:
        yield home
    finally:
        shutil.rmtree(root, ignore_errors=True)


def tutor(*args: str, home: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_TUTOR_", "XDG_"))}
    return subprocess.run([sys.executable, "-m", "tutor", *args], capture_output=True, text=True, timeout=300,
                          env={**clean, "HOME": str(home), **(env or {})}, cwd=home,
                          preexec_fn=lambda: os.umask(0o022))


def test_a_new_data_folder_and_its_files_are_the_learners_alone(tmp_path, umask_022):
    data = tmp_path / "home" / ".local" / "share" / "torch-tutor"
    store = ProgressStore.open(data)
    try:
        assert store.storage.notice is None
        store.drafts.save("pack", "lesson", "step", "def secret(): ...")
        assert store.claim() is None
        assert mode(data) == 0o700 and mode(data.parent) == 0o755  # ~/.local/share is not the tutor's
        names = {p.name: mode(p) for p in data.iterdir()}
        assert names == {"progress.sqlite3": 0o600, "progress.sqlite3-wal": 0o600, "progress.sqlite3-shm": 0o600,
                         "app.lock": 0o600}
    finally:
        store.close()


def test_the_grade_cache_and_the_pack_cache_are_private_too(tmp_path, umask_022):
    data = tmp_path / "instructor-data"
    cache = GradeCache(data / "grade-cache.sqlite")
    assert cache.usable
    assert mode(data) == 0o700 and mode(data / "grade-cache.sqlite") == 0o600
    other = tmp_path / "learner-data"
    assert [found for found in discover(data_dir=other, cache=True) if found.pack is not None]
    assert mode(other) == 0o700 and mode(other / "cache") == 0o700 and mode(other / "cache" / "packs") == 0o700
    written = [p for p in (other / "cache").rglob("*") if p.is_file()]
    assert written and {mode(p) for p in written} == {0o600}, written


def _old_layout(home: Path) -> tuple[Path, Path]:
    """What a tutor before this change left: 755 folders, a 644 database holding a draft."""
    data = home / ".local" / "share" / "torch-tutor"
    config = home / ".config" / "torch-tutor"
    old = os.umask(0o022)
    try:
        data.mkdir(parents=True)
        config.mkdir(parents=True)
        (config / "config.toml").write_text('language = "en"\n')
        store = ProgressStore.open(data)
        store.drafts.save("p", "l", "s", "def answer(): return 42")
        store.claim()
        store.close()
        for path in (data, config):
            os.chmod(path, 0o755)
        for path in (data / "progress.sqlite3", data / "app.lock"):
            os.chmod(path, 0o644)
    finally:
        os.umask(old)
    assert mode(data) == mode(config) == 0o755 and mode(data / "progress.sqlite3") == 0o644
    return data, config


def test_a_layout_made_before_is_repaired_and_said_once(shared_home):
    data, config = _old_layout(shared_home)
    first = tutor("progress", home=shared_home)
    assert first.returncode == 0, first.stderr
    assert ("Other users of this machine could read 5 of your torch-tutor folders and files (the data folder "
            f"{data} and what it holds); now only you can.") in first.stderr
    assert mode(data) == mode(config) == 0o700
    assert {p.name: mode(p) for p in [*data.iterdir(), *config.iterdir()] if p.is_file()} == {
        "progress.sqlite3": 0o600, "app.lock": 0o600, "config.toml": 0o600}
    again = tutor("progress", home=shared_home)
    assert again.returncode == 0, again.stderr
    assert "could read" not in again.stderr
    # the draft is still there, the database a progress file of this tutor's
    store = ProgressStore.open(data)
    assert store.drafts.get("p", "l", "s") == "def answer(): return 42"
    store.close()


def test_commands_that_print_no_other_notice_say_the_repair_too(shared_home):
    """`handin` (and `check`) print the store's notice only when it matters to them; the repair
    is said by each, once: the next open finds nothing to repair."""
    data, _config = _old_layout(shared_home)
    first = tutor("handin", "--learner", "alice", home=shared_home)  # nothing solved: it says so, after
    assert "Traceback" not in first.stderr and "nothing to hand in" in first.stderr
    assert first.stderr.count("now only you can") == 1, first.stderr
    again = tutor("handin", "--learner", "alice", home=shared_home)
    assert "nothing to hand in" in again.stderr and "now only you can" not in again.stderr, again.stderr
    assert mode(data) == 0o700


def test_the_repair_is_said_in_chinese(shared_home):
    data, _config = _old_layout(shared_home)
    done = tutor("--language", "zh", "progress", home=shared_home)
    assert done.returncode == 0, done.stderr
    assert f"本机的其他用户曾能读取你的 5 个 torch-tutor 目录和文件（数据目录 {data} 及其中的内容）；现在只有你能读取。" \
        in done.stderr


def test_a_folder_made_read_only_on_purpose_keeps_its_owner_bits(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes a read-only folder anyway")
    data = tmp_path / "data"
    data.mkdir()
    os.chmod(data, 0o555)
    try:
        storage = Storage.open(data)
        assert mode(data) == 0o500
        assert storage.notice is not None and "now only you can" in storage.notice
        storage.close()
    finally:
        os.chmod(data, 0o700)


@pytest.mark.skipif(os.geteuid() != 0 or not Path("/usr/bin/python3").exists(),
                    reason="needs root to act as a second user, and a Python that user can run")
def test_another_user_cannot_read_the_drafts(shared_home):
    """The attack itself: user `nobody` opens alice's progress database and reads `drafts` (the
    system's Python: nobody cannot reach this checkout's)."""
    done = tutor("progress", home=shared_home)
    assert done.returncode == 0, done.stderr
    store = ProgressStore.open(shared_home / ".local" / "share" / "torch-tutor")
    store.drafts.save("p", "l", "s", "def answer(): return 42")
    store.close()
    database = shared_home / ".local" / "share" / "torch-tutor" / "progress.sqlite3"
    thief = ("import shutil, sqlite3, sys, tempfile\n"
             "copy = tempfile.mktemp(suffix='.sqlite3')\n"
             "shutil.copyfile(sys.argv[1], copy)\n"
             "print(sqlite3.connect(copy).execute('SELECT code FROM drafts').fetchall())\n")

    def as_nobody() -> None:
        os.setgid(65534)
        os.setuid(65534)

    stolen = subprocess.run(["/usr/bin/python3", "-c", thief, str(database)], capture_output=True, text=True,
                            timeout=60, preexec_fn=as_nobody, cwd="/")
    assert "def answer" not in stolen.stdout
    assert stolen.returncode != 0 and "PermissionError" in stolen.stderr
