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
