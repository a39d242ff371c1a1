"""Load a lesson pack from YAML, reporting every problem as ``file:line:col: message``.

PyYAML composes nodes (so each value keeps its line and column), we turn nodes into plain data
ourselves (so no tag ever constructs an object and aliases cannot explode), then pydantic
validates the header and each lesson separately (so one broken lesson file does not hide the
problems of the others). Nothing here executes pack code.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Union

import yaml

from tutor.core.textclean import _UNSAFE as _CONTROL, first_unsafe  # what a terminal acts on
from tutor.core.models import Exercise, Lesson, Pack, PackHeader
from tutor.core.paths import PACK_FILE
from tutor.core.problems import PackError, Problem
from tutor.core.spec import format_fields, is_record
from tutor.core.sourcefile import NotText, decode_text

try:  # libyaml's parser is several times faster; the pure-Python one behaves the same
    _BaseLoader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _BaseLoader = yaml.SafeLoader

#: First characters with which a plain scalar may be something other than a string (bool, int,
#: float, null, timestamp, merge, value): PyYAML's implicit resolvers are keyed by them.
_MAYBE_TYPED = frozenset("-+.0123456789<=~yYnNtTfFoO")


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Resolves the common case, a plain scalar that can only be a string, without running
    every implicit resolver's regular expression on it (a third of composing time)."""

    def resolve(self, kind, value, implicit):  # noqa: ANN001 - PyYAML's signature
        if kind is yaml.ScalarNode and implicit[0] and value and value[0] not in _MAYBE_TYPED:
            return "tag:yaml.org,2002:str"
        return super().resolve(kind, value, implicit)

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_NODES = 300_000
_SCALAR_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_Y = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_Y + t for t in ("str", "int", "float", "bool", "null")}
_TIMESTAMP = _Y + "timestamp"
_STR, _NULL, _BOOL, _MAP, _SEQ = _Y + "str", _Y + "null", _Y + "bool", _Y + "map", _Y + "seq"


# --------------------------------------------------------------------------- reading files


class _FileError(Exception):
    def __init__(self, problem: Problem):
        self.problem = problem


def _read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise _FileError(Problem(path, None, None, f"cannot read: {exc.strerror or exc}")) from None
    if size > MAX_FILE_BYTES:
        raise _FileError(Problem(
            path, None, None,
            f"file is {size / 1e6:.1f} MB; pack files are limited to {MAX_FILE_BYTES // (1024 * 1024)} MiB",
        ))
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _FileError(Problem(path, None, None, f"cannot read: {exc.strerror or exc}")) from None
    try:
        return decode_text(data)
    except NotText as exc:
        message = ("this is a binary file, not YAML text" if exc.kind == "binary"
                   else f"{exc.message}; save the file as UTF-8")
        raise _FileError(Problem(path, exc.line, exc.col, message)) from None


def _compose(path: Path, text: str) -> yaml.Node:
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        message = " ".join(filter(None, [exc.context, exc.problem])) or "invalid YAML"
        if mark is not None and _tab_near(text, mark.line):
            message += " (indent with spaces: YAML does not allow tabs for indentation)"
        raise _FileError(Problem(
            path, mark.line + 1 if mark else None, mark.column + 1 if mark else None, f"YAML syntax: {message}"
        )) from None
    except yaml.YAMLError as exc:
        raise _FileError(Problem(path, None, None, f"YAML: {exc}")) from None
    if node is None:
        raise _FileError(Problem(path, 1, 1, "the file is empty"))
    return node


def _tab_near(text: str, line: int) -> bool:
    lines = text.splitlines()
    for index in (line, line - 1):
        if 0 <= index < len(lines):
            stripped = lines[index]
            if "\t" in stripped[: len(stripped) - len(stripped.lstrip())]:
                return True
    return False


