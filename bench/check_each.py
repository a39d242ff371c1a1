"""Check every exercise of a pack, starter and reference solution, on one warm sandbox: wall and
CPU time per Check, medians.

Run: python bench/check_each.py [--repeat 3] [--exercise ID ...] [--pack DIR] [--checks]
     python bench/check_each.py --role loop [--exercise ID]   (the starter and a top-level loop)
     python bench/check_each.py --against OTHER-CHECKOUT [--repeat 3]   (side by side, alternating)
Smallest size (the suite's): python bench/check_each.py --repeat 1 --exercise numpy-dtype

Each Check is ``check_exercise`` on a warm interactive ``Sandbox`` (the app's), the exercises in
the pack's order as a learner meets them, each told ``Sandbox.expect`` as the app's step says it
(whether the profiler's machinery may be needed; "no" before the first, as at lesson 1), one
warm-up Check of each item first. Wall is the Check's own time, request to typed result. CPU is
every process of the sandbox's (worker, judge, runner, the spares forked for the next run) from
the Check's start until the sandbox is idle again, read from a cpuacct cgroup of the bench's own
(Linux, as root; elsewhere the column says "n/a", never a guess). ``--checks`` adds each check's
CPU seconds in the judge (its own and what the runner reported), which is where a slow Check's
time goes. With ``--against``, a second sandbox runs the other checkout's tutor on its own pack
(its YAML; ``--pack`` names one for both) and each Check goes to both in a random order, so both
meet the machine's load alike; the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

#: --serve ROOT: a child, checking with the tutor found in ROOT
_ROOT = Path(sys.argv[sys.argv.index("--serve") + 1]) if "--serve" in sys.argv else Path(__file__).resolve().parents[1]
sys.path.insert(0, str(_ROOT))

_HERE = Path(__file__).resolve().parents[1]
PACK = _HERE / "lessons" / "debugging-and-speed"
_CGROUP_V1 = Path("/sys/fs/cgroup/cpuacct")
#: After a Check, the sandbox's processes are idle again when their CPU time grows by less than
#: this in SETTLE_S (the run's teardown and the next run's spares come after the verdict).
SETTLE_S, SETTLE_CPU_S, SETTLE_MAX_S = 0.15, 0.005, 3.0


class CpuClock:
    """The CPU time of every process in a cgroup of this bench's own, or None where none can be made."""

    def __init__(self, path: Path | None = None, make: bool = True) -> None:
        self.path: Path | None = path
        if path is not None or not make:
            return
        if sys.platform != "linux" or not hasattr(os, "geteuid") or os.geteuid() != 0:
            return
        if not (_CGROUP_V1 / "cpuacct.usage").is_file():
            return
        path = _CGROUP_V1 / f"tutor-bench-{uuid.uuid4().hex[:12]}"
        try:
            path.mkdir()
        except OSError:
            return
        self.path = path

    def join(self, pid: int) -> None:
        if self.path is not None:
            (self.path / "cgroup.procs").write_text(f"{pid}\n")

    def read(self) -> float | None:
        if self.path is None:
            return None
        return int((self.path / "cpuacct.usage").read_text()) / 1e9

    def settled(self) -> float | None:
        """The CPU time once the processes are idle (at most SETTLE_MAX_S of waiting)."""
        last = self.read()
        if last is None:
            return None
        deadline = time.monotonic() + SETTLE_MAX_S
        while time.monotonic() < deadline:
            time.sleep(SETTLE_S)
            now = self.read()
            assert now is not None
            if now - last < SETTLE_CPU_S:
                return now
            last = now
        return last

    def remove(self) -> None:
        """Remove the cgroup once its processes are gone (a sandbox's last ones end just after it)."""
        if self.path is None:
            return
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.1)


def serve(pack: Path) -> int:
    """The child: one warm sandbox; check each item read from stdin ("ID starter|solution"),
    answer one line of JSON: wall and CPU seconds, whether it passed, each check's status and
    CPU seconds in the judge."""
    try:
        from tutor.grading.exercise import check_exercise
    except ImportError:  # a checkout from before grading left tutor/pack
        from tutor.core.grading import check_exercise  # type: ignore[no-redef]
    from tutor.pack.loader import load_pack
    from tutor.sandbox import Sandbox

    try:
        from tutor.app.engine import may_profile as expect
    except ImportError:  # a checkout from before the app said so
        expect = None  # type: ignore[assignment]
    given = os.environ.get("TUTOR_BENCH_CGROUP")
    clock = CpuClock(Path(given) if given else None, make=False)
    exercises = {ex.id: ex for _lesson, ex in load_pack(pack).exercises()}
    with Sandbox() as sandbox:
        if expect is not None:  # a learner starts at lesson 1, whose steps never profile: the
            sandbox.expect(False)  # idle worker does not load the profiler's machinery meanwhile
        sandbox.start()
        sandbox.wait_ready(300)
        clock.settled()
        print("ready", flush=True)
        for line in sys.stdin:
            name, role = line.split()
            ex = exercises[name]
            code = ex.solution if role == "solution" else ex.starter
            if role == "loop":  # a learner's scratch loop at the top level, after the starter's code
                code = code.rstrip("\n") + "\n\nwhile True:\n    pass\n"
            if expect is not None:  # as the app says on each step (profiler machinery or not)
                sandbox.expect(expect(ex))
            cpu0 = clock.read()
            started = time.perf_counter()
            report = check_exercise(sandbox, ex, code)
            wall = time.perf_counter() - started
            cpu1 = clock.settled()
            checks = [[c.id, c.status, c.seconds[0] if c.seconds else None] for c in report.checks]
            print(json.dumps({"wall": wall, "cpu": None if cpu0 is None or cpu1 is None else cpu1 - cpu0,
                              "passed": report.passed, "checks": checks}), flush=True)
    return 0


