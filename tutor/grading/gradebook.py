"""`torch-tutor grade`: every learner's submissions checked by the learner's own engine.

A submissions folder holds one folder per learner with ``<exercise-id>.py`` files and/or hand-in
archives (``*.handin.zip``); archives may also sit at the top. Each (learner, exercise) becomes one
row. Problems with the files themselves (missing, empty, binary, not UTF-8, a symlink out of the
folder, a name that is no exercise) become rows with their own status, and nothing a submission
does at run time stops the batch.

Who is a learner: with a roster (``load_roster``), exactly its learners; without one, every
folder and every top-level archive's manifest. Precedence inside one learner: a loose ``.py``
file beats the same exercise in an archive; between archives the one with the latest recorded
time wins (then the later file name). A top-level archive never adds to or replaces a learner who
has a folder, and two top-level archives naming one learner are both refused.

Results are cached by the content of everything that decides a verdict (see ``GradeCache``).
Writing the outputs lives in ``tutor.grading.output``.
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import io
import json
import math
import os
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence, cast

from tutor.settings import private
from tutor.record.handin import SUFFIX, Handin, HandinError, read_handin
from tutor.pack.models import QUIZ_TYPES, Exercise, LatePenalty, Pack, QuizBase
from tutor.pack.quizzes import Graded, Ran
from tutor.pack.sourcefile import NotText, decode_text
from tutor.pack.text import resolve
from tutor.errors import TutorError

if TYPE_CHECKING:
    from tutor.grading.exercise import ExerciseReport
    from tutor.sandbox import Sandbox

MAX_SUBMISSION_BYTES = 512 * 1024
MAX_ROSTER_BYTES = 16 * 1024 * 1024
CACHE_SCHEMA = 2
COLUMNS = ("learner", "learner_id", "email", "exercise", "passed", "checks_passed", "checks_total", "points",
           "max_points", "status", "message", "handed_in", "handed_in_from", "late", "late_penalty")
SECONDS_PER_DAY = 86400

#: Statuses of a graded submission (docs/authoring.md, "Status words": one table for check,
#: validate, grade, feedback and the autograders); a run's own word is the row's.
RUN_STATUS = {"timeout": "timeout", "memory": "memory", "output-limit": "output-limit", "killed": "killed",
              "sandbox-failure": "sandbox-failure"}
#: Outcomes the run's limits (or the machine's load) decide: never cached, always run again.
LIMIT_DECIDED = frozenset({"timeout", "memory", "output-limit", "killed", "sandbox-failure", "exited"})
#: Points are rounded half up to this many decimal places, once per row (after partial credit and
#: the late penalty), as a gradebook shows them; totals add the rounded rows.
POINT_PLACES = 2


def round_points(value: float) -> float:
    """``value`` rounded half up to POINT_PLACES places (0.26666 -> 0.27, 0.125 -> 0.13), decided on
    its shortest decimal form so that a float just under a half (2.675) is not rounded down."""
    from decimal import ROUND_HALF_UP, Decimal

    exact = Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-POINT_PLACES), rounding=ROUND_HALF_UP)
    return float(exact) + 0.0  # + 0.0: never -0.0


def clean_name(text: str) -> str:
    """A file or learner name from someone else, safe to print and to store: control and bidi
    characters made visible (the sandbox's own neutraliser), undecodable bytes replaced. A lone
    surrogate that no file name's bytes gave (a learner's ``raise ValueError("\\ud800")``) is
    replaced too, never a UnicodeEncodeError that ends the whole class's grading."""
    from tutor.sandbox.textclean import clean_output

    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # surrogates outside U+DC80-U+DCFF: each becomes U+FFFD below
        data = text.encode("utf-8", "surrogatepass")
    return clean_output(data)


@dataclass
class RosterEntry:
    learner: str
    id: str = ""
    email: str = ""


class RosterError(TutorError, ValueError):
    """A roster file that cannot be used; the message names the line."""


