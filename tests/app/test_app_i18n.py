"""The UI's own strings: one table, English complete, other languages falling back to it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tutor.core import i18n

APP = Path(i18n.__file__).parents[1] / "app"


def test_every_key_the_app_uses_exists_in_english():
    used = set()
    for path in APP.rglob("*.py"):
        used |= set(re.findall(r"""\bt\(\s*f?["']([a-z_.]+)["']""", path.read_text()))
    used = {key for key in used if not key.endswith(".")}
    missing = sorted(used - set(i18n.TABLE["en"]))
    assert not missing, f"keys used but not in the English table: {missing}"


def test_missing_translation_falls_back_to_english_and_formats():
    try:
        assert i18n.set_language("zh-CN") == "zh"
        assert i18n.t("key.help") == "帮助"
        assert i18n.t("exercise.failed", passed=1, total=3) == "1/3 checks passed."
    finally:
        i18n.set_language(None)


def test_unknown_language_uses_english_and_unknown_key_is_an_error():
    assert i18n.set_language("xx") == "en"
    with pytest.raises(KeyError):
        i18n.t("no.such.key")
