"""Commands about packs: list, validate, schema (and opening the app)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tutor.cli.common import guarded, print_json, say, settings_from_args
from tutor.words.i18n import t

if TYPE_CHECKING:
    from tutor.settings.config import Settings
    from tutor.pack.discovery import FoundPack
    from tutor.pack.loader import PackError
    from tutor.pack.models import Pack
    from tutor.grading.validate import StepRun
    from tutor.sandbox.pool import Sandbox


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("list", help="list the packs the tutor can see",
                              description="List every pack: built-in, --pack folders, installed "
                              "packages (entry point torch_tutor.packs) and the user packs folder.")
    p.add_argument("packs", nargs="*", metavar="PACK",
                   help="a pack id or folder: list its lessons and the exercise ids `check` takes")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_list)

    p = subparsers.add_parser("validate", help="check packs for problems",
                              description="Check the structure and schema of each pack, then run it: every "
                              "exercise's starter must fail a check and its solution pass them all, every "
                              "example must give its expected outcome, every predict-quiz's code must run. "
                              "Every problem is reported as file:line:col: message.")
    p.add_argument("packs", nargs="+", metavar="PACK",
                   help="a pack folder or its pack.yaml, or the id of a pack `torch-tutor list` shows")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--junit", metavar="FILE", help="also write JUnit XML results to FILE (for CI)")
    p.add_argument("--no-run", action="store_true",
                   help="run none of the pack's code: check structure, schema, the names checks use and the "
                   "operator names they list (asked of torch)")
    p.add_argument("--watch", action="store_true",
                   help="validate again every time a file of the pack changes (ctrl+c to stop)")
    p.add_argument("--repeat", type=_at_least_one, default=1, metavar="N",
                   help="run everything N times; report any verdict that changed between runs and, for each "
                   "measurement check, its smallest margin (measured value / threshold)")
    p.add_argument("--safety", type=float, default=1.5, metavar="F",
                   help="with --repeat: warn about margins under this factor (default 1.5)")
    p.set_defaults(func=cmd_validate)

    p = subparsers.add_parser("schema", help="print the JSON Schema of the pack format",
                              description="Print the JSON Schema of pack.yaml (or of a lesson file) so a "
                              "YAML language server can validate packs as you type.")
    p.add_argument("--lesson", action="store_true", help="the schema of a lesson file instead")
    p.add_argument("--markdown", action="store_true",
                   help="the format reference as Markdown (the one in docs/authoring.md)")
    p.set_defaults(func=cmd_schema)


@guarded
def cmd_list(args: argparse.Namespace) -> int:
    from tutor.pack.discovery import discover
    from tutor.pack.text import resolve

    settings = settings_from_args(args)
    found = discover(args.pack, settings.data_path)
    if getattr(args, "packs", None):
        return _list_lessons(args, found, settings)
    rows: list[dict[str, Any]] = []
    for entry in found:
        pack = entry.pack
        rows.append({
            "id": pack.id if pack else None,
            "title": resolve(pack.title, settings.language, pack.languages[0]) if pack else None,
            "version": pack.version if pack else None,
            "lessons": len(pack.lessons) if pack else None,
            "origin": entry.origin,
            "path": str(entry.path),
            "problems": [str(p) for p in entry.problems or []],
        })
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        say(t("cli.list.none"))
        return 0
    for row in rows:
        origin = _origin(row["origin"])
        if row["id"] is None:
            say(t("cli.list.broken", path=row["path"], origin=origin, count=len(row["problems"])))
            continue
        lessons = t("cli.list.lesson" if row["lessons"] == 1 else "cli.list.lessons", count=row["lessons"])
        say(f"{row['id']}  {row['title']}  v{row['version']}  {lessons}  [{origin}] {row['path']}", indent=2)
    return 0


def _origin(origin: str) -> str:
    """Where a pack was found, in the learner's language ("built-in", "--pack", "package DIST",
    "user folder"; the JSON keeps the English)."""
    if origin == "--pack":
        return origin
    for english, key in (("built-in", "cli.list.origin.builtin"), ("user folder", "cli.list.origin.user")):
        if origin == english:
            return t(key)
    if origin.startswith("package "):
        return t("cli.list.origin.package", rest=origin.removeprefix("package "))
    return origin


def _list_lessons(args: argparse.Namespace, found: list[FoundPack], settings: Settings) -> int:
    """`list PACK`: each lesson by title, with its steps' titles and the exercise ids."""
    from tutor.cli.common import UsageError
    from tutor.pack.loader import PackError, load_pack
    from tutor.pack.models import Exercise
    from tutor.pack.text import resolve

    out: list[dict[str, Any]] = []
    for value in args.packs:
        pack = next((f.pack for f in found if f.pack is not None and f.pack.id == value), None)
        if pack is None and Path(value).exists():
            try:
                pack = load_pack(Path(value))
            except PackError as exc:
                raise UsageError(f"{value} has {len(exc.problems)} problem(s); run `torch-tutor validate {value}`")
        if pack is None:
            raise UsageError(f"no pack folder or pack id {value!r} (see `torch-tutor list`)")
        lang, fallback = settings.language, pack.languages[0]
        lessons = []
        for number, lesson in enumerate(pack.lessons, 1):
            exercises = [{"id": step.id, "title": resolve(step.title, lang, fallback) or step.id}
                         for step in lesson.steps if isinstance(step, Exercise)]
            lessons.append({"number": number, "id": lesson.id, "title": resolve(lesson.title, lang, fallback),
                            "steps": len(lesson.steps), "exercises": exercises})
        out.append({"id": pack.id, "title": resolve(pack.title, lang, fallback), "version": pack.version,
                    "lessons": lessons})
    if args.json:
        print_json(out)
        return 0
    for entry in out:
        say(t("cli.list.pack", title=entry["title"], id=entry["id"], version=entry["version"]))
        for lesson in entry["lessons"]:
            steps = t("cli.list.step" if lesson["steps"] == 1 else "cli.list.steps", count=lesson["steps"])
            say(t("cli.list.lesson_line", number=lesson["number"], title=lesson["title"], steps=steps,
                  target=f"{entry['id']}/{lesson['id']}"), indent=5)
            for exercise in lesson["exercises"]:
                say(t("cli.list.exercise", id=exercise["id"], title=exercise["title"]), indent=9)
        say(t("cli.list.check_hint"))
    return 0