def load_roster(path: Path) -> list[RosterEntry]:
    """A CSV with a ``learner`` column (the folder or hand-in name) and optional ``id``, ``email``."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RosterError(f"cannot read the roster {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_ROSTER_BYTES:
        raise RosterError(f"the roster {path} is {len(data):,} bytes; the limit is {MAX_ROSTER_BYTES:,}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RosterError(f"the roster {path} is not UTF-8 (byte {exc.start}); save it as CSV UTF-8") from None
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise RosterError(f"the roster {path} is not CSV: {exc}") from None
    if not header:
        raise RosterError(f"the roster {path} is empty; it needs a header line with a 'learner' column")
    names = [h.strip().lower() for h in header]
    if "learner" not in names:
        raise RosterError(f"the roster {path} has no 'learner' column (its columns: {', '.join(map(repr, header))})")
    col = {name: names.index(name) for name in ("learner", "id", "email") if name in names}
    entries: list[RosterEntry] = []
    seen: dict[str, int] = {}
    try:
        for row in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            cells = {name: (row[i].strip() if i < len(row) else "") for name, i in col.items()}
            learner = cells["learner"]
            if not learner:
                raise RosterError(f"{path}:{line}: the learner cell is empty")
            for key in filter(None, (learner, cells.get("id", ""))):
                if key in seen:
                    raise RosterError(f"{path}:{line}: {clean_name(key)!r} is already on line {seen[key]}")
                seen[key] = line
            entries.append(RosterEntry(learner, cells.get("id", ""), cells.get("email", "")))
    except csv.Error as exc:
        raise RosterError(f"{path}:{reader.line_num}: not CSV: {exc}") from None
    if not entries:
        raise RosterError(f"the roster {path} lists no learners")
    return entries


@dataclass
class Submission:
    learner: str
    exercise: str
    origin: str
    code: str | None = None
    status: str | None = None  # set when the file itself is the problem: nothing to run
    message: str = ""
    handed_in: float | None = None  # seconds since the epoch
    handed_in_from: str = ""  # "archive" (the time the hand-in recorded) or "file mtime"
    learner_id: str = ""
    email: str = ""
    answer: str | None = None  # a quiz row: the learner's recorded answer


#: One check's result on a row, as the JSON output carries it: id, kind, status, description,
#: message, expected, got, hint, weight.
CheckEntry = dict[str, Any]


@dataclass
class Row:
    learner: str
    exercise: str
    passed: bool
    checks_passed: int
    checks_total: int
    status: str
    message: str
    origin: str = ""
    seconds: float = 0.0  # request to verdict, in this process
    run_seconds: float = 0.0  # of which the sandbox child ran (the learner's code and the checks)
    cached: bool = False
    learner_id: str = ""
    email: str = ""
    points: float = 0.0
    max_points: float = 0.0
    handed_in: str = ""  # ISO 8601, UTC
    handed_in_from: str = ""
    late: bool | None = None  # None: no deadline applies
    late_penalty: float = 0.0  # percent of the points taken for lateness (the pack's late_penalty)
    checks: list[CheckEntry] = field(default_factory=list)  # per check: id, status, weight, description, message...
    why_not_cached: str = ""  # graded fresh: why the cache had no answer

    def record(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in COLUMNS}


@dataclass
class Collection:
    submissions: list[Submission]
    ignored: list[str] = field(default_factory=list)  # one notice per file or folder not graded


# --------------------------------------------------------------------------- collecting


def _decode(data: bytes) -> tuple[str | None, str | None, str]:
    """(code, status, message) for a submission's raw bytes."""
    if len(data) > MAX_SUBMISSION_BYTES:
        return None, "too-large", f"{len(data):,} bytes; a submission may have at most {MAX_SUBMISSION_BYTES:,}"
    try:
        code = decode_text(data)
    except NotText as exc:
        return None, exc.kind, f"{exc.message}, not Python source (line {exc.line})"
    if not code.strip():
        return None, "empty", "the file is empty"
    return code, None, ""


#: What editors, Python and file managers leave beside a learner's files: never graded, never a row
#: or a notice (docs/authoring.md, "What `grade` reads"). Other names starting with "." are hidden:
#: not graded either, with a notice.
_CLUTTER_NAMES = frozenset({"__pycache__", ".DS_Store", "Thumbs.db", "desktop.ini", ".ipynb_checkpoints",
                            ".git", ".github", ".gitignore", ".gitattributes", ".torch-tutor", ".vscode",
                            ".idea"})


def is_clutter(name: str) -> bool:
    """A name a learner's tools write, not the learner: ``__pycache__``, ``*.pyc``, editor backups
    (``file~``, ``.file.swp``, ``#file#``), ``.DS_Store``..."""
    return (name in _CLUTTER_NAMES or name.endswith(("~", ".pyc", ".swp", ".swo", ".swx"))
            or (len(name) > 1 and name.startswith("#") and name.endswith("#")) or name.startswith("._"))


def _inside(path: Path, root: Path) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(root)


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


#: The message of a quiz row of a learner who handed in loose files and no archive (the archive
#: `torch-tutor handin` writes is what carries quiz answers): 0 of the quiz's points.
NO_ARCHIVE = ("no answer: loose .py files carry no quiz answers; the archive `torch-tutor handin` writes "
              "does (answer quizzes in the app or with `torch-tutor quiz`)")


#: A quiz whose type is graded (its declaration has ``mark``; its record has ``points``).
GradedQuiz = Graded


#: How candidates for one (learner, item) compare: (0 archive / 1 loose file, recorded time, file name).
Rank = tuple[int, float, str]


def graded_quizzes(pack: Pack) -> list[tuple[str, GradedQuiz]]:
    """("lesson/step", quiz) for every quiz of a graded type (tutor/pack/quizzes/) worth points, in
    pack order."""
    return [(f"{lesson.id}/{step.id}", cast(GradedQuiz, step)) for lesson in pack.lessons for step in lesson.steps
            if isinstance(step, QuizBase) and QUIZ_TYPES[type(step)].mark is not None
            and float(getattr(step, "points")) > 0]


def item_order(pack: Pack) -> list[str]:
    """The graded items of a pack in the order rows list them: exercises, then graded quizzes."""
    return [ex.id for _lesson, ex in pack.exercises()] + [ref for ref, _quiz in graded_quizzes(pack)]


def collect(pack: Pack, root: Path, roster: list[RosterEntry] | None = None) -> Collection:
    """Every (learner, graded item) of the folder, plus a row for each file that is not one."""
    collector = _Collector(pack, root, _Roster(roster))
    folders, top_archives = collector.scan_top()
    for learner, folder in folders.items():
        collector.scan_folder(learner, folder)
    collector.claim_top_archives(top_archives, folders)
    return Collection(collector.rows() + collector.strays_on_roster(), collector.ignored)


