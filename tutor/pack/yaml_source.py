"""One pack file read: bytes to text to YAML nodes to plain data, and the walk from a data path
back to the node (its line and column) that every located problem uses.

PyYAML composes nodes (so each value keeps its line and column); we turn nodes into plain data
ourselves, so no tag ever constructs an object and aliases cannot explode. The first problem of a
file (unreadable, too large, not UTF-8, bad YAML) or every problem of its conversion (tags,
duplicate keys, control characters) comes as a :class:`SourceError`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import yaml

from tutor.pack.problems import Problem
from tutor.pack.sourcefile import NotText, decode_text
from tutor.words.safe_text import _UNSAFE as _CONTROL, first_unsafe  # what a terminal acts on
from tutor.errors import TutorError

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_NODES = 300_000
#: The most digits an integer in a pack may have. Python refuses to print (or write to JSON) an
#: integer of more than 4300 digits, and PyYAML builds a sexagesimal one (``1:00:00``) with one
#: bignum multiplication per part: no count, size or seed a pack needs comes near either.
MAX_INT_DIGITS = 100
#: An integer's text is refused unread beyond this many characters (binary, underscores).
MAX_INT_CHARS = 4 * MAX_INT_DIGITS

try:  # libyaml's parser is several times faster; the pure-Python one behaves the same
    _BaseLoader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _BaseLoader = yaml.SafeLoader

#: First characters with which a plain scalar may be something other than a string (bool, int,
#: float, null, timestamp, merge, value): PyYAML's implicit resolvers are keyed by them.
_MAYBE_TYPED = frozenset("-+.0123456789<=~yYnNtTfFoO")


class _Loader(_BaseLoader):  # type: ignore[misc]  # libyaml's loader or PyYAML's, chosen above
    """Resolves the common case, a plain scalar that can only be a string, without running
    every implicit resolver's regular expression on it (a third of composing time)."""

    def resolve(self, kind: type, value: str, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode and implicit[0] and value and value[0] not in _MAYBE_TYPED:
            return "tag:yaml.org,2002:str"
        resolved: str = super().resolve(kind, value, implicit)
        return resolved


_SCALAR_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_Y = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_Y + t for t in ("str", "int", "float", "bool", "null")}
_TIMESTAMP = _Y + "timestamp"
_STR, _NULL, _BOOL, _MAP, _SEQ = _Y + "str", _Y + "null", _Y + "bool", _Y + "map", _Y + "seq"
_INT = _Y + "int"
#: ``<<``: YAML 1.1's merge key, plain data (the mappings it names are merged into its own)
_MERGE = _Y + "merge"


class SourceError(TutorError):
    """A file that gave no data: every problem found in it."""

    def __init__(self, problems: list[Problem]):
        super().__init__("\n".join(map(str, problems)))
        self.problems = problems


def _at(path: Path, node: yaml.Node, message: str) -> Problem:
    return Problem(path, node.start_mark.line + 1, node.start_mark.column + 1, message)


# --------------------------------------------------------------------------- bytes to nodes


def _read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise SourceError([Problem(path, None, None, f"cannot read: {exc.strerror or exc}")]) from None
    if size > MAX_FILE_BYTES:
        raise SourceError([Problem(
            path, None, None,
            f"file is {size / 1e6:.1f} MB; pack files are limited to {MAX_FILE_BYTES // (1024 * 1024)} MiB",
        )])
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError([Problem(path, None, None, f"cannot read: {exc.strerror or exc}")]) from None
    try:
        return decode_text(data)
    except NotText as exc:
        message = ("this is a binary file, not YAML text" if exc.kind == "binary"
                   else f"{exc.message}; save the file as UTF-8")
        raise SourceError([Problem(path, exc.line, exc.col, message)]) from None


def _compose(path: Path, text: str) -> yaml.Node:
    try:
        node: yaml.Node | None = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        message = " ".join(filter(None, [exc.context, exc.problem])) or "invalid YAML"
        if mark is not None and _tab_near(text, mark.line):
            message += " (indent with spaces: YAML does not allow tabs for indentation)"
        raise SourceError([Problem(
            path, mark.line + 1 if mark else None, mark.column + 1 if mark else None, f"YAML syntax: {message}"
        )]) from None
    except yaml.YAMLError as exc:
        raise SourceError([Problem(path, None, None, f"YAML: {exc}")]) from None
    if node is None:
        raise SourceError([Problem(path, 1, 1, "the file is empty")])
    return node