class _Converter:
    """Nodes to plain data, refusing tags and bounding alias expansion."""

    def __init__(self, path: Path):
        self.path = path
        self.budget = MAX_NODES
        self.problems: list[Problem] = []

    def _at(self, node: yaml.Node, message: str) -> None:
        self.problems.append(Problem(self.path, node.start_mark.line + 1, node.start_mark.column + 1, message))

    def _control(self, node: yaml.Node, value: str) -> None:
        """Escapes such as "\\e]52;..." would reach a terminal: the pack must not hold them."""
        found = first_unsafe(value)
        if found is not None:
            offset, label = found
            self._at(node, f"control character {label} at character {offset + 1} of this text: "
                     "pack text may hold no control characters except tab and newline")

    def convert(self, node: yaml.Node) -> Any:
        self.budget -= 1
        if self.budget < 0:
            raise _FileError(Problem(
                self.path, node.start_mark.line + 1, node.start_mark.column + 1,
                f"more than {MAX_NODES:,} values (an alias expanding into itself again and again?)",
            ))
        kind = type(node)
        if kind is yaml.ScalarNode:  # most nodes: test them first
            tag = node.tag
            if tag == _STR or tag == _TIMESTAMP:  # a date-like version string stays a string
                value = node.value
                if _CONTROL.search(value):
                    self._control(node, value)
                return value
            if tag == _NULL:
                return None
            if tag == _BOOL:
                return node.value.lower() in ("yes", "true", "on")
            if tag not in _SCALAR_TAGS:
                self._at(node, f"tag {tag} is not allowed: packs are plain data, never code")
                return node.value
            return _SCALAR_CONSTRUCTOR.construct_object(node, deep=True)  # int and float: rare
        if kind is yaml.MappingNode:
            if node.tag != _MAP:
                self._at(node, f"tag {node.tag} is not allowed: packs are plain data")
            out: dict[Any, Any] = {}
            convert = self.convert
            for key_node, value_node in node.value:
                key = convert(key_node)
                if not isinstance(key, (str, int, float, bool)) and key is not None:
                    self._at(key_node, "a key must be a plain value")
                    continue
                if key in out:
                    self._at(key_node, f"duplicate key {key!r}")
                    continue
                out[key] = convert(value_node)
            return out
        if node.tag != _SEQ:
            self._at(node, f"tag {node.tag} is not allowed: packs are plain data")
        return [self.convert(item) for item in node.value]


@dataclass
class _Source:
    """One parsed YAML file: its data and its node tree for locating problems."""

    path: Path
    node: yaml.Node
    data: Any


def _load_yaml(path: Path) -> _Source:
    text = _read_text(path)
    node = _compose(path, text)
    converter = _Converter(path)
    try:
        data = converter.convert(node)
    except RecursionError:
        raise _FileError(Problem(path, None, None, "nested too deeply")) from None
    if converter.problems:
        raise _FileErrors(converter.problems)
    return _Source(path, node, data)


class _FileErrors(Exception):
    def __init__(self, problems: list[Problem]):
        self.problems = problems


# --------------------------------------------------------------------------- locating


def _locate(source: _Source, path: tuple[Any, ...], *, key: bool = False) -> tuple[int, int]:
    """Line and column of the value (or, with ``key``, the key) at a data path."""
    node = source.node
    key_node = None
    for element in path:
        if isinstance(node, yaml.MappingNode):
            found = None
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == str(element):
                    found = (k, v)
                    break
            if found is None:
                break
            key_node, node = found
        elif isinstance(node, yaml.SequenceNode) and isinstance(element, int) and 0 <= element < len(node.value):
            key_node, node = None, node.value[element]
        else:
            break
    target = key_node if key and key_node is not None else node
    return target.start_mark.line + 1, target.start_mark.column + 1


def _data_path(data: Any, loc: tuple[Any, ...]) -> tuple[tuple[Any, ...], list[Any]]:
    """Split a pydantic location into the part that walks the data and the union labels."""
    path: list[Any] = []
    labels: list[Any] = []
    for element in loc:
        if isinstance(data, dict) and element in data:
            path.append(element)
            data = data[element]
        elif isinstance(data, list) and isinstance(element, int) and 0 <= element < len(data):
            path.append(element)
            data = data[element]
        else:
            labels.append(element)
    return tuple(path), labels


def _pretty_path(path: tuple[Any, ...]) -> str:
    out = ""
    for element in path:
        out += f"[{element}]" if isinstance(element, int) else (f".{element}" if out else str(element))
    return out


