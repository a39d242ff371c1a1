"""A cache of validated packs, so the app opens without reading YAML or building validators.

Loading a pack from YAML needs PyYAML and pydantic, and pydantic's validators for the format
take longer to build than the app takes to draw its first screen. The first load of a pack
stores the validated pack, pickled, under ``<data dir>/cache/packs``; later starts read it back
when nothing it was made from has changed:

- every file the pack was read from (pack.yaml and each lesson file): path, size, mtime;
- the code that defines the format (``spec``, ``step_base``, ``models``, ``check_models``, each quiz
  type's module, ``text``, ``loader``):
  path, size, mtime; and the tutor and Python versions.

Anything else (a missing, corrupt, unreadable or stale entry, a full disk, a read-only data
folder) falls back to loading the YAML, which is always the authority: the cache can make a
start faster, never different. A broken pack is never cached, so its problems are reported on
every start. The cache lives in the learner's own data folder, which only they can write to.

The built-in packs' entries are also kept beside this module's bytecode (``shared_dir``: where
Python writes ``.pyc`` files; none where it writes none), so a first start on a new data folder
reads them without YAML; such an entry, checked by the same stamps, is read only when it and its
folder are owned by the user (or the tutor's owner) and writable by no one else
(``stamp.trusted``).
"""

from __future__ import annotations

import os
import pickle
import sys
import zlib
from pathlib import Path
from typing import Any

from tutor.settings import private
from tutor.pack.models import Pack
from tutor.pack.stamp import file_stamp, format_stamp, trusted
from tutor.settings.paths import PACK_FILE

#: Bump when the layout of an entry changes.
ENTRY_FORMAT = 1


def cache_dir(data_dir: Path) -> Path:
    return data_dir / "cache" / "packs"


def shared_dir() -> Path:
    """The built-in packs' entries for every data folder: beside this module's bytecode, like the
    kept validators (``validation``), so a first start on a new data folder reads them too."""
    return Path(__file__).parent / "__pycache__" / "packs"


def _stamp(path: Path) -> tuple[str, int, int] | None:
    return file_stamp(path)


def _code_stamp() -> tuple[Any, ...]:
    return (ENTRY_FORMAT, *format_stamp())


def _entry_path(directory: Path, pack_file: Path) -> Path:
    """One entry per pack.yaml path. Two paths sharing a name is harmless: an entry records the
    absolute path of every file it came from, so the other pack's entry is simply stale."""
    raw = str(pack_file).encode("utf-8", "surrogateescape")
    return directory / f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}.pickle"


def _pack_file(path: Path) -> Path:
    path = Path(path)
    return (path if path.name == PACK_FILE or path.is_file() else path / PACK_FILE).absolute()


def read(path: Path, directory: Path, *, shared: bool = False) -> Pack | None:
    """The cached pack for the folder (or pack.yaml) ``path``, or None if there is no valid entry.
    ``shared``: ``directory`` is ``shared_dir()``, whose entries are read only when trusted."""
    entry = _entry_path(directory, _pack_file(path))
    try:
        with open(entry, "rb") as handle:
            if shared and not (trusted(os.fstat(handle.fileno())) and trusted(os.stat(directory))):
                return None
            header = pickle.load(handle)
            if (not isinstance(header, dict) or header.get("code") != _code_stamp()
                    or not header.get("files")
                    or any(_stamp(Path(name)) != (name, size, mtime) for name, size, mtime in header["files"])):
                return None
            pack = pickle.load(handle)
    except Exception:  # absent, unreadable, truncated, or written by other code: load the YAML
        return None
    return pack if isinstance(pack, Pack) else None


def write(pack: Pack, directory: Path, *, levels: int = 3) -> bool:
    """Store ``pack`` (as loaded from disk); False when it cannot be stored, which is harmless.
    ``levels``: how many of ``directory``'s last folders are the tutor's own (made 0700)."""
    if not pack.sources:
        return False
    files = [_stamp(Path(source).absolute()) for source in pack.sources]
    if any(stamp is None for stamp in files):
        return False
    header = {"code": _code_stamp(), "files": files}
    entry = _entry_path(directory, Path(pack.sources[0]).absolute())
    import tempfile

    try:
        private.make_folder(directory, levels=levels)  # DATA/cache/packs, each 0700 when made
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".entry-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                pickle.dump(header, handle, protocol=pickle.HIGHEST_PROTOCOL)
                pickle.dump(pack, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, entry)  # readers see the old entry or the new one, never half of one
        except BaseException:
            os.unlink(tmp)
            raise
    except (OSError, pickle.PicklingError, RecursionError):
        return False
    return True


def load(path: Path, directory: Path | None, *, builtin: bool = False) -> Pack:
    """``load_pack(path)``, through the cache in ``directory`` (None: no cache).

    With a cache the pack is loaded by its absolute path, so its root and locations hold
    wherever the next start is run from. A ``builtin`` pack is also kept in ``shared_dir()``
    (where Python writes bytecode), which a data folder without its entry reads.
    """
    if directory is not None:
        path = Path(path).absolute()
        cached = read(path, directory)
        if cached is None and builtin:
            cached = read(path, shared_dir(), shared=True)
            if cached is not None:
                write(cached, directory)  # the next start finds it in its own data folder
        if cached is not None:
            return cached
    from tutor.pack.loader import load_pack  # YAML and pydantic: only on a miss

    pack = load_pack(path)
    if directory is not None:
        write(pack, directory)
        if builtin and not sys.dont_write_bytecode:
            write(pack, shared_dir(), levels=1)
    return pack
