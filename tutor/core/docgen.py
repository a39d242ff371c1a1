"""The format reference in docs/authoring.md, generated from the models so it cannot drift.

`torch-tutor schema --markdown` prints it; a test checks that docs/authoring.md holds the
current text between the BEGIN/END markers.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Union

from tutor.core import check_models
from tutor.core import models
from tutor.core.spec import FieldDoc, as_data, format_fields, is_record, strip

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
