"""The format reference in docs/authoring.md, generated from the models so it cannot drift.

`torch-tutor schema --markdown` prints it; a test checks that docs/authoring.md holds the
current text between the BEGIN/END markers.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Any, Union

from tutor.pack import check_models
from tutor.pack import models
from tutor.pack.spec import FieldDoc, as_data, format_fields, is_record, strip

BEGIN = "<!-- BEGIN GENERATED REFERENCE: torch-tutor schema --markdown -->"
END = "<!-- END GENERATED REFERENCE -->"

def _with_nested(records: tuple[type, ...], documented: set[type]) -> list[type]:
    """Each record followed by the records its fields use that no other section documents (a
    check's TensorGroup, an example's Expect), in field order: a new kind's section is built
    from its record alone."""
    out: list[type] = []

    def nested(annotation: Any) -> None:
        for arg in typing.get_args(annotation):
            nested(arg)
        if is_record(annotation) and annotation not in documented \
                and not issubclass(annotation, (check_models.CheckBase, models.StepBase)):
            documented.add(annotation)
            out.append(annotation)
            for info in format_fields(annotation).values():
                nested(info.annotation)

    for record_class in records:
        documented.add(record_class)
        out.append(record_class)
        for info in _own_fields(record_class).values():
            nested(info.annotation)
    return out


def sections() -> list[tuple[str, list[type]]]:
    """The reference's sections: the pack, the lesson, every step kind and every check kind (from
    the ``Step`` and ``Check`` unions, each followed by the records it uses)."""
    documented: set[type] = {models.PackFile, models.Requires, models.LatePenalty, models.Lesson,
                             check_models.CheckBase, check_models.CheckHint, check_models.FormRules}
    return [
        ("Pack (pack.yaml)", [models.PackFile, models.Requires, models.LatePenalty]),
        ("Lesson (a lesson file, or an inline entry of `lessons`)", [models.Lesson]),
        ("Steps (`kind`)", _with_nested(models.STEP_RECORDS, documented)),
        ("Checks (`kind`), common fields", [check_models.CheckBase, check_models.CheckHint]),
        ("Check kinds", _with_nested(check_models.CHECK_RECORDS, documented) + [check_models.FormRules]),
    ]


_BASE_NAMES = {check_models.CheckBase: "every check", models.StepBase: "every step",
               models.QuizBase: "every quiz"}
_BASES = set(_BASE_NAMES)


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        base = strip(annotation)
        if base == Union[str, dict[str, str]]:
            return "text"
        return _type_name(base)
    if origin in (Union, types.UnionType):
        if set(args) == {str, dict[str, str]}:
            return "text"
        names = [_type_name(a) for a in args if a is not type(None)]
        if set(names) == {"check"}:
            return "check"
        return " or ".join(dict.fromkeys(names))
    if origin is list:
        return f"list of {_type_name(args[0])}"
    if origin is dict:
        return f"mapping of {_type_name(args[0])} to {_type_name(args[1])}"
    if origin is typing.Literal:
        return " | ".join(repr(a) if not isinstance(a, str) else f"`{a}`" for a in args)
    if annotation is type(None):
        return "null"
    if is_record(annotation):
        if issubclass(annotation, check_models.CheckBase):
            return "check"
        if issubclass(annotation, models.StepBase):
            return "step"
        return str(annotation.__name__)
    return str(getattr(annotation, "__name__", annotation))


def _default(info: FieldDoc) -> str:
    if info.required:
        return "**required**"
    value = info.default
    if value is None:
        return ""
    if is_record(type(value)):
        data = as_data(value)
        defaults = {name: field.default for name, field in format_fields(type(value)).items()}
        return "`{}`" if data == defaults else repr(data)
    return f"`{value!r}`"


def _own_fields(model: type) -> dict[str, FieldDoc]:
    inherited: set[str] = set()
    for base in model.__mro__[1:]:
        if base in _BASES and base is not model:
            inherited |= set(format_fields(base))
    return {name: info for name, info in format_fields(model).items() if name not in inherited}


def _model_table(model: type) -> str:
    fields = format_fields(model)
    kind = fields.get("style") or fields.get("kind")
    tag = typing.get_args(kind.annotation)[0] if kind is not None and typing.get_args(kind.annotation) else None
    lines = [f"#### {model.__name__}" + (f" (`{'style' if 'style' in fields else 'kind'}: {tag}`)"
                                         if tag else ""), ""]
    doc = (model.__record_doc__ or "").strip().split("\n\n")[0]  # type: ignore[attr-defined]
    doc = " ".join(doc.split())  # a docstring's lines, indented in the source, as one sentence
    if doc:
        lines += [doc, ""]
    inherited = [_BASE_NAMES[b] for b in model.__mro__[1:] if b in _BASES]
    if inherited:
        lines += [f"Also takes the fields of {' and '.join(inherited)}.", ""]
    lines += ["| key | type | default | meaning |", "| --- | --- | --- | --- |"]
    for name, info in _own_fields(model).items():
        meaning = (info.description or "").replace("|", "\\|").replace("\n", " ")
        type_name = _type_name(info.annotation).replace("|", "\\|")
        lines.append(f"| `{name}` | {type_name} | {_default(info)} | {meaning} |")
    return "\n".join(lines)


def reference_markdown() -> str:
    parts = [BEGIN, ""]
    for title, section_models in sections():
        parts += [f"### {title}", ""]
        for model in section_models:
            parts += [_model_table(model), ""]
    step_base = _model_table(models.StepBase).replace("#### StepBase", "#### Every step")
    quiz_base = _model_table(models.QuizBase).replace("#### QuizBase", "#### Every quiz")
    parts.insert(parts.index("### Steps (`kind`)") + 2, step_base + "\n")
    parts.insert(parts.index(next(p for p in parts if p.startswith("#### FreeQuiz"))), quiz_base + "\n")
    parts.append(END)
    return "\n".join(parts) + "\n"


# --------------------------------------------------------------------------- the child's mirror

#: Where the child side reads the check vocabulary: generated by :func:`vocab_source` (run
#: ``python -m tutor.pack.docgen > tutor/child/checks/vocab.py``); a test fails when it is stale.
VOCAB_FILE = "tutor/child/checks/vocab.py"

_VOCAB_HEAD = '''"""The check vocabulary as the child side reads it: one TypedDict per check kind.