@guarded
def cmd_validate(args: argparse.Namespace) -> int:
    paths, unknown = _pack_paths(args)
    if not args.watch:
        return _validate_once(args, paths, unknown)
    from tutor.pack.watch import watch_packs

    return watch_packs(list(paths.values()), lambda: _validate_once(args, paths, unknown))


def _pack_paths(args: argparse.Namespace) -> tuple[dict[str, Path], dict[str, list[str]]]:
    """Each PACK argument's folder: the path as given, or, where nothing is there, the folder of
    the pack `list` shows under that id (or whose folder has that name: a broken pack has no id).
    A name that is neither stays a path, and loading it reports that no pack is there; the
    second dict maps each such name to the ids there are."""
    out = {value: Path(value) for value in args.packs}
    unknown: dict[str, list[str]] = {}
    missing = [value for value, path in out.items() if not path.exists()]
    if missing:
        from tutor.pack.discovery import discover

        settings = settings_from_args(args)
        found = discover(getattr(args, "pack", []), settings.data_path)
        for value in missing:
            entry = next((f for f in found if f.pack is not None and f.pack.id == value), None) \
                or next((f for f in found if f.path.name == value), None)
            if entry is not None:
                out[value] = entry.path
            else:
                unknown[value] = sorted({f.pack.id for f in found if f.pack is not None})
    return out, unknown


