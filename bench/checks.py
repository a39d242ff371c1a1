"""Cost of each check kind on a warm worker, and of a whole small exercise.

Run: python bench/checks.py [--runs 15]
Each row checks one tiny learner function with one check of that kind, request to typed result,
median of --runs runs on one warm sandbox; "expr" is the floor (a run that checks nearly nothing).
Beside it: the judge's round trips to the runner in that check (canaries included) and the
median time the judge spent in the checks (the probe's own clock).
Also: the fixture pack's exercises (starter and solution), the full-check time of a small exercise.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tutor.grading.exercise import check_exercise  # noqa: E402
from tutor.core.loader import load_pack  # noqa: E402
from tutor.core.models import Exercise  # noqa: E402
from tutor.core.validation import validate  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "checks" / "fixtures" / "engine-pack"
CODE = """
import torch
from torch import nn
def f(x):
    return x * 2
def g(model, x):
    with torch.inference_mode():
        return model(x)
def losses(n):
    return [float(i) for i in range(n)]
"""
KINDS: dict[str, dict[str, object]] = {
    "expr": {"predicate": "True", "message": "m"},
    "tensor": {"setup": "x = torch.randn(8, 4)", "value": "f(x)", "shape": [8, 4], "close_to": "x * 2",
               "grad_fn": "none"},
    "module": {"value": "nn.Sequential(nn.Linear(4, 4), nn.Dropout())", "to": "meta", "training": True},
    "mode": {"setup": "m = nn.Linear(4, 2); x = torch.randn(3, 4)", "module": "m", "call": "g(m, x)",
             "during": {"inference_mode": True}},
    "unchanged": {"setup": "x = torch.randn(8, 4)", "call": "f(x)", "names": ["x"]},
    "raises": {"call": "f(torch.ones(2)) @ torch.ones(3)", "type": "RuntimeError"},
    "output": {"call": "print(f(1))", "match": "2"},
    "memory": {"call": "losses(n)"},
    "profile": {"setup": "a = torch.randn(128, 128)", "workload": "lambda: f(a) @ a", "top1_in": ["aten::mm"]},
    "timing": {"setup": "x = torch.randn(64, 64)", "fast": "lambda: f(x)", "slow": "lambda: [f(x) for _ in range(20)]",
               "ratio": {"min": 2}},
}


def exercise(kind: str) -> Exercise:
    return validate(Exercise, {
        "id": f"bench-{kind}", "kind": "exercise", "body": "b", "starter": "", "solution": "",
        "contract": [{"name": "f", "signature": "f(x)", "description": "d"}], "hints": ["a", "b"],
        "checks": [{"id": kind, "kind": kind, "description": kind, **KINDS[kind]}],
    })


def median_seconds(sandbox, ex: Exercise, code: str, runs: int) -> tuple[float, bool, str, float]:
    """(median seconds, passed every time, round trips seen, median seconds in the judge's checks)."""
    times, passed, requests, judged = [], True, set(), []
    for _ in range(runs):
        started = time.perf_counter()
        report = check_exercise(sandbox, ex, code)
        times.append(time.perf_counter() - started)
        passed = passed and report.passed
        probe = report.run.report if isinstance(report.run.report, dict) else {}
        requests.add(probe.get("requests", "?"))
        judged.append(float(probe.get("elapsed") or 0.0))
    return statistics.median(times), passed, "/".join(str(r) for r in sorted(requests, key=str)), \
        statistics.median(judged)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    from tutor.sandbox import Sandbox

    with Sandbox() as sandbox:
        sandbox.start()
        sandbox.wait_ready(300)
        print(f"{'check kind':<22} {'median':>9}  passed  requests  judge")
        for kind in KINDS:
            seconds, passed, requests, judged = median_seconds(sandbox, exercise(kind), CODE, args.runs)
            print(f"{kind:<22} {seconds * 1000:>7.0f} ms  {passed!s:<6}  {requests:<8}  {judged * 1000:.0f} ms")
        for _lesson, ex in load_pack(FIXTURES).exercises():
            for role, code in (("starter", ex.starter), ("solution", ex.solution)):
                seconds, _, requests, judged = median_seconds(sandbox, ex, code, max(3, args.runs // 3))
                print(f"{ex.id + ' ' + role:<22} {seconds * 1000:>7.0f} ms          {requests:<8}  "
                      f"{judged * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
