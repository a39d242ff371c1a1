"""Shared fixtures for the built-in pack's tests: the pack, loaded once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor.pack.loader import load_pack

PACK_DIR = Path(__file__).resolve().parents[2] / "lessons" / "debugging-and-speed"
CASES_DIR = Path(__file__).resolve().parent / "cases"


@pytest.fixture(scope="session")
def pack():
    return load_pack(PACK_DIR)


def en(text) -> str:
    """The English of a pack text (the claims tests hold the English to; the Chinese says the same,
    and tests/packs/test_pack_zh.py keeps its code, numbers and placeholders the same)."""
    return text if isinstance(text, str) else text["en"]
