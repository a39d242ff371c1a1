"""The peak memory of each process of one check run: an honest submission, or one whose runner
sends the judge a first frame of ~25 MB of ``[{},{},...]`` (issue 50), just under the size check.

Runs the check on a warm sandbox (fork mode by default) and samples, every 10 ms while it runs,
the peak RSS (``VmHWM``) of every descendant of this process and the sum of their PSS. The judge
is the worker's child whose command line is the tutor's Python; the runner (the learner's
process) sits under the run's init.

    python bench/judge_memory.py honest|attack [--mode fork|spawn]
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.checks.conftest import make_exercise  # noqa: E402
from tests.checks.test_judge_stays_up import CHECK, SEND_FIRST  # noqa: E402
from tutor.child.checks import protocol  # noqa: E402
from tutor.child.checks.remote import Session  # noqa: E402
from tutor.grading.exercise import check_exercise  # noqa: E402
from tutor.sandbox import Limits, Sandbox  # noqa: E402

HONEST = "def f(x):\n    return x * 2\n"


def attack() -> str:
    size = Session.MEMORY_BUDGET // protocol.JSON_FACTOR - 64
    n = (size - 40) // 3
    return SEND_FIRST + (f"body = b'{{\"op\":\"answer\",\"value\":[' + b','.join([b'{{}}'] * {n}) + b']}}'\n"
                         "send_first(body)\n")


def descendants(root: int) -> set[int]:
    found: set[int] = set()
    todo = [root]
    while todo:
        pid = todo.pop()
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as handle:
                    for child in map(int, handle.read().split()):
                        if child not in found:
                            found.add(child)
                            todo.append(child)
        except OSError:
            pass
    return found


class Sampler(threading.Thread):
    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peaks: dict[int, int] = {}
        self.labels: dict[int, str] = {}
        self.pss_peak = 0
        self.done = threading.Event()

    def run(self) -> None:
        me = os.getpid()
        while not self.done.is_set():
            total = 0
            for pid in descendants(me):
                try:
                    with open(f"/proc/{pid}/status") as handle:
                        status = dict(line.split(":", 1) for line in handle if ":" in line)
                    with open(f"/proc/{pid}/cmdline", "rb") as handle:
                        command = handle.read().replace(b"\0", b" ").decode(errors="replace")[:50]
                    with open(f"/proc/{pid}/smaps_rollup") as handle:
                        total += sum(int(line.split()[1]) for line in handle if line.startswith("Pss:"))
                except (OSError, ValueError):
                    continue
                if "VmHWM" in status:
                    self.peaks[pid] = max(self.peaks.get(pid, 0), int(status["VmHWM"].split()[0]))
                    self.labels[pid] = f"parent {status['PPid'].strip()}: {command}"
            self.pss_peak = max(self.pss_peak, total)
            time.sleep(0.01)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("which", choices=["honest", "attack"])
    parser.add_argument("--mode", choices=["fork", "spawn"], default="fork")
    args = parser.parse_args()
    code = attack() if args.which == "attack" else HONEST
    with Sandbox(Limits(wall_time=60.0, cpu_time=120.0), workers=1, mode=args.mode).start() as box:
        check_exercise(box, make_exercise(CHECK), HONEST)  # warm
        sampler = Sampler()
        sampler.start()
        started = time.monotonic()
        report = check_exercise(box, make_exercise(CHECK), code)
        took = time.monotonic() - started
        sampler.done.set()
        sampler.join()
    print(f"{args.which} ({args.mode}): {report.run.status} in {took:.1f} s: {(report.run.message or '')[:90]}")
    for pid, kb in sorted(sampler.peaks.items(), key=lambda item: -item[1])[:6]:
        print(f"  pid {pid}: peak RSS {kb / 1024:6.0f} MB  ({sampler.labels[pid]})")
    print(f"  the run's processes together: peak PSS {sampler.pss_peak / 1024:.0f} MB")


if __name__ == "__main__":
    main()
