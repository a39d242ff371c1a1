"""How the pack format is declared: frozen dataclasses whose annotations carry their rules.

The format's classes (``tutor.pack.models``, ``tutor.pack.check_models``) are plain frozen dataclasses,
so importing them, reading them and unpickling a cached pack cost a few milliseconds and never
import pydantic. Their rules travel in ``Annotated`` metadata (``Meta``, ``TEXT``) which pydantic
reads only when something is validated or a schema is asked for (``tutor.pack.validation``),
through pydantic's documented ``__get_pydantic_core_schema__`` hook. Nothing in this module
imports pydantic at import time.

Rules of use:
- every class of the format is decorated with ``@record`` (frozen, keyword-only, unknown keys
  refused when validated), and ``tutor.pack.validation`` calls ``materialize`` before pydantic
  looks at them;
- a ``Meta`` with constraints is the innermost metadata of its type (``Annotated[str, Meta(...,
  pattern=...)]``); a ``Meta`` holding only a description may wrap anything;
- checks across fields go in ``__post_init__`` and raise ``ValueError`` with the message the
  author will read.
"""

from __future__ import annotations

import dataclasses
import threading
import typing
from typing import TYPE_CHECKING, Any, Callable, TypeVar

T = TypeVar("T")

if TYPE_CHECKING:  # tells mypy that @record makes a frozen, keyword-only dataclass
    from typing_extensions import dataclass_transform
else:
    def dataclass_transform(**_: Any) -> Callable[[T], T]:
        return lambda function: function

_CONSTRAINTS = ("pattern", "min_length", "max_length", "gt", "ge", "le", "discriminator")


class Meta:
    """A field's documentation and constraints, applied by pydantic when validating.

    Args:
        description: what the key means, for the JSON Schema and the reference in the docs.
        examples: example values for the JSON Schema.
        after: a function run on the validated value (raise ValueError to refuse it).
        pattern, min_length, max_length, gt, ge, le, discriminator: pydantic's constraints.
    """

    __slots__ = ("description", "examples", "after", "constraints")

    def __init__(self, description: str | None = None, *, examples: list[Any] | None = None,
                 after: Callable[[Any], Any] | None = None, **constraints: Any):
        unknown = set(constraints) - set(_CONSTRAINTS)
        if unknown:
            raise TypeError(f"Meta got unknown constraints {sorted(unknown)}")
        self.description = description
        self.examples = examples
        self.after = after
        self.constraints = constraints

    def __repr__(self) -> str:
        return f"Meta({self.description!r}, {self.constraints!r})"

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        if self.constraints:
            from pydantic import Field  # only when a schema is built

            schema = handler.generate_schema(typing.Annotated[source, Field(**self.constraints)])
        else:
            schema = handler(source)
        if self.after is not None:
            from pydantic_core import core_schema

            schema = core_schema.no_info_after_validator_function(self.after, schema)
        return schema

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> dict[str, Any]:
        json_schema = dict(handler(schema))
        if self.description is not None:
            json_schema["description"] = self.description
        if self.examples is not None:
            json_schema["examples"] = self.examples
        return json_schema


class Plain:
    """A type validated by one function, with the JSON Schema given here (see ``tutor.pack.text``).

    One validator instead of a pydantic Union, so a wrong value gives one message, not one per
    member of the union.
    """

    __slots__ = ("function", "json_schema")

    def __init__(self, function: Callable[[Any], Any], json_schema: dict[str, Any]):
        self.function = function
        self.json_schema = json_schema

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.no_info_plain_validator_function(self.function)

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> dict[str, Any]:
        return dict(self.json_schema)


_PENDING: list[type] = []  # records not yet turned into dataclasses, in definition order
_LOCK = threading.RLock()
_STUBS = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__")


