"""Commands for graders and the learner's hand-in: grade, grade-merge, autograder, handin."""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Mapping

from tutor.cli.common import UsageError, guarded

if TYPE_CHECKING:  # the commands import these lazily: `torch-tutor list` starts without them
    from datetime import datetime

    from tutor.settings.config import Settings
    from tutor.grading.gradebook import RosterEntry
    from tutor.sandbox.pool import Sandbox

    from tutor.pack.models import Pack
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from tutor.grading.gradebook import GradedQuiz, Row, Submission
    from tutor.grading.output import CsvStream, GradeMeta
    from tutor.sandbox.isolation import IsolationInfo

UNISOLATED = (
    "refusing to grade at isolation 'none' ({reason}). Unisolated, each submission would run {who}. "
    "Get isolation: {advice}. To grade anyway (inside a container or VM you trust and throw away), "
    "pass --unisolated.")
#: Who a submission runs as at isolation none, and what it may reach then (``backends.containment``).
AS_YOU = ("as you, with network access, able to read every file you can read (your home, keys and the other "
          "learners' submissions) and to write to /tmp and anything else you may write")
AS_ITS_OWN_USER = ("as a user of its own (you are root), with network access, able to read every file any "
                   "user may read (the other learners' submissions too, unless only you can read them) "
                   "and to write to /tmp and anything else any user may write")


def unisolated_refusal(reason: str, advice: str, root: bool) -> str:
    return UNISOLATED.format(reason=reason, advice=advice, who=AS_ITS_OWN_USER if root else AS_YOU)
INSTALL_BWRAP = ("install bubblewrap (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap), "
                 "then check `torch-tutor doctor` says 'isolation: bwrap'")


def isolation_advice(setting: str, platform: str) -> str:
    """How to get isolation, for the refusal: what stands in the way here (the setting, the OS)."""
    from tutor.sandbox import backends

    if setting in backends.LEVELS and not backends.of(setting).isolates:
        return (f"your `isolation` setting is '{setting}' (`torch-tutor config` shows where it is set): set it "
                "to 'auto', and if `torch-tutor doctor` then still says 'isolation: none', " + INSTALL_BWRAP)
    if not platform.startswith("linux"):
        return ("bubblewrap, the tutor's isolation, exists on Linux only: grade on a Linux machine "
                "(WSL2 counts)")
    return INSTALL_BWRAP
