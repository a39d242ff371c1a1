"""The tutor's own folders and files are their owner's alone.

A learner's data folder holds their drafts, solutions and answers. On a shared machine (a
JupyterHub whose homes are 755, as ``useradd`` makes them) a database created with the umask's
0644 in a 0755 folder is readable by every other user: a classmate copied a learner's exercise
code from the ``drafts`` table. So the tutor creates its data folder (and each folder inside it)
0700 and its files 0600 whatever the umask or the home's mode: a database file is created 0600
before SQLite opens it, and SQLite gives its ``-wal``, ``-shm`` and ``-journal`` files the
database's own mode. A folder or file made before this (or by hand) that others can read is
repaired when the progress store opens, and the learner is told once (the repair leaves nothing
to say the next time). The tutor never creates the config folder; it repairs one it finds.

Only POSIX modes are handled; where ``os.chmod`` cannot change them (Windows) nothing is done.
A folder or file owned by someone else (a data folder an admin set up) is left as it is.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import IO

FOLDER_MODE = 0o700
FILE_MODE = 0o600
#: What SQLite writes beside a database, with the database's mode.
SQLITE_SIDES = ("-wal", "-shm", "-journal")
_POSIX = os.name == "posix"


def make_folder(path: Path, levels: int = 1) -> None:
    """``path`` made, its last ``levels`` folders (the tutor's own: ``data/cache/packs`` is 3)
    each with mode 0700 when made, the ones above them as ``mkdir -p`` makes them. Existing
    folders are left as they are (:func:`repair` changes them). Raises OSError as mkdir does."""
    if path.is_dir():
        return
    own = [path, *path.parents][:levels]
    if not own[-1].parent.is_dir():
        own[-1].parent.mkdir(parents=True, exist_ok=True)
    for folder in reversed(own):
        try:
            folder.mkdir(mode=FOLDER_MODE)
        except FileExistsError:
            if not folder.is_dir():
                raise
            continue
        if _POSIX:  # mkdir's mode passes through the umask, which may leave others' bits on
            os.chmod(folder, FOLDER_MODE)


def make_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 when it does not exist (an existing one is left as
    it is): SQLite then opens a file that is already private, and gives its side files its
    mode. An OSError (a read-only folder) is left to whoever opens the file next."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    except OSError:
        return
    os.close(fd)


def open_private(path: Path) -> IO[str]:
    """``open(path, "a+")`` for a small text file of the tutor's (a lock), created 0600."""
    make_file(path)
    return open(path, "a+")


def repair(path: Path) -> bool:
    """Take group's and others' permissions off ``path`` (a folder or file of this user's that
    exists); True when there were any. The owner's bits are kept (a folder made read-only on
    purpose stays so). Never raises."""
    if not _POSIX or not hasattr(os, "geteuid"):  # Windows (and its emulation here) has no owner uid
        return False
    try:
        found = os.stat(path)
    except OSError:
        return False
    if found.st_uid != os.geteuid() or not (found.st_mode & 0o077):
        return False
    if not (stat.S_ISDIR(found.st_mode) or stat.S_ISREG(found.st_mode)):
        return False
    try:
        os.chmod(path, stat.S_IMODE(found.st_mode) & 0o700)
    except OSError:
        return False
    return True


def database_files(path: Path) -> list[Path]:
    """A SQLite database and the files SQLite keeps beside it."""
    return [path, *(path.with_name(path.name + side) for side in SQLITE_SIDES)]


def repair_data(data_dir: Path, config_dir: Path | None = None) -> list[Path]:
    """The data folder, every file directly in it (the progress and grade cache databases with
    their side files, the app's lock, copies set aside), its pack cache and what that holds,
    and ``config_dir`` when given: each one others could read made private. The ones repaired,
    in order. The packs a learner put in ``packs/`` are theirs to share and are left alone."""
    folders = [data_dir, data_dir / "cache"] + ([config_dir] if config_dir is not None else [])
    files: list[Path] = []
    for folder in (data_dir, data_dir / "cache", *([config_dir] if config_dir is not None else [])):
        try:
            with os.scandir(folder) as entries:
                files += [Path(entry.path) for entry in entries if entry.is_file(follow_symlinks=False)]
        except OSError:
            continue
    return [path for path in [*folders, *sorted(files)] if repair(path)]
