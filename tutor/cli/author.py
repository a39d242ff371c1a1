"""Commands for authors and graders: new, grade, and the learner's handin."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tutor.cli.common import UsageError, guarded


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "new", help="create a new pack to edit",
        description="Create PACK_DIR with a pack.yaml and one lesson that uses every step kind and a "
        "working exercise with checks, each field explained by a comment. It validates clean as created.")
    p.add_argument("folder", metavar="PACK_DIR", help="a new (or empty) folder")
    p.add_argument("--title", help="the pack's title (default: from the folder name)")
    p.add_argument("--author", help="the author's name (default: your user name)")
    p.set_defaults(func=cmd_new)
    register_grading(subparsers)


@guarded
def cmd_new(args: argparse.Namespace) -> int:
    from tutor.core.scaffold import ScaffoldError, scaffold

    folder = Path(args.folder)
    try:
        written = scaffold(folder, title=args.title, author=args.author)
    except ScaffoldError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot write {folder}: {exc.strerror or exc}") from None
    for path in written:
        print(f"created {path}")
    print(f"\nnext: torch-tutor validate {folder}\n      torch-tutor --pack {folder}")
    return 0


def register_grading(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "grade", help="grade learners' submissions with the learner's own check engine",
        description="Grade SUBMISSIONS_DIR/<learner>/<exercise-id>.py files and hand-in archives "
        "(*.handin.zip, in a learner's folder or at the top) against PACK. One row per learner and "
        "exercise: learner, exercise, passed, checks_passed, checks_total, status, message. Statuses: "
        "passed, failed, error (the code raised), timeout, memory, output-limit, crashed, exited (it ended "
        "its own process before the checks), sandbox-failure, "
        "and for the files themselves missing, empty, binary, not-utf8, too-large, refused (a symlink out of "
        "the folder), unknown-exercise, unrecognised, bad-archive, wrong-pack. A re-run reuses results "
        "cached by submission content and pack version. Exit 0 when every submission was graded, "
        "whatever the grades.")
    p.add_argument("pack", metavar="PACK", help="a pack folder, its pack.yaml, or a pack id")
    p.add_argument("submissions", metavar="SUBMISSIONS_DIR")
    p.add_argument("--csv", metavar="FILE", help="write the rows as CSV")
    p.add_argument("--json", metavar="FILE", help="write the rows and a summary as JSON")
    p.add_argument("--junit", metavar="FILE", help="write JUnit XML (a suite per learner)")
    p.add_argument("--workers", type=int, metavar="N", help="sandbox workers to grade with (default: setting)")
    p.add_argument("--no-cache", action="store_true", help="grade everything again")
    p.set_defaults(func=cmd_grade)

    p = subparsers.add_parser(
        "handin", help="write your solved code and quiz answers to an archive for your instructor",
        description="Write LEARNER-PACK.handin.zip with, for every exercise you worked on, the last code "
        "that passed its checks (else your latest draft), and your quiz answers. `torch-tutor grade` reads it.")
    p.add_argument("pack", nargs="?", metavar="PACK", help="pack id (default: the built-in pack)")
    p.add_argument("--learner", help="your name as your instructor knows it (default: your user name)")
    p.add_argument("-o", "--output", metavar="FILE", help="where to write the archive")
    p.set_defaults(func=cmd_handin)


@guarded
def cmd_grade(args: argparse.Namespace) -> int:
    import sys

    from tutor.cli.common import resolve_pack_arg, settings_from_args
    from tutor.core.gradebook import GradeCache, collect, grade_all, to_csv, to_json, to_junit
    from tutor.core.loader import PackError, load_pack

    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be at least 1")
    settings = settings_from_args(args, workers=args.workers)
    try:
        pack = load_pack(resolve_pack_arg(args.pack, args))
    except PackError as exc:
        raise UsageError(f"the pack has problems (run `torch-tutor validate`):\n{exc}") from None
    root = Path(args.submissions)
    if not root.is_dir():
        raise UsageError(f"{root} is not a folder of submissions")
    submissions = collect(pack, root)
    if not submissions:
        raise UsageError(f"{root} holds no learners' folders or hand-in archives")
    learners = len({s.learner for s in submissions})
    print(f"grading {len(submissions)} submissions of {learners} learners against {pack.id} v{pack.version} "
          f"with {settings.workers} worker(s)", file=sys.stderr)
    from tutor.sandbox import Sandbox

    cache = None if args.no_cache else GradeCache(settings.data_path / "grade-cache.sqlite")
    tty = sys.stderr.isatty()
    step = max(1, len(submissions) // 10)

    def progress(row, done: int, total: int) -> None:
        if tty:
            width = 30
            filled = int(width * done / total)
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} "
                             f"{row.learner}/{row.exercise}: {row.status}\x1b[K")
            sys.stderr.flush()
        elif done % step == 0 or done == total:
            print(f"  {done}/{total} graded", file=sys.stderr, flush=True)

    started = time.monotonic()
    # Each run gets its own code over the wire: the class's folder and the pack stay hidden.
    hide = [str(root)] + ([str(pack.root)] if pack.root else [])
    with Sandbox(settings, workers=settings.workers, hide=hide).start() as sandbox:
        rows = grade_all(pack, submissions, sandbox, cache=cache, threads=settings.workers, progress=progress)
    if cache is not None:
        cache.close()
    if tty:
        sys.stderr.write("\n")
    for option, render in ((args.csv, lambda: to_csv(rows)), (args.json, lambda: to_json(pack, rows)),
                           (args.junit, lambda: to_junit(pack, rows))):
        if option:
            Path(option).write_text(render(), encoding="utf-8")
    width = max(len(r.learner) for r in rows)
    ex_width = max(len(r.exercise) for r in rows)
    for row in rows:
        mark = "pass" if row.passed else "FAIL"
        print(f"{row.learner:<{width}}  {row.exercise:<{ex_width}}  {mark}  {row.checks_passed}/{row.checks_total}"
              f"  {row.status:<16} {row.message[:100]}")
    cached = sum(r.cached for r in rows)
    print(f"{sum(r.passed for r in rows)}/{len(rows)} passed; {len(rows) - cached} graded, {cached} from the "
          f"cache, in {time.monotonic() - started:.1f} s", file=sys.stderr)
    return 0


@guarded
def cmd_handin(args: argparse.Namespace) -> int:
    import getpass

    from tutor import __version__
    from tutor.cli.common import resolve_pack_arg, settings_from_args
    from tutor.core.discovery import builtin_pack_dirs
    from tutor.core.handin import SUFFIX, write_handin
    from tutor.core.loader import PackError, load_pack
    from tutor.core.progress import ProgressStore

    settings = settings_from_args(args)
    try:
        path = resolve_pack_arg(args.pack, args) if args.pack else builtin_pack_dirs()[0]
        pack = load_pack(path)
    except PackError as exc:
        raise UsageError(f"the pack has problems:\n{exc}") from None
    learner = (args.learner or getpass.getuser()).strip()
    if not learner:
        raise UsageError("--learner must not be empty")
    store = ProgressStore.open(settings.data_path)
    try:
        recorded = store.steps(pack.id)
        exercises: dict[str, tuple[str, bool]] = {}
        for lesson, exercise in pack.exercises():
            passing = store.solved_code(pack.id, lesson.id, exercise.id)
            code = passing if passing is not None else store.draft(pack.id, lesson.id, exercise.id)
            if code is not None:
                exercises[exercise.id] = (code, passing is not None)
        quizzes = {f"{lesson}/{step}": {"answer": p.quiz_answer, "correct": p.quiz_correct}
                   for (lesson, step), p in recorded.items() if p.quiz_answer is not None}
    finally:
        store.close()
    if not exercises and not quizzes:
        raise UsageError(f"nothing to hand in for {pack.id}: no exercise worked on and no quiz answered yet")
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in learner)
    target = Path(args.output) if args.output else Path(f"{safe}-{pack.id}{SUFFIX}")
    write_handin(target, learner=learner, pack_id=pack.id, pack_version=pack.version,
                 tutor_version=__version__, exercises=exercises, quizzes=quizzes)
    solved = sum(solved for _code, solved in exercises.values())
    print(f"wrote {target}: {len(exercises)} exercises ({solved} solved), {len(quizzes)} quiz answers")
    return 0
