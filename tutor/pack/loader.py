"""Load a lesson pack from YAML, reporting every problem as ``file:line:col: message``.

Three concerns, three modules: ``yaml_source`` reads a file into plain data and walks a data path
back to its line and column; ``schema_messages`` words pydantic's errors; ``crossref`` checks what
pydantic cannot see. Here: which files make a pack, validating the header and each lesson
separately (so one broken lesson file does not hide the problems of the others), and where each
lesson, step and check starts. Nothing here executes pack code.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, TypeVar

from tutor.pack.comments import MARK
from tutor.pack.crossref import References
from tutor.pack.lint import CODE_FIELDS, lesson_texts, pack_texts
from tutor.pack.models import Exercise, Lesson, Pack, PackHeader
from tutor.settings.paths import PACK_FILE
from tutor.pack.problems import PackError, Problem
from tutor.pack.schema_messages import type_name, validation_problems
from tutor.pack.yaml_source import MAX_FILE_BYTES, MAX_NODES, Source, SourceError, read_source

Locations = dict[tuple[str, ...], tuple[Path, int, int]]
T = TypeVar("T")


def pack_file_of(path: Path) -> Path:
    """Accept a pack folder or its pack.yaml."""
    return path / PACK_FILE if path.is_dir() else path


def load_pack(path: str | Path) -> Pack:
    """Load and validate a pack; raises PackError listing every problem found."""
    pack_file = pack_file_of(Path(path))
    if not pack_file.is_file():
        raise PackError([Problem(pack_file, None, None, "no pack here: pack.yaml not found")])
    try:
        source = read_source(pack_file)
    except SourceError as exc:
        raise PackError(exc.problems) from None
    if not isinstance(source.data, dict):
        raise PackError([Problem(pack_file, 1, 1, f"pack.yaml must be a mapping, got {type_name(source.data)}")])
    reading = _Reading(source)
    header = reading.validate(PackHeader, {k: v for k, v in source.data.items() if k != "lessons"}, source, ())
    rules = source.data.get("form_rules")
    if header is not None and isinstance(rules, dict):
        reading.form_rules = rules
    lessons = [lesson for index, entry in enumerate(reading.entries())
               if (lesson := reading.lesson(index, entry)) is not None]
    prelude = reading.prelude(header) if header is not None else None
    if reading.problems or header is None:
        raise PackError(reading.sorted_problems())
    for lesson in lessons:
        for step in lesson.steps:
            if isinstance(step, Exercise):
                object.__setattr__(step, "_prelude", prelude)  # frozen; the pack's, given by the loader
                object.__setattr__(step, "_pack_scoring", header.scoring)
    fields = {item.name: getattr(header, item.name) for item in dataclasses.fields(header)}
    pack = Pack(**fields, lessons=lessons)
    for field_path, _label, text in pack_texts(header):
        if isinstance(text, dict):
            line, col = source.locate(field_path)
            reading.locations[("text",) + tuple(map(str, field_path))] = (source.path, line, col)
    for _lesson, exercise in pack.exercises():
        if exercise.uses:
            names = tuple(item.name for _l, used in pack.used_by(exercise) for item in used.contract)
            object.__setattr__(exercise, "_used_names", names)
    object.__setattr__(pack, "_locations", reading.locations)  # Pack is frozen; these are the loader's
    object.__setattr__(pack, "_root", source.path.parent)
    object.__setattr__(pack, "_sources", tuple(reading.sources))
    return pack



def _block_start(source: Source, path: tuple[Any, ...]) -> tuple[int, int] | None:
    """For code written as a literal block (``code: |``): the file line of its first line, and
    the block's indentation (so the code's line i, column c is the file's line + i, indent + c).
    None for other styles, whose lines do not map one to one."""
    place = source.walk(path)
    node = place.node
    if place.missed or getattr(node, "style", None) != "|":
        return None
    first = node.start_mark.line + 1  # 0-based: the line after the `|`
    try:
        lines = source.path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError):
        return None
    for line in lines[first:node.end_mark.line + 1]:
        if line.strip():
            return first + 1, len(line) - len(line.lstrip(" "))
    return None

class _Reading:
    """One load of one pack: the files read, where each lesson, step and check starts, and every
    problem found, in the order found."""

    def __init__(self, source: Source):
        self.source = source
        self.problems: list[Problem] = []
        self.sources = [source.path]
        self.locations: Locations = {}
        self.references = References()
        #: pack.yaml's form_rules (validated with the header): what every form check starts from
        self.form_rules: dict[Any, Any] = {}

    def validate(self, model: type[T], data: dict[Any, Any], source: Source, base: tuple[Any, ...],
                 with_rules: bool = False) -> T | None:
        from tutor.pack.validation import ValidationError, validate  # pydantic: only when loading YAML

        try:
            return validate(model, self._with_rules(data) if with_rules and self.form_rules else data)
        except ValidationError as exc:
            self.problems.extend(validation_problems(source, data, base, model, exc))
            return None

    def _with_rules(self, lesson: dict[Any, Any]) -> dict[Any, Any]:
        """The lesson's data with pack.yaml's ``form_rules`` under every form check's own keys (a
        copy: the file's data stays as read, for locating problems)."""
        steps = lesson.get("steps")
        if not isinstance(steps, list):
            return lesson
        copied = []
        for step in steps:
            checks = step.get("checks") if isinstance(step, dict) else None
            if isinstance(checks, list):
                step = dict(step, checks=[{**self.form_rules, **check}
                                          if isinstance(check, dict) and check.get("kind") == "form" else check
                                          for check in checks])
            copied.append(step)
        return dict(lesson, steps=copied)

    def entries(self) -> list[Any]:
        """The ``lessons:`` list (each a lesson or a path to a lesson file)."""
        data, pack_file = self.source.data, self.source.path
        entries = data.get("lessons")
        if "lessons" not in data:
            self.problems.append(Problem(pack_file, 1, 1, "missing required key 'lessons'"))
            return []
        line, col = self.source.locate(("lessons",))
        if not isinstance(entries, list):
            self.problems.append(Problem(pack_file, line, col, f"lessons: expected a list, got {type_name(entries)}"))
            return []
        if not entries:
            self.problems.append(Problem(pack_file, line, col, "the pack has no lessons: add at least one"))
        return entries

    def lesson(self, index: int, entry: Any) -> Lesson | None:
        """The lesson of one entry of ``lessons:``, validated, or None (its problems recorded)."""
        found = self._lesson_data(index, entry)
        if found is None:
            return None
        source, data, base = found
        self.problems.extend(self.references.lesson(data, source, base))
        lesson = self.validate(Lesson, data, source, base, with_rules=True)
        if lesson is not None:
            self._record_locations(lesson, source, base)
        return lesson

    def _lesson_data(self, index: int, entry: Any) -> tuple[Source, dict[Any, Any], tuple[Any, ...]] | None:
        if isinstance(entry, dict):
            return self.source, entry, ("lessons", index)
        if not isinstance(entry, str):
            line, col = self.source.locate(("lessons", index))
            self.problems.append(Problem(self.source.path, line, col,
                                         f"lessons[{index}]: expected a lesson or a path to a lesson file, "
                                         f"got {type_name(entry)}"))
            return None
        target = _lesson_file(self.source, index, entry)
        if isinstance(target, Problem):
            self.problems.append(target)
            return None
        self.sources.append(target)
        try:
            source = read_source(target)
        except SourceError as exc:
            self.problems.extend(exc.problems)
            return None
        if not isinstance(source.data, dict):
            self.problems.append(Problem(target, 1, 1, f"a lesson file must be a mapping, got {type_name(source.data)}"))
            return None
        return source, source.data, ()

    def _record_locations(self, lesson: Lesson, source: Source, base: tuple[Any, ...]) -> None:
        """Where each lesson, step and check starts, for problems found after loading."""

        def where(path: tuple[Any, ...]) -> tuple[Path, int, int]:
            return (source.path, *source.locate(base + path))

        self.locations[(lesson.id,)] = where(())
        for path, _label, text in lesson_texts(lesson):  # where `validate` points at a text's languages
            if isinstance(text, dict):
                self.locations[("text", lesson.id) + tuple(map(str, path))] = where(path)
        for index, step in enumerate(lesson.steps):
            self.locations[(lesson.id, step.id)] = where(("steps", index))
            for position, check in enumerate(getattr(step, "checks", ())):
                self.locations[(lesson.id, step.id, check.id)] = where(("steps", index, "checks", position))
            for name in CODE_FIELDS:
                code = getattr(step, name, None)
                if isinstance(code, str) and MARK in code:  # where `lint` points at a #zh: line
                    found = _block_start(source, base + ("steps", index, name))
                    if found is not None:
                        self.locations[("code", lesson.id, step.id, name)] = (source.path, *found)

    def prelude(self, header: PackHeader) -> str | None:
        """The pack's prelude: ``prelude``, or the text of ``prelude_file`` (checked to parse)."""
        if header.prelude_file is None:
            return header.prelude
        target = _pack_path(self.source, ("prelude_file",), header.prelude_file, "prelude", (".py",))
        if isinstance(target, Problem):
            self.problems.append(target)
            return None
        self.sources.append(target)
        try:
            text = target.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            line, col = self.source.locate(("prelude_file",))
            self.problems.append(Problem(self.source.path, line, col, f"prelude file unreadable: {exc}"))
            return None
        try:
            compile(text, str(target), "exec", dont_inherit=True)
        except SyntaxError as exc:  # where the author can fix it: the file's own line and column
            self.problems.append(Problem(target, exc.lineno, exc.offset, f"not valid Python: {exc.msg}"))
            return None
        except ValueError as exc:  # NUL bytes
            self.problems.append(Problem(target, 1, 1, f"not valid Python: {exc}"))
            return None
        return text

    def sorted_problems(self) -> list[Problem]:
        """Pack.yaml's first, then each file's in the order first met; by position within a file."""
        order = {self.source.path: 0}
        return sorted(self.problems, key=lambda p: (order.setdefault(p.file, len(order)), p.line or 0, p.col or 0))


