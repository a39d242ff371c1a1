"""Grading speed: N learners x every exercise of the built-in pack, through `grade_all`.

Run: python bench/grade.py [--learners 100] [--workers 1] [--mode auto|fork|spawn] [--exercises N]
Each learner hands in, per exercise, the reference solution or the starter (alternating), so the
batch mixes passing and failing submissions. Grades as `torch-tutor grade` does: with the grade
cache (keys, look-ups, writes) and the CSV written row by row. Reports the total time, the time
per submission, the overhead per submission over the checks themselves (request-to-verdict time
minus the time the sandbox child ran the learner's code and the checks), and a second pass that
comes entirely from the cache.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tutor.pack.discovery import builtin_pack_dirs  # noqa: E402
from tutor.grading.gradebook import GradeCache, collect, grade_all  # noqa: E402
from tutor.grading.output import CsvStream  # noqa: E402
from tutor.pack.loader import load_pack  # noqa: E402
from tutor.sandbox import Sandbox  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--learners", type=int, default=100)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--mode", choices=("auto", "fork", "spawn"), default="auto",
                        help="the sandbox mode (as `grade` gets it from the sandbox_mode setting)")
    parser.add_argument("--exercises", type=int, default=None,
                        help="only the pack's first N exercises (default: every one that needs no GPU)")
    args = parser.parse_args()
    pack = load_pack(builtin_pack_dirs()[0])
    exercises = [ex for _lesson, ex in pack.exercises() if not (ex.requires and ex.requires.cuda)]
    exercises = exercises[:args.exercises] if args.exercises else exercises
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for n in range(args.learners):
            folder = root / f"learner-{n:03d}"
            folder.mkdir()
            for i, exercise in enumerate(exercises):
                code = exercise.solution if (n + i) % 2 == 0 else exercise.starter
                # a comment makes every file unique, as real submissions are (no accidental sharing)
                (folder / f"{exercise.id}.py").write_text(f"# learner {n}\n{code}")
        started = time.perf_counter()
        chosen = {exercise.id for exercise in exercises}
        subs = [sub for sub in collect(pack, root).submissions if sub.exercise in chosen]
        collected = time.perf_counter() - started
        cache = GradeCache(root / "cache" / "grade-cache.sqlite")
        with Sandbox(workers=args.workers, mode=args.mode, purpose="batch").start() as sandbox:
            sandbox.wait_ready(120)
            level = sandbox.isolation.level
            for rerun in (False, True):
                stream = CsvStream(root / "grades.csv")
                started = time.perf_counter()
                graded = grade_all(pack, subs, sandbox, threads=args.workers, cache=cache, isolation=level,
                                   progress=lambda row, _done, _total: stream.add(row))
                stream.finish(graded)
                if rerun:
                    again, cached = time.perf_counter() - started, sum(r.cached for r in graded)
                else:
                    rows, total = graded, time.perf_counter() - started
        cache.close()
    graded = [r for r in rows if r.run_seconds]
    overhead = [r.seconds - r.run_seconds for r in graded]
    print(f"{args.learners} learners x {len(exercises)} exercises = {len(rows)} submissions, "
          f"{args.workers} worker(s), {sandbox.mode} mode")
    print(f"collect: {collected:.2f} s; grade: {total:.1f} s total, {total / len(rows) * 1000:.0f} ms per submission")
    print(f"per submission: median request-to-verdict {statistics.median(r.seconds for r in graded) * 1000:.0f} ms, "
          f"median in the child {statistics.median(r.run_seconds for r in graded) * 1000:.0f} ms")
    print(f"overhead over the checks: median {statistics.median(overhead) * 1000:.1f} ms, "
          f"p90 {sorted(overhead)[int(len(overhead) * 0.9)] * 1000:.1f} ms")
    statuses: dict[str, int] = {}
    for row in rows:
        statuses[row.status] = statuses.get(row.status, 0) + 1
    print("statuses:", statuses)
    print(f"second pass: {cached}/{len(rows)} from the cache, {again:.2f} s total, "
          f"{again / len(rows) * 1000:.1f} ms per submission")


if __name__ == "__main__":
    main()
