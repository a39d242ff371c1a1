"""Sandbox speed, fork mode beside spawn mode in one run, against a cold `python -c` and Jupyter.

    python bench/sandbox.py [--runs 20] [--cold-runs 10] [--isolation auto] [--modes fork,spawn]

For each mode, medians of: request-to-result of a Linear forward under ``torch.profiler.profile``
with a warm worker or spare waiting (a *warm run*); the second of two runs sent back to back (in
spawn mode it may wait for the next spare to import torch); an empty snippet; the memory kept
warm (fork: the worker's RSS; spawn: a spare's judge and runner interpreters); the CPU time the
sandbox spends per run, warm-up of the spare included (from the CPU of every reaped descendant,
less that of a sandbox that warmed up and ran nothing), once with a spare left waiting before
each run (interactive use) and once with runs sent back to back (a ``grade`` batch). Then the same snippet as a cold
``python -c``, a warm Jupyter kernel round trip when jupyter_client and ipykernel are installed,
and a bare ``python -c "import torch"``'s RSS.
"""

from __future__ import annotations

import argparse
import resource
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


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _settle(sandbox, workers: int, timeout: float = 120.0) -> None:
    """Wait until every worker or spare is warm and waiting (spawn mode refills after each run)."""
    deadline = time.monotonic() + timeout
    while sandbox.idle_count() < workers and time.monotonic() < deadline:
        time.sleep(0.05)


def _timed(sandbox, code: str) -> float:
    started = time.perf_counter()
    result = sandbox.run(code)
    elapsed = time.perf_counter() - started
    assert result.status == "ok", (result.status, result.message, result.stderr)
    return elapsed


def cpu_per_run(mode: str, runs: int) -> float:
    """CPU seconds per run, the spare's start included: every reaped descendant's CPU, less that
    of a sandbox that warmed up and ran nothing. At isolation none, where every process is reaped
    by its parent (under bubblewrap, closing kills the tree before bwrap reaps it, and its CPU
    would go uncounted)."""
    from tutor.sandbox import Sandbox

    before = _children_cpu()
    with Sandbox(isolation="none", mode=mode) as sandbox:  # warm-up alone: the baseline
        sandbox.wait_ready(300)
    idle_cpu = _children_cpu() - before
    before = _children_cpu()
    with Sandbox(isolation="none", mode=mode) as sandbox:
        sandbox.wait_ready(300)
        for _ in range(runs):
            _settle(sandbox, 1)
            _timed(sandbox, SNIPPET)
        _settle(sandbox, 1)
    return (_children_cpu() - before - idle_cpu) / runs


def cpu_back_to_back(mode: str, runs: int) -> float:
    """CPU seconds per run when each run follows the last at once, one spare or worker (as a
    ``grade`` batch or a test suite takes them): a spawn-mode judge taken at once never loads
    what it defers (``startup.SPARE_DEFERS``). The difference between a sandbox that ran 2 runs and
    one that ran ``runs`` more, so what starting and closing a sandbox costs cancels out.
    Isolation none, as ``cpu_per_run``."""
    from tutor.sandbox import Sandbox

    def total(count: int) -> float:
        before = _children_cpu()
        with Sandbox(isolation="none", mode=mode, workers=1) as sandbox:
            sandbox.wait_ready(300)
            for _ in range(count):
                _timed(sandbox, "pass")
        return _children_cpu() - before

    return (total(2 + runs) - total(2)) / runs


def bench_mode(mode: str, isolation: str, runs: int) -> dict:
    from tutor.sandbox import Sandbox

    with Sandbox(isolation=isolation, mode=mode) as sandbox:
        sandbox.wait_ready(300)
        info = dict(sandbox.worker_info)
        warm, empty, second = [], [], []
        for _ in range(3):  # first runs fault in pages the worker never touched
            _settle(sandbox, 1)
            _timed(sandbox, SNIPPET)
        for _ in range(runs):
            _settle(sandbox, 1)
            warm.append(_timed(sandbox, SNIPPET))
        for _ in range(runs):
            _settle(sandbox, 1)
            empty.append(_timed(sandbox, "pass"))
        pairs = max(3, runs // 4)
        for _ in range(pairs):
            _settle(sandbox, 1)
            _timed(sandbox, SNIPPET)
            second.append(_timed(sandbox, SNIPPET))
        _settle(sandbox, 1)
        level = sandbox.isolation.level
        warmup_s = sandbox.warmup_s
    memory = info.get("rss_mb", 0.0) + (info.get("runner_rss_mb") or 0.0)
    return {"mode": mode, "isolation": level, "warm_ms": median_ms(warm), "empty_ms": median_ms(empty),
            "second_ms": median_ms(second), "pairs": pairs, "memory_mb": memory,
            "cpu_ms": cpu_per_run(mode, runs) * 1000,
            "cpu_b2b_ms": cpu_back_to_back(mode, max(3, runs // 2)) * 1000, "warmup_s": warmup_s or 0.0}


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
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--cold-runs", type=int, default=10)
    parser.add_argument("--isolation", default="auto", choices=("auto", "bwrap", "none"))
    parser.add_argument("--modes", default="fork,spawn", help="comma-separated: fork, spawn")
    args = parser.parse_args()

    rows = [bench_mode(mode, args.isolation, args.runs) for mode in args.modes.split(",")]
    cold = bench_cold(args.cold_runs)
    bare = bare_torch_rss()
    jupyter = bench_jupyter(args.runs)
    print(f"isolation: {rows[0]['isolation']}; medians of {args.runs} warm runs, {args.cold_runs} cold runs")
    print(f"{'':38}" + "".join(f"{row['mode']:>12}" for row in rows))
    table = [("warm-up (first worker/spare ready), s", "warmup_s", "{:.2f}"),
             ("warm run, Linear + profiler, ms", "warm_ms", "{:.1f}"),
             ("warm run, empty snippet, ms", "empty_ms", "{:.1f}"),
             ("2nd of two runs back to back, ms", "second_ms", "{:.0f}"),
             ("memory kept warm (RSS), MB", "memory_mb", "{:.0f}"),
             ("CPU per run, spare included, ms *", "cpu_ms", "{:.0f}"),
             ("CPU per run, runs back to back, ms *", "cpu_b2b_ms", "{:.0f}")]
    for label, key, fmt in table:
        print(f"{label:38}" + "".join(f"{fmt.format(row[key]):>12}" for row in rows))
    print("* measured at isolation none (see cpu_per_run)")
    print(f"cold python -c, same snippet:         {cold:.0f} ms")
    if jupyter is None:
        print("warm Jupyter kernel round trip:       not measured (jupyter_client/ipykernel not installed)")
    else:
        print(f"warm Jupyter kernel round trip:       {jupyter:.1f} ms")
    print(f"bare `import torch` RSS:              {bare:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