GENERATED from the records of ``tutor.pack.check_models`` by ``tutor.pack.docgen.vocab_source``:
do not edit; change a record, then run ``python -m tutor.pack.docgen > tutor/child/checks/vocab.py``
(``tests/unit/test_author_vocab.py`` fails while this file is stale).

The child cannot import ``tutor.pack`` (it may run under another interpreter with only torch), so
it reads each check as the plain JSON ``as_data`` makes of a record, through these TypedDicts
(mypy checks every read), with the records' defaults filled in by :func:`with_defaults`.
Standard library only.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict, Union

Text = Union[str, dict[str, str]]
'''

_VOCAB_TAIL = '''

def with_defaults(check: dict[str, Any]) -> dict[str, Any]:
    """``check`` with every field its kind's record defaults filled in where it has none (a
    fresh copy of a list or mapping default), and so every nested record it holds, so a kind
    reads ``check["rtol"]``, never a default of its own. An unknown kind is returned as it is
    (the probe reports it)."""
    kind = str(check.get("kind"))
    filled = {key: _fresh(value) for key, value in DEFAULTS.get(kind, {}).items()}
    filled.update(check)
    for key, record in NESTED_FIELDS.get(kind, {}).items():
        value = filled.get(key)
        if type(value) is dict:
            filled[key] = {**_fresh(NESTED_DEFAULTS[record]), **value}
        elif type(value) is list:
            filled[key] = [{**_fresh(NESTED_DEFAULTS[record]), **item} if type(item) is dict else item
                           for item in value]
    return filled


def _fresh(value: Any) -> Any:
    if type(value) is list:
        return [_fresh(item) for item in value]
    if type(value) is dict:
        return {key: _fresh(item) for key, item in value.items()}
    return value