def _validate_once(args: argparse.Namespace, paths: dict[str, Path], unknown: dict[str, list[str]]) -> int:
    from tutor.pack.lint import lint
    from tutor.pack.loader import PackError, load_pack

    results: list[dict[str, Any]] = []
    junit: list[Any] = []
    failed = False
    sandbox = None
    try:
        for value in args.packs:
            path = paths[value]
            try:
                pack = load_pack(path)
            except PackError as exc:
                failed = True
                results.append({"pack": value, "ok": False, "problems": [p.to_json() for p in exc.problems]})
                junit.append((value, [_load_failure(exc)]))
                if not args.json:
                    _say_load_failure(value, exc, unknown)
                continue
            warnings = lint(pack)
            entry: dict[str, Any] = {"pack": value, "ok": True, "id": pack.id, "lessons": len(pack.lessons),
                                     "problems": [], "warnings": [w.to_json() for w in warnings]}
            results.append(entry)
            if not args.json:
                for warning in warnings:
                    print(warning)
            if args.no_run:  # what reading the checks finds, none of the pack's code run
                failed = _validate_unrun(args, value, pack, path, entry, junit, len(warnings)) or failed
                continue
            if sandbox is None:
                sandbox = _validation_sandbox(args)
            failed = _validate_run(args, value, pack, path, sandbox, entry, junit, len(warnings)) or failed
    finally:
        if sandbox is not None:
            sandbox.close()
    if args.junit:
        from tutor.grading.validate import junit_xml

        Path(args.junit).write_text(junit_xml(junit), encoding="utf-8")
    if args.json:
        print_json(results)
    return 1 if failed else 0


def _say_load_failure(value: str, exc: PackError, unknown: dict[str, list[str]]) -> None:
    for problem in exc.problems:
        print(problem)
    print(f"{value}: {len(exc.problems)} problem(s)", file=sys.stderr)
    if value in unknown:
        ids = unknown[value]
        print(f"torch-tutor: validate takes a pack folder, its pack.yaml, or the id of a pack "
              f"`torch-tutor list` shows; {value!r} is none of them (ids: "
              f"{', '.join(ids) if ids else 'no packs found'})", file=sys.stderr)


def _about(pack: Pack, warnings: int) -> str:
    """``id vN, L lessons, W warning(s)``: what a pack's verdict line says of it."""
    note = f", {warnings} warning(s)" if warnings else ""
    lessons = f"{len(pack.lessons)} lesson" + ("" if len(pack.lessons) == 1 else "s")
    return f"{pack.id} v{pack.version}, {lessons}{note}"


def _validate_unrun(args: argparse.Namespace, value: str, pack: Pack, path: Path, entry: dict[str, Any],
                    junit: list[Any], warnings: int) -> bool:
    """``validate --no-run``: what reading the checks finds; whether it found a problem."""
    from tutor.grading.validate import interpreter_lookup, static_runs
    from tutor.sandbox.isolation import default_python

    settings = settings_from_args(args)
    runs = static_runs(pack, path, interpreter_lookup(settings.python or default_python()))
    junit.append((pack.id, runs))
    entry["runs"] = [run.to_json() for run in runs]
    entry["problems"] = [p.to_json() for run in runs for p in run.problems]
    problems = [p for run in runs for p in run.problems]
    if problems:
        entry["ok"] = False
    if not args.json:
        for problem in problems:
            print(problem)
        about = _about(pack, warnings)
        print(f"{value}: {len(problems)} problem(s) found without running it ({about})" if problems
              else f"{value}: ok ({about}; nothing run)")
    return bool(problems)


