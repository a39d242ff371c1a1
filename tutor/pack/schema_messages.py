"""Pydantic's validation errors as located, human messages: one problem per place in the file.

Pydantic reports a location (keys, indexes and union labels) and an error type; this module finds
the place in the YAML (``Source.walk`` skips the labels), groups the errors found there, and words
them with the table :data:`_BY_KIND` (a type's own sentence) or pydantic's message with a hint.
"""

from __future__ import annotations

import difflib
import types
import typing
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Union

from tutor.pack.problems import Problem
from tutor.pack.spec import format_fields, is_record
from tutor.pack.yaml_source import Source

if typing.TYPE_CHECKING:
    from pydantic import ValidationError
    from pydantic_core import ErrorDetails


def type_name(value: Any) -> str:
    """What a value is, in the words of a YAML author."""
    return {dict: "a mapping", list: "a list", str: "a string", bool: "true/false", int: "a number",
            float: "a number", type(None): "nothing (null)"}.get(type(value), type(value).__name__)


@dataclass(frozen=True)
class _Place:
    """The errors pydantic found at one place of the validated data."""

    errors: list[ErrorDetails]
    path: tuple[Any, ...]  # from the validated data to the place (labels left out)
    value: Any  # the data there
    data: Any  # the validated data
    model: type  # the record it was validated as

    @property
    def error(self) -> ErrorDetails:
        return self.errors[0]


class _Said(NamedTuple):
    message: str
    #: the path named before the message, when not the place's own
    where: tuple[Any, ...] | None = None
    #: where the problem points, when not at the place itself
    at: tuple[Any, ...] | None = None
    #: point at the key rather than its value
    key: bool = False


def validation_problems(source: Source, data: Any, base: tuple[Any, ...], model: type,
                        exc: ValidationError) -> list[Problem]:
    """Pydantic's errors for ``data`` (found at ``base`` in ``source``) validated as ``model``."""
    grouped: dict[tuple[Any, ...], list[ErrorDetails]] = {}
    for error in exc.errors(include_url=False):
        found = source.walk(base + tuple(error["loc"]), skip=True).found
        grouped.setdefault(found[len(base):], []).append(error)
    problems = []
    for path, errors in grouped.items():
        place = _Place(errors, path, source.walk(base + path).value, data, model)
        said = _say(place)
        where = _pretty_path(base + (path if said.where is None else said.where))
        line, col = source.locate(base + (path if said.at is None else said.at), key=said.key)
        problems.append(Problem(source.path, line, col, (f"{where}: " if where else "") + said.message))
    return problems


def _say(place: _Place) -> _Said:
    kind = place.error["type"]
    if len(place.errors) > 1 and kind not in _WHATEVER_ELSE:
        return _several(place)
    handler = _BY_KIND.get(kind)
    return (handler(place) if handler is not None else None) or _pydantic_says(place)


# --------------------------------------------------------------------------- one per kind


def _unknown_key(place: _Place) -> _Said:
    name = place.path[-1]
    message = f"unknown key {name!r}"
    owner = _model_at(place.model, place.data, place.path[:-1])
    if owner is not None:
        allowed = [field for field in format_fields(owner) if field not in ("kind", "style")]
        close = difflib.get_close_matches(str(name), allowed, n=1, cutoff=0.6)
        message += f" (did you mean {close[0]!r}?)" if close else f"; allowed here: {', '.join(allowed)}"
    parent = _data_at(place.data, place.path[:-1])
    if isinstance(parent, dict) and name in parent and parent[name] is None and len(parent) > 1:
        # {signature: where(q, a, b)}: inside {...} a comma ends the value, and ` b)` became a key
        message += (" (a comma inside {...} ends a value: put a value that holds a comma in quotes, "
                    "e.g. signature: \"where(q, a, b)\")")
    return _Said(message, where=place.path[:-1], key=True)


def _data_at(data: Any, path: tuple[Any, ...]) -> Any:
    for element in path:
        if isinstance(data, dict) and element in data:
            data = data[element]
        elif isinstance(data, list) and isinstance(element, int) and 0 <= element < len(data):
            data = data[element]
        else:
            return None
    return data


def _missing(place: _Place) -> _Said:
    return _Said(f"missing required key {place.error['loc'][-1]!r}")


def _bad_tag(place: _Place) -> _Said:
    ctx = place.error.get("ctx", {})
    tag_name = ctx.get("discriminator", "kind").strip("'")
    expected = ctx.get("expected_tags", "")
    if place.error["type"] == "union_tag_not_found":
        return _Said(f"missing {tag_name!r}: one of {expected}")
    tag = ctx.get("tag")
    options = [t.strip(" '") for t in expected.split(",")]
    close = difflib.get_close_matches(str(tag), options, n=1, cutoff=0.6)
    message = f"unknown {tag_name} {tag!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
    return _Said(message + f"; expected one of {expected}", at=place.path + (tag_name,))


def _format_version(place: _Place) -> _Said | None:
    if place.path != ("format_version",):
        return None
    return _Said(f"this torch-tutor reads format_version 1, the pack says {place.value!r} "
                 "(a newer torch-tutor may read it)")


