"""Finding packs: built-in, --pack folders, installed Python packages, and the user's folder."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from tutor.core import paths
from tutor.core.loader import PACK_FILE, Pack, PackError, Problem, load_pack

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


def discover(extra: list[str | Path] | None = None, data_dir: Path | None = None) -> list[FoundPack]:
    """Every pack the tutor can see, loaded; broken ones carry their problems."""
    locations: list[tuple[Path, str]] = [(p, "built-in") for p in builtin_pack_dirs()]
    locations += [(Path(p), "--pack") for p in extra or []]
    locations += _entry_point_dirs()
    user_dir = paths.user_packs_dir(data_dir or paths.default_data_dir())
    if user_dir.is_dir():
        locations += [(p, "user folder") for p in sorted(user_dir.iterdir()) if (p / PACK_FILE).is_file()]
    found = []
    for path, origin in locations:
        entry = FoundPack(path, origin)
        try:
            entry.pack = load_pack(path)
        except PackError as exc:
            entry.problems = exc.problems
        found.append(entry)
    return found