def _validate_run(args: argparse.Namespace, value: str, pack: Pack, path: Path, sandbox: Sandbox,
                  entry: dict[str, Any], junit: list[Any], warnings: int) -> bool:
    """``validate``: run the pack's starters, solutions, examples and quizzes (``--repeat`` times);
    whether anything failed or a verdict changed between rounds."""
    failed = False
    runs = _run_pack(pack, path, sandbox, quiet=args.json)
    if args.repeat > 1:
        rounds = [runs] + [_run_pack(pack, path, sandbox, quiet=True, round_=(i, args.repeat, args.json))
                           for i in range(2, args.repeat + 1)]
        from tutor.grading.validate import repeat_summary

        lines, changed = repeat_summary(rounds, args.safety)
        entry["repeat"] = {"runs": args.repeat, "changed": changed, "lines": lines}
        failed = changed
        if changed:
            entry["ok"] = False
        if not args.json:
            print(f"{value}: {args.repeat} runs compared"
                  + (": a verdict changed between runs" if changed else ": every verdict the same"))
            for line in lines:
                print(f"  {line}")
    junit.append((pack.id, runs))
    entry["runs"] = [run.to_json() for run in runs]
    entry["problems"] = [p.to_json() for run in runs for p in run.problems]
    about = _about(pack, warnings)
    ran_warnings = [w for run in runs for w in run.warnings]  # found by running: a tolerance's scale
    if ran_warnings:
        entry["warnings"] += [w.to_json() for w in ran_warnings]
        if not args.json:
            for warning in ran_warnings:
                print(warning)
        about = _about(pack, warnings + len(ran_warnings))
    timeouts = [run for run in runs if run.timeouts]
    if timeouts:
        entry["timeouts"] = [f"{run.lesson}/{run.step}: {', '.join(run.timeouts)}" for run in timeouts]
    if any(not run.ok for run in runs):
        entry["ok"] = False
        if not args.json:
            problems = [p for run in runs for p in run.problems]
            for problem in problems:
                print(problem)
            flagged = (f", {sum(len(run.timeouts) for run in timeouts)} of them TIMEOUT on a reference "
                       "solution (a budget, not a wrong answer)" if timeouts else "")
            print(f"{value}: {len(problems)} problem(s) when running it{flagged} ({about})")
        return True
    if not args.json:  # one verdict per pack, once everything about it is known
        print(f"{value}: ok ({about}; ran {len(runs)} starters, solutions, examples and quizzes: "
              "all as expected)")
    return failed


def _load_failure(exc: PackError) -> StepRun:
    from tutor.grading.validate import StepRun

    return StepRun("", "pack", "load", False, f"{len(exc.problems)} problem(s)", 0.0, list(exc.problems))


def _validation_sandbox(args: argparse.Namespace) -> Sandbox:
    from tutor.grading.sandboxes import sandbox_for

    return sandbox_for(settings_from_args(args), purpose="batch").start()


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _run_pack(pack: Pack, path: Path, sandbox: Sandbox, *, quiet: bool,
              round_: tuple[int, int, bool] | None = None) -> list[StepRun]:
    from tutor.grading.validate import validate_runs

    if round_ is not None and not round_[2]:
        print(f"  run {round_[0]} of {round_[1]}...", flush=True)

    def progress(run: StepRun) -> None:
        if not quiet:
            mark = "skip" if run.skipped else "ok  " if run.ok else "TIME" if run.timeouts else "FAIL"
            print(f"  {mark} {run.name} ({run.seconds:.1f} s): {run.summary}", flush=True)
            for check_id, measured in run.measured.items():  # measurement checks show their numbers
                if measured.get("measured") and measured.get("margin") is not None:
                    margin = f", margin {measured['margin']:.2f}" if run.role == "solution" else ""
                    print(f"       {check_id}: {measured['measured']}, needs {measured['needs']} "
                          f"({measured['status']}{margin})")
            for check_id, spent in run.budgets.items():  # a check near or past its time budget
                if spent["status"] == "timeout" or (spent["margin"] is not None and spent["margin"] < 1.5):
                    print(f"       {check_id}: {spent['used']:.2f} s of its {spent['budget']:.2f} s budget "
                          f"({spent['status']})")
            if run.answer is not None:  # what every learner's prediction will be compared against
                lines = run.answer.rstrip("\n").split("\n") if run.answer.strip() else ["(nothing printed)"]
                print("       learners' predictions are compared with:")
                for line in lines[:20]:
                    print(f"       | {line}")
                if len(lines) > 20:
                    print(f"       | ... ({len(lines) - 20} more lines)")

    return validate_runs(pack, path, sandbox, progress=progress)


def cmd_schema(args: argparse.Namespace) -> int:
    from tutor.pack.models import lesson_json_schema, pack_json_schema

    if args.markdown:
        from tutor.pack.docgen import reference_markdown

        sys.stdout.write(reference_markdown())
        return 0
    schema = lesson_json_schema() if args.lesson else pack_json_schema()
    sys.stdout.write(json.dumps(schema, indent=2, ensure_ascii=False) + "\n")
    return 0


@guarded
def open_app(args: argparse.Namespace) -> int:
    """`torch-tutor` with no command: the app, resuming where the learner left off."""
    from tutor.cli.app import launch_app

    return launch_app(args)
