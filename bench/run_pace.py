"""Fork mode, many empty Runs at a learner's pace: each spaced 0.3 s after the last result, then
one sent the moment that one came back. Medians and first quartiles, one sandbox (bubblewrap).

Made for side-by-side comparisons of two trees, which the noise of a virtual machine needs:
``PYTHONPATH=TREE python bench/run_pace.py`` from each tree in turn, alternating, several passes
(docs/performance.md, "A run's path (fork mode)"). bench/sandbox.py has the whole picture
beside a warm Jupyter kernel.

With ``--stream N``: then N empty runs sent one after another on a batch sandbox (as ``grade``
and ``validate`` send them), the median and the whole machine's CPU per run (/proc/stat, Linux):
a stream is bound by that CPU over the machine's cores (docs/performance.md, "A stream's floor").

    python bench/run_pace.py [--runs 40] [--isolation bwrap] [--stream 150]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from tutor.sandbox import Limits, Sandbox


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--isolation", default="bwrap", choices=["bwrap", "none", "auto"])
    parser.add_argument("--stream", type=int, default=0, help="also N empty runs in a stream, batch sandbox")
    args = parser.parse_args()
    if args.runs < 2:
        parser.error("--runs: at least 2 (a first quartile needs two runs)")
    if args.stream < 0:
        parser.error("--stream: a number of runs, 0 or more")
    box = Sandbox(Limits(wall_time=20.0, cpu_time=20.0), isolation=args.isolation, mode="fork").start()
    try:
        assert box.wait_ready(300), "the sandbox did not warm up"
        box.expect(False)  # a learner's prose step: no profiler warm-up in the middle of the passes
        for _ in range(5):
            box.run("pass")
        time.sleep(1.5)
        spaced: list[float] = []
        back_to_back: list[float] = []
        for _ in range(args.runs):
            time.sleep(0.3)
            for times in (spaced, back_to_back):
                started = time.perf_counter()
                result = box.run("pass")
                times.append((time.perf_counter() - started) * 1000)
                assert result.status == "ok", result.message
    finally:
        box.close()
    for name, times in (("spaced", spaced), ("back to back", back_to_back)):
        print(f"{name:13s} median {statistics.median(times):6.1f} ms, first quartile "
              f"{statistics.quantiles(times, n=4)[0]:6.1f} ms ({len(times)} runs)")
    if args.stream:
        stream(args.stream, args.isolation)


def machine_cpu_s() -> float | None:
    """CPU seconds the whole machine spent so far, every core, idle and I/O wait left out."""
    try:
        with open("/proc/stat") as handle:
            fields = [int(x) for x in handle.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def stream(runs: int, isolation: str) -> None:
    box = Sandbox(Limits(wall_time=20.0, cpu_time=20.0), isolation=isolation, mode="fork", purpose="batch").start()
    try:
        assert box.wait_ready(300), "the sandbox did not warm up"
        for _ in range(5):
            box.run("pass")
        time.sleep(1.5)
        times: list[float] = []
        cpu_before = machine_cpu_s()
        for _ in range(runs):
            started = time.perf_counter()
            result = box.run("pass")
            times.append((time.perf_counter() - started) * 1000)
            assert result.status == "ok", result.message
        cpu_after = machine_cpu_s()
    finally:
        box.close()
    cpu = "n/m" if cpu_before is None or cpu_after is None else f"{(cpu_after - cpu_before) / runs * 1000:.1f} ms"
    print(f"a stream     median {statistics.median(times):6.1f} ms ({runs} runs, batch); "
          f"the machine's CPU per run {cpu} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
