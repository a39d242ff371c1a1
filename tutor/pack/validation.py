"""Validating data into the format's records with pydantic (imported here, and only here).

Building a pydantic validator for the whole format takes a noticeable fraction of a second, so
it happens on first use and is kept for the process: loading a pack from YAML, ``schema``, and
tests. Starting the app on a cached pack never gets here (see ``tutor.pack.packcache``).

Most of that build is pydantic's Python-side schema generation; the validator it makes (a
pydantic-core ``SchemaValidator``) pickles, and is rebuilt from its core schema in milliseconds.
So, like Python's own ``.pyc`` files, the validators built are kept beside this module in
``__pycache__``, stamped with the code that defines the format (``stamp.format_stamp``: the
format's modules, the tutor's and Python's versions), this module and pydantic's and
pydantic-core's files; a later process (a first start on a new data folder, a pack read again
after an edit) loads them without importing pydantic. Nothing about a pack is in them: every
pack is still read and validated, with the same validator, so the same problems. The file is
used only when it and its folder belong to the user running the tutor (or to the owner of the
package) and no one else can write them; Python writes no ``.pyc`` (``PYTHONDONTWRITEBYTECODE``)
means no file either, and a folder that cannot be written means a build per process, as before.
"""

from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic_core import SchemaValidator, ValidationError

from tutor.pack.spec import materialize
from tutor.pack.stamp import file_stamp, format_stamp, trusted

if TYPE_CHECKING:
    from pydantic import TypeAdapter

T = TypeVar("T")

__all__ = ["ValidationError", "adapter", "json_schema", "validate", "validator"]

#: Bump when the layout of the kept file changes.
KEPT_FORMAT = 1

_ADAPTERS: dict[type, TypeAdapter[Any]] = {}
_VALIDATORS: dict[type, SchemaValidator] = {}
#: The validators read from the kept file (by record name), read once per process.
_KEPT: dict[str, SchemaValidator] | None = None


def adapter(cls: type[T]) -> TypeAdapter[T]:
    """pydantic's ``TypeAdapter`` of ``cls`` (its JSON Schema), built once per process."""
    found = _ADAPTERS.get(cls)
    if found is None:
        from pydantic import TypeAdapter

        materialize()  # pydantic reads the records as dataclasses
        found = _ADAPTERS[cls] = TypeAdapter(cls)
    return found


def validator(cls: type[T]) -> SchemaValidator:
    """The validator of ``cls``: kept from an earlier process when its stamp matches, else built
    (and kept for the next one)."""
    found = _VALIDATORS.get(cls)
    if found is None:
        materialize()  # the validator makes instances of the records: real dataclasses
        name = f"{cls.__module__}.{cls.__qualname__}"
        kept = _read_kept()
        found = kept.get(name)
        if found is None:
            built = adapter(cls).validator
            if not isinstance(built, SchemaValidator):  # wrapped by a pydantic plugin: this process only
                return built  # type: ignore[return-value]
            found = kept[name] = built
            _write_kept(kept)
        _VALIDATORS[cls] = found
    return found


def validate(cls: type[T], data: Any) -> T:
    """``data`` (plain YAML/JSON data) as an instance of ``cls``; raises pydantic's ValidationError."""
    result: T = validator(cls).validate_python(data)
    return result


def kept_file() -> Path:
    return Path(__file__).parent / "__pycache__" / f"validators.{sys.implementation.cache_tag}.pickle"


def _stamp() -> tuple[Any, ...]:
    """What the kept validators were built from; a file with another stamp is not used."""
    from importlib.util import find_spec

    import pydantic_core._pydantic_core as rust


    try:  # pydantic's files, found without importing it (40 ms)
        spec = find_spec("pydantic")
    except (ImportError, ValueError):
        spec = None
    origin = spec.origin if spec else None
    files = [origin, os.path.join(os.path.dirname(origin), "version.py") if origin else None,
             getattr(rust, "__file__", None)]
    return (KEPT_FORMAT, format_stamp(), file_stamp(__file__), tuple(file_stamp(name) for name in files))


def _read_kept() -> dict[str, SchemaValidator]:
    global _KEPT
    if _KEPT is None:
        _KEPT = {}
        path = kept_file()
        try:
            with open(path, "rb") as handle:
                if not (trusted(os.fstat(handle.fileno())) and trusted(os.stat(path.parent))):
                    return _KEPT
                if pickle.load(handle) != _stamp():
                    return _KEPT
                kept = pickle.load(handle)
            if isinstance(kept, dict) and all(isinstance(v, SchemaValidator) for v in kept.values()):
                _KEPT = {str(k): v for k, v in kept.items()}
        except Exception:  # absent, unreadable, truncated or from other code: build them
            pass
    return _KEPT


def _write_kept(kept: dict[str, SchemaValidator]) -> None:
    """Keep ``kept`` for the next process; quietly nothing when that cannot be done."""
    if sys.dont_write_bytecode:
        return
    path = kept_file()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            with os.fdopen(fd, "wb") as handle:
                pickle.dump(_stamp(), handle, protocol=pickle.HIGHEST_PROTOCOL)
                pickle.dump(kept, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)  # readers see the old file or the new one, never half of one
        except BaseException:
            os.unlink(tmp)
            raise
    except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
        pass


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
