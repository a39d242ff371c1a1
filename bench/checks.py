"""Cost of each check kind on a warm worker, and of a whole small exercise.

Run: python bench/checks.py [--runs 15]
     python bench/checks.py --against OTHER-CHECKOUT [--runs 9]   (side by side, paired)
Each row checks one tiny learner function with one check of that kind, request to typed result,
median of --runs runs on one warm sandbox; "expr" is the floor (a run that checks nearly nothing).
Beside it: the judge's round trips to the runner in that check (canaries included) and the
median time the judge spent in the checks (the probe's own clock).
Also: the fixture pack's exercises (starter and solution), the full-check time of a small exercise.

With --against, two warm sandboxes run the same checks: one from this checkout, one from the other
(an older commit in a worktree, say); each check goes to both in a random order, --runs pairs after
one warm-up each, so both meet the same load. Prints both medians and the median of the per-pair
ratios (this checkout / the other), which a busy machine disturbs far less than either median.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

#: --serve ROOT: a child of --against, checking with the tutor found in ROOT (this file's KINDS)
_ROOT = Path(sys.argv[sys.argv.index("--serve") + 1]) if "--serve" in sys.argv else Path(__file__).resolve().parents[1]
sys.path.insert(0, str(_ROOT))

try:
    from tutor.grading.exercise import check_exercise  # noqa: E402
except ImportError:  # a checkout from before grading left tutor/pack
    from tutor.core.grading import check_exercise  # type: ignore[no-redef]  # noqa: E402
from tutor.pack.loader import load_pack  # noqa: E402
from tutor.pack.models import Exercise  # noqa: E402
from tutor.pack.validation import validate  # noqa: E402

FIXTURES = _ROOT / "tests" / "checks" / "fixtures" / "engine-pack"
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
        # every function of CODE a check calls: a check reads only the names the contract gives it
        "contract": [{"name": "f", "signature": "f(x)", "description": "d"},
                     {"name": "g", "signature": "g(model, x)", "description": "d"},
                     {"name": "losses", "signature": "losses(n)", "description": "d"}], "hints": ["a", "b"],
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


def _items() -> list[str]:
    return list(KINDS) + [f"{ex.id} {role}" for _lesson, ex in load_pack(FIXTURES).exercises()
                          for role in ("starter", "solution")]


def serve() -> int:
    """The child of --against: check each named item read from stdin, answer its seconds."""
    import json

    from tutor.sandbox import Sandbox

    exercises = {ex.id: ex for _lesson, ex in load_pack(FIXTURES).exercises()}
    with Sandbox() as sandbox:
        sandbox.start()
        sandbox.wait_ready(300)
        print("ready", flush=True)
        for line in sys.stdin:
            item = line.strip()
            if item in KINDS:
                ex, code = exercise(item), CODE
            else:
                name, role = item.split()
                ex = exercises[name]
                code = ex.starter if role == "starter" else ex.solution
            started = time.perf_counter()
            check_exercise(sandbox, ex, code)
            print(json.dumps(time.perf_counter() - started), flush=True)
    return 0


def against(other: Path, runs: int) -> int:
    import json
    import random
    import subprocess

    here = Path(__file__).resolve()
    children = {name: subprocess.Popen([sys.executable, str(here), "--serve", str(root)], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, text=True, bufsize=1)
                for name, root in (("this", _ROOT), ("other", other.resolve()))}
    try:
        for child in children.values():
            if child.stdout is None or child.stdout.readline().strip() != "ready":
                raise SystemExit("a sandbox did not start")

        def one(name: str, item: str) -> float:
            child = children[name]
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write(item + "\n")
            return float(json.loads(child.stdout.readline()))

        items = _items()
        seconds: dict[str, dict[str, list[float]]] = {item: {"this": [], "other": []} for item in items}
        for item in items:  # warm-up: the first check of each kind imports and compiles
            for name in children:
                one(name, item)
        for _ in range(runs):
            for item in items:
                order = list(children)
                random.shuffle(order)
                for name in order:
                    seconds[item][name].append(one(name, item))
    finally:
        for child in children.values():
            if child.stdin is not None:
                child.stdin.close()
            child.wait()
    print(f"{'check':<26} {'other':>8} {'this':>8}  paired ratio (this / other)")
    for item, both in seconds.items():
        ratios = [mine / theirs for mine, theirs in zip(both["this"], both["other"])]
        print(f"{item:<26} {statistics.median(both['other']) * 1000:>5.0f} ms {statistics.median(both['this']) * 1000:>5.0f} ms"
              f"  {statistics.median(ratios):.2f}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--against", type=Path, help="another checkout to compare with, side by side")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        return serve()
    if args.against is not None:
        return against(args.against, args.runs)
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
                seconds, _, requests, judged = median_seconds(sandbox, ex, code, max(1, args.runs // 3))
                print(f"{ex.id + ' ' + role:<22} {seconds * 1000:>7.0f} ms          {requests:<8}  "
                      f"{judged * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
