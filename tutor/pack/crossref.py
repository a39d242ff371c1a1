"""Cross-references pydantic cannot see: ids unique in their scope, ``after:`` naming a real check.

Checked on the plain data of each lesson, before and apart from validation, so they are reported
even when the schema also fails.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Iterator

from tutor.pack.problems import Problem
from tutor.pack.yaml_source import Source


class References:
    """The ids seen so far in one pack (lesson and exercise ids are unique in the pack)."""

    def __init__(self) -> None:
        self.lesson_ids: dict[str, tuple[Path, int]] = {}
        self.exercise_ids: dict[str, tuple[Path, int]] = {}

    def lesson(self, lesson: dict[str, Any], source: Source, base: tuple[Any, ...]) -> Iterator[Problem]:
        """The problems of one lesson (found at ``base`` in ``source``), in the file's order."""
        ident = lesson.get("id")
        if isinstance(ident, str):
            yield from self._first_use(self.lesson_ids, "lesson", "", ident, source, base + ("id",))
        steps = lesson.get("steps")
        yield from _duplicate_ids(steps, "step", source, base + ("steps",))
        if not isinstance(steps, list):
            return
        for index, step in enumerate(steps):
            if not isinstance(step, dict) or step.get("kind") != "exercise":
                continue
            ident = step.get("id")
            if isinstance(ident, str):
                yield from self._first_use(self.exercise_ids, "exercise", ": exercise ids are unique in the pack",
                                           ident, source, base + ("steps", index, "id"))
            yield from self._uses(step, source, base + ("steps", index))
            yield from _checks(step.get("checks"), source, base + ("steps", index, "checks"))

    def _uses(self, step: dict[str, Any], source: Source, base: tuple[Any, ...]) -> Iterator[Problem]:
        """``uses`` names exercises that come before this one in the pack (so answers run in an
        order, and no two exercises use each other)."""
        uses = step.get("uses")
        for position, ident in enumerate(uses if isinstance(uses, list) else []):
            if not isinstance(ident, str):
                continue  # the schema says what is wrong with it
            if ident == step.get("id"):
                message = "an exercise cannot use its own answer"
            elif ident in self.exercise_ids and ident != step.get("id"):
                continue
            else:
                earlier = sorted(k for k in self.exercise_ids if k != step.get("id"))
                close = difflib.get_close_matches(ident, earlier, n=1, cutoff=0.6)
                message = f"'uses' names {ident!r}, which is not an exercise before this one in the pack" + (
                    f" (did you mean {close[0]!r}?)" if close else
                    f"; exercises before it: {', '.join(earlier)}" if earlier else "; no exercise comes before it")
            line, col = source.locate(base + ("uses", position))
            yield Problem(source.path, line, col, message)

    @staticmethod
    def _first_use(seen: dict[str, tuple[Path, int]], label: str, why: str, ident: str, source: Source,
                   path: tuple[Any, ...]) -> Iterator[Problem]:
        line, col = source.locate(path)
        if ident in seen:
            first_file, first_line = seen[ident]
            yield Problem(source.path, line, col,
                          f"duplicate {label} id {ident!r}{why} (first used at {first_file}:{first_line})")
        else:
            seen[ident] = (source.path, line)


def _checks(checks: Any, source: Source, base: tuple[Any, ...]) -> Iterator[Problem]:
    yield from _duplicate_ids(checks, "check", source, base)
    if not isinstance(checks, list):
        return
    known = {c.get("id") for c in checks if isinstance(c, dict)}
    for index, check in enumerate(checks):
        after = check.get("after") if isinstance(check, dict) else None
        for position, dep in enumerate(after if isinstance(after, list) else []):
            if dep not in known:
                ids = sorted(str(k) for k in known if isinstance(k, str) and k != check.get("id"))
                close = difflib.get_close_matches(str(dep), ids, n=1, cutoff=0.6)
                message = f"'after' names unknown check {dep!r}" + (
                    f" (did you mean {close[0]!r}?)" if close else
                    f"; checks of this exercise: {', '.join(ids)}" if ids else "; this exercise has no other check")
            elif dep == check.get("id"):
                message = "a check cannot come after itself"
            else:
                continue
            line, col = source.locate(base + (index, "after", position))
            yield Problem(source.path, line, col, message)


def _duplicate_ids(items: Any, label: str, source: Source, base: tuple[Any, ...]) -> Iterator[Problem]:
    if not isinstance(items, list):
        return
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            ident = item["id"]
            if ident in seen:
                line, col = source.locate(base + (index, "id"))
                first = source.locate(base + (seen[ident], "id"))[0]
                yield Problem(source.path, line, col, f"duplicate {label} id {ident!r} (first used on line {first})")
            else:
                seen[ident] = index
