"""``torch-tutor check EXERCISE FILE``: grade a file as the learner's code for an exercise.

The same engine the app uses, from a terminal or a script: exit 0 when every check passed,
1 when some did not, 2 for a usage or pack error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tutor.cli.common import UsageError, guarded, print_json, resolve_pack_arg, say, settings_from_args
from tutor.words.i18n import t

if TYPE_CHECKING:
    from tutor.settings.config import Settings
    from tutor.pack.models import Exercise, Lesson, Pack, Step
    from tutor.grading.exercise import ExerciseReport

    Match = tuple[Pack, Lesson, Exercise]



def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("check", help="run an exercise's checks on a file",
                              description="Run FILE as your code for EXERCISE (its id, or lesson/exercise) "
                              "in the sandbox and report every check: what was expected and what was found.")
    p.add_argument("exercise", metavar="EXERCISE",
                   help="exercise id (see `torch-tutor list PACK`), lesson-id/exercise-id, the exercise's "
                   "title, or a unique start of either")
    p.add_argument("file", metavar="FILE", help="the Python file to check ('-' reads standard input)")
    p.add_argument("--pack", dest="check_pack", metavar="P",
                   help="the pack (folder, pack.yaml or id); default: every pack the tutor sees")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--timeout", type=float, metavar="S", help="seconds for the whole run (default: the exercise's)")
    p.add_argument("--seed", type=int, metavar="N",
                   help="draw the inputs from seed N again, as a failing check printed it, to debug that case "
                   "(checks with a seed of their own keep it)")
    p.set_defaults(func=cmd_check)


def _packs(args: argparse.Namespace) -> list[Pack]:
    from tutor.pack.discovery import discover
    from tutor.pack.loader import PackError, load_pack

    if args.check_pack:
        path = resolve_pack_arg(args.check_pack, args)
        try:
            return [load_pack(path)]
        except PackError as exc:
            raise UsageError(t("cli.check.broken_pack", count=len(exc.problems), pack=args.check_pack) + "\n"
                             + "\n".join(str(p) for p in exc.problems[:10])) from None
    settings = settings_from_args(args)
    return [found.pack for found in discover(getattr(args, "pack", []), settings.data_path, cache=True) if found.pack]


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def _title(pack: Pack, step: Step, language: str | None) -> str:
    from tutor.pack.text import resolve

    return resolve(step.title, language, pack.languages[0]) if step.title else ""


def _by_name(pack: Pack, wanted: str, language: str | None) -> list[Match]:
    """Exercises of ``pack`` whose title is ``wanted``, else whose id or title starts with it
    (a title with or without its "Exercise:" label: "shift a row" and "Exercise" both count)."""
    wanted = _normal(wanted)
    short = wanted.removeprefix("exercise:").strip()
    exercises = pack.exercises()

    def titles(step: Step) -> tuple[str, str]:
        text = _normal(_title(pack, step, language))
        return text, text.removeprefix("exercise:").strip()

    exact = [(pack, lesson, step) for lesson, step in exercises if short and short in titles(step)]
    if exact:
        return exact
    return [(pack, lesson, step) for lesson, step in exercises
            if wanted and (step.id.startswith(short or wanted)
                           or any(title.startswith(w) for title in titles(step) for w in (wanted, short) if w))]


def _named(match: Match, language: str | None) -> str:
    pack, lesson, step = match
    title = _title(pack, step, language)
    return f"{lesson.id}/{step.id}" + (f"  {title}" if title else "")


def _suggest(packs: list[Pack], wanted: str, language: str | None) -> list[str]:
    """Close spellings of ``wanted`` among the exercises' ids and titles (difflib), best first;
    a mistyped start of a title counts too ("shift a rwo" for "shift a row without...")."""
    import difflib

    wanted = _normal(wanted)
    names: dict[str, Match] = {}
    starts: dict[str, Match] = {}
    for pack in packs:
        for lesson, step in pack.exercises():
            title = _normal(_title(pack, step, language))
            for name in (step.id, f"{lesson.id}/{step.id}", title, title.removeprefix("exercise:").strip()):
                if name:
                    names.setdefault(name, (pack, lesson, step))
                    starts.setdefault(name[:len(wanted)], (pack, lesson, step))
    found = [names[name] for name in difflib.get_close_matches(wanted, list(names), n=6, cutoff=0.6)]
    if len(wanted) >= 6:  # a start is only worth comparing when there is enough of it
        found += [starts[name] for name in difflib.get_close_matches(wanted, list(starts), n=6, cutoff=0.8)]
    out: list[str] = []
    for match in found:
        shown = _named(match, language)
        if shown not in out:
            out.append(shown)
    return out[:3]


#: How many exercises a "could be any of" list names before it says how many more.
_SHOWN = 12


def _find(args: argparse.Namespace) -> Match:
    matches: list[Match] = []
    packs = _packs(args)
    for pack in packs:
        found = pack.find_exercise(args.exercise)
        if found is not None:
            matches.append((pack, *found))
    language = settings_from_args(args).language
    if not matches:  # a title, or the start of an id or a title
        for pack in packs:
            matches += _by_name(pack, args.exercise, language)
        if len(matches) > 1 and len({(m[0].id, m[2].id) for m in matches}) > 1:
            shown = matches[:_SHOWN]
            width = max(len(f"{m[1].id}/{m[2].id}") for m in shown)
            lines = [f"  {m[1].id + '/' + m[2].id:<{width}}  {_title(m[0], m[2], language)}"
                     + (f"  [{m[0].id}]" if len(packs) > 1 else "") for m in shown]
            if len(matches) > _SHOWN:
                lines.append(t("cli.check.more", count=len(matches) - _SHOWN))
            raise UsageError(t("cli.check.ambiguous", exercise=repr(args.exercise), count=len(matches)) + "\n"
                             + "\n".join(lines))
    if not matches:
        close = _suggest(packs, args.exercise, language)
        where = t("cli.check.in_pack", pack=args.check_pack) if args.check_pack else t("cli.check.in_all_packs")
        if close:
            names = t("cli.check.or").join(f"`{name.split('  ')[0]}` ({name.split('  ', 1)[1]})"
                                           if "  " in name else f"`{name}`" for name in close)
            raise UsageError(t("cli.check.no_exercise_close", exercise=repr(args.exercise), where=where, names=names))
        raise UsageError(t("cli.check.no_exercise", exercise=repr(args.exercise), where=where))
    if len(matches) > 1:
        raise UsageError(t("cli.check.several_packs", exercise=repr(args.exercise),
                           packs=", ".join(m[0].id for m in matches)))
    return matches[0]


def _read(value: str) -> str:
    if value == "-":
        return sys.stdin.read()
    path = Path(value)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(t("cli.no_such_file", path=value)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(t("cli.cannot_read", path=value, error=exc)) from None


def _shown_name(value: str) -> str | None:
    """What tracebacks call the learner's file: the path as given (standard input: the
    exercise's own name). A name starting with "<" would pass for the checks' own code."""
    if value == "-":
        return None
    return f"./{value}" if value.startswith("<") else value


@guarded
def cmd_check(args: argparse.Namespace) -> int:
    from tutor.grading.exercise import check_exercise
    from tutor.grading.sandboxes import sandbox_for
    from tutor.sandbox import SandboxUnavailable

    from tutor.child.checks.protocol import SEED_LIMIT  # torch-free: the tutor's process never imports torch

    if args.seed is not None and not 0 <= args.seed < SEED_LIMIT:
        raise UsageError(t("cli.check.bad_seed", most=SEED_LIMIT - 1))
    pack, lesson, exercise = _find(args)
    code = _read(args.file)
    settings = settings_from_args(args)
    try:
        with sandbox_for(settings, runs=1) as sandbox:  # one run: no spare started after it
            sandbox.start()
            report = check_exercise(sandbox, exercise, code, timeout=args.timeout,
                                    language=settings.language, fallback=pack.languages[0],
                                    filename=_shown_name(args.file), seed=args.seed,
                                    uses=_used_answers(settings, pack, exercise, args.file))
            from tutor.pack.versions import floor_notice

            outside = floor_notice(sandbox.worker_info.get("torch"), pack.requires.torch)
    except SandboxUnavailable as exc:
        print(t("cli.sandbox_failed", reason=exc), file=sys.stderr)
        return 1
    if args.json:
        data = report.to_json()
        data["exercise"] = f"{lesson.id}/{exercise.id}"
        data["replayed_seed"] = args.seed
        data["scoring"] = "all-or-nothing" if exercise.all_or_nothing else "partial"
        print_json(data)
    else:
        _print_report(report, f"{lesson.id}/{exercise.id}", settings.language, pack.languages[0],
                      pinned={c.id for c in exercise.checks if c.seed is not None}, replay=args.seed,
                      all_or_nothing=exercise.all_or_nothing)
    if outside is not None:
        print(t("cli.notice", notice=outside), file=sys.stderr)
    _record(settings, pack, lesson.id, exercise, code, report)
    return 0 if report.passed else 1


def _used_answers(settings: Settings, pack: Pack, exercise: Exercise, file: str) -> list[tuple[str, str | None]]:
    """The learner's answers to the exercises ``exercise`` builds on (``uses``): the file named after
    each beside FILE (``cumsum.py`` next to ``diag.py``), else what the learner's data directory
    holds for it (the app's editor, or a passing `check`), else None (the report asks for it)."""
    used = pack.used_by(exercise)
    if not used:
        return []
    from tutor.record.progress import ProgressStore

    folder = Path(file).parent if file != "-" else None
    store = ProgressStore.open(settings.data_path, config_dir=settings.config_file.parent)
    if store.storage.repaired:  # said once: the next open finds nothing to repair
        print(t("cli.notice", notice=store.storage.repaired), file=sys.stderr)
    try:
        answers: list[tuple[str, str | None]] = []
        for lesson, earlier in used:
            code: str | None = None
            beside = folder / f"{earlier.id}.py" if folder is not None else None
            if beside is not None and beside.is_file():
                try:
                    code = beside.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    raise UsageError(t("cli.cannot_read", path=beside, error=exc)) from None
            if code is None:
                code = store.drafts.get(pack.id, lesson.id, earlier.id)
            if code is None:
                code = store.answers.solved_code(pack.id, lesson.id, earlier.id)
            answers.append((earlier.id, code))
        return answers
    finally:
        store.close()


def _record(settings: Settings, pack: Pack, lesson_id: str, exercise: Exercise, code: str, report: ExerciseReport) -> None:
    """The check as the app's Check button records it, in the learner's data directory: an attempt,
    and when every check passed a solve whose code `torch-tutor handin` hands in. The code checked,
    passing or not, becomes the exercise's draft (what the app's editor holds): the learner's
    latest version, which `handin` hands in for an exercise not solved. Checking the starter
    unchanged is a look at the task, not an attempt (as in the app)."""
    from tutor.record import spaced_review as review
    from tutor.pack.comments import same_code
    from tutor.record.progress import ProgressStore

    if not report.passed and same_code(code, exercise.starter):
        return
    store = ProgressStore.open(settings.data_path, config_dir=settings.config_file.parent)
    if store.storage.repaired:  # said once: the next open finds nothing to repair
        print(t("cli.notice", notice=store.storage.repaired), file=sys.stderr)
    review.keep_first_meetings(store)  # a first pass is the exercise's first review, as in the app
    try:
        store.answers.record_attempt(pack.id, lesson_id, exercise.id, "check", passed=report.passed,
                                     checks_passed=sum(c.status == "passed" for c in report.checks),
                                     checks_total=len(report.checks), wall_time=report.run.wall_time, code=code)
        store.drafts.save(pack.id, lesson_id, exercise.id, code)
        kept = store.storage.persistent and store.storage.write_error is None
        notice = store.storage.write_error or store.storage.notice
    finally:
        store.close()
    if not report.passed:
        return
    if kept:
        print(t("cli.check.recorded", path=settings.data_path, pack=pack.id), file=sys.stderr)
    else:
        print(t("cli.check.not_recorded", reason=notice or t("cli.check.not_writable")), file=sys.stderr)


def _print_report(report: ExerciseReport, name: str, language: str | None, fallback: str,
                  pinned: set[str] | None = None, replay: int | None = None, all_or_nothing: bool = False) -> None:
    """``pinned``: checks whose inputs come from the pack's own seed; ``replay``: the seed
    every other check drew from (`--seed`); ``all_or_nothing``: the exercise's points come only
    with every check (its scoring), said under the summary."""
    from tutor.pack.check_models import PARENT_KINDS
    from tutor.words.i18n import shown, t
    from tutor.pack.text import resolve

    say(t("cli.check.head", name=name, message=shown(report.message, getattr(report, "said", None))), indent=2)
    if all_or_nothing:
        say(t("cli.check.all_or_nothing"))
    if replay is not None:
        say(t("cli.check.replaying", seed=replay))
    run = report.run
    if run.stdout.strip():
        print(t("cli.check.printed"))
        for line in run.stdout.rstrip().splitlines()[-10:]:
            print(f"    {line}")
    if getattr(report, "cause", None):  # nothing ran: the cause, where, and no list of checks that saw nothing
        error = run.error
        if error is not None and error.traceback:
            for line in error.traceback.rstrip().splitlines()[-6:]:
                print(f"    {line}")
        # what was judged from the text alone (a form check) has its verdict, marked like any other
        judged = [c for c in report.checks if c.kind in PARENT_KINDS and c.status != "skipped"]
        for check in judged:
            say(t("cli.check.item", mark=t("cli.mark." + check.status), id=check.id,
                  description=check.description.strip()), indent=4)
            if check.message:
                say(f"        {shown(check.message, getattr(check, 'said', None))}")
        waiting = len(report.checks) - len(judged)
        if not judged:
            say(t("cli.check.waiting", total=waiting))
        elif waiting:
            say(t("cli.check.waiting_other_one") if waiting == 1 else t("cli.check.waiting_other", total=waiting))
        return
    for check in report.checks:
        say(t("cli.check.item", mark=t("cli.mark." + check.status), id=check.id, description=check.description.strip()),
            indent=4)
        if check.message:
            say(f"        {shown(check.message, getattr(check, 'said', None))}")
        if check.hint is not None and not check.passed:  # grading chose it for this status and case
            say("        " + t("check.hint", value=resolve(check.hint, language, fallback).strip()))
        if check.seed is not None and not check.passed and check.id not in (pinned or set()) and replay is None:
            # What the learner can use: the next run draws new inputs, and `--seed` draws these
            # again. How an author pins a seed is `validate`'s advice, not theirs.
            say(t("cli.check.seed", seed=check.seed))
    if report.tampered:
        say(t("cli.check.tampered", names=", ".join(report.tampered[:5])), indent=4)