MAX_NOTICES = 20


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "grade", help="grade learners' submissions with the learner's own check engine",
        description="Grade SUBMISSIONS_DIR/<learner>/<exercise-id>.py files and hand-in archives "
        "(*.handin.zip, in a learner's folder or at the top) against PACK. One row per learner and "
        "exercise (and graded quiz): learner, learner_id, email, exercise, passed, checks_passed, checks_total, "
        "points (rounded half up to 2 places; totals add the rounded rows), max_points, status, message, "
        "handed_in, handed_in_from, late, late_penalty. Statuses (docs/authoring.md, \"Status words\"): "
        "passed, failed, error (the code raised), timeout, memory, output-limit, killed, exited (it ended "
        "its own process before the checks), tampered, sandbox-failure, "
        "and for the files themselves missing, empty, binary, not-utf8, too-large, refused (a symlink out of "
        "the folder, or a top-level archive naming a learner who has a folder), unknown-exercise, unrecognised, "
        "bad-archive, wrong-pack. A re-run reuses results cached by the content of everything that decides "
        "them. Refuses to run at isolation 'none' unless --unisolated. Exit 0 when every submission was "
        "graded and every output written, whatever the grades.")
    # dest is not "pack": that is the global --pack list, which `--pack DIR grade ID` needs to find ID
    p.add_argument("pack_arg", metavar="PACK", help="a pack folder, its pack.yaml, or a pack id")
    p.add_argument("submissions", metavar="SUBMISSIONS_DIR")
    _outputs(p)
    p.add_argument("--roster", metavar="FILE", help="CSV with a 'learner' column (and optional 'id', 'email'): "
                   "listed learners without submissions get 'missing' rows; anything else is ignored")
    p.add_argument("--deadline", metavar="DATETIME", help="ISO 8601, e.g. 2026-12-01T23:59+01:00 (no offset: "
                   "this machine's time zone); later hand-ins are flagged late. An exercise's own deadline wins")
    p.add_argument("--shard", metavar="K/N", help="grade only the K-th of N shares of the learners (merge the "
                   "shards' --json files with `torch-tutor grade-merge`)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="submissions graded at once, each in a sandbox worker of its own with one torch thread "
                   "(default: the workers setting where it is set, else one per core, at most 4). More than "
                   "one per core gains nothing, and each keeps ~270 MB warm (docs/authoring.md, \"Workers\")")
    p.add_argument("--no-cache", action="store_true", help="grade everything again")
    p.add_argument("--unisolated", action="store_true",
                   help="grade even when the sandbox has no isolation (see `torch-tutor doctor`)")
    p.set_defaults(func=cmd_grade)

    p = subparsers.add_parser(
        "grade-merge", help="combine the JSON of `grade --shard K/N` runs into one run's outputs",
        description="Read every shard's --json file and write the same CSV, JSON, JUnit, totals and "
        "feedback that one unsharded `grade` would have written. Every shard 1..N must be given once.")
    p.add_argument("shards", metavar="SHARD_JSON", nargs="+")
    _outputs(p)
    p.set_defaults(func=cmd_merge)

    p = subparsers.add_parser(
        "handin", help="write your solved code and quiz answers to an archive for your instructor",
        description="Write LEARNER-PACK.handin.zip with, for every exercise you worked on, the last code "
        "that passed its checks (else your latest version: the app's draft or the file you last checked), "
        "and your quiz answers; it names the exercises left unsolved or never worked on. `torch-tutor grade` "
        "reads it.")
    p.add_argument("pack_arg", nargs="?", metavar="PACK",
                   help="a pack id (as `torch-tutor list` shows it), folder or pack.yaml (default: the built-in pack)")
    p.add_argument("--learner", help="your name as your instructor knows it (default: your user name)")
    p.add_argument("-o", "--output", metavar="FILE", help="where to write the archive")
    p.set_defaults(func=cmd_handin)


def _outputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--csv", metavar="FILE", help="write the rows as CSV (written as rows finish)")
    p.add_argument("--json", metavar="FILE", help="write the rows, per-check results and a summary as JSON")
    p.add_argument("--junit", metavar="FILE", help="write JUnit XML (a suite per learner)")
    p.add_argument("--totals", metavar="FILE", help="write one row per learner with the total points, for "
                   "Canvas's or Moodle's gradebook import")
    p.add_argument("--feedback", metavar="DIR", help="write one Markdown file per learner: every exercise, "
                   "every check's verdict and message, and the hints for failed checks")


def _notice(message: str) -> None:
    print(f"notice: {message}", file=sys.stderr, flush=True)


def write_outputs(args: argparse.Namespace, meta: GradeMeta, rows: list[Row],
                  stream: CsvStream | None = None) -> list[str]:
    """Every requested output but the streamed CSV; returns the errors (one line each)."""
    from tutor.grading import output as gradeout

    errors = []
    if stream is not None:
        stream.finish(rows)
        if stream.error:
            errors.append(stream.error)
    elif getattr(args, "csv", None):
        _try(errors, args.csv, lambda: gradeout.write_atomic(Path(args.csv), gradeout.to_csv(rows)))
    renders: list[tuple[str | None, Callable[[GradeMeta, list[Row]], str]]] = [
        (args.json, gradeout.to_json), (args.junit, gradeout.to_junit), (args.totals, gradeout.to_totals)]
    for option, render in renders:
        if option:
            _try(errors, option, functools.partial(gradeout.write_atomic, Path(option), render(meta, rows)))
    if args.feedback:
        _try(errors, args.feedback, lambda: gradeout.write_feedback(Path(args.feedback), meta, rows))
    return errors


def _try(errors: list[str], where: str, action: Callable[[], object]) -> None:
    try:
        action()
    except OSError as exc:
        errors.append(f"cannot write {where}: {exc.strerror or exc}")