def _lesson_file(source: Source, index: int, entry: str) -> Path | Problem:
    """The lesson file ``lessons[index]`` names, which must stay inside the pack folder."""
    return _pack_path(source, ("lessons", index), entry, "lesson", (".yaml", ".yml"))


def _pack_path(source: Source, key: tuple[Any, ...], entry: str, what: str,
               suffixes: tuple[str, ...]) -> Path | Problem:
    """The file pack.yaml names at ``key``, which must stay inside the pack folder."""
    line, col = source.locate(key)
    pack_dir = source.path.parent
    relative = Path(entry)
    if relative.is_absolute() or not entry.strip():
        return Problem(source.path, line, col, f"{what} path {entry!r} must be relative to the pack folder")
    if relative.suffix not in suffixes:
        return Problem(source.path, line, col, f"{what} path {entry!r} must name a {suffixes[0]} file")
    candidate = pack_dir / relative
    root = pack_dir.resolve()
    if "/" in entry or "\\" in entry or ".." in entry or candidate.is_symlink():
        target = Path(os.path.realpath(candidate))  # only a path with parts or a link can leave
    else:
        target = root / relative
    if not target.is_relative_to(root):
        return Problem(source.path, line, col, f"{what} path {entry!r} points outside the pack folder")
    if not target.is_file():
        return Problem(source.path, line, col, f"{what} file {entry!r} not found")
    return pack_dir / relative


def exercise_count(pack: Pack) -> int:
    return sum(isinstance(step, Exercise) for lesson in pack.lessons for step in lesson.steps)


__all__ = ["MAX_FILE_BYTES", "MAX_NODES", "PACK_FILE", "Pack", "PackError", "Problem", "exercise_count", "load_pack",
           "pack_file_of"]