'''


def _data_name(record_class: type) -> str:
    """``TensorCheck`` -> ``TensorData``, ``CheckBase`` -> ``CheckData``, ``TopK`` -> ``TopKData``."""
    if record_class is check_models.CheckBase:
        return "CheckData"
    name = record_class.__name__
    return (name[:-len("Check")] if name.endswith("Check") and name != "Check" else name) + "Data"


def _py_type(annotation: Any) -> str:
    """An annotation of a record's field as the child's TypedDict writes it."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        base = strip(annotation)
        return "Text" if base == Union[str, dict[str, str]] else _py_type(base)
    if origin in (Union, types.UnionType):
        if set(args) == {str, dict[str, str]}:
            return "Text"
        names = [_py_type(a) for a in args if a is not type(None)]
        return " | ".join(dict.fromkeys(names)) + (" | None" if type(None) in args else "")
    if origin is typing.Literal:
        return f"Literal[{', '.join(repr(a) if not isinstance(a, str) else chr(34) + a + chr(34) for a in args)}]"
    if origin in (list, dict):
        return f"{origin.__name__}[{', '.join(_py_type(a) for a in args)}]"
    if is_record(annotation):
        return _data_name(annotation)
    if annotation is typing.Any:
        return "Any"
    return str(annotation.__name__)


def _vocab_class(record_class: type, base: str, own: dict[str, FieldDoc]) -> str:
    lines = [f"class {_data_name(record_class)}({base}, total=False):",
             f'    """``{record_class.__name__}`` in tutor/pack/check_models.py."""', ""]
    lines += [f"    {name}: {_py_type(info.annotation)}" for name, info in own.items()]
    return "\n".join(lines)


def _default_source(info: FieldDoc) -> str | None:
    if info.required or info.default is None:
        return None
    return _literal(as_data(info.default))


def _literal(value: Any) -> str:
    """Plain data (a default as ``as_data`` writes it) as Python source, strings double-quoted."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_literal(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def vocab_source() -> str:
    """The text of ``tutor/child/checks/vocab.py``: a TypedDict per check record and per record its
    fields use (``NESTED``), ``KINDS`` (kind -> its TypedDict) and ``DEFAULTS`` (kind -> its
    record's non-null defaults), all from ``check_models.Check``."""
    base_fields = format_fields(check_models.CheckBase)
    classes = [_vocab_class(check_models.CheckHint, "TypedDict", format_fields(check_models.CheckHint)),
               _vocab_class(check_models.CheckBase, "TypedDict", base_fields)]
    nested: list[type] = []
    documented: set[type] = {check_models.CheckHint}

    def uses(annotation: Any) -> None:
        for arg in typing.get_args(annotation):
            uses(arg)
        if is_record(annotation) and not issubclass(annotation, check_models.CheckBase) \
                and annotation not in documented:
            documented.add(annotation)
            for info in format_fields(annotation).values():
                uses(info.annotation)
            nested.append(annotation)
            classes.append(_vocab_class(annotation, "TypedDict", format_fields(annotation)))

    tags = {record_class: tag for tag, record_class in check_models.RECORDS.items()}
    kinds: list[str] = []
    defaults: list[str] = []
    for record_class in check_models.CHECK_RECORDS:
        own = {name: info for name, info in format_fields(record_class).items() if name not in base_fields}
        for info in own.values():
            uses(info.annotation)
        classes.append(_vocab_class(record_class, "CheckData", own))
        tag = tags[record_class]
        kinds.append(f'    "{tag}": {_data_name(record_class)},')
        pairs = [(name, _default_source(info)) for name, info in format_fields(record_class).items()]
        defaults += [f'    "{tag}": {{'] + [f'        "{name}": {value},' for name, value in pairs
                                                if value is not None] + ["    },"]
    nested_rows = [f'    "{record.__name__}": {_data_name(record)},' for record in [check_models.CheckHint] + nested]
    nested_defaults, nested_fields = _nested_defaults(nested, tags)
    return "\n".join([
        _VOCAB_HEAD, "", "\n\n\n".join(classes), "", "",
        "#: kind -> the TypedDict its checks are read through",
        "KINDS: dict[str, type] = {", *kinds, "}", "",
        "#: record class name in tutor.pack.check_models -> its TypedDict here (the nested records)",
        "NESTED: dict[str, type] = {", *nested_rows, "}", "",
        "#: kind -> its record's defaults (those that are not null), as ``as_data`` writes them",
        "DEFAULTS: dict[str, dict[str, Any]] = {", *defaults, "}", "",
        "#: nested record -> its defaults (those that are not null; records with none left out)",
        "NESTED_DEFAULTS: dict[str, dict[str, Any]] = {", *nested_defaults, "}", "",
        "#: kind -> its fields that hold such a record (or a list of them) -> the record",
        "NESTED_FIELDS: dict[str, dict[str, str]] = {", *nested_fields, "}",
    ]) + "\n" + _VOCAB_TAIL


def _nested_defaults(nested: list[type], tags: dict[type, str]) -> tuple[list[str], list[str]]:
    """The rows of ``NESTED_DEFAULTS`` and ``NESTED_FIELDS``: what ``with_defaults`` fills in
    inside a check's nested records (``compare: {call: ...}`` gets its ``k`` and ``near_tie``)."""
    with_defaults: dict[type, list[tuple[str, str]]] = {}
    for record in nested:
        pairs = [(name, _default_source(info)) for name, info in format_fields(record).items()]
        kept = [(name, value) for name, value in pairs if value is not None]
        if kept:
            with_defaults[record] = kept
    rows: list[str] = []
    for record, kept in with_defaults.items():
        rows += [f'    "{record.__name__}": {{'] + [f'        "{name}": {value},' for name, value in kept] + ["    },"]
    fields: list[str] = []
    for record_class in check_models.CHECK_RECORDS:
        holding = [(name, arg) for name, info in format_fields(record_class).items()
                   for arg in _records_in(info.annotation) if arg in with_defaults]
        if holding:
            fields += [f'    "{tags[record_class]}": {{'] + [f'        "{name}": "{arg.__name__}",'
                                                               for name, arg in holding] + ["    },"]
    return rows, fields


def _records_in(annotation: Any) -> list[type]:
    """The records an annotation names (through Annotated, unions and lists)."""
    if is_record(annotation):
        return [annotation]
    return [record for arg in typing.get_args(annotation) for record in _records_in(arg)]


if __name__ == "__main__":
    import sys

    sys.stdout.write(vocab_source())