def _tab_near(text: str, line: int) -> bool:
    lines = text.splitlines()
    for index in (line, line - 1):
        if 0 <= index < len(lines):
            stripped = lines[index]
            if "\t" in stripped[: len(stripped) - len(stripped.lstrip())]:
                return True
    return False


# --------------------------------------------------------------------------- nodes to data


class _Converter:
    """Nodes to plain data, refusing tags and bounding alias expansion."""

    def __init__(self, path: Path):
        self.path = path
        self.budget = MAX_NODES
        self.problems: list[Problem] = []

    def _control(self, node: yaml.Node, value: str) -> None:
        """Escapes such as "\\e]52;..." would reach a terminal: the pack must not hold them."""
        found = first_unsafe(value)
        if found is not None:
            offset, label = found
            self.problems.append(_at(self.path, node, f"control character {label} at character {offset + 1} of "
                                     "this text: pack text may hold no control characters except tab and newline"))

    def _number(self, node: yaml.ScalarNode, tag: str) -> Any:
        """An int or float scalar as Python's number, or a problem for one no code can use: an
        integer of more than MAX_INT_DIGITS digits (its conversion raised ValueError, or its
        value later broke printing and JSON), or infinity or NaN (``.inf``, ``1e999``, which
        passed a ``points: ge=0`` and reached the gradebook's arithmetic)."""
        text = node.value
        if tag == _INT:
            if len(text) > MAX_INT_CHARS:
                return self._refuse(node, f"an integer of more than {MAX_INT_DIGITS} digits ({len(text)} characters): "
                                    f"a pack's integers have at most {MAX_INT_DIGITS}")
            value = _SCALAR_CONSTRUCTOR.construct_object(node, deep=True)
            if abs(value) >= 10**MAX_INT_DIGITS:
                return self._refuse(node, f"an integer of more than {MAX_INT_DIGITS} digits: a pack's integers "
                                    f"have at most {MAX_INT_DIGITS}")
            return value
        value = _SCALAR_CONSTRUCTOR.construct_object(node, deep=True)
        if not math.isfinite(value):
            shown = text if len(text) <= 20 else text[:20] + "…"
            return self._refuse(node, f"{shown!r} is not a finite number: a pack's numbers are finite")
        return value

    def _refuse(self, node: yaml.Node, message: str) -> str:
        self.problems.append(_at(self.path, node, message))
        return str(node.value)[:20]  # a placeholder: the file's problems end its reading

    def convert(self, node: yaml.Node) -> Any:
        self.budget -= 1
        if self.budget < 0:
            raise SourceError([_at(self.path, node, f"more than {MAX_NODES:,} values "
                                   "(an alias expanding into itself again and again?)")])
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
                self.problems.append(_at(self.path, node, f"tag {tag} is not allowed: packs are plain data, never code"))
                return node.value
            return self._number(node, tag)  # int and float: rare
        if kind is yaml.MappingNode:
            if node.tag != _MAP:
                self.problems.append(_at(self.path, node, f"tag {node.tag} is not allowed: packs are plain data"))
            if any(key_node.tag == _MERGE for key_node, _value in node.value):
                return self._merged(node)
            out: dict[Any, Any] = {}
            convert = self.convert
            for key_node, value_node in node.value:
                key = convert(key_node)
                if not isinstance(key, (str, int, float, bool)) and key is not None:
                    self.problems.append(_at(self.path, key_node, "a key must be a plain value"))
                    continue
                if key in out:
                    self.problems.append(_at(self.path, key_node, f"duplicate key {key!r}"))
                    continue
                out[key] = convert(value_node)
            return out
        if node.tag != _SEQ:
            self.problems.append(_at(self.path, node, f"tag {node.tag} is not allowed: packs are plain data"))
        return [self.convert(item) for item in node.value]


    def _merged(self, node: yaml.MappingNode) -> dict[Any, Any]:
        """A mapping with merge keys (``<<: *defaults``, or ``<<: [*a, *b]``), as YAML 1.1 says:
        its own keys win, then each merged mapping's in the order given (the first wins). Plain
        data: only mappings merge, and what they hold is converted like any other value.

        The node's pairs become the merged mapping's own, in the data's order (a merged key's
        nodes are where its value is written, under the anchor): ``Source.walk`` then finds every
        key of the data at its node, as for any mapping."""
        own: list[tuple[yaml.Node, yaml.Node]] = []
        merged: list[yaml.MappingNode] = []
        for key_node, value_node in node.value:
            if key_node.tag != _MERGE:
                own.append((key_node, value_node))
                continue
            sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for source in sources:
                if isinstance(source, yaml.MappingNode):
                    merged.append(source)
                else:
                    self.problems.append(_at(self.path, source, "a merge key (<<) takes a mapping or a list of "
                                             "mappings (e.g. <<: *defaults)"))
        out: dict[Any, Any] = {}
        pairs: list[tuple[yaml.Node, yaml.Node]] = []
        for key_node, value_node in own:
            key = self.convert(key_node)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                self.problems.append(_at(self.path, key_node, "a key must be a plain value"))
                continue
            if key in out:
                self.problems.append(_at(self.path, key_node, f"duplicate key {key!r}"))
                continue
            out[key] = self.convert(value_node)
            pairs.append((key_node, value_node))
        for source in merged:
            data = self.convert(source)  # flattens its own merge keys first: its pairs are its data's
            if not isinstance(data, dict) or len(source.value) != len(data):
                continue  # its problems are recorded
            for (key_node, value_node), key in zip(source.value, data):
                if key not in out:
                    out[key] = data[key]
                    pairs.append((key_node, value_node))
        node.value = pairs
        return out


