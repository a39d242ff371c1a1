"""`torch-tutor new`: a pack folder with one lesson holding every step kind, ready to edit."""

from __future__ import annotations

import getpass
import re
from pathlib import Path

from tutor.settings import paths
from tutor.errors import TutorError

TEMPLATE_DIR = Path(__file__).resolve().parents[1] / "_templates" / "new-pack"


class ScaffoldError(TutorError):
    """The folder cannot take a new pack; the message says why."""


def pack_id_for(folder: Path) -> str:
    slug = re.sub(r"[^a-z0-9_-]+", "-", folder.name.lower()).strip("-_")
    return slug[:64] or "my-pack"


def scaffold(folder: Path, *, title: str | None = None, author: str | None = None) -> list[Path]:
    """Write the template pack into ``folder`` (new or empty); returns the files written."""
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ScaffoldError(f"{folder} already exists and is not an empty folder; choose a new one")
    schema = paths.bundled_dir("assets") / "pack.schema.json"
    values = {
        "pack_id": pack_id_for(folder),
        "title": _yaml_string(title or folder.name.replace("-", " ").replace("_", " ").strip().capitalize()
                              or "My pack"),
        "author": _yaml_string(author or _default_author()),
        "folder": str(folder),
        # a copy beside pack.yaml, named relatively: it still works once the folder is shared
        "schema": "./pack.schema.json",
    }
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for template in sorted(TEMPLATE_DIR.iterdir()):
        target = folder / template.name
        target.write_text(template.read_text(encoding="utf-8").format(**values), encoding="utf-8")
        written.append(target)
    if schema.is_file():
        target = folder / "pack.schema.json"
        target.write_bytes(schema.read_bytes())
        written.append(target)
    return written


def _yaml_string(text: str) -> str:
    """A YAML scalar that stays a string whatever the user typed (quotes, colons, 'yes')."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _default_author() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (containers)
        return "you"
