"""What a spare would cost if it were forked from a warm template instead of started with exec
(the option left open in docs/performance.md, "Both modes in CI"): import what a worker imports,
run no op, then fork children that each do a spawn-mode runner's warm-up (one op under the
profiler) and exit. Prints the median CPU and wall time per child. Linux only (fork).

    python bench/forked_spare.py --runs 10
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time

from tutor.child.worker.startup import preload, warm_up


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    preload(["tutor.child.checks.probe"])  # as a worker does: torch, the profiler's modules, no op
    cpu, wall = [], []
    for _ in range(args.runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            warm_up()
            os._exit(0)
        os.waitpid(pid, 0)
        wall.append((time.perf_counter() - started) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
    print(f"forked spare (warm-up and exit), median of {args.runs}: "
          f"{statistics.median(cpu):.1f} ms CPU, {statistics.median(wall):.1f} ms wall")


if __name__ == "__main__":
    main()