# --------------------------------------------------------------------------- walking


@dataclass(frozen=True)
class Place:
    """Where a path through the data led: the part of the path found, the rest, and the value
    there with its node (and, for a mapping's value, its key's node)."""

    found: tuple[Any, ...]
    missed: tuple[Any, ...]
    value: Any
    node: yaml.Node
    key: yaml.Node | None

    def position(self, *, key: bool = False) -> tuple[int, int]:
        """Line and column (1-based) of the value, or with ``key`` of its key where it has one."""
        mark = (self.key if key and self.key is not None else self.node).start_mark
        return mark.line + 1, mark.column + 1


@dataclass(frozen=True)
class Source:
    """One parsed YAML file: its plain data and the node tree it came from."""

    path: Path
    node: yaml.Node
    data: Any
    #: each mapping's keys (by the id of its node) to their position, built on a first walk
    #: through it: a hostile file with thousands of wrong keys in one mapping stays linear.
    _positions: dict[int, dict[Any, int]] = field(default_factory=dict, repr=False, compare=False)

    def walk(self, path: Sequence[Any], *, skip: bool = False) -> Place:
        """Follow ``path`` (keys and list indexes, as in pydantic's error locations) from the top
        of the file through the data and its nodes together.

        Without ``skip`` the walk stops at the first element that names nothing (the rest is
        ``missed``); with it such elements (pydantic's union labels) are passed over and the walk
        goes on. A mapping's keys and its key nodes are in the same order: the conversion kept
        every key or failed."""
        node, key_node, data = self.node, None, self.data
        found: list[Any] = []
        missed: list[Any] = []
        for index, element in enumerate(path):
            if isinstance(data, dict) and element in data:
                positions = self._positions.get(id(node))
                if positions is None:
                    positions = self._positions[id(node)] = {key: i for i, key in enumerate(data)}
                key_node, node = node.value[positions[element]]
                data = data[element]
            elif isinstance(data, list) and isinstance(element, int) and 0 <= element < len(data):
                key_node, node, data = None, node.value[element], data[element]
            elif skip:
                missed.append(element)
                continue
            else:
                missed.extend(path[index:])
                break
            found.append(element)
        return Place(tuple(found), tuple(missed), data, node, key_node)

    def locate(self, path: Sequence[Any], *, key: bool = False) -> tuple[int, int]:
        """Line and column of the value at ``path`` (or of the deepest part of it that exists)."""
        return self.walk(path).position(key=key)


def read_source(path: Path) -> Source:
    """Read and convert one YAML file; raises :class:`SourceError`."""
    text = _read_text(path)
    node = _compose(path, text)
    converter = _Converter(path)
    try:
        data = converter.convert(node)
    except RecursionError:
        raise SourceError([Problem(path, None, None, "nested too deeply")]) from None
    if converter.problems:
        raise SourceError(converter.problems)
    return Source(path, node, data)


__all__ = ["MAX_FILE_BYTES", "MAX_NODES", "Place", "Source", "SourceError", "read_source"]