def print_rows(rows: list[Row]) -> None:
    from tutor.grading.gradebook import clean_name
    from tutor.grading.output import clip

    if not rows:
        return
    width = min(24, max(len(clip(r.learner, 24)) for r in rows))
    ex_width = min(32, max(len(clip(r.exercise, 32)) for r in rows))
    for row in rows:
        mark = "pass" if row.passed else "FAIL"
        late = "  late" if row.late else ""
        print(f"{clip(row.learner, 24):<{width}}  {clip(row.exercise, 32):<{ex_width}}  {mark}  "
              f"{row.checks_passed}/{row.checks_total}  {_num(row.points)}/{_num(row.max_points)}  "
              f"{row.status:<16} {clip(clean_name(row.message), 100)}{late}")


def _num(value: float) -> str:
    return f"{round(value, 2):g}"


@guarded
def cmd_grade(args: argparse.Namespace) -> int:
    from tutor.cli.common import resolve_pack_arg, settings_from_args
    from tutor.grading.gradebook import load_roster, parse_deadline, parse_shard

    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be at least 1")
    shard = None
    if args.shard:
        try:
            shard = parse_shard(args.shard)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    deadline = None
    if args.deadline:
        try:
            deadline = parse_deadline(args.deadline)
        except ValueError:
            raise UsageError(f"--deadline takes an ISO 8601 date and time, e.g. 2026-12-01T23:59+01:00, "
                             f"not {args.deadline!r}") from None
    roster = None
    if args.roster:
        roster = load_roster(Path(args.roster))
    settings = settings_from_args(args, workers=args.workers)
    if settings.sources.get("workers", "default") == "default":  # the app's one warm worker is not grade's
        settings.values["workers"] = grade_workers()
        settings.sources["workers"] = "grade's default: one per core"
    pack_path = resolve_pack_arg(args.pack_arg, args)
    early = _early_sandbox(settings, args, pack_path)
    try:
        return _grade(args, settings, pack_path, early, shard, deadline, roster)
    finally:
        if early is not None:
            early[0].close()  # a second close (the grading's own) does nothing


#: ``grade``'s workers when neither ``--workers`` nor the ``workers`` setting says how many: one per
#: core this process may use, at most this many (each keeps ~270 MB warm).
GRADE_WORKERS_MAX = 4


def grade_workers() -> int:
    """Submissions graded at once by default: one per usable core, up to ``GRADE_WORKERS_MAX``.
    Each run has one torch thread, so two workers on two cores graded 100 learners in 23.8-25.4 s
    against 39.0-39.6 s with one, for 2-8 % more CPU (docs/performance.md, "Grade and validate")."""
    from tutor.sandbox.limits import usable_cpus

    return max(1, min(usable_cpus(), GRADE_WORKERS_MAX))


def _early_sandbox(settings: Settings, args: argparse.Namespace,
                   pack_path: Path) -> tuple[Sandbox, IsolationInfo] | None:
    """The batch's sandbox, warming up (each worker imports torch: 1-4 s) while the pack loads and
    the class is read, and the isolation it was given; None where grading would refuse to run (the isolation is missing or not
    accepted: the refusal is said where it always was) or the folder is none. Warming up runs
    nothing of the class's: each run gets its code over the wire, later."""
    from tutor.grading.sandboxes import sandbox_for
    from tutor.sandbox import backends
    from tutor.sandbox import backends
    from tutor.sandbox import isolation as iso

    root = Path(args.submissions)
    if not root.is_dir() or not any(root.iterdir()):
        return None
    try:
        info = backends.choose(settings.isolation, settings.python or iso.default_python())
    except (iso.IsolationError, ValueError):
        return None
    if not backends.of(info.level).isolates and not args.unisolated:
        return None
    from tutor.settings.paths import PACK_FILE  # not the loader's pack_file_of: YAML's import waits (~0.15 s)

    pack_file = pack_path.absolute() / PACK_FILE if pack_path.is_dir() else pack_path.absolute()
    hide = _hidden(root, pack_file.parent)  # the pack's root as _grade's load says it
    return sandbox_for(settings, purpose="batch", hide=hide, chosen=info).start(), info


