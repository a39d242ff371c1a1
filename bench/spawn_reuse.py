"""Spawn mode, plain runs back to back: a batch Sandbox (bubblewrap, 2 spares), 8 runs, then close.

Prints the wall times; run it under a cpuacct cgroup (or ``perf stat -a``) to count the CPU of the
whole process tree (the sandbox's processes are in sessions of their own, so the rusage of this
process's children misses them). docs/performance.md, "Spawn mode: a judge that serves several runs".
"""

from __future__ import annotations

import time

from tutor.sandbox import Sandbox
from tutor.sandbox.limits import Limits

RUNS = 8


def main() -> None:
    started = time.perf_counter()
    with Sandbox(Limits(), isolation="bwrap", mode="spawn", workers=2, preload=["tutor.checks.probe"],
                 purpose="batch") as box:
        box.wait_ready(300)
        ready = time.perf_counter()
        for _ in range(RUNS):
            result = box.run("import torch\nprint(torch.ones(2).sum().item())")
            assert result.status == "ok", result.message
        ran = time.perf_counter()
    closed = time.perf_counter()
    print(f"warm-up {ready - started:.1f} s, {RUNS} runs {ran - ready:.1f} s, close {closed - ran:.2f} s")


if __name__ == "__main__":
    main()
