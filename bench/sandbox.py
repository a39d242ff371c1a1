"""Sandbox speed, side by side: a warm run vs a cold `python -c` of the same torch snippet.

    python bench/sandbox.py [--runs 20] [--cold-runs 20] [--isolation auto]

Prints medians (and the ratio) for: request-to-result of a Linear forward under
``torch.profiler.profile``; the same snippet as a cold ``python -c``; an empty snippet; a warm
Jupyter kernel round trip when jupyter_client and ipykernel are installed; the worker's RSS
against a bare ``python -c "import torch"``; each child's private (unshared) memory.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

SNIPPET = """\
import torch
model = torch.nn.Linear(128, 64)
x = torch.randn(32, 128)
with torch.profiler.profile() as prof:
    model(x).sum()
print(len(prof.key_averages()) > 0)
"""

BARE_RSS = ("import torch\n"
            "print(next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmRSS')) / 1024)")


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def bench_warm(isolation: str, runs: int) -> dict:
    from tutor.sandbox import Sandbox

    with Sandbox(isolation=isolation) as sandbox:
        sandbox.wait_ready()
        timings, empty, private = [], [], []
        for _ in range(3):  # first runs fault in pages the worker never touched
            sandbox.run(SNIPPET)
        for _ in range(runs):
            started = time.perf_counter()
            result = sandbox.run(SNIPPET)
            timings.append(time.perf_counter() - started)
            assert result.status == "ok" and result.stdout == "True\n", result
        for _ in range(runs):
            started = time.perf_counter()
            sandbox.run("pass")
            empty.append(time.perf_counter() - started)
        for _ in range(runs):
            private.append(sandbox.run(SNIPPET, stats=True).private_memory_mb)
        return {"isolation": sandbox.isolation.level, "warm_ms": median_ms(timings),
                "empty_ms": median_ms(empty), "private_mb": statistics.median(private),
                "worker_rss_mb": sandbox.worker_info["rss_mb"], "warmup_s": sandbox.warmup_s}


def bench_cold(runs: int) -> float:
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", SNIPPET], check=True, capture_output=True)
        timings.append(time.perf_counter() - started)
    return median_ms(timings)


def bare_torch_rss(runs: int = 5) -> float:
    values = [float(subprocess.run([sys.executable, "-c", BARE_RSS], check=True, capture_output=True,
                                   text=True).stdout) for _ in range(runs)]
    return statistics.median(values)


def bench_jupyter(runs: int) -> float | None:
    try:
        from jupyter_client.manager import start_new_kernel
    except ImportError:
        return None
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        client.execute_interactive(SNIPPET, timeout=120)
        timings = []
        for _ in range(runs):
            started = time.perf_counter()
            client.execute_interactive(SNIPPET, timeout=120, output_hook=lambda msg: None)
            timings.append(time.perf_counter() - started)
        return median_ms(timings)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--cold-runs", type=int, default=20)
    parser.add_argument("--isolation", default="auto", choices=("auto", "bwrap", "none"))
    args = parser.parse_args()

    warm = bench_warm(args.isolation, args.runs)
    cold = bench_cold(args.cold_runs)
    bare = bare_torch_rss()
    jupyter = bench_jupyter(args.runs)
    print(f"isolation: {warm['isolation']}; medians of {args.runs} warm runs, {args.cold_runs} cold runs")
    print(f"worker warm-up:                       {warm['warmup_s']:.2f} s")
    print(f"warm run, Linear + profiler:          {warm['warm_ms']:.1f} ms")
    print(f"cold python -c, same snippet:         {cold:.0f} ms  (warm is 1/{cold / warm['warm_ms']:.0f})")
    print(f"warm run, empty snippet:              {warm['empty_ms']:.1f} ms")
    if jupyter is None:
        print("warm Jupyter kernel round trip:       not measured (jupyter_client/ipykernel not installed)")
    else:
        print(f"warm Jupyter kernel round trip:       {jupyter:.1f} ms  (sandbox is {warm['warm_ms'] / jupyter:.1f}x)")
    print(f"worker RSS vs bare `import torch`:    {warm['worker_rss_mb']:.0f} MB vs {bare:.0f} MB "
          f"(+{warm['worker_rss_mb'] - bare:.0f} MB)")
    print(f"child private memory (snippet):       {warm['private_mb']:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