def _hidden(root: Path, pack_root: Path | None) -> list[str]:
    """What no run may see: the class's folder and the pack (each run gets its own code, over the wire)."""
    return [str(root)] + ([str(pack_root)] if pack_root else [])


def _grade(args: argparse.Namespace, settings: Settings, pack_path: Path, early: tuple[Sandbox, IsolationInfo] | None,
           shard: tuple[int, int] | None, deadline: datetime | None, roster: list[RosterEntry] | None) -> int:
    from tutor.grading import output as gradeout
    from tutor.grading.gradebook import GradeCache, grade_all, item_order
    from tutor.pack import packcache
    from tutor.pack.loader import PackError

    try:  # validated once, then read back while its files and the format's code are unchanged (~1 s less)
        pack = packcache.load(pack_path, packcache.cache_dir(settings.data_path))
    except PackError as exc:
        raise UsageError(f"the pack has problems (run `torch-tutor validate`):\n{exc}") from None
    root = Path(args.submissions)
    if not root.is_dir():
        raise UsageError(f"{root} is not a folder of submissions")
    submissions, ignored = _submissions(pack, root, roster, shard)
    graded_items = set(item_order(pack))
    learners = len({s.learner for s in submissions if s.exercise in graded_items})
    info = _isolation_for(settings, args, early)  # before anything runs
    items = item_order(pack)
    meta = grade_meta(pack, info, shard=shard, ignored=ignored, deadline=deadline)
    where = f" (shard {shard[0]}/{shard[1]})" if shard else ""
    print(f"grading {len(submissions)} submissions of {learners} learners{where} against {pack.id} "
          f"v{pack.version} with {settings.workers} worker(s), isolation {info.level}", file=sys.stderr)
    from tutor.grading.sandboxes import sandbox_for

    cache = None if args.no_cache else GradeCache(settings.data_path / "grade-cache.sqlite", notice=_notice)
    stream = gradeout.CsvStream(Path(args.csv)) if args.csv else None
    if stream is not None and stream.error:
        _notice(stream.error)
    started = time.monotonic()
    # Each run gets its own code over the wire: the class's folder and the pack stay hidden.
    hide = _hidden(root, pack.root)
    warm = early[0] if early is not None and early[0].hide == tuple(hide) else None
    if early is not None and warm is None:  # never, unless the pack's folder was said two ways
        early[0].close()
    with (warm or sandbox_for(settings, purpose="batch", hide=hide, chosen=info)).start() as sandbox, \
            GradeProgress(len(submissions), stream) as progress:
        rows = grade_all(pack, submissions, sandbox, cache=cache, threads=settings.workers, progress=progress,
                         deadline=deadline, isolation=info.level)
    if cache is not None:
        cache.close()
    rows = gradeout.sort_rows(rows, items)
    errors = write_outputs(args, meta, rows, stream)
    print_rows(rows)
    print(grade_summary(rows, pack, time.monotonic() - started), file=sys.stderr)
    left_out = gradeout.without_quiz_answers(meta, rows)
    if left_out is not None:
        print(f"quizzes: {left_out['note']}", file=sys.stderr)
    accepted = "" if _isolates(info) else " (accepted with --unisolated)"
    print(f"isolation: {info.level}{accepted}: {info.reason}", file=sys.stderr)
    for error in errors:
        print(f"torch-tutor: error: {error}", file=sys.stderr)
    return 1 if errors else 0


def _submissions(pack: Pack, root: Path, roster: list[RosterEntry] | None,
                 shard: tuple[int, int] | None) -> tuple[list[Submission], list[str]]:
    """The folder's submissions (this shard's) and its notices of what is not graded, said on stderr."""
    from tutor.grading import output as gradeout
    from tutor.grading.gradebook import collect, shard_of

    collection = collect(pack, root, roster)
    submissions = collection.submissions
    for message in collection.ignored[:MAX_NOTICES]:
        _notice(f"ignored {gradeout.clip(message, 160)}")
    if len(collection.ignored) > MAX_NOTICES:
        _notice(f"... and {len(collection.ignored) - MAX_NOTICES} more ignored (--json lists them all)")
    if not submissions:
        raise UsageError(f"{root} holds no learners' folders or hand-in archives")
    if shard is not None:
        submissions = shard_of(submissions, *shard)
    return submissions, collection.ignored


