"""Spawn mode, plain runs back to back: a batch Sandbox (bubblewrap, 2 spares), 8 runs, then close.

    python bench/spawn_reuse.py [--runs 8] [--isolation bwrap]

Prints the wall times; run it under a cpuacct cgroup (or ``perf stat -a``) to count the CPU of the
whole process tree (the sandbox's processes are in sessions of their own, so the rusage of this
process's children misses them). docs/performance.md, "Spawn mode".
"""

from __future__ import annotations

import argparse
import time

from tutor.sandbox import Sandbox
from tutor.sandbox.limits import Limits


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--isolation", default="bwrap", choices=("auto", "bwrap", "none"))
    args = parser.parse_args()
    started = time.perf_counter()
    with Sandbox(Limits(), isolation=args.isolation, mode="spawn", workers=2, preload=["tutor.child.checks.probe"],
                 purpose="batch") as box:
        box.wait_ready(300)
        ready = time.perf_counter()
        for _ in range(args.runs):
            result = box.run("import torch\nprint(torch.ones(2).sum().item())")
            assert result.status == "ok", result.message
        ran = time.perf_counter()
    closed = time.perf_counter()
    print(f"warm-up {ready - started:.1f} s, {args.runs} runs {ran - ready:.1f} s, close {closed - ran:.2f} s")


if __name__ == "__main__":
    main()
