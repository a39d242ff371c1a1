"""Finding packs: built-in, --pack folders, installed Python packages, and the user's folder."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from tutor.pack import packcache
from tutor.settings import paths, private
from tutor.pack.models import Pack
from tutor.settings.paths import PACK_FILE
from tutor.pack.problems import PackError, Problem

ENTRY_POINT_GROUP = "torch_tutor.packs"


@dataclass
class FoundPack:
    """A pack location and, once loaded, the pack or why it failed."""

    path: Path
    origin: str  # "built-in", "--pack", "package <dist>", "user folder"
    pack: Pack | None = None
    problems: list[Problem] | None = None

    @property
    def ok(self) -> bool:
        return self.pack is not None


def builtin_pack_dirs() -> list[Path]:
    root = paths.bundled_dir("lessons")
    return sorted(p for p in root.iterdir() if (p / PACK_FILE).is_file()) if root.is_dir() else []


def _entry_point_dirs() -> list[tuple[Path, str]]:
    """Packs published as Python packages.

    The entry point names a module (or ``module:attribute``) whose folder holds pack.yaml, or
    whose attribute is a path to the pack folder.
    """
    from importlib import metadata

    found = []
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = ep.dist.name if ep.dist else ep.name
        try:
            target = ep.load()
        except Exception as exc:  # a broken third-party package must not stop discovery
            found.append((Path(f"<{ep.value}>"), f"package {dist} (cannot import: {exc})"))
            continue
        if isinstance(target, (str, Path)):
            path = Path(target)
        elif getattr(target, "__file__", None):
            path = Path(target.__file__).parent
        else:
            path = Path(f"<{ep.value}>")
        found.append((path, f"package {dist}"))
    return found


def _path_stamp() -> list[list[object]]:
    """What the installed packages depend on: every folder on sys.path with its mtime.

    Installing, upgrading or removing a distribution adds or removes its .dist-info folder, which
    changes the mtime of the folder holding it; so does an editable install's .pth file.
    """
    stamp: list[list[object]] = [[sys.version, sys.prefix]]
    for entry in sys.path:
        try:
            stamp.append([entry, os.stat(entry or ".").st_mtime_ns])
        except OSError:
            stamp.append([entry, None])
    return stamp


def _cached_entry_point_dirs(cache_file: Path) -> list[tuple[Path, str]]:
    """``_entry_point_dirs()``, remembered until the installed packages change.

    Reading every distribution's metadata (and importing each pack's module) costs more than a
    tenth of the app's start-up; the answer only changes when something is installed or removed.
    """
    stamp = _path_stamp()
    try:
        cached = json.loads(cache_file.read_text(encoding="utf-8"))
        if cached["stamp"] == stamp:
            return [(Path(path), origin) for path, origin in cached["found"]]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    found = _entry_point_dirs()
    if not any("cannot import" in origin for _, origin in found):  # retry broken ones next time
        try:
            private.make_folder(cache_file.parent, levels=2)  # DATA/cache, each 0700 when made
            tmp = cache_file.with_name(cache_file.name + f".{os.getpid()}.tmp")
            private.make_file(tmp)
            tmp.write_text(json.dumps({"stamp": stamp, "found": [[str(p), o] for p, o in found]}),
                           encoding="utf-8")
            os.replace(tmp, cache_file)
        except OSError:
            pass
    return found


def discover(extra: list[str | Path] | None = None, data_dir: Path | None = None, *,
             cache: bool = False) -> list[FoundPack]:
    """Every pack the tutor can see, loaded; broken ones carry their problems.

    ``cache``: read and keep validated packs in the data folder's cache (the app's start-up, and
    the commands that find a pack among these: ``check`` by exercise, ``progress``, ``reset``,
    ``review``, ``serve``, a pack named by id to ``grade``, ``autograder`` or ``handin``; an entry
    is used only while every file it came from is unchanged, so an edit is always seen); ``list``
    and ``validate``, which check packs for authors, always read the YAML.
    """
    locations: list[tuple[Path, str]] = [(p, "built-in") for p in builtin_pack_dirs()]
    locations += [(Path(p), "--pack") for p in extra or []]
    data_dir = data_dir or paths.default_data_dir()
    locations += (_cached_entry_point_dirs(data_dir / "cache" / "entry-points.json") if cache
                  else _entry_point_dirs())
    user_dir = paths.user_packs_dir(data_dir)
    cache_dir = packcache.cache_dir(data_dir) if cache else None
    if user_dir.is_dir():
        locations += [(p, "user folder") for p in sorted(user_dir.iterdir()) if (p / PACK_FILE).is_file()]
    found = []
    for path, origin in locations:
        entry = FoundPack(path, origin)
        try:
            entry.pack = packcache.load(path, cache_dir, builtin=origin == "built-in")
        except PackError as exc:
            entry.problems = exc.problems
        except Exception as exc:  # a pack that finds a bug of ours is still one broken pack, and
            # `list` and the app show the others (issue 50: a 5000-digit integer's ValueError broke both)
            entry.problems = [Problem(path / PACK_FILE, None, None,
                                      f"could not be read: {type(exc).__name__}: {str(exc)[:300]} (a bug in "
                                      "torch-tutor: please report it with this pack)")]
        found.append(entry)
    return found
