from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

MINIMAL_LESSON = """\
id: basics
title: Basics
steps:
  - id: hello
    kind: prose
    body: Hello.
"""

PACK_HEADER = """\
format_version: 1
id: demo
title: Demo pack
version: 1.0.0
languages: [en, zh]
"""


@pytest.fixture
def make_pack(tmp_path: Path):
    """Write a pack folder: pack.yaml (header + lessons block) and any extra files."""

    def make(lessons: str | None = None, header: str = PACK_HEADER, files: dict[str, str | bytes] | None = None,
             pack_yaml: str | None = None) -> Path:
        root = tmp_path / "pack"
        root.mkdir(exist_ok=True)
        if pack_yaml is None:
            if lessons is None:
                lessons = "lessons:\n  - lesson.yaml\n"
                files = {"lesson.yaml": MINIMAL_LESSON, **(files or {})}
            pack_yaml = textwrap.dedent(header) + textwrap.dedent(lessons)
        (root / "pack.yaml").write_text(pack_yaml, encoding="utf-8")
        for name, content in (files or {}).items():
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(textwrap.dedent(content), encoding="utf-8")
        return root

    return make


def write_one_lesson_pack(folder: Path, pack_id: str, title: str, version: str = "0.1.0") -> Path:
    """pack.yaml and one minimal lesson file in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pack.yaml").write_text(f"format_version: 1\nid: {pack_id}\ntitle: {title}\n"
                                      f"version: '{version}'\nlessons: [l.yaml]\n")
    (folder / "l.yaml").write_text(MINIMAL_LESSON)
    return folder


def install_tiny_pack(site: Path) -> Path:
    """Lay out an installed distribution in ``site`` publishing a one-lesson pack (entry point
    ``torch_tutor.packs``), as pip would; returns the pack's folder."""
    package = write_one_lesson_pack(site / "tiny_pack", "tiny", "Tiny")
    (package / "__init__.py").write_text("")
    dist = site / "tiny_pack-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-pack\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text("[torch_tutor.packs]\ntiny = tiny_pack\n")
    return package