def _isolation_for(settings: Settings, args: argparse.Namespace,
                   early: tuple[Sandbox, IsolationInfo] | None) -> IsolationInfo:
    """The batch's isolation, said before anything runs: strangers' code is never run unisolated
    without an explicit yes."""
    from tutor.sandbox import backends
    from tutor.sandbox import backends
    from tutor.sandbox import isolation as iso

    try:
        info = early[1] if early is not None else backends.choose(settings.isolation,
                                                             settings.python or iso.default_python())
    except iso.IsolationError as exc:
        raise UsageError(f"isolation '{settings.isolation}' is required but not available: {exc}") from None
    if not backends.of(info.level).isolates and not args.unisolated:
        raise UsageError(unisolated_refusal(info.reason, isolation_advice(settings.isolation, sys.platform),
                                            iso.is_root()))
    for gap in info.gaps:
        if gap.startswith(iso.UNREADABLE):  # a submission importing such a module fails through no fault of its own
            print(f"torch-tutor: warning: {gap}; such a submission fails, and its report says why", file=sys.stderr)
    return info


class GradeProgress:
    """``grade``'s progress on stderr as rows are final (``grade_all``'s ``progress``), each row
    also added to the CSV stream. On a terminal: Rich's bar, with the count and the row just
    graded; elsewhere (a CI job's log, a file): a line ``  done/total graded`` each tenth, which
    a log keeps readable where a bar redrawn in place is not."""

    def __init__(self, total: int, stream: CsvStream | None, console: Console | None = None) -> None:
        from rich.console import Console

        self.stream = stream
        self.console = console if console is not None else Console(stderr=True)
        self.step = max(1, total // 10)
        self.bar: Progress | None = None
        self.task: TaskID | None = None
        if self.console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            # markup off: a learner's and an exercise's names are shown as they are, never read as markup
            self.bar = Progress(BarColumn(bar_width=30), MofNCompleteColumn(),
                                TextColumn("{task.description}", markup=False), console=self.console)
            self.task = self.bar.add_task("", total=total)

    def __enter__(self) -> GradeProgress:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def __call__(self, row: Row, done: int, total: int) -> None:
        from tutor.grading import output as gradeout

        if self.stream is not None:
            had = self.stream.error
            self.stream.add(row)
            if self.stream.error and not had:
                _notice(f"{self.stream.error}; grading goes on, the rows so far are kept")
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, completed=done, description=f"{gradeout.clip(row.learner, 24)}/"
                                                                   f"{gradeout.clip(row.exercise, 32)}: {row.status}")
        elif done % self.step == 0 or done == total:
            self.console.print(f"  {done}/{total} graded", markup=False, highlight=False, soft_wrap=True)


def grade_summary(rows: list[Row], pack: Pack, seconds: float) -> str:
    """The line that ends ``grade``: how many passed, were graded (and why not from the cache),
    came from the cache, were quiz answers marked, were not run, and the results not kept."""
    from tutor.grading.gradebook import LIMIT_DECIDED

    ran = [r for r in rows if r.run_seconds or r.why_not_cached or r.cached]
    quiz_refs = {ref for ref, _quiz in _quizzes(pack)}
    marked = sum(r.exercise in quiz_refs and r.status in ("passed", "failed") for r in rows)
    cached = sum(r.cached for r in rows)
    reasons: dict[str, int] = {}
    for row in ran:
        if not row.cached:
            reasons[row.why_not_cached or "new"] = reasons.get(row.why_not_cached or "new", 0) + 1
    why = "; ".join(f"{n} {reason}" for reason, n in sorted(reasons.items()))
    limited: dict[str, int] = {}
    for row in ran:
        if not row.cached and row.status in LIMIT_DECIDED:
            limited[row.status] = limited.get(row.status, 0) + 1
    not_kept = (f"; {sum(limited.values())} not kept for the next run ("
                + ", ".join(f"{n} {status}" for status, n in sorted(limited.items()))
                + ": the limits and the machine's load decide those)") if limited else ""
    return (f"{sum(r.passed for r in rows)}/{len(rows)} passed; {len(ran) - cached} graded"
            f"{f' ({why})' if why else ''}, {cached} from the cache, "
            f"{f'{marked} quiz answers marked, ' if marked else ''}{len(rows) - len(ran) - marked} not run "
            f"(file problems), in {seconds:.1f} s{not_kept}")