def _unwrap(annotation: Any) -> list[Any]:
    """The model classes an annotation may hold (through Optional, list, dict, Annotated, Union)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType, list, dict, tuple):
        return [m for arg in typing.get_args(annotation) for m in _unwrap(arg)]
    if is_record(annotation):
        return [annotation]
    return []


def _model_at(model: type, data: Any, loc: tuple[Any, ...]) -> type | None:
    """The model class that validated the mapping at ``loc`` (for did-you-mean suggestions)."""
    candidates = [model]
    for element in loc:
        if isinstance(data, (dict, list)):
            if isinstance(data, dict) and element in data:
                data = data[element]
            elif isinstance(data, list) and isinstance(element, int) and 0 <= element < len(data):
                data = data[element]
                continue
            else:
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


def _type_name(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "true/false", int: "a number",
            float: "a number", type(None): "nothing (null)"}.get(type(value), type(value).__name__)


def _validation_problems(source: _Source, data: Any, base: tuple[Any, ...], model: type,
                         exc: Any) -> list[Problem]:
    """Pydantic errors rewritten as located, human messages (one per place)."""
    grouped: dict[tuple[Any, ...], list[tuple[dict[str, Any], list[Any]]]] = {}
    for error in exc.errors(include_url=False):
        path, labels = _data_path(data, tuple(error["loc"]))
        grouped.setdefault(path, []).append((error, labels))
    problems = []
    for path, errors in grouped.items():
        error, _labels = errors[0]
        kind = error["type"]
        key = False  # point at the key (unknown keys) rather than its value
        node_value = data
        for element in path:
            node_value = node_value[element]
        where = _pretty_path(base + path)
        if kind in ("extra_forbidden", "unexpected_keyword_argument"):
            key = True
            owner = _model_at(model, data, path[:-1])
            message = f"unknown key {path[-1]!r}"
            if owner is not None:
                allowed = [name for name in format_fields(owner) if name not in ("kind", "style")]
                close = difflib.get_close_matches(str(path[-1]), allowed, n=1, cutoff=0.6)
                if close:
                    message += f" (did you mean {close[0]!r}?)"
                else:
                    message += f"; allowed here: {', '.join(allowed)}"
            where = _pretty_path(base + path[:-1])
        elif kind == "missing":
            missing = error["loc"][-1]
            message = f"missing required key {missing!r}"
        elif kind in ("union_tag_invalid", "union_tag_not_found"):
            ctx = error.get("ctx", {})
            tag_name = ctx.get("discriminator", "kind").strip("'")
            expected = ctx.get("expected_tags", "")
            if kind == "union_tag_not_found":
                message = f"missing {tag_name!r}: one of {expected}"
            else:
                tag = ctx.get("tag")
                options = [t.strip(" '") for t in expected.split(",")]
                close = difflib.get_close_matches(str(tag), options, n=1, cutoff=0.6)
                message = f"unknown {tag_name} {tag!r}" + (f" (did you mean {close[0]!r}?)" if close else "")
                message += f"; expected one of {expected}"
                path = path + (tag_name,)
        elif len(errors) > 1:
            wanted = sorted({_describe(e) for e, _ in errors})
            message = f"got {_type_name(node_value)}; expected " + " or ".join(wanted)
        elif kind == "literal_error" and path == ("format_version",):
            message = (f"this torch-tutor reads format_version 1, the pack says {node_value!r} "
                       "(a newer torch-tutor may read it)")
        elif kind == "dataclass_type":  # a record's place holds a scalar: show the mapping it wants
            message = f"expected a mapping such as {_example_mapping(error.get('ctx', {}).get('class_name'))}, " \
                      f"got {_type_name(node_value)}"
        elif kind == "string_pattern_mismatch" and path and str(path[-1]).endswith("id"):
            message = f"{node_value!r} is not a valid id: use lower-case letters, digits, '-' and '_'"
        else:
            message = error["msg"]
            if kind.endswith("_type") or kind.endswith("_parsing"):
                message += f" (got {_type_name(node_value)})"
                if isinstance(node_value, bool) and "string" in message:
                    message += "; YAML reads yes/no/on/off as true/false: put the text in quotes"
                elif isinstance(node_value, (int, float)) and "string" in message:
                    message += f"; write it in quotes: '{node_value}'"
            message = message.replace("Value error, ", "")
        line, col = _locate(source, base + path, key=key)
        prefix = f"{where}: " if where else ""
        problems.append(Problem(source.path, line, col, prefix + message))
    return problems


def _example_mapping(class_name: Any) -> str:
    """"{min: ..., max: ...}" for the record named ``class_name`` (the fields it takes)."""
    from tutor.core import check_models, models

    record = getattr(check_models, str(class_name), None) or getattr(models, str(class_name), None)
    if record is None or not is_record(record):
        return "{key: value}"
    names = [name for name in format_fields(record) if name not in ("kind", "style")][:4]
    return "{" + ", ".join(f"{name}: ..." for name in names) + "}"


def _describe(error: dict[str, Any]) -> str:
    kind = error["type"]
    return {"string_type": "a string", "int_type": "an integer", "int_parsing": "an integer",
            "bool_type": "true/false", "bool_parsing": "true/false", "float_type": "a number",
            "dict_type": "a mapping", "list_type": "a list", "none_required": "nothing"}.get(kind, error["msg"])


# --------------------------------------------------------------------------- the pack


def _duplicate_ids(items: Any, label: str, source: _Source, base: tuple[Any, ...]) -> Iterator[Problem]:
    if not isinstance(items, list):
        return
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            ident = item["id"]
            if ident in seen:
                line, col = _locate(source, base + (index, "id"))
                first = _locate(source, base + (seen[ident], "id"))[0]
                yield Problem(source.path, line, col, f"duplicate {label} id {ident!r} (first used on line {first})")
            else:
                seen[ident] = index


def _structure_problems(lesson: Any, source: _Source, base: tuple[Any, ...],
                        exercise_ids: dict[str, tuple[Path, int]]) -> Iterator[Problem]:
    """Cross-references pydantic cannot see: ids unique in scope, check dependencies."""
    if not isinstance(lesson, dict):
        return
    steps = lesson.get("steps")
    yield from _duplicate_ids(steps, "step", source, base + ("steps",))
    if not isinstance(steps, list):
        return
    for index, step in enumerate(steps):
        if not isinstance(step, dict) or step.get("kind") != "exercise":
            continue
        ident = step.get("id")
        if isinstance(ident, str):
            line, col = _locate(source, base + ("steps", index, "id"))
            if ident in exercise_ids:
                first_file, first_line = exercise_ids[ident]
                yield Problem(source.path, line, col,
                              f"duplicate exercise id {ident!r}: exercise ids are unique in the pack "
                              f"(first used at {first_file}:{first_line})")
            else:
                exercise_ids[ident] = (source.path, line)
        checks = step.get("checks")
        yield from _duplicate_ids(checks, "check", source, base + ("steps", index, "checks"))
        if isinstance(checks, list):
            known = {c.get("id") for c in checks if isinstance(c, dict)}
            for ci, check in enumerate(checks):
                after = check.get("after") if isinstance(check, dict) else None
                for ai, dep in enumerate(after if isinstance(after, list) else []):
                    if dep not in known:
                        line, col = _locate(source, base + ("steps", index, "checks", ci, "after", ai))
                        yield Problem(source.path, line, col, f"'after' names unknown check {dep!r}")
                    elif dep == check.get("id"):
                        line, col = _locate(source, base + ("steps", index, "checks", ci, "after", ai))
                        yield Problem(source.path, line, col, "a check cannot come after itself")


def _lesson_file(pack_dir: Path, root: Path, entry: str, source: _Source, index: int) -> Path | Problem:
    line, col = _locate(source, ("lessons", index))
    relative = Path(entry)
    if relative.is_absolute() or not entry.strip():
        return Problem(source.path, line, col, f"lesson path {entry!r} must be relative to the pack folder")
    if relative.suffix not in (".yaml", ".yml"):
        return Problem(source.path, line, col, f"lesson path {entry!r} must name a .yaml file")
    candidate = pack_dir / relative
    if "/" in entry or "\\" in entry or ".." in entry or candidate.is_symlink():
        target = Path(os.path.realpath(candidate))  # only a path with parts or a link can leave
    else:
        target = root / relative
    if not target.is_relative_to(root):
        return Problem(source.path, line, col, f"lesson path {entry!r} points outside the pack folder")
    if not target.is_file():
        return Problem(source.path, line, col, f"lesson file {entry!r} not found")
    return pack_dir / relative


def pack_file_of(path: Path) -> Path:
    """Accept a pack folder or its pack.yaml."""
    return path / PACK_FILE if path.is_dir() else path


def load_pack(path: str | Path) -> Pack:
    """Load and validate a pack; raises PackError listing every problem found."""
    pack_file = pack_file_of(Path(path))
    pack_dir = pack_file.parent
    problems: list[Problem] = []
    if not pack_file.is_file():
        raise PackError([Problem(pack_file, None, None, "no pack here: pack.yaml not found")])
    try:
        source = _load_yaml(pack_file)
    except _FileError as exc:
        raise PackError([exc.problem]) from None
    except _FileErrors as exc:
        raise PackError(exc.problems) from None
    data = source.data
    if not isinstance(data, dict):
        raise PackError([Problem(pack_file, 1, 1, f"pack.yaml must be a mapping, got {_type_name(data)}")])

    from tutor.core.validation import ValidationError, validate  # pydantic: only when loading YAML

    sources = [pack_file]
    header_data = {k: v for k, v in data.items() if k != "lessons"}
    header: PackHeader | None = None
    try:
        header = validate(PackHeader, header_data)
    except ValidationError as exc:
        problems.extend(_validation_problems(source, header_data, (), PackHeader, exc))

    entries = data.get("lessons")
    lessons: list[Lesson] = []
    lesson_ids: dict[str, tuple[Path, int]] = {}
    exercise_ids: dict[str, tuple[Path, int]] = {}
    if "lessons" not in data:
        problems.append(Problem(pack_file, 1, 1, "missing required key 'lessons'"))
        entries = []
    elif not isinstance(entries, list):
        line, col = _locate(source, ("lessons",))
        problems.append(Problem(pack_file, line, col, f"lessons: expected a list, got {_type_name(entries)}"))
        entries = []
    elif not entries:
        line, col = _locate(source, ("lessons",))
        problems.append(Problem(pack_file, line, col, "the pack has no lessons: add at least one"))

    root = pack_dir.resolve()
    locations: dict[tuple[str, ...], tuple[Path, int, int]] = {}
    for index, entry in enumerate(entries):
        if isinstance(entry, str):
            target = _lesson_file(pack_dir, root, entry, source, index)
            if isinstance(target, Problem):
                problems.append(target)
                continue
            sources.append(target)
            try:
                lesson_source = _load_yaml(target)
            except _FileError as exc:
                problems.append(exc.problem)
                continue
            except _FileErrors as exc:
                problems.extend(exc.problems)
                continue
            lesson_data, base = lesson_source.data, ()
            if not isinstance(lesson_data, dict):
                problems.append(Problem(target, 1, 1, f"a lesson file must be a mapping, got {_type_name(lesson_data)}"))
                continue
        elif isinstance(entry, dict):
            lesson_source, lesson_data, base = source, entry, ("lessons", index)
        else:
            line, col = _locate(source, ("lessons", index))
            problems.append(Problem(pack_file, line, col,
                                    f"lessons[{index}]: expected a lesson or a path to a lesson file, "
                                    f"got {_type_name(entry)}"))
            continue
        ident = lesson_data.get("id")
        if isinstance(ident, str):
            line, col = _locate(lesson_source, base + ("id",))
            if ident in lesson_ids:
                first_file, first_line = lesson_ids[ident]
                problems.append(Problem(lesson_source.path, line, col,
                                        f"duplicate lesson id {ident!r} (first used at {first_file}:{first_line})"))
            else:
                lesson_ids[ident] = (lesson_source.path, line)
        problems.extend(_structure_problems(lesson_data, lesson_source, base, exercise_ids))
        try:
            lessons.append(validate(Lesson, lesson_data))
            _record_locations(locations, lessons[-1], lesson_source, base)
        except ValidationError as exc:
            problems.extend(_validation_problems(lesson_source, lesson_data, base, Lesson, exc))

    if problems or header is None:
        order = {pack_file: 0}
        problems.sort(key=lambda p: (order.setdefault(p.file, len(order)), p.line or 0, p.col or 0))
        raise PackError(problems)
    fields = {item.name: getattr(header, item.name) for item in dataclasses.fields(header)}
    pack = Pack(**fields, lessons=lessons)
    object.__setattr__(pack, "_locations", locations)  # Pack is frozen; these are the loader's
    object.__setattr__(pack, "_root", pack_dir)
    object.__setattr__(pack, "_sources", tuple(sources))
    return pack


def _node_at(node: yaml.Node, path: tuple[Any, ...]) -> yaml.Node | None:
    for element in path:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == element), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(element, int) and element < len(node.value):
            node = node.value[element]
        else:
            return None
        if node is None:
            return None
    return node


def _record_locations(locations: dict[tuple[str, ...], tuple[Path, int, int]], lesson: Lesson,
                      source: _Source, base: tuple[Any, ...]) -> None:
    """Where each lesson, step and check starts, for problems found after loading."""
    lesson_node = _node_at(source.node, base)
    if lesson_node is None:
        return

    def where(node: yaml.Node) -> tuple[Path, int, int]:
        return source.path, node.start_mark.line + 1, node.start_mark.column + 1

    locations[(lesson.id,)] = where(lesson_node)
    steps = _node_at(lesson_node, ("steps",))
    for step, step_node in zip(lesson.steps, steps.value if isinstance(steps, yaml.SequenceNode) else ()):
        locations[(lesson.id, step.id)] = where(step_node)
        checks = _node_at(step_node, ("checks",))
        for check, check_node in zip(getattr(step, "checks", ()),
                                     checks.value if isinstance(checks, yaml.SequenceNode) else ()):
            locations[(lesson.id, step.id, check.id)] = where(check_node)


def exercise_count(pack: Pack) -> int:
    return sum(isinstance(step, Exercise) for lesson in pack.lessons for step in lesson.steps)


__all__ = ["PACK_FILE", "Pack", "PackError", "Problem", "exercise_count", "load_pack", "pack_file_of"]
