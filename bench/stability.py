"""Verdict stability: the same code must get the same verdict every time, even on a busy CPU.

Run: python bench/stability.py [PACK ...] [--runs 30] [--busy]
Default packs: the built-in ones. Every exercise's starter and reference solution is checked
--runs times on one warm sandbox; with --busy a spinning process keeps another core busy, as a
learner's browser or a build would. Prints, per exercise and role, the distinct verdicts seen
(a verdict is the status of every check) and exits 1 if any exercise gave more than one, or if
a starter passed or a solution failed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tutor.pack.discovery import builtin_pack_dirs  # noqa: E402
from tutor.grading.exercise import check_exercise  # noqa: E402
from tutor.pack.loader import load_pack  # noqa: E402


def verdicts(sandbox, pack, runs: int, log=print) -> dict[tuple[str, str], Counter]:
    """(exercise, role) -> Counter of verdict tuples over ``runs`` runs."""
    seen: dict[tuple[str, str], Counter] = {}
    for _lesson, exercise in pack.exercises():
        for role, code in (("starter", exercise.starter), ("solution", exercise.solution)):
            counter: Counter = Counter()
            started = time.perf_counter()
            for _ in range(runs):
                report = check_exercise(sandbox, exercise, code)
                counter[(report.passed, tuple((c.id, c.status) for c in report.checks))] += 1
            seen[(exercise.id, role)] = counter
            log(f"{pack.id}/{exercise.id} {role}: {len(counter)} distinct verdict(s) in {runs} runs "
                f"({(time.perf_counter() - started) / runs:.2f} s per run)")
    return seen


def problems(seen: dict[tuple[str, str], Counter]) -> list[str]:
    found = []
    for (exercise, role), counter in seen.items():
        if len(counter) > 1:
            found.append(f"{exercise} {role}: flaky: {dict(counter)}")
        for (passed, checks), _count in counter.items():
            if role == "starter" and passed:
                found.append(f"{exercise} starter passed every check")
            if role == "solution" and not passed:
                failing = [cid for cid, status in checks if status != "passed"]
                found.append(f"{exercise} solution failed {', '.join(failing)}")
    return sorted(set(found))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("packs", nargs="*", help="pack folders (default: the built-in packs)")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--busy", action="store_true", help="keep another core busy meanwhile")
    args = parser.parse_args()
    from tutor.sandbox import Sandbox

    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.busy else None
    found = []
    try:
        with Sandbox() as sandbox:
            sandbox.start()
            for folder in args.packs or builtin_pack_dirs():
                found += problems(verdicts(sandbox, load_pack(folder), args.runs))
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
    for line in found:
        print("PROBLEM", line)
    print(f"{'stable' if not found else 'UNSTABLE'}: {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