def _stub(name: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        materialize()
        real = getattr(type(self), name)
        if getattr(real, "_record_stub", False):  # pragma: no cover - a class record() never saw
            raise RuntimeError(f"{type(self).__name__} is not a registered record")
        return real(self, *args, **kwargs)

    method._record_stub = True  # type: ignore[attr-defined]
    method.__name__ = name
    return method


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(dataclasses.field,))
def record(cls: type[T]) -> type[T]:
    """Declare ``cls`` a record: a frozen, keyword-only dataclass that refuses unknown keys.

    Python 3.11 builds each dataclass method with ``exec``, which for the ~45 classes of the
    format costs more than the rest of start-up together. So the dataclass machinery is applied
    on first need (constructing, comparing or printing a record, validating, reading its fields;
    see ``materialize``); until then instances come only from unpickling a cached pack, and
    reading their attributes needs nothing from it.
    """
    cls.__pydantic_config__ = {"extra": "forbid"}  # type: ignore[attr-defined]
    cls.__record_doc__ = cls.__dict__.get("__doc__")  # type: ignore[attr-defined]
    for name in _STUBS:
        if name not in cls.__dict__:
            setattr(cls, name, _stub(name))
    with _LOCK:
        _PENDING.append(cls)
    return cls


def materialize() -> None:
    """Make every record declared so far a real dataclass (idempotent, thread-safe)."""
    with _LOCK:
        while _PENDING:
            cls = _PENDING.pop(0)  # bases were declared, so are processed, before subclasses
            for name in _STUBS:
                if getattr(cls.__dict__.get(name), "_record_stub", False):
                    delattr(cls, name)
            dataclasses.dataclass(frozen=True, kw_only=True)(cls)


def is_record(value: Any) -> bool:
    return isinstance(value, type) and "__record_doc__" in value.__dict__


def hidden(default_factory: Callable[[], Any] | None = None, default: Any = None) -> Any:
    """A field that is not part of the format: set by the loader, not read from YAML."""
    if default_factory is not None:
        return dataclasses.field(default_factory=default_factory, init=False, repr=False, compare=False)
    return dataclasses.field(default=default, init=False, repr=False, compare=False)


# --------------------------------------------------------------------------- introspection


class FieldDoc:
    """One key of a format class, as the loader's suggestions and the generated docs see it.

    (A plain class: a dataclass here would cost its ``exec`` at every start-up.)
    """

    __slots__ = ("name", "annotation", "required", "default", "description")

    def __init__(self, name: str, annotation: Any, required: bool, default: Any, description: str | None):
        self.name = name
        self.annotation = annotation  # the resolved type, metadata included
        self.required = required
        self.default = default  # the default value (default_factory called), or None when required
        self.description = description


_FIELDS: dict[type, dict[str, FieldDoc]] = {}


def format_fields(cls: type) -> dict[str, FieldDoc]:
    """The keys ``cls`` accepts in YAML, in declaration order (resolved once, then cached)."""
    cached = _FIELDS.get(cls)
    if cached is not None:
        return cached
    materialize()
    hints = typing.get_type_hints(cls, include_extras=True)
    out: dict[str, FieldDoc] = {}
    for item in dataclasses.fields(cls):
        if not item.init:
            continue
        annotation = hints[item.name]
        required = item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING
        if required:
            default = None
        elif item.default_factory is not dataclasses.MISSING:
            default = item.default_factory()
        else:
            default = item.default
        out[item.name] = FieldDoc(item.name, annotation, required, default, description_of(annotation))
    _FIELDS[cls] = out
    return out


def description_of(annotation: Any) -> str | None:
    """The outermost description in an annotation's metadata."""
    if typing.get_origin(annotation) is typing.Annotated:
        for meta in reversed(typing.get_args(annotation)[1:]):
            if isinstance(meta, Meta) and meta.description is not None:
                return meta.description
    return None


def strip(annotation: Any) -> Any:
    """The type without its ``Annotated`` metadata."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def as_data(value: Any) -> Any:
    """A record as plain JSON-ready data (lists, dicts, strings, numbers), recursively."""
    if is_record(type(value)):
        return {name: as_data(getattr(value, name)) for name in format_fields(type(value))}
    if isinstance(value, (list, tuple)):
        return [as_data(item) for item in value]
    if isinstance(value, dict):
        return {key: as_data(item) for key, item in value.items()}
    return value
