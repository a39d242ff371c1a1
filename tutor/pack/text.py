"""Learner-facing text: a plain string, or a mapping from language code to string."""

from __future__ import annotations

import re
from typing import Annotated, Any, Union

from tutor.pack.spec import Meta, Plain

_LANG = r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$"
_LANG_RE = re.compile(_LANG)

LangCode = Annotated[str, Meta("a language code such as en or zh", pattern=_LANG)]


def _text(value: Any) -> str | dict[str, str]:
    from pydantic_core import PydanticCustomError  # only ever called while validating

    if isinstance(value, str):
        return value
    if isinstance(value, dict) and value:
        for key, item in value.items():
            if not isinstance(key, str) or not _LANG_RE.match(key):
                raise PydanticCustomError(
                    "text_language", "'{key}' is not a language code (write en, zh, pt-BR...)", {"key": key}
                )
            if not isinstance(item, str):
                raise PydanticCustomError("text_value", "the {key} text must be a string", {"key": key})
        return dict(value)
    raise PydanticCustomError(
        "text_type", "expected text: a string, or a mapping from language code to string (en: ..., zh: ...)"
    )


#: Either one string for every language, or {"en": ..., "zh": ...}. One validator (not a pydantic
#: Union) so a wrong value gives one clear message instead of one per union member.
Text = Annotated[
    Union[str, dict[str, str]],
    Plain(_text, {
        "anyOf": [
            {"type": "string"},
            {"type": "object", "minProperties": 1,
             "propertyNames": {"pattern": _LANG}, "additionalProperties": {"type": "string"}},
        ],
        "description": "text, or a mapping from language code to text",
    }),
]


def resolve(text: "str | dict[str, str] | None", lang: str | None, fallback: str = "en") -> str:
    """The text in ``lang``, else in ``fallback`` (the pack's first language), else any."""
    if text is None:
        return ""
    if isinstance(text, str):
        return text
    for code in (lang, fallback):
        if code and code in text:
            return text[code]
    return next(iter(text.values()), "")
