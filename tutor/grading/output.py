"""What `grade` and `grade-merge` write: CSV (streamed as rows come), JSON, JUnit, an LMS totals
file, and one Markdown feedback file per learner.

Every writer works from the rows and a plain ``meta`` dict (pack id, version, title, graded items,
isolation), never from the pack, so merging shards' JSON gives byte-for-byte the files one run
would have written. Cells that a spreadsheet would run as a formula are defused. Every text a file
holds passes through :func:`inert` (the terminal's neutraliser, ``tutor.words.safe_text``): a
learner's error message or folder name with ESC, BEL, C1 controls, bidi overrides or characters
XML 1.0 forbids reaches no file raw, so the JUnit XML always parses and no spreadsheet, CI server
or LMS page acts on them.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from dataclasses import fields
from pathlib import Path
from typing import Any, Iterable
from xml.etree import ElementTree as ET

from tutor.words.safe_text import neutralize
from tutor.errors import TutorError
from tutor.grading.gradebook import COLUMNS, NO_ARCHIVE, POINT_PLACES, Row, round_points

FORMAT = "torch-tutor-grade"
FORMAT_VERSION = 1
TERMINAL_NAME_CHARS = 40
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_ROW_FIELDS = {f.name for f in fields(Row)}


#: What every output says about a run besides its rows: the keys of META_KEYS (pack, version,
#: title, fingerprint, graded items, max_points, isolation, shard, ignored notices, deadline,
#: late_penalty, the all-or-nothing exercises), as ``grade`` builds them and as a shard's JSON
#: carries them back.
GradeMeta = dict[str, Any]


class MergeError(TutorError, ValueError):
    """Shards that cannot be merged; the message says which and why."""


# --------------------------------------------------------------------------- cells and names


def inert(value: Any) -> Any:
    """``value`` with every string in it (in dicts and lists too) neutralised for a file: control
    and bidi characters made visible (ESC shows as ``␛``, U+202E as ``\\u202e``), tab and newline
    kept. Idempotent, so text read back from a shard's JSON comes out the same."""
    if isinstance(value, str):
        return neutralize(value)
    if isinstance(value, dict):
        return {key: inert(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [inert(item) for item in value]
    return value


def csv_cell(value: Any) -> str:
    """A CSV cell a spreadsheet shows as text: '=1+1', '+x', '@x', '-x' get a leading apostrophe
    (OWASP's advice for CSV injection); numbers are written as numbers."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, float):
        return _num(value)
    text = neutralize(str(value))
    if len(text) > 1 and text.startswith(_FORMULA_START):
        return "'" + text
    return text


def clip(text: str, limit: int = TERMINAL_NAME_CHARS) -> str:
    """One line of at most ``limit`` characters, for a terminal (names are already neutralised)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def sort_rows(rows: Iterable[Row], items: list[str]) -> list[Row]:
    """Learners by name; within one, the pack's items in order, then anything else."""
    index = {item: i for i, item in enumerate(items)}
    return sorted(rows, key=lambda r: (r.learner, index.get(r.exercise, len(index)), r.exercise, r.origin))


# --------------------------------------------------------------------------- CSV


def csv_header() -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(COLUMNS)
    return out.getvalue()


def csv_line(row: Row) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow([csv_cell(v) for v in row.record().values()])
    return out.getvalue()


def to_csv(rows: list[Row]) -> str:
    return csv_header() + "".join(csv_line(row) for row in rows)


class CsvStream:
    """The CSV written row by row as grading goes (flushed each time), so a batch that dies, or a
    disk that fills, keeps every row finished before; ``finish`` rewrites it in order, atomically.
    A write that fails stops the stream and is reported by ``error``; grading goes on."""

    def __init__(self, path: Path):
        self.path = path
        self.error: str | None = None
        self._handle = None
        self._good = 0  # bytes of whole rows written
        try:
            self._handle = open(path, "w", encoding="utf-8", newline="")
            self._write(csv_header())
        except OSError as exc:
            self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        self.error = f"cannot write {self.path}: {exc.strerror or exc}"
        if self._handle is not None:
            try:
                self._handle.close()
            except OSError:
                pass
            self._handle = None

    def _write(self, text: str) -> None:
        assert self._handle is not None
        self._handle.write(text)
        self._handle.flush()
        self._good = self._handle.tell()

    def add(self, row: Row) -> None:
        if self._handle is None:
            return
        try:
            self._write(csv_line(row))
        except OSError as exc:
            self._fail(exc)
            try:  # take back a row the full disk cut in half: shrinking needs no space
                os.truncate(self.path, self._good)
            except OSError:
                pass

    def finish(self, rows: list[Row]) -> None:
        if self._handle is None:
            return
        try:
            self._handle.close()
        except OSError as exc:
            self._fail(exc)
            return
        self._handle = None
        try:
            write_atomic(self.path, to_csv(rows))
        except OSError as exc:
            self.error = (f"cannot rewrite {self.path} in order ({exc.strerror or exc}); it holds every row, "
                          "in the order they finished")


def write_atomic(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        try:
            partial.unlink()
        except OSError:
            pass
        raise


# --------------------------------------------------------------------------- JSON, JUnit


def row_json(row: Row) -> dict[str, Any]:
    data = row.record() | {"origin": row.origin, "cached": row.cached, "why_not_cached": row.why_not_cached,
                           "seconds": round(row.seconds, 4), "run_seconds": round(row.run_seconds, 4),
                           "checks": row.checks}
    return data


def summary(meta: GradeMeta, rows: list[Row]) -> dict[str, Any]:
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION,
        **meta,
        "point_places": POINT_PLACES,
        "learners": len({r.learner for r in rows if r.exercise in set(meta["items"])}),
        "rows": len(rows), "passed": sum(r.passed for r in rows),
        "statuses": _count(r.status for r in rows),
        "without_quiz_answers": without_quiz_answers(meta, rows),
    }


def without_quiz_answers(meta: GradeMeta, rows: list[Row]) -> dict[str, Any] | None:
    """The learners who handed in loose files and no archive, so no quiz answer (only the archive
    `torch-tutor handin` writes carries them): their quiz rows are 'missing', 0 of the quizzes'
    points, out of the same maximum as everyone's. None when there is no such learner."""
    quizzes = set(meta.get("quizzes") or [])
    if not quizzes:
        return None
    count = len({r.learner for r in rows if r.exercise in quizzes and r.message == NO_ARCHIVE})
    if not count:
        return None
    quiz_points = float(meta.get("quiz_points") or 0.0)
    who = "1 learner" if count == 1 else f"{count} learners"
    note = (f"{who} handed in loose files and no hand-in archive, so no quiz answer: their quiz rows are "
            f"'missing', 0 of {_points(quiz_points)}, out of the same maximum of {_num(float(meta['max_points']))} "
            "(quiz answers reach `grade` only in the archive `torch-tutor handin` writes)")
    return {"learners": count, "quiz_points": quiz_points, "note": note}


def to_json(meta: GradeMeta, rows: list[Row]) -> str:
    return json.dumps(inert({"summary": summary(meta, rows), "rows": [row_json(r) for r in rows]}),
                      indent=2, ensure_ascii=False) + "\n"


def to_junit(meta: GradeMeta, rows: list[Row]) -> str:
    pack_id, version = inert(meta["pack"]), inert(meta["pack_version"])
    whole = set(meta.get("all_or_nothing") or [])
    suites = ET.Element("testsuites", name=f"torch-tutor grade {pack_id} {version}")
    for learner in sorted({r.learner for r in rows}):
        mine = [r for r in rows if r.learner == learner]
        suite = ET.SubElement(suites, "testsuite", name=inert(learner), tests=str(len(mine)),
                              failures=str(sum(r.status in ("failed",) for r in mine)),
                              errors=str(sum(not r.passed and r.status != "failed" for r in mine)),
                              time=f"{sum(r.seconds for r in mine):.3f}")
        for row in mine:
            case = ET.SubElement(suite, "testcase", classname=inert(f"{pack_id}.{learner}"),
                                 name=inert(row.exercise), time=f"{row.seconds:.3f}")
            if row.passed:
                continue
            tag = "failure" if row.status == "failed" else "error"
            scored = f" ({ALL_OR_NOTHING}: 0 points)" if row.exercise in whole else ""
            ET.SubElement(case, tag, type=inert(row.status),  # XML 1.0 allows none of C0 but tab and newline
                          message=inert(f"{row.checks_passed}/{row.checks_total} checks{scored}: {row.message}"[:2000]))
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


# --------------------------------------------------------------------------- totals


def learner_totals(meta: GradeMeta, rows: list[Row]) -> list[dict[str, Any]]:
    """One entry per learner with a row for a graded item (a stray archive is nobody's total)."""
    items = set(meta["items"])
    learners: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row.exercise not in items:
            continue
        entry = learners.setdefault(row.learner, {"learner": row.learner, "id": row.learner_id,
                                                  "email": row.email, "points": 0.0, "max_points": 0.0,
                                                  "late": 0})
        entry["points"] += row.points  # rows are rounded already: the total is their sum
        entry["max_points"] += row.max_points
        entry["late"] += bool(row.late)
    for entry in learners.values():  # the sum of 2-place numbers, without float dust (0.1 + 0.2)
        entry["points"], entry["max_points"] = round_points(entry["points"]), round_points(entry["max_points"])
    return [learners[name] for name in sorted(learners)]


def to_totals(meta: GradeMeta, rows: list[Row]) -> str:
    """CSV for Canvas's and Moodle's gradebook import: Student, SIS User ID, Email, the total
    (column named after the pack) and the maximum."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["Student", "SIS User ID", "Email",
                     csv_cell(f"{meta['pack']} ({_num(meta['max_points'])} points)"), "Points Possible"])
    for entry in learner_totals(meta, rows):
        writer.writerow([csv_cell(entry["learner"]), csv_cell(entry["id"]), csv_cell(entry["email"]),
                         csv_cell(entry["points"]), csv_cell(entry["max_points"])])
    return out.getvalue()


def _points(value: float) -> str:
    return f"{_num(value)} point" + ("" if _num(value) == "1" else "s")


def _num(value: float) -> str:
    """A number of points as every output writes it: rounded as rows are, no trailing zeros."""
    return f"{round_points(value):.{POINT_PLACES}f}".rstrip("0").rstrip(".")


# --------------------------------------------------------------------------- feedback


def _fence(text: str) -> str:
    """Text from a run, shown verbatim: a fence longer than any run of backticks inside it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def feedback_markdown(meta: GradeMeta, learner: str, rows: list[Row]) -> str:
    mine = [r for r in rows if r.learner == learner]
    items = set(meta["items"])
    total = round_points(sum(r.points for r in mine if r.exercise in items))
    maximum = round_points(sum(r.max_points for r in mine if r.exercise in items))
    lines = [f"# {md_text(meta.get('pack_title') or meta['pack'])}: feedback for {md_text(learner)}", "",
             f"Pack `{meta['pack']}` version {meta['pack_version']}. "
             f"**{_num(total)} of {_num(maximum)} points.**", ""]
    whole = set(meta.get("all_or_nothing") or [])
    for row in mine:
        verdict = "passed" if row.passed else row.status
        lines += [f"## {md_text(row.exercise)}: {verdict}, {_num(row.points)} of {_num(row.max_points)} points",
                  ""]
        if row.exercise in whole:
            lines += [f"Scored {ALL_OR_NOTHING}.", ""]
        if row.handed_in:
            late = " (late)" if row.late else ""
            if row.late and row.late_penalty:
                late = f" (late: {_num(row.late_penalty)}% of the points taken)"
            lines += [f"Handed in {row.handed_in} (from the {row.handed_in_from}){late}.", ""]
        if row.message:
            lines += [_fence(row.message), ""]
        for check in row.checks:
            mark = {"passed": "✓", "failed": "✗", "error": "!", "skipped": "–", "timeout": "⏱",
                    "tampered": "!"}.get(check["status"], "?")
            weight = (f" (weight {_num(check.get('weight', 1.0))})"
                      if check.get("weight", 1.0) != 1.0 and row.exercise not in whole else "")
            lines.append(f"- {mark} **{check['status']}**: {check['description']}{weight}")
            details = check["message"]
            if check.get("expected") is not None or check.get("got") is not None:
                details += f"\nexpected: {check.get('expected')}\ngot:      {check.get('got')}"
            if details and check["status"] != "passed":
                lines += ["", _indent(_fence(details)), ""]
            if check.get("hint"):
                lines += [f"  - Hint: {check['hint']}", ""]
        lines.append("")
    return neutralize("\n".join(lines).rstrip() + "\n")  # names, messages, hints: nothing raw


def md_text(text: str) -> str:
    """A name from a learner as plain Markdown text: one line, no markup (links, images, HTML)."""
    return re.sub(r"([\\`*_{}\[\]<>!|~])", r"\\\1", " ".join(text.split()))


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.split("\n"))


def feedback_filename(learner: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", learner).strip("._") or "learner"
    base = base[:80]
    name, n = f"{base}.md", 2
    while name in taken:
        name, n = f"{base}-{n}.md", n + 1
    taken.add(name)
    return name


def write_feedback(folder: Path, meta: GradeMeta, rows: list[Row]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    taken: set[str] = set()
    written = []
    for entry in learner_totals(meta, rows):
        path = folder / feedback_filename(entry["learner"], taken)
        write_atomic(path, feedback_markdown(meta, entry["learner"], rows))
        written.append(path)
    return written


# --------------------------------------------------------------------------- merging shards


def row_from_json(data: dict[str, Any]) -> Row:
    known = {k: v for k, v in data.items() if k in _ROW_FIELDS}
    return Row(**known)


def read_shard(path: Path) -> tuple[GradeMeta, list[Row]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise MergeError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:
        raise MergeError(f"{path} is not a grade JSON file ({type(exc).__name__})") from None
    head = data.get("summary") if isinstance(data, dict) else None
    if not isinstance(head, dict) or head.get("format") != FORMAT or not isinstance(data.get("rows"), list):
        raise MergeError(f"{path} is not the JSON that `torch-tutor grade --json` writes")
    if head.get("format_version") != FORMAT_VERSION:
        raise MergeError(f"{path} has format_version {head.get('format_version')!r}; this torch-tutor "
                         f"merges {FORMAT_VERSION}")
    try:
        rows = [row_from_json(r) for r in data["rows"]]
    except TypeError as exc:
        raise MergeError(f"{path} has a malformed row ({exc})") from None
    return head, rows


def merge_shards(paths: list[Path]) -> tuple[GradeMeta, list[Row]]:
    """The meta and rows one unsharded run would have given, from every shard's JSON."""
    shards = [(path, *read_shard(path)) for path in paths]
    first_path, first, _rows = shards[0]
    same = ("pack", "pack_version", "pack_fingerprint", "items")
    seen: dict[int, Path] = {}
    count = None
    for path, head, _rows in shards:
        for key in same:
            if head.get(key) != first.get(key):
                raise MergeError(f"{path} and {first_path} were graded against different packs ({key} differs)")
        shard = head.get("shard")
        if not isinstance(shard, list) or len(shard) != 2:
            raise MergeError(f"{path} is not a shard (grade it with --shard K/N)")
        k, n = shard
        if count is None:
            count = n
        if n != count:
            raise MergeError(f"{path} is shard {k}/{n}, but {first_path} is one of {count}")
        if k in seen:
            raise MergeError(f"{path} and {seen[k]} are both shard {k}/{n}")
        seen[k] = path
    missing = [str(k) for k in range(1, (count or 0) + 1) if k not in seen]
    if missing:
        raise MergeError(f"shard(s) {', '.join(missing)} of {count} missing")
    rows: list[Row] = []
    owner: dict[str, Path] = {}
    for path, _head, shard_rows in shards:
        for row in shard_rows:
            if owner.setdefault(row.learner, path) != path:
                raise MergeError(f"learner {clip(row.learner)!r} is in both {owner[row.learner]} and {path}")
        rows += shard_rows
    meta = {key: first[key] for key in META_KEYS if key in first}
    meta["shard"] = None
    levels = {json.dumps(h.get("isolation"), sort_keys=True) for _p, h, _r in shards}
    if len(levels) > 1:
        weakest = [h["isolation"] for _p, h, _r in shards if _unisolated(h.get("isolation") or {})]
        meta["isolation"] = weakest[0] if weakest else first.get("isolation")
    return meta, sort_rows(rows, meta["items"])


def _unisolated(isolation: dict[str, Any]) -> bool:
    """A shard graded under a backend that does not isolate runs (accepted with --unisolated)."""
    from tutor.sandbox import backends

    level = isolation.get("level")
    return level in backends.REGISTRY and not backends.of(level).isolates


META_KEYS = ("pack", "pack_version", "pack_title", "pack_fingerprint", "items", "max_points", "isolation",
             "shard", "ignored", "deadline", "late_penalty", "quizzes", "quiz_points", "all_or_nothing")

#: What a row of an all-or-nothing exercise says about its points (feedback, JUnit, Gradescope).
ALL_OR_NOTHING = "all or nothing: the points only when every check passes"


def _count(items: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return dict(sorted(counts.items()))
