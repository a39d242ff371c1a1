"""``torch-tutor autograder PACK``: a Gradescope bundle, a GitHub Classroom setup, or (inside
Gradescope) grading one submission into results.json."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from tutor.cli.common import UsageError, guarded

if TYPE_CHECKING:
    from tutor.settings.config import Settings
    from tutor.pack.models import Pack


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "autograder", help="write a Gradescope autograder bundle or a GitHub Classroom setup for a pack",
        description="--gradescope OUT.zip writes setup.sh, run_autograder and the wheels of torch-tutor and "
        "the pack: upload it as a Gradescope programming assignment's autograder. --github-classroom DIR "
        "writes, into a starter repository, the workflow and autograding.json, the pack without its solutions "
        "and the torch-tutor wheel (under .torch-tutor/) and each exercise's starter file: the workflow grades "
        "the repository once (`--run . --json`, as `torch-tutor grade` would), then runs one test per check "
        "(`--passed EXERCISE --check ID`, worth its share of the exercise's points; one `--passed EXERCISE` "
        "for an all-or-nothing exercise) and one per graded quiz. --run DIR --results FILE is what "
        "run_autograder calls: grade one submission (loose <exercise-id>.py files or a hand-in archive) into "
        "Gradescope's results.json. A failed --github-classroom or --gradescope leaves nothing half-written.")
    p.add_argument("pack_arg", metavar="PACK", help="a pack folder, its pack.yaml, or a pack id")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--gradescope", metavar="OUT.zip", help="write the Gradescope autograder bundle")
    what.add_argument("--github-classroom", metavar="DIR", help="write the GitHub Classroom setup into DIR")
    what.add_argument("--run", metavar="SUBMISSION_DIR", help="grade one submission (inside the autograder)")
    what.add_argument("--passed", metavar="ITEM", help="(what the GitHub Classroom workflow runs) exit 0 when ITEM "
                      "(an exercise id, or a quiz as lesson/quiz) passed, or with --check its check ID, in the "
                      "--json FILE a --run wrote; prints the verdict")
    p.add_argument("--results", metavar="FILE", help="with --run: where results.json goes")
    p.add_argument("--json", metavar="FILE", help="with --run: also write `grade --json`'s file; with --passed: "
                   "read it")
    p.add_argument("--check", metavar="ID", help="with --passed: one check of the exercise")
    p.add_argument("--torch", metavar="VERSION", help="the torch the setup installs (default: this one's)")
    p.add_argument("--tutor-wheel", metavar="FILE", help="a torch_tutor wheel to ship (default: built "
                   "from this source checkout)")
    p.add_argument("--python", metavar="X.Y", help="with --gradescope: the Python the bundled dependency "
                   "wheels are for, which setup.sh installs (default: this one's)")
    p.add_argument("--no-dependency-wheels", action="store_true", help="with --gradescope: do not bundle "
                   "the dependencies' wheels; setup.sh then fetches them from the package index")
    p.add_argument("--visibility", default="visible",
                   choices=("hidden", "after_due_date", "after_published", "visible"),
                   help="when learners see the tests on Gradescope (default: visible)")
    p.set_defaults(func=cmd_autograder)


@guarded
def cmd_autograder(args: argparse.Namespace) -> int:
    from tutor.cli.common import resolve_pack_arg, settings_from_args
    from tutor.grading.autograder import (build_gradescope_bundle, classroom_scale,
                                       classroom_total, github_classroom, torch_version)
    from tutor.pack.loader import PackError, load_pack

    if args.run is None and args.results:
        raise UsageError("--results goes with --run")
    if args.run is not None and not (args.results or args.json):
        raise UsageError("--run needs --results FILE (Gradescope's) and/or --json FILE")
    if args.check and not args.passed:
        raise UsageError("--check goes with --passed")
    if args.passed is not None:
        if not args.json:
            raise UsageError("--passed needs --json FILE (the one `--run` wrote)")
        return passed_item(Path(args.json), args.passed, args.check)
    if not args.gradescope and (args.python or args.no_dependency_wheels):
        raise UsageError("--python and --no-dependency-wheels go with --gradescope")
    try:
        pack = load_pack(resolve_pack_arg(args.pack_arg, args))
    except PackError as exc:
        raise UsageError(f"the pack has problems (run `torch-tutor validate`):\n{exc}") from None
    if args.run is not None:
        return run_submission(args, pack, settings_from_args(args))
    wheel = Path(args.tutor_wheel) if args.tutor_wheel else None
    try:
        torch = args.torch or torch_version()
        if args.gradescope:
            out = build_gradescope_bundle(pack, Path(args.gradescope), torch=torch, tutor_wheel=wheel,
                                          visibility=args.visibility, python=args.python,
                                          dependencies=not args.no_dependency_wheels)
            deps = "" if args.no_dependency_wheels else " and of every dependency but torch"
            print(f"wrote {out}: setup.sh, run_autograder and the wheels of torch-tutor and {pack.id}{deps}; "
                  f"torch {torch} (CPU). Upload it as the autograder of a Gradescope programming assignment.")
        else:
            out = Path(args.github_classroom)
            existing = {ex.id for _l, ex in pack.exercises() if (out / f"{ex.id}.py").exists()}
            written = github_classroom(pack, out, torch=torch, tutor_wheel=wheel)
            starters = len(pack.exercises()) - len(existing)
            kept = (f"; kept your {', '.join(f'{e}.py' for e in sorted(existing))}" if existing else "")
            scale = classroom_scale(pack)
            points = ("" if scale == 1 else f"; Classroom takes whole points only, so each is worth {scale} "
                      f"Classroom points (a total of {round(classroom_total(pack))} means {round(classroom_total(pack)) / scale:g} "
                      "of the pack's points)")
            print(f"wrote {len(written)} files into {args.github_classroom}: .github/workflows/classroom.yml "
                  "(a test per check, or per exercise scored all or nothing, and per graded quiz, worth its share of the points"
                  f"{points}), .github/classroom/autograding.json, .torch-tutor/ (the pack without its solutions, "
                  f"and the torch-tutor wheel)" + (f" and {starters} starter file(s)" if starters else "") + kept
                  + ". Commit them to the assignment's starter repository.")
    except OSError as exc:
        print(f"torch-tutor: error: cannot write: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0


def passed_item(path: Path, item: str, check: str | None) -> int:
    """One line of GitHub Classroom's autograding: did ITEM (or its check) pass in the grade JSON
    that `--run` wrote? Exit 0 (Classroom grants the test's points) or 1; the verdict on stdout
    only (a command grader counts anything on stderr as a failure)."""
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = [row for row in data["rows"] if row.get("exercise") == item]
    except (OSError, ValueError, KeyError, TypeError):
        print(f"FAIL {item}: no results in {path}: the grading step did not finish (see its log)")
        return 1
    if not rows:
        print(f"FAIL {item}: nothing handed in for it")
        return 1
    row = rows[0]
    if check is None:
        ok = bool(row.get("passed"))
        print(f"{'PASS' if ok else 'FAIL'} {item}: {row.get('status')}: {row.get('message', '')}")
        return 0 if ok else 1
    found = next((c for c in row.get("checks") or [] if c.get("id") == check), None)
    if found is None:  # the file never ran: a missing or unreadable file, a syntax error...
        print(f"FAIL {item}, check {check}: not run ({row.get('status')}: {row.get('message', '')})")
        return 1
    ok = found.get("status") == "passed"
    print(f"{'PASS' if ok else found.get('status', '?').upper()} {item}, check {check}: {found.get('description', '')}"
          + (f": {found.get('message')}" if not ok and found.get("message") else ""))
    if not ok and found.get("hint"):
        print(f"      hint: {found['hint']}")
    return 0 if ok else 1


def run_submission(args: argparse.Namespace, pack: Pack, settings: Settings) -> int:
    """One learner's submission, graded as `grade` would, into Gradescope's results.json."""
    import json
    import shutil
    import tempfile

    from tutor.cli.grading import grade_meta, print_rows
    from tutor.grading.autograder import gradescope_results
    from tutor.grading.gradebook import collect, grade_all
    from tutor.grading.output import sort_rows, write_atomic
    from tutor.grading.sandboxes import sandbox_for
    from tutor.sandbox import backends
    from tutor.sandbox import backends
    from tutor.sandbox import isolation as iso

    started = time.monotonic()
    source = Path(args.run)
    if not source.is_dir():
        raise UsageError(f"{source} is not a folder")
    info = backends.choose(settings.isolation, settings.python or iso.default_python())
    isolation = backends.of(info.level).in_container(info)
    with tempfile.TemporaryDirectory(prefix="torch-tutor-submission-") as tmp:
        # A private copy under a fixed name: the learner's folder is then one learner, whatever it holds.
        shutil.copytree(source, Path(tmp) / "submission", symlinks=True)
        collection = collect(pack, Path(tmp))
        hide = [tmp] + ([str(pack.root)] if pack.root else [])  # each run gets only its own code
        with sandbox_for(settings, purpose="batch", hide=hide).start() as sandbox:
            rows = grade_all(pack, collection.submissions, sandbox, isolation=info.level)
    meta = grade_meta(pack, info, ignored=collection.ignored)
    rows = sort_rows(rows, meta["items"])
    results = gradescope_results(meta, rows, seconds=time.monotonic() - started, isolation=isolation,
                                 visibility=args.visibility)
    if args.results:
        write_atomic(Path(args.results), json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    if args.json:
        from tutor.grading.output import to_json

        write_atomic(Path(args.json), to_json(meta, rows))
    for notice in collection.ignored:
        print(f"notice: ignored {notice}")
    print_rows(rows)
    maximum = sum(t.get("max_score", 0) for t in results["tests"])
    print(f"score {results['score']:g} of {round(maximum, 2):g}; isolation: {isolation}")
    if args.json and not args.results:  # GitHub Classroom: the tests that follow read the JSON
        print(f"wrote {args.json}")
    return 0
