"""Mutated packs: the loader's only outcomes are a loaded pack or a PackError."""

from __future__ import annotations

import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.test_loader import EVERY_STEP
from tutor.pack.loader import PackError, load_pack
from tutor.pack.models import Pack

HEADER = "format_version: 1\nid: demo\ntitle: Demo\nversion: 1.0.0\nlessons: [lesson.yaml]\n"
SPECIALS = ["\t", ":", "- ", "{", "}", "[", "]", "&a ", "*a", "!!python/object:os.system ", "\x00", "\xff",
            "'", '"', "#", "\n", "  ", "|", ">", "?", "%YAML 1.1\n", "---\n", "...", "\ufeff", "é", "0x", "~"]


def _mutate(text: str, edits: list[tuple[int, int, str]]) -> str:
    for position, delete, insert in edits:
        position %= len(text) + 1
        text = text[:position] + insert + text[position + delete:]
    return text


edit = st.tuples(st.integers(0, 10_000), st.integers(0, 8),
                 st.one_of(st.sampled_from(SPECIALS), st.text(max_size=6)))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(header_edits=st.lists(edit, max_size=3), lesson_edits=st.lists(edit, min_size=1, max_size=6),
       as_bytes=st.booleans())
def test_mutated_packs_load_or_fail_cleanly(tmp_path_factory, header_edits, lesson_edits, as_bytes):
    root = Path(tmp_path_factory.mktemp("pack"))
    (root / "pack.yaml").write_text(_mutate(HEADER, header_edits), encoding="utf-8", errors="surrogateescape")
    lesson = _mutate(EVERY_STEP, lesson_edits)
    if as_bytes:
        (root / "lesson.yaml").write_bytes(lesson.encode("utf-8", "surrogatepass"))
    else:
        (root / "lesson.yaml").write_text(lesson, encoding="utf-8", errors="surrogatepass")
    try:
        pack = load_pack(root)
    except PackError as exc:
        assert exc.problems
        for problem in exc.problems:
            text = str(problem)
            assert text.startswith(str(root)) and problem.message
    else:
        assert isinstance(pack, Pack)
    finally:
        shutil.rmtree(root, ignore_errors=True)
