"""The parent-side work `grade` adds per submission besides running it: cache key, look-up and
write, points, the hand-in time with a late penalty, and one streamed CSV row; 300 submissions of
the built-in pack, no sandbox.

Run: python bench/grade_parent.py [--submissions 300]
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
from tutor.pack.models import LatePenalty  # noqa: E402
from tutor.grading.gradebook import (GradeCache, Row, Submission, _stamp, engine_fingerprint,  # noqa: E402
                                     exercise_fingerprint, parse_deadline, score)
from tutor.grading.output import CsvStream  # noqa: E402
from tutor.pack.loader import load_pack  # noqa: E402
from tutor.sandbox.limits import Limits  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--submissions", type=int, default=300)
    args = parser.parse_args()
    pack = load_pack(builtin_pack_dirs()[0])
    exercises = [ex for _lesson, ex in pack.exercises()]
    started = time.perf_counter()
    fingerprints = {ex.id: exercise_fingerprint(ex) for ex in exercises}
    fingerprinting = time.perf_counter() - started
    engine_fingerprint()
    limits = Limits().to_wire() | {"isolation": "bwrap"}
    deadline = parse_deadline("2026-06-01T00:00:00+00:00")
    penalty = LatePenalty(per_day=10, max=50)
    with tempfile.TemporaryDirectory() as tmp:
        cache = GradeCache(Path(tmp) / "grade-cache.sqlite")
        stream = CsvStream(Path(tmp) / "grades.csv")
        times = []
        for n in range(args.submissions):
            exercise = exercises[n % len(exercises)]
            started = time.perf_counter()
            key = GradeCache.key(exercise, f"# learner {n}\n{exercise.solution}",
                                 fingerprint=fingerprints[exercise.id], limits=limits, torch="2.13.0")
            cache.get(key)
            checks = [{"id": c.id, "kind": c.kind, "status": "passed", "description": "d", "message": "",
                       "expected": None, "got": None, "hint": None} for c in exercise.checks]
            row = Row(f"learner-{n}", exercise.id, True, len(checks), len(checks), "passed", "all passed",
                      checks=checks)
            score(row, exercise)
            cache.put(key, row)
            # every other hand-in late by n hours: the penalty arithmetic runs on half the rows
            when = deadline.timestamp() + (n * 3600 if n % 2 else -60)
            _stamp(row, Submission(row.learner, exercise.id, "", handed_in=when, handed_in_from="file mtime"),
                   deadline, penalty)
            stream.add(row)
            times.append(time.perf_counter() - started)
        cache.close()
    print(f"parent-side additions per submission: median {statistics.median(times) * 1000:.2f} ms, "
          f"p90 {sorted(times)[int(len(times) * 0.9)] * 1000:.2f} ms")
    print(f"fingerprints of {len(exercises)} exercises: {fingerprinting * 1000:.1f} ms")


if __name__ == "__main__":
    main()