class _Roster:
    """Who a folder's or an archive's name stands for: with a roster, only the learners it lists
    (by their name or their id); without one, every name, cleaned for the terminal."""

    def __init__(self, roster: list[RosterEntry] | None) -> None:
        self.entries = roster
        self.by_key: dict[str, RosterEntry] = {}
        for person in roster or []:
            self.by_key[person.learner] = person
            if person.id:
                self.by_key[person.id] = person

    def learner_for(self, raw: str) -> str | None:
        """The learner a folder or manifest name stands for; None when a roster does not list it."""
        if self.entries is None:
            return clean_name(raw)
        entry = self.by_key.get(raw)
        return entry.learner if entry else None

    def stamp(self, sub: Submission, learner: str) -> None:
        """The roster's id and email for ``learner`` on ``sub`` (none for a learner it lacks)."""
        who = self.by_key.get(learner) or RosterEntry(learner)
        sub.learner_id, sub.email = who.id, who.email


class _Collector:
    """What one submissions folder holds, read once: every learner's candidates per exercise
    (ranked: the highest wins, an archive's newest hand-in over loose files), their best
    archive's quiz answers, and a row or a notice for everything that is not a submission."""

    def __init__(self, pack: Pack, root: Path, roster: _Roster) -> None:
        self.pack = pack
        self.root = root
        self.root_real = Path(os.path.realpath(root))
        self.roster = roster
        self.exercise_ids = [exercise.id for _lesson, exercise in pack.exercises()]
        self.quizzes = graded_quizzes(pack)
        self.ignored: list[str] = []
        self.strays: list[Submission] = []
        # learner -> item -> candidates [(rank, Submission)]; the highest rank wins
        self.found: dict[str, dict[str, list[tuple[Rank, Submission]]]] = {}
        # learner -> best archive's quizzes
        self.answers: dict[str, tuple[Rank, dict[str, dict[str, Any]], str, float | None, str]] = {}
        self.archived: set[str] = set()  # learners with a readable hand-in archive of this pack: their quizzes get rows

    # ------------------------------------------------------------------ the ranker and the archive reader

    def offer(self, learner: str, rank: Rank, sub: Submission) -> None:
        self.found.setdefault(learner, {}).setdefault(sub.exercise, []).append((rank, sub))

    def from_archive(self, path: Path, learner: str, handin: Handin, shown: str) -> None:
        self.archived.add(learner)
        created = handin.created
        when, source = (created, "archive") if created is not None else (_mtime(path), "file mtime")
        rank = (0, created if created is not None else float("-inf"), path.name)
        for eid, data in handin.exercises.items():
            if eid not in self.exercise_ids:
                self.strays.append(_unknown(learner, eid, f"{shown}:exercises/{eid}.py", self.exercise_ids))
                continue
            code, status, message = _decode(data)
            self.offer(learner, rank, Submission(learner, eid, f"{shown}:exercises/{eid}.py", code, status, message,
                                                 when, source))
        if handin.quizzes and (learner not in self.answers or rank > self.answers[learner][0]):
            self.answers[learner] = (rank, handin.quizzes, shown, when, source)

    def read(self, path: Path, shown: str, learner: str | None) -> Handin | None:
        """The archive, or None after adding its row (bad archive, another pack)."""
        try:
            handin = read_handin(path)
        except HandinError as exc:
            self.strays.append(Submission(learner or shown, "-", shown, status="bad-archive", message=str(exc)))
            return None
        if handin.pack and handin.pack != self.pack.id:
            self.strays.append(Submission(learner or clean_name(handin.learner), "-", shown, status="wrong-pack",
                                          message=f"archive is for pack {clean_name(handin.pack)!r}, "
                                                  f"not {self.pack.id!r}"))
            return None
        return handin

    # ------------------------------------------------------------------ the folder

    def scan_top(self) -> tuple[dict[str, Path], list[Path]]:
        """The folder's entries: each learner's folder, and the archives at the top."""
        folders: dict[str, Path] = {}
        top_archives: list[Path] = []
        for entry in sorted(self.root.iterdir(), key=lambda p: p.name):
            shown = clean_name(entry.name)
            if is_clutter(entry.name):
                continue
            if entry.name.startswith("."):
                self.ignored.append(f"{shown}: a hidden name (it starts with '.'), not graded; rename it to grade it")
                continue
            # A symlink out of the folder, or a folder that is another learner's folder: never graded.
            if entry.is_symlink() and (not _inside(entry, self.root_real) or entry.is_dir()):
                self._top_symlink(entry, shown)
                continue
            if entry.is_dir():
                learner = self.roster.learner_for(entry.name)
                if learner is None:
                    self.ignored.append(f"{shown}/: not on the roster, not graded")
                elif learner in folders:
                    self.ignored.append(f"{shown}/: {clean_name(learner)!r} already has the folder "
                                        f"{clean_name(folders[learner].name)}/, not graded")
                else:
                    folders[learner] = entry
            elif entry.name.endswith(SUFFIX) and entry.is_file():
                top_archives.append(entry)
            else:
                self.ignored.append(f"{shown}: not a learner's folder or a hand-in archive, not graded")
        return folders, top_archives

    def _top_symlink(self, entry: Path, shown: str) -> None:
        outside = not _inside(entry, self.root_real)
        learner = self.roster.learner_for(entry.name)
        if learner is None:
            what = "a symlink out of the folder" if outside else "a symlink to another folder"
            self.ignored.append(f"{shown}: not on the roster ({what}), not graded")
        else:
            self.strays.append(Submission(learner, "-", shown, status="refused", message=(
                "a symlink pointing outside the submissions folder" if outside
                else "a symlink to another folder of the class")))

    def scan_folder(self, learner: str, folder: Path) -> None:
        """A learner's folder: its exercise files and hand-in archives."""
        self.found.setdefault(learner, {})
        for item in sorted(folder.iterdir(), key=lambda p: p.name):
            shown = f"{clean_name(folder.name)}/{clean_name(item.name)}"
            if is_clutter(item.name):
                continue
            if item.name.startswith("."):
                self.ignored.append(f"{shown}: a hidden name (it starts with '.'), not graded")
                continue
            if item.is_symlink() and not _inside(item, Path(os.path.realpath(folder))):
                where = "into another learner's folder" if _inside(item, self.root_real) else \
                    "pointing outside the submissions folder"
                self.strays.append(Submission(learner, clean_name(item.stem), shown, status="refused",
                                              message=f"a symlink {where}"))
                continue
            if item.name.endswith(SUFFIX) and item.is_file():
                handin = self.read(item, shown, learner)
                if handin is not None:  # in a learner's folder, the folder says whose it is
                    self.from_archive(item, learner, handin, shown)
            elif item.suffix == ".py" and item.is_file():
                if item.stem not in self.exercise_ids:
                    self.strays.append(_unknown(learner, clean_name(item.stem), shown, self.exercise_ids))
                    continue
                code, status, message = _decode(item.read_bytes())
                self.offer(learner, (1, 0.0, item.name), Submission(learner, item.stem, shown, code, status, message,
                                                                    _mtime(item), "file mtime"))
            else:
                self.strays.append(Submission(learner, clean_name(item.name), shown, status="unrecognised",
                                              message="not an <exercise-id>.py file or a hand-in archive"))

    def claim_top_archives(self, top_archives: list[Path], folders: dict[str, Path]) -> None:
        """The archives at the top, each for the learner its manifest names: one per learner
        without a folder is graded; two for one learner, neither."""
        claims: dict[str, list[tuple[Path, Handin]]] = {}
        for path in top_archives:
            shown = clean_name(path.name)
            handin = self.read(path, shown, None)
            if handin is None:
                continue
            learner = self.roster.learner_for(handin.learner)
            if learner is None:
                self.ignored.append(f"{shown}: for {clean_name(handin.learner)!r}, who is not on the roster, "
                                    "not graded")
            elif learner in folders:
                self.strays.append(Submission(shown, "-", shown, status="refused", message=(
                    f"names learner {clean_name(learner)!r}, who has a folder; an archive at the top never adds to "
                    "or replaces a learner's folder (put it in that folder to grade it)")))
            else:
                claims.setdefault(learner, []).append((path, handin))
        for learner, archives in claims.items():
            if len(archives) > 1:
                names = ", ".join(clean_name(p.name) for p, _h in archives)
                for path, _handin in archives:
                    self.strays.append(Submission(
                        clean_name(path.name), "-", clean_name(path.name), status="refused",
                        message=f"{len(archives)} archives at the top name learner {clean_name(learner)!r} "
                                f"({names}); none is graded: put the right one in a folder of that name"))
                continue
            path, handin = archives[0]
            self.found.setdefault(learner, {})
            self.from_archive(path, learner, handin, clean_name(path.name))

    # ------------------------------------------------------------------ the rows

    def rows(self) -> list[Submission]:
        """A row per learner and exercise (the best candidate, or missing) and per graded quiz."""
        entries = self.roster.entries
        learners = [entry.learner for entry in entries] if entries is not None else sorted(self.found)
        submissions: list[Submission] = []
        for learner in learners:
            slot = self.found.get(learner)
            for eid in self.exercise_ids:
                candidates = (slot or {}).get(eid)
                if candidates:
                    sub = max(candidates, key=lambda c: c[0])[1]
                elif slot is None:
                    sub = Submission(learner, eid, "", status="missing", message="nothing handed in")
                else:
                    sub = Submission(learner, eid, "", status="missing", message=f"no {eid}.py")
                self.roster.stamp(sub, learner)
                submissions.append(sub)
            submissions += self._quiz_rows(learner, slot)
        return submissions

    def _quiz_rows(self, learner: str, slot: dict[str, list[tuple[Rank, Submission]]] | None) -> list[Submission]:
        best = self.answers.get(learner)
        # Every learner has a row per graded quiz, whatever they handed in: the same maximum by
        # every route (loose files, an archive, Gradescope, Classroom); an unanswered quiz is 0.
        unanswered = (NO_ARCHIVE if slot and learner not in self.archived else
                      "nothing handed in" if not slot else "not answered in the hand-in archive")
        rows: list[Submission] = []
        for ref, _quiz in self.quizzes:
            recorded = best[1].get(ref) if best else None
            answer = recorded.get("answer") if isinstance(recorded, dict) else None
            if isinstance(answer, str) and best is not None:
                sub = Submission(learner, ref, best[2], answer=answer, handed_in=best[3], handed_in_from=best[4])
            else:
                sub = Submission(learner, ref, best[2] if best else "", status="missing", message=unanswered)
            self.roster.stamp(sub, learner)
            rows.append(sub)
        return rows

    def strays_on_roster(self) -> list[Submission]:
        """The rows that are not submissions, with the roster's id and email where it lists the name."""
        for sub in self.strays:
            listed = self.roster.by_key.get(sub.learner)
            if listed is not None:
                sub.learner_id, sub.email = listed.id, listed.email
        return self.strays