def _items(pack: Path, wanted: list[str], roles: list[str]) -> list[tuple[str, str]]:
    from tutor.pack.loader import load_pack

    ids = [ex.id for _lesson, ex in load_pack(pack).exercises()]
    unknown = [name for name in wanted if name not in ids]
    if unknown:
        raise SystemExit(f"no exercise {', '.join(unknown)} in {pack} (it has: {', '.join(ids)})")
    return [(name, role) for name in ids if not wanted or name in wanted for role in roles]


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known and len(known) == len(values) else None


def _load() -> str:
    return " ".join(f"{v:.1f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="Checks of each item, after one warm-up (default 3)")
    parser.add_argument("--exercise", action="append", default=[], help="only this exercise (repeatable)")
    parser.add_argument("--role", choices=("starter", "solution", "both", "loop"), default="both",
                        help="what to check: loop is the starter with an infinite loop at its top level")
    parser.add_argument("--pack", type=Path, help="the pack (default: each checkout's built-in one)")
    parser.add_argument("--checks", action="store_true", help="each check's CPU seconds in the judge, too")
    parser.add_argument("--against", type=Path, help="another checkout to compare with, side by side")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        return serve((args.pack or args.serve / PACK.relative_to(_HERE)).resolve())
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    roles = ["starter", "solution"] if args.role == "both" else [args.role]
    items = _items((args.pack or PACK).resolve(), args.exercise, roles)
    trees = {"this": _ROOT} if args.against is None else {"this": _ROOT, "other": args.against.resolve()}
    clocks = {name: CpuClock() for name in trees}
    here = Path(__file__).resolve()
    children: dict[str, subprocess.Popen] = {}
    print(f"load average before: {_load()}")
    try:
        for name, root in trees.items():
            env = {**os.environ, "TUTOR_BENCH_CGROUP": str(clocks[name].path or "")}
            pack = ["--pack", str(args.pack.resolve())] if args.pack else []  # else each its own (its YAML too)
            child = subprocess.Popen([sys.executable, str(here), "--serve", str(root), *pack],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1, env=env)
            clocks[name].join(child.pid)  # before it starts its sandbox: every process it forks is counted
            children[name] = child
        for child in children.values():
            if child.stdout is None or child.stdout.readline().strip() != "ready":
                raise SystemExit("a sandbox did not start")

        def one(name: str, item: tuple[str, str]) -> dict:
            child = children[name]
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write(" ".join(item) + "\n")
            answer = child.stdout.readline()
            if not answer:
                raise SystemExit(f"the {name} sandbox's bench child ended")
            return json.loads(answer)

        results: dict[tuple[str, str], dict[str, list[dict]]] = {item: {name: [] for name in trees} for item in items}
        for item in items:  # in the pack's order, as a learner meets them
            for name in trees:  # warm-up: a sandbox's first check of a kind imports and compiles
                one(name, item)
            for _ in range(args.repeat):
                order = list(trees)
                random.shuffle(order)
                for name in order:
                    results[item][name].append(one(name, item))
    finally:
        for child in children.values():
            if child.stdin is not None:
                child.stdin.close()
            child.wait()
        for clock in clocks.values():
            clock.remove()
    print(f"load average after: {_load()}")
    _print(results, list(trees), args.repeat, args.checks)
    return 0


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _print(results: dict, trees: list[str], repeat: int, per_check: bool) -> None:
    heads = "".join(f" {name + ' wall':>10} {name + ' CPU':>9}" for name in trees)
    print(f"{'exercise':<28} {'role':<8}{heads}  verdict  (medians of {repeat}, seconds)")
    for (exercise, role), by_tree in results.items():
        cells = "".join(f" {_seconds(_median([r['wall'] for r in by_tree[name]])):>10}"
                        f" {_seconds(_median([r['cpu'] for r in by_tree[name]])):>9}" for name in trees)
        verdicts = "/".join(sorted({"passed" if r["passed"] else "failed" for name in trees for r in by_tree[name]}))
        print(f"{exercise:<28} {role:<8}{cells}  {verdicts}")
        if not per_check:
            continue
        for name in trees:
            runs = by_tree[name]
            for index, (check_id, _status, _used) in enumerate(runs[0]["checks"]):
                used = _median([r["checks"][index][2] if index < len(r["checks"]) else None for r in runs])
                statuses = "/".join(sorted({r["checks"][index][1] for r in runs if index < len(r["checks"])}))
                print(f"    {name:<6} {check_id:<30} {_seconds(used):>6} s CPU in the judge  {statuses}")


if __name__ == "__main__":
    sys.exit(main())
