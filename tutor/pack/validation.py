"""Validating data into the format's records with pydantic (imported here, and only here).

Building a pydantic validator for the whole format takes a noticeable fraction of a second, so
it happens on first use and is kept for the process: loading a pack from YAML, ``schema``, and
tests. Starting the app on a cached pack never gets here (see ``tutor.pack.packcache``).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from tutor.pack.spec import materialize

T = TypeVar("T")

__all__ = ["ValidationError", "adapter", "json_schema", "validate"]


_ADAPTERS: dict[type, TypeAdapter[Any]] = {}


def adapter(cls: type[T]) -> TypeAdapter[T]:
    """The validator of ``cls``, built once per process."""
    found = _ADAPTERS.get(cls)
    if found is None:
        materialize()  # pydantic reads the records as dataclasses
        found = _ADAPTERS[cls] = TypeAdapter(cls)
    return found


def validate(cls: type[T], data: Any) -> T:
    """``data`` (plain YAML/JSON data) as an instance of ``cls``; raises pydantic's ValidationError."""
    return adapter(cls).validate_python(data)


def json_schema(cls: type) -> dict[str, Any]:
    """The JSON Schema of ``cls`` as an author writes it: the loader's own fields (``hidden`` ones,
    named with a leading underscore: a prelude's text, the names a solution uses) are not keys of
    the format, so they are left out."""
    schema: dict[str, Any] = _without_hidden(adapter(cls).json_schema())
    return schema


def _without_hidden(node: Any) -> Any:
    if isinstance(node, list):
        return [_without_hidden(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _without_hidden(value) for key, value in node.items()}
    properties = out.get("properties")
    if isinstance(properties, dict) and out.get("type") == "object":
        out["properties"] = {name: value for name, value in properties.items() if not name.startswith("_")}
        if isinstance(out.get("required"), list):
            out["required"] = [name for name in out["required"] if not name.startswith("_")]
    return out