def _unknown(learner: str, name: str, origin: str, exercise_ids: list[str]) -> Submission:
    close = difflib.get_close_matches(name, exercise_ids, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return Submission(learner, name, origin, status="unknown-exercise",
                      message=f"{name!r} is not an exercise of this pack{hint}")


def parse_shard(text: str) -> tuple[int, int]:
    """``K/N`` -> (K, N) with 1 <= K <= N; ValueError with the reason otherwise."""
    k, sep, n = text.partition("/")
    try:
        shard, count = int(k), int(n)
    except ValueError:
        raise ValueError(f"--shard takes K/N, e.g. 2/4, not {text!r}") from None
    if not sep or count < 1 or not 1 <= shard <= count:
        raise ValueError(f"--shard K/N needs 1 <= K <= N, not {text!r}")
    return shard, count


def shard_of(submissions: list[Submission], shard: int, count: int) -> list[Submission]:
    """The learners of the K-th of N shards: learners sorted by name, dealt out in turn, so every
    learner lands in exactly one shard whatever machine computes it."""
    learners = sorted({s.learner for s in submissions})
    mine = {learner for i, learner in enumerate(learners) if i % count == shard - 1}
    return [s for s in submissions if s.learner in mine]


def parse_deadline(text: str) -> datetime:
    """ISO 8601; without a UTC offset, the grading machine's local time."""
    when = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    return when if when.tzinfo is not None else when.astimezone()


# --------------------------------------------------------------------------- cache


def exercise_fingerprint(exercise: Exercise | GradedQuiz) -> str:
    """sha256 of the validated exercise (or quiz): checks, contract, timeout, points... everything."""
    from tutor.pack.spec import as_data

    data = json.dumps(as_data(exercise), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()


_ENGINE: str | None = None


def engine_files() -> list[Path]:
    """The source that runs or reads checks: the child side, the sandbox and the parent's grader."""
    base = Path(__file__).resolve().parents[1]
    return sorted([*base.joinpath("child").rglob("*.py"), *base.joinpath("sandbox").rglob("*.py"), base / "words" / "engine.py",
                   base / "grading" / "exercise.py", base / "grading" / "gradebook.py",
                   base / "pack" / "check_models.py", base / "pack" / "form.py"])  # form: judged here


def engine_fingerprint() -> str:
    """This tutor's version and the source of everything that runs or reads checks."""
    global _ENGINE
    if _ENGINE is None:
        from tutor import __version__

        base = Path(__file__).resolve().parents[1]
        digest = hashlib.sha256(__version__.encode())
        for path in engine_files():
            digest.update(str(path.relative_to(base)).encode() + b"\0")
            try:
                digest.update(path.read_bytes())
            except OSError:
                digest.update(b"?")
        _ENGINE = digest.hexdigest()
    return _ENGINE


@dataclass(frozen=True)
class CacheKey:
    key: str  # everything
    submission: str  # exercise id + code: to say why a fresh grade was needed
    parts: dict[str, str]  # {"exercise": ..., "engine": ..., "limits": ...}


class GradeCache:
    """Finished rows keyed by everything that decides a verdict: the exercise's content, the code,
    the engine (source and torch version), the run's limits and the isolation level. A cache that
    cannot be opened, read or written is bypassed with one notice; it never stops a batch."""

    def __init__(self, path: Path, notice: Callable[[str], None] | None = None):
        self.path = path
        self._notice = notice or (lambda message: None)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        try:
            private.make_folder(path.parent)  # the data folder: 0700 when made, the file 0600
            repaired = private.repair_data(path.parent)  # rows hold learners' messages and names
            if repaired:
                from tutor.words.i18n import t

                self._notice(t("progress.private", count=len(repaired), folder=path.parent))
            private.make_file(path)
            self._db = self._open(path)
        except sqlite3.DatabaseError as exc:
            self._off(f"is damaged ({exc}); delete it to start a fresh one")
        except (sqlite3.Error, OSError) as exc:
            self._off(f"cannot be used ({getattr(exc, 'strerror', None) or exc})")

    @property
    def usable(self) -> bool:
        return self._db is not None

    def _off(self, why: str) -> None:
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
        self._db = None
        self._notice(f"the grade cache {self.path} {why}: grading without it")

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        db = sqlite3.connect(path, check_same_thread=False, timeout=30)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # a cache need not survive a power cut, only a crash
            db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            version = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if version is not None and version[0] != str(CACHE_SCHEMA):
                db.execute("DROP TABLE IF EXISTS rows")  # a cache is disposable: start over, never misread
            db.execute("CREATE TABLE IF NOT EXISTS rows (key TEXT PRIMARY KEY, submission TEXT NOT NULL, "
                       "parts TEXT NOT NULL, row TEXT NOT NULL, at REAL)")
            db.execute("CREATE INDEX IF NOT EXISTS rows_submission ON rows (submission)")
            db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (str(CACHE_SCHEMA),))
            db.execute("SELECT count(*) FROM rows").fetchone()
            db.commit()
        except BaseException:
            db.close()
            raise
        return db

    @staticmethod
    def key(exercise: Exercise, code: str, *, fingerprint: str, limits: dict[str, Any], torch: str = "",
            uses: Sequence[tuple[str, str | None]] = ()) -> CacheKey:
        parts = {"exercise": fingerprint, "engine": f"{engine_fingerprint()} torch {torch}",
                 "limits": json.dumps(limits, sort_keys=True)}
        if uses:  # the learner's answers this exercise builds on are part of what runs
            parts["uses"] = hashlib.sha256(json.dumps(list(uses)).encode("utf-8", "surrogatepass")).hexdigest()
        submission = hashlib.sha256(exercise.id.encode() + b"\0" + code.encode("utf-8", "surrogatepass"))
        digest = hashlib.sha256(submission.digest())
        for name in sorted(parts):
            digest.update(name.encode() + b"=" + parts[name].encode() + b"\0")
        return CacheKey(digest.hexdigest(), submission.hexdigest(), parts)

    def get(self, key: CacheKey) -> tuple[dict[str, Any] | None, str]:
        """(row, "") on a hit; (None, why not) on a miss."""
        with self._lock:
            if self._db is None:
                return None, "cache unavailable"
            try:
                found = self._db.execute("SELECT row FROM rows WHERE key=?", (key.key,)).fetchone()
                if found:
                    hit = json.loads(found[0])
                    if isinstance(hit, dict) and "not_kept" in hit:  # seen before, its outcome not kept
                        return None, f"graded again ({hit['not_kept']}: never kept)"
                    return hit, ""
                older = [json.loads(p) for (p,) in self._db.execute(
                    "SELECT parts FROM rows WHERE submission=?", (key.submission,)).fetchall()]
            except (sqlite3.Error, ValueError) as exc:
                self._off(f"could not be read ({exc})")
                return None, "cache unavailable"
        if not older:
            return None, "new"
        for part, why in (("exercise", "the exercise changed"), ("engine", "the engine or torch changed"),
                          ("limits", "the limits or isolation changed")):
            if all(o.get(part) != key.parts[part] for o in older):
                return None, why
        return None, "new"

    def put(self, key: CacheKey, row: Row) -> None:
        data = json.dumps(asdict(row))
        with self._lock:
            if self._db is None:
                return
            try:
                self._db.execute("INSERT OR REPLACE INTO rows VALUES (?,?,?,?,?)",
                                 (key.key, key.submission, json.dumps(key.parts), data, time.time()))
                self._db.commit()
            except sqlite3.Error as exc:
                self._off(f"could not be written ({exc})")

    def not_kept(self, key: CacheKey, status: str) -> None:
        """Remember that this submission was graded, without its outcome (one the limits or the
        load decide): the next run grades it again and says why, rather than calling it new."""
        with self._lock:
            if self._db is None:
                return
            try:
                self._db.execute("INSERT OR REPLACE INTO rows VALUES (?,?,?,?,?)",
                                 (key.key, key.submission, json.dumps(key.parts), json.dumps({"not_kept": status}),
                                  time.time()))
                self._db.commit()
            except sqlite3.Error as exc:
                self._off(f"could not be written ({exc})")

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


# --------------------------------------------------------------------------- grading


def _row_from_report(sub: Submission, report: "ExerciseReport", seconds: float) -> Row:
    total = len(report.checks)
    good = sum(check.passed for check in report.checks)
    run = report.run
    if getattr(report, "tampered", None):
        status = "tampered"
    elif report.passed:
        status = "passed"
    elif run.status == "sandbox-failure" and run.exit_code is not None and run.error is None:
        status = "exited"  # the learner's code ended its own process (os._exit) before the checks
    elif run.status in RUN_STATUS:
        status = RUN_STATUS[run.status]
    elif run.error is not None:
        status = "error"
    elif any(check.status == "timeout" for check in report.checks):
        status = "timeout"  # a check stopped at its time limit: filtering by timeout finds it too
    elif any(c.status == "error" for c in report.checks) and all(c.status in ("error", "skipped")
                                                                 for c in report.checks):
        status = "error"  # every check that ran raised: nothing was judged wrong
    else:
        status = "failed"
    message = report.message
    first_bad = next((c for c in report.checks if not c.passed and c.status != "skipped"), None)
    if status in ("failed", "timeout", "error") and first_bad is not None and run.error is None:
        message += f"; {first_bad.id}: {first_bad.message}"
    elif status in LIMIT_DECIDED and run.message:
        message = run.message
    checks = [{"id": c.id, "kind": c.kind, "status": c.status, "description": c.description,
               "message": " ".join(c.message.split()), "expected": c.expected, "got": c.got,
               "hint": c.hint} for c in report.checks]
    return Row(sub.learner, sub.exercise, report.passed and status == "passed", good, total, status,
               " ".join(message.split()), origin=sub.origin, seconds=seconds, run_seconds=run.wall_time,
               checks=checks)


def score(row: Row, exercise: Exercise, language: str | None = None, fallback: str = "en") -> None:
    """Points, weights and hints onto a row (also a cached one): see docs/authoring.md, "Points".

    points = exercise.points x (sum of the weights of the passed checks / sum of all weights);
    under ``scoring: all-or-nothing`` (the exercise's, else the pack's) the points only for a row
    that passed. A run that was tampered with, or ended by a limit, earns nothing.
    """
    weights = {check.id: check.weight for check in exercise.checks}
    row.max_points = float(exercise.points)
    for check in row.checks:
        check["weight"] = weights.get(check["id"], 0.0)
        # the hint grading chose for this check's status and case (CheckBase.hint_for): a failure's
        # hint, or one the author wrote for that status; never one for a check that did not fail
        hint = check.get("hint")
        check["hint"] = resolve(hint, language, fallback) if hint is not None and check["status"] != "passed" \
            else None
    total = sum(weights.values())
    if row.status in ("passed", "failed", "error") and total > 0 and not exercise.all_or_nothing:
        earned = sum(c["weight"] for c in row.checks if c["status"] == "passed")
        row.points = exercise.points * earned / total  # rounded once, after any late penalty (finish)
    else:
        row.points = 0.0
    if row.status == "passed":
        row.points = float(exercise.points)


def late_penalty_percent(seconds_late: float, penalty: LatePenalty) -> float:
    """The percent of its points a row loses: ``per_day`` for each started day after the deadline
    (one second late is one day), at most ``max``."""
    if seconds_late <= 0:
        return 0.0
    days = math.ceil(seconds_late / SECONDS_PER_DAY)
    return float(min(penalty.max, penalty.per_day * days))


def _stamp(row: Row, sub: Submission, deadline: datetime | None, penalty: LatePenalty | None = None) -> None:
    """Who and when onto a finished row; a late row loses the pack's late penalty, if it declares one."""
    row.learner_id, row.email = sub.learner_id, sub.email
    row.handed_in, row.handed_in_from, row.late, row.late_penalty = "", "", None, 0.0
    if sub.handed_in is not None:
        row.handed_in = datetime.fromtimestamp(sub.handed_in, timezone.utc).isoformat(timespec="seconds")
        row.handed_in_from = sub.handed_in_from
        if deadline is not None:
            row.late = sub.handed_in > deadline.timestamp()
            if row.late and penalty is not None:
                row.late_penalty = late_penalty_percent(sub.handed_in - deadline.timestamp(), penalty)
                row.points = row.points * (100.0 - row.late_penalty) / 100.0


@dataclass(frozen=True)
class PredictTruth:
    """What a predict quiz's code did when `grade` ran it: what predictions are judged against."""

    output: str = ""
    raised: str | None = None  # the exception's class name
    problem: str = ""  # the code did not run as the pack says: no prediction can be judged


def predict_truth(sandbox: "Sandbox", quiz: Any) -> PredictTruth:
    """Run the quiz's own code once (never a learner's) in the sandbox: a quiz whose type
    ``runs_code`` (its record has ``code``, ``timeout`` and ``raises``, as PredictQuiz's)."""
    from tutor.grading.exercise import run_example

    try:
        outcome = run_example(sandbox, quiz)
    except Exception as exc:  # noqa: BLE001 - the quiz's rows say what broke
        return PredictTruth(problem=f"could not run the quiz's code: {type(exc).__name__}: {exc}")
    run = outcome.run
    if run.status not in ("ok", "error") or (quiz.raises is not None and not outcome.matched):
        return PredictTruth(problem=f"the quiz's code did not run as the pack says ({outcome.summary}); "
                                    "run `torch-tutor validate`")
    raised = run.error.type.rsplit(".", 1)[-1] if run.error is not None else None
    return PredictTruth(run.stdout, raised)


def _quiz_row(sub: Submission, quiz: GradedQuiz, truth: PredictTruth | None = None) -> Row:
    """A quiz answer from a hand-in, marked again against the pack (never the archive's verdict)."""
    answer = sub.answer or ""
    quiz_type = QUIZ_TYPES[type(quiz)]
    points = float(quiz.points)
    ran: Ran | None = None
    if quiz_type.runs_code:
        if truth is None or truth.problem:
            problem = truth.problem if truth is not None else "the quiz's code was not run"
            return Row(sub.learner, sub.exercise, False, 0, 1, "sandbox-failure", problem, origin=sub.origin,
                       max_points=points)
        ran = Ran(truth.output, truth.raised)
    assert quiz_type.mark is not None  # graded_quizzes lists only graded types
    right, message = quiz_type.mark(quiz, answer, ran)
    return Row(sub.learner, sub.exercise, right, int(right), 1, "passed" if right else "failed", message,
               origin=sub.origin, points=points if right else 0.0, max_points=points)


def grade_all(pack: Pack, submissions: Iterable[Submission], sandbox: "Sandbox", *,
              cache: GradeCache | None = None, threads: int = 1,
              progress: Callable[[Row, int, int], None] | None = None,
              deadline: datetime | None = None, isolation: str = "", language: str | None = None) -> list[Row]:
    """Grade every submission; the order of the result is the order of ``submissions``.

    ``progress(row, done, total)`` is called once per row, in the order of ``submissions``, as soon
    as it and every row before it are final (from worker threads, one at a time), so a caller can
    write rows as they come and a CSV reads the same with any number of ``threads``.
    """
    batch = _Batch(pack, list(submissions), sandbox, cache=cache, progress=progress, deadline=deadline,
                   isolation=isolation, language=language)
    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        list(pool.map(batch.one, range(len(batch.subs))))
    return [row for row in batch.rows if row is not None]


class _Batch:
    """One ``grade_all``: the pack's exercises and quizzes, each submission's row as it is final."""

    def __init__(self, pack: Pack, subs: list[Submission], sandbox: "Sandbox", *, cache: GradeCache | None,
                 progress: Callable[[Row, int, int], None] | None, deadline: datetime | None, isolation: str,
                 language: str | None) -> None:
        self.pack, self.subs, self.sandbox, self.cache = pack, subs, sandbox, cache
        self.progress, self.deadline, self.isolation, self.language = progress, deadline, isolation, language
        self.exercises: dict[str, Exercise] = {ex.id: ex for _lesson, ex in pack.exercises()}
        self.quizzes = dict(graded_quizzes(pack))
        self.fingerprints = {eid: exercise_fingerprint(ex) for eid, ex in self.exercises.items()} if cache else {}
        self.fallback = pack.languages[0]
        self.torch = ""
        if cache is not None and cache.usable and any(s.code is not None for s in subs):
            try:  # the workers' torch version is part of every key: known once they are warm
                sandbox.wait_ready()
                self.torch = str(sandbox.worker_info.get("torch", ""))
            except Exception:  # noqa: BLE001 - every run will say what broke
                self.torch = "unknown"
        self.rows: list[Row | None] = [None] * len(subs)
        self.done = 0  # rows given to ``progress``: every row before this index
        self.lock = threading.Lock()
        # A predict quiz is judged against what its own code prints: run once per quiz, not per learner.
        self.truths = {ref: predict_truth(sandbox, quiz) for ref, quiz in self.quizzes.items()
                       if QUIZ_TYPES[type(quiz)].runs_code
                       and any(s.exercise == ref and s.answer is not None for s in subs)}
        # The answers an exercise builds on (``uses``) are the same learner's hand-ins of those exercises.
        self.answers = {(s.learner, s.exercise): s.code for s in subs if s.status is None and s.code is not None}

    def due(self, eid: str) -> datetime | None:
        exercise = self.exercises.get(eid)
        if exercise is not None and exercise.deadline:
            return parse_deadline(exercise.deadline)
        return self.deadline

    def penalty(self, eid: str) -> LatePenalty | None:
        exercise = self.exercises.get(eid)
        if exercise is not None and exercise.late_penalty is not None:
            return exercise.late_penalty
        return self.pack.late_penalty

    def finish(self, index: int, row: Row) -> None:
        sub = self.subs[index]
        _stamp(row, sub, self.due(sub.exercise), self.penalty(sub.exercise))
        row.points, row.max_points = round_points(row.points), round_points(row.max_points)
        with self.lock:
            self.rows[index] = row
            while self.done < len(self.rows) and (ready := self.rows[self.done]) is not None:
                self.done += 1
                if self.progress is not None:
                    self.progress(ready, self.done, len(self.subs))

    def used(self, sub: Submission, exercise: Exercise) -> list[tuple[str, str | None]]:
        return [(earlier.id, self.answers.get((sub.learner, earlier.id)))
                for _lesson, earlier in self.pack.used_by(exercise)]

    def one(self, index: int) -> None:
        """Grade ``subs[index]``: a quiz's answer, a row with nothing to run, a cached row, or a run."""
        sub = self.subs[index]
        if sub.exercise in self.quizzes and sub.status is None and sub.answer is not None:
            self.finish(index, _quiz_row(sub, self.quizzes[sub.exercise], self.truths.get(sub.exercise)))
            return
        exercise = self.exercises.get(sub.exercise)
        if sub.status is not None or exercise is None or sub.code is None:
            self.finish(index, self._not_run(sub, exercise))
            return
        self.finish(index, self._run(sub, exercise, sub.code))

    def _not_run(self, sub: Submission, exercise: Exercise | None) -> Row:
        """The row of a submission with nothing to run (missing, unreadable, an unknown exercise)."""
        total = len(exercise.checks) if exercise else (1 if sub.exercise in self.quizzes else 0)
        row = Row(sub.learner, sub.exercise, False, 0, total, sub.status or "unknown-exercise",
                  sub.message, origin=sub.origin)
        if exercise is not None:
            row.max_points = float(exercise.points)
        elif sub.exercise in self.quizzes:
            row.max_points = float(self.quizzes[sub.exercise].points)
        return row

    def _run(self, sub: Submission, exercise: Exercise, code: str) -> Row:
        """The row of a submission's code: replayed from the cache, or checked in the sandbox."""
        from tutor.grading.exercise import BATCH_WALL_FACTOR, _limits_for, check_exercise

        cache = self.cache
        key = None
        why = ""
        if cache is not None and cache.usable:
            limits = _limits_for(self.sandbox, exercise.timeout).to_wire() | {"isolation": self.isolation}
            key = GradeCache.key(exercise, code, fingerprint=self.fingerprints[sub.exercise], limits=limits,
                                 torch=self.torch, uses=self.used(sub, exercise))
            hit, why = cache.get(key)
            if hit is not None:
                hit.update(learner=sub.learner, origin=sub.origin, cached=True, why_not_cached="")
                row = Row(**hit)
                score(row, exercise, self.language, self.fallback)
                return row
        started = time.monotonic()
        try:
            report = check_exercise(self.sandbox, exercise, code, language=self.language, fallback=self.fallback,
                                    uses=self.used(sub, exercise), wall_factor=BATCH_WALL_FACTOR)
        except Exception as exc:  # the batch goes on; the row says what broke
            return Row(sub.learner, sub.exercise, False, 0, len(exercise.checks), "sandbox-failure",
                       f"could not run: {type(exc).__name__}: {exc}", origin=sub.origin,
                       max_points=float(exercise.points), why_not_cached="the run failed")
        row = _row_from_report(sub, report, time.monotonic() - started)
        score(row, exercise, self.language, self.fallback)
        row.why_not_cached = why or ("cache off" if cache is None else "")
        if row.status in LIMIT_DECIDED:  # never replayed: the next run grades it again, and says so
            if key is not None and cache is not None:
                cache.not_kept(key, row.status)
        elif key is not None and cache is not None:
            cache.put(key, row)
        return row