def _isolates(info: IsolationInfo) -> bool:
    from tutor.sandbox import backends

    return backends.of(info.level).isolates


def grade_meta(pack: Pack, info: IsolationInfo, *, shard: tuple[int, int] | None = None, ignored: Iterable[str] = (),
               deadline: datetime | None = None) -> GradeMeta:
    """What every output says about the run besides its rows (see tutor.grading.output)."""
    from tutor.grading.gradebook import item_order, round_points

    exercises = {ex.id: ex for _lesson, ex in pack.exercises()}
    return {
        "pack": pack.id, "pack_version": pack.version, "pack_title": _title(pack),
        "pack_fingerprint": pack_fingerprint(pack), "items": item_order(pack),
        "max_points": round_points(sum(float(ex.points) for ex in exercises.values())
                                   + sum(float(q.points) for _r, q in _quizzes(pack))),
        "all_or_nothing": [ex.id for ex in exercises.values() if ex.all_or_nothing],
        "quizzes": [ref for ref, _quiz in _quizzes(pack)],
        "quiz_points": round_points(sum(float(q.points) for _r, q in _quizzes(pack))),
        "isolation": {"level": info.level, "reason": info.reason, "gaps": list(info.gaps),
                      "accepted_unisolated": not _isolates(info)},
        "shard": list(shard) if shard else None,
        "ignored": list(ignored),
        "deadline": deadline.isoformat() if deadline else None,
        "late_penalty": ({"per_day": pack.late_penalty.per_day, "max": pack.late_penalty.max}
                         if pack.late_penalty is not None else None),
    }


def pack_fingerprint(pack: Pack) -> str:
    import hashlib

    from tutor.grading.gradebook import exercise_fingerprint

    digest = hashlib.sha256()
    for _lesson, exercise in pack.exercises():
        digest.update(exercise_fingerprint(exercise).encode())
    for ref, quiz in _quizzes(pack):  # a quiz's content decides its verdicts: hashed like an exercise
        digest.update(f"{ref}:{exercise_fingerprint(quiz)}".encode())
    digest.update(repr(pack.late_penalty).encode())
    if pack.scoring != "partial":  # the pack's policy decides points too (an exercise's own is hashed above)
        digest.update(f"scoring={pack.scoring}".encode())
    return digest.hexdigest()


def _quizzes(pack: Pack) -> list[tuple[str, GradedQuiz]]:
    from tutor.grading.gradebook import graded_quizzes

    return graded_quizzes(pack)


def _title(pack: Pack) -> str:
    from tutor.pack.text import resolve

    return resolve(pack.title, None, pack.languages[0])


@guarded
def cmd_merge(args: argparse.Namespace) -> int:
    from tutor.grading.output import merge_shards

    if not any((args.csv, args.json, args.junit, args.totals, args.feedback)):
        raise UsageError("say what to write: --csv, --json, --junit, --totals and/or --feedback")
    meta, rows = merge_shards([Path(p) for p in args.shards])
    errors = write_outputs(args, meta, rows)
    learners = len({r.learner for r in rows if r.exercise in set(meta["items"])})
    print(f"merged {len(args.shards)} shards: {len(rows)} rows of {learners} learners, "
          f"{sum(r.passed for r in rows)} passed; isolation {meta.get('isolation', {}).get('level', '?')}",
          file=sys.stderr)
    for error in errors:
        print(f"torch-tutor: error: {error}", file=sys.stderr)
    return 1 if errors else 0