def _bad_id(place: _Place) -> _Said | None:
    if not (place.path and str(place.path[-1]).endswith("id")):
        return None
    return _Said(f"{place.value!r} is not a valid id: use lower-case letters, digits, '-' and '_'")


def _record_wanted(place: _Place) -> _Said:
    """A scalar where a record belongs: show the mapping it takes, not 'an instance of Ratio'."""
    from tutor.pack import check_models, models

    name = str(place.error.get("ctx", {}).get("class_name"))
    record = getattr(check_models, name, None) or getattr(models, name, None)
    example = "{key: value}"
    if record is not None and is_record(record):
        fields = [field for field in format_fields(record) if field not in ("kind", "style")][:4]
        example = "{" + ", ".join(f"{field}: ..." for field in fields) + "}"
    return _Said(f"expected a mapping such as {example}, got {type_name(place.value)}")


def _length(place: _Place) -> _Said | None:
    """A list with too few or too many entries: how many it takes, in an author's words (not
    pydantic's "List should have at least 2 items after validation")."""
    ctx = place.error.get("ctx", {})
    actual = ctx.get("actual_length")
    if not isinstance(place.value, list) or actual is None:
        return None
    if place.error["type"] == "too_short":
        bound = f"needs at least {ctx.get('min_length')}"
    else:
        bound = f"takes at most {ctx.get('max_length')}"
    return _Said(f"{bound} {'entry' if bound.endswith(' 1') else 'entries'}, this has {actual}")


def _several(place: _Place) -> _Said:
    """Pydantic tried every member of a union: say which kinds of value would do."""
    wanted = sorted({_WANTED.get(error["type"], error["msg"]) for error in place.errors})
    return _Said(f"got {type_name(place.value)}; expected " + " or ".join(wanted))


def _pydantic_says(place: _Place) -> _Said:
    kind, value = place.error["type"], place.value
    message = place.error["msg"]
    if kind.endswith("_type") or kind.endswith("_parsing"):
        message += f" (got {type_name(value)})"
        if isinstance(value, bool) and "string" in message:
            message += "; YAML reads yes/no/on/off as true/false: put the text in quotes"
        elif isinstance(value, (int, float)) and "string" in message:
            message += f"; write it in quotes: '{value}'"
    return _Said(message.replace("Value error, ", ""))


#: The error types with their own sentence; a handler that returns None leaves the error to
#: pydantic's message (``literal_error`` is worded only for format_version, a pattern only for ids).
_BY_KIND: dict[str, Callable[[_Place], _Said | None]] = {
    "extra_forbidden": _unknown_key,
    "unexpected_keyword_argument": _unknown_key,
    "missing": _missing,
    "union_tag_invalid": _bad_tag,
    "union_tag_not_found": _bad_tag,
    "literal_error": _format_version,
    "string_pattern_mismatch": _bad_id,
    "dataclass_type": _record_wanted,
    "too_short": _length,
    "too_long": _length,
}
#: Types worded from their first error however many others pydantic reported at the same place.
_WHATEVER_ELSE = frozenset({"extra_forbidden", "unexpected_keyword_argument", "missing",
                            "union_tag_invalid", "union_tag_not_found"})
#: What each member of a union wanted, for :func:`_several`.
_WANTED = {"string_type": "a string", "int_type": "an integer", "int_parsing": "an integer",
           "bool_type": "true/false", "bool_parsing": "true/false", "float_type": "a number",
           "dict_type": "a mapping", "list_type": "a list", "none_required": "nothing"}


# --------------------------------------------------------------------------- helpers


def _pretty_path(path: tuple[Any, ...]) -> str:
    out = ""
    for element in path:
        out += f"[{element}]" if isinstance(element, int) else (f".{element}" if out else str(element))
    return out


def _unwrap(annotation: Any) -> list[type]:
    """The record classes an annotation may hold (through Optional, list, dict, Annotated, Union)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType, list, dict, tuple):
        return [m for arg in typing.get_args(annotation) for m in _unwrap(arg)]
    if is_record(annotation):
        return [annotation]
    return []


def _model_at(model: type, data: Any, path: tuple[Any, ...]) -> type | None:
    """The record class that validated the mapping at ``path`` (which exists in ``data``), for
    did-you-mean suggestions."""
    candidates = [model]
    for element in path:
        inside_list = isinstance(data, list)
        data = data[element]
        if inside_list:
            continue
        next_candidates: list[type] = []
        for cand in candidates:
            info = format_fields(cand).get(element) if isinstance(element, str) else None
            if info is not None:
                next_candidates.extend(_unwrap(info.annotation))
        if not next_candidates:
            return None
        candidates = next_candidates
    if isinstance(data, dict) and len(candidates) > 1:
        # a discriminated union: pick the member whose literal tag matches the data
        for cand in candidates:
            fields = format_fields(cand)
            for name in ("kind", "style"):
                info = fields.get(name)
                if info is not None and data.get(name) in typing.get_args(info.annotation):
                    if name == "style" or "style" not in fields:
                        return cand
    return candidates[0] if len(candidates) == 1 else None


__all__ = ["type_name", "validation_problems"]