@guarded
def cmd_handin(args: argparse.Namespace) -> int:
    import getpass

    from tutor import __version__
    from tutor.cli.common import resolve_pack_arg, settings_from_args
    from tutor.pack.discovery import builtin_pack_dirs
    from tutor.record.handin import SUFFIX, write_handin
    from tutor.pack.loader import PackError, load_pack
    from tutor.words.i18n import t
    from tutor.record.progress import ProgressStore

    settings = settings_from_args(args)
    try:
        path = resolve_pack_arg(args.pack_arg, args) if args.pack_arg else builtin_pack_dirs()[0]
        pack = load_pack(path)
    except PackError as exc:
        raise UsageError(t("cli.handin.broken_pack", problems=exc)) from None
    learner = (args.learner or getpass.getuser()).strip()
    if not learner:
        raise UsageError(t("cli.handin.no_learner"))
    store = ProgressStore.open(settings.data_path, config_dir=settings.config_file.parent)
    if store.storage.repaired:  # said once: the next open finds nothing to repair
        print(t("cli.notice", notice=store.storage.repaired), file=sys.stderr)
    try:
        recorded = store.steps.of_pack(pack.id)
        exercises: dict[str, tuple[str, bool]] = {}
        for lesson, exercise in pack.exercises():
            # the code that passed, else the latest version: the app's draft, which a `check` of a
            # file also writes, passing or not (an answer that failed still earns what it passes)
            passing = store.answers.solved_code(pack.id, lesson.id, exercise.id)
            code = passing if passing is not None else store.drafts.get(pack.id, lesson.id, exercise.id)
            if code is not None:
                exercises[exercise.id] = (code, passing is not None)
        quizzes = {f"{lesson}/{step}": {"answer": p.quiz_answer, "correct": p.quiz_correct}
                   for (lesson, step), p in recorded.items() if p.quiz_answer is not None}
    finally:
        store.close()
    if not exercises and not quizzes:
        raise UsageError(t("cli.handin.nothing", pack=pack.id))
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in learner)
    target = Path(args.output) if args.output else Path(f"{safe}-{pack.id}{SUFFIX}")
    write_handin(target, learner=learner, pack_id=pack.id, pack_version=pack.version,
                 tutor_version=__version__, exercises=exercises, quizzes=quizzes)
    for line in handin_summary(pack, target, exercises, quizzes):
        print(line)
    return 0


def handin_summary(pack: Pack, target: Path, exercises: dict[str, tuple[str, bool]],
                   quizzes: Mapping[str, object], width: int = 80) -> list[str]:
    """What `handin` wrote, in lines of at most ``width`` cells: the counts out of the pack's, then
    the exercises handed in unsolved, those never worked on (not in the archive) and the quizzes
    not answered, by name: nothing is left out without a word."""
    from tutor.cli.common import wrap_cells
    from tutor.words.i18n import t
    from tutor.pack.models import QuizBase

    every = [exercise.id for _lesson, exercise in pack.exercises()]
    refs = [f"{lesson.id}/{step.id}" for lesson in pack.lessons for step in lesson.steps
            if isinstance(step, QuizBase)]
    solved = sum(done for _code, done in exercises.values())
    lines = wrap_cells(t("cli.handin.wrote", target=target, exercises=len(exercises), total=len(every),
                         solved=solved, quizzes=sum(ref in quizzes for ref in refs), quiz_total=len(refs)),
                       width, "  ", first="")
    unsolved = [eid for eid in every if eid in exercises and not exercises[eid][1]]
    untouched = [eid for eid in every if eid not in exercises]
    unanswered = [ref for ref in refs if ref not in quizzes]
    for key, names in (("cli.handin.unsolved", unsolved), ("cli.handin.unattempted", untouched),
                       ("cli.handin.unanswered", unanswered)):
        if names:
            lines += wrap_cells(t(key, count=len(names), names=", ".join(names), pack=pack.id), width, "    ",
                                first="  ")
    return lines
