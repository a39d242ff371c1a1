"""Sandbox speed, fork mode beside spawn mode and a warm Jupyter kernel, in one run.

    python bench/sandbox.py [--runs 20] [--cold-runs 10] [--isolation auto] [--modes fork,spawn,spawn-fresh]
                            [--busy] [--no-cpu]

Each interactive number is a median of request-to-result times, for two snippets (an empty one,
and a Linear forward under ``torch.profiler.profile``), taken two ways:

- *spaced*: each run ``SPACING_S`` after the last one's result, with every worker or spare warm
  and waiting (a learner pressing Run, reading, pressing it again);
- *back to back*: the second of two runs, sent the moment the first one's result came (a learner
  pressing Run twice, or Run then Check), each pair ``SPACING_S`` after the last: whatever the
  sandbox still does after a result (reaping, forking or starting the next spare) is waited for
  here;
- *a stream*: runs sent one after another, each the moment the last one's result came (a
  ``grade`` batch, a learner holding the key down), after one spaced run.

The same four numbers come from a warm Jupyter kernel (``execute_interactive``) when
jupyter_client and ipykernel are installed (the ``bench`` extra). With ``--busy`` every number is
taken twice, the second time with one core kept busy by a spinning process (a build, a browser
tab). Then: the memory kept warm (fork: the worker's RSS; spawn: a spare's judge and the
interpreter its runners come from, the runner template or a runner started with exec; and the
proportional set size of every process the sandbox keeps, spares and runners forked ahead
included, which counts a page shared by several processes once), the CPU time the sandbox spends per run, the spare's start included (from the CPU of
every reaped descendant, less that of a sandbox that warmed up and ran nothing), spaced and back to
back, and for an empty snippet run at a learner's pace (``READING_S`` between runs) with and
without the sandbox told that no run will profile (``Sandbox.expect``, as the app says it per
step), a cold ``python -c`` of the snippet, and a bare ``python -c "import torch"``'s RSS.
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


def _box(mode: str, **options):
    """A Sandbox in ``mode``: "fork", "spawn" (runners forked from the runner template, the
    default), or "spawn-fresh" (spawn mode with ``spawn_runners="fresh"``: each runner started
    with exec, as where the template must not fork, and always over Windows's pipes)."""
    from tutor.sandbox import Sandbox

    if mode == "spawn-fresh":
        return Sandbox(mode="spawn", spawn_runners="fresh", **options)
    return Sandbox(mode=mode, **options)


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def per_run(spent: float, baseline: float, runs: int) -> float | None:
    """CPU seconds per run: what ``runs`` more runs added to a baseline, each a difference of two
    measurements. None where the difference is not above zero: the baseline's own CPU (a sandbox's
    start and close, a spare's warm-up) varied by more than the runs cost, as on a busy machine.
    Such a figure cannot be measured this pass; it is never a negative cost."""
    added = spent - baseline
    return added / runs if added > 0 else None


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


def cpu_per_run(mode: str, runs: int) -> float | None:
    """CPU seconds per run, the spare's start included: every reaped descendant's CPU, less that
    of a sandbox that warmed up and ran nothing. At isolation none, where every process is reaped
    by its parent (under bubblewrap, closing kills the tree before bwrap reaps it, and its CPU
    would go uncounted)."""
    before = _children_cpu()
    with _box(mode, isolation="none") as sandbox:  # warm-up alone: the baseline
        sandbox.wait_ready(300)
    idle_cpu = _children_cpu() - before
    before = _children_cpu()
    with _box(mode, isolation="none") as sandbox:
        sandbox.wait_ready(300)
        for _ in range(runs):
            _settle(sandbox, 1)
            _timed(sandbox, SNIPPET)
        _settle(sandbox, 1)
    return per_run(_children_cpu() - before, idle_cpu, runs)


def cpu_back_to_back(mode: str, runs: int) -> float | None:
    """CPU seconds per run when each run follows the last at once, one spare or worker (as a
    ``grade`` batch or a test suite takes them): a spawn-mode judge taken at once never loads
    what it defers (``startup.SPARE_DEFERS``). The difference between a sandbox that ran 2 runs and
    one that ran ``runs`` more, so what starting and closing a sandbox costs cancels out.
    Isolation none, as ``cpu_per_run``."""
    def total(count: int) -> float:
        before = _children_cpu()
        with _box(mode, isolation="none", workers=1) as sandbox:
            sandbox.wait_ready(300)
            for _ in range(count):
                _timed(sandbox, "pass")
        return _children_cpu() - before

    return per_run(total(2 + runs), total(2), runs)


#: A learner reading between Runs: longer than a worker's or spare's ``IDLE_WARM_S``.
READING_S = 2.0


def cpu_at_a_learners_pace(mode: str, runs: int, profiler: bool | None) -> float | None:
    """CPU seconds per run of an empty snippet, each ``READING_S`` after the last one's result,
    with the sandbox told ``Sandbox.expect(profiler)`` (the app says it per step): an idle worker
    or spare loads the profiler's machinery unless told runs will not need it, and a spawn-mode
    spare pays that in every run. The difference between ``2 + runs`` runs and 2, isolation none,
    as ``cpu_back_to_back``."""
    def total(count: int) -> float:
        before = _children_cpu()
        sandbox = _box(mode, isolation="none", workers=1)
        sandbox.expect(profiler)
        with sandbox:
            sandbox.wait_ready(300)
            for _ in range(count):
                _settle(sandbox, 1)
                time.sleep(READING_S)
                _timed(sandbox, "pass")
            _settle(sandbox, 1)
            time.sleep(READING_S)  # the next spare, read beside as the others were
        return _children_cpu() - before

    return per_run(total(2 + runs), total(2), runs)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000


SPACING_S = 0.5
SNIPPETS = {"empty": "pass", "linear": SNIPPET}


def _series(run_once, settle, runs: int) -> dict:
    """Medians (ms) of ``run_once(code)``, spaced and back to back, for each snippet."""
    found = {}
    for name, code in SNIPPETS.items():
        for _ in range(3):  # first runs fault in pages the worker never touched
            settle()
            run_once(code)
        spaced = []
        for _ in range(runs):
            settle()
            time.sleep(SPACING_S)
            spaced.append(run_once(code))
        back = []
        for _ in range(runs):
            settle()
            time.sleep(SPACING_S)
            run_once(code)
            back.append(run_once(code))
        settle()
        time.sleep(SPACING_S)
        run_once(code)
        stream = [run_once(code) for _ in range(runs)]
        found[f"{name}_spaced_ms"] = median_ms(spaced)
        found[f"{name}_b2b_ms"] = median_ms(back)
        found[f"{name}_stream_ms"] = median_ms(stream)
    return found


def bench_mode(mode: str, isolation: str, runs: int, cpu: bool = True, idle_s: float = 2 * SPACING_S) -> dict:
    with _box(mode, isolation=isolation) as sandbox:
        sandbox.wait_ready(300)
        info = dict(sandbox.worker_info)
        row = _series(lambda code: _timed(sandbox, code), lambda: _settle(sandbox, 1), runs)
        _settle(sandbox, 1)
        time.sleep(idle_s)  # long enough (--idle 8), the spares' warm-up while idle is in the reading
        pss = _tree_pss_mb([worker._proc.pid for worker in list(sandbox._spares.all) if worker._proc is not None])
        level = sandbox.isolation.level
        warmup_s = sandbox.warmup_s
    # Spawn mode: the judge and the interpreter its runners come from (the runner template, or
    # the one runner started with exec); a forked runner shares the template's pages.
    memory = info.get("rss_mb", 0.0) + (info.get("template_rss_mb") or info.get("runner_rss_mb") or 0.0)
    row.update(mode=mode, isolation=level, memory_mb=memory, pss_mb=pss, warmup_s=warmup_s or 0.0,
               huge_mb=info.get("huge_pages_mb"))
    if cpu:
        row.update(cpu_ms=_ms(cpu_per_run(mode, runs)),
                   cpu_b2b_ms=_ms(cpu_back_to_back(mode, max(3, runs // 2))),
                   cpu_read_ms=_ms(cpu_at_a_learners_pace(mode, max(3, runs // 2), None)),
                   cpu_read_said_ms=_ms(cpu_at_a_learners_pace(mode, max(3, runs // 2), False)))
    return row


def _tree_pss_mb(roots: list[int]) -> float | None:
    """The proportional set size (shared pages split among their sharers) of every process of
    the sandbox, the workers and all they keep started (fork mode's spares, a spawn-mode spare's
    judge, runner template and runners forked ahead), from /proc; None off Linux."""
    def children(pid: int) -> list[int]:
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as handle:
                return [int(x) for x in handle.read().split()]
        except OSError:
            return []

    total, seen, todo = 0, set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        todo.extend(children(pid))
        try:
            with open(f"/proc/{pid}/smaps_rollup") as handle:
                total += next(int(line.split()[1]) for line in handle if line.startswith("Pss:"))
        except (OSError, StopIteration):
            continue
    return total / 1024 if seen else None


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


def bench_jupyter(runs: int) -> dict | None:
    try:
        from jupyter_client.kernelspec import NoSuchKernel
        from jupyter_client.manager import start_new_kernel
    except ImportError:
        return None
    try:  # jupyter_client comes with the browser tests' Jupyter; the kernel needs ipykernel (bench extra)
        manager, client = start_new_kernel(kernel_name="python3", stderr=subprocess.DEVNULL)
    except NoSuchKernel:
        print("no Jupyter kernel here (pip install -e '.[bench]' brings ipykernel): its column is left out")
        return None

    def once(code: str) -> float:
        started = time.perf_counter()
        reply = client.execute_interactive(code, timeout=120, output_hook=lambda msg: None)
        elapsed = time.perf_counter() - started
        assert reply["content"]["status"] == "ok", reply["content"]
        return elapsed

    try:
        client.execute_interactive("import torch", timeout=120)
        return dict(_series(once, lambda: None, runs), mode="jupyter")
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


class BusyCore:
    """One process spinning at normal priority for as long as the block lasts."""

    def __enter__(self):
        self.proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        time.sleep(0.2)
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


def _load() -> str:
    try:
        with open("/proc/loadavg") as handle:
            return " ".join(handle.read().split()[:3])
    except OSError:
        return "?"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--cold-runs", type=int, default=10)
    parser.add_argument("--isolation", default="auto", choices=("auto", "bwrap", "none"))
    parser.add_argument("--modes", default="fork,spawn", help="comma-separated: fork, spawn, spawn-fresh (runners started with exec)")
    parser.add_argument("--busy", action="store_true", help="also measure with one core kept busy")
    parser.add_argument("--no-cpu", action="store_true", help="skip the CPU-per-run measurements")
    parser.add_argument("--idle", type=float, default=2 * SPACING_S,
                        help="seconds a sandbox waits, warm, before its memory is read (8: kept warm)")
    args = parser.parse_args()

    load_before = _load()
    columns = []
    for mode in args.modes.split(","):
        columns.append((mode, bench_mode(mode, args.isolation, args.runs, cpu=not args.no_cpu, idle_s=args.idle)))
        if args.busy:
            with BusyCore():
                columns.append((f"{mode} busy", bench_mode(mode, args.isolation, args.runs, cpu=False)))
    jupyter = bench_jupyter(args.runs)
    if jupyter is not None:
        columns.append(("jupyter", jupyter))
        if args.busy:
            with BusyCore():
                columns.append(("jup. busy", bench_jupyter(args.runs) or {}))
    cold = bench_cold(args.cold_runs) if args.cold_runs > 0 else None
    bare = bare_torch_rss(min(5, max(1, args.cold_runs)))  # 5 cold interpreters, or as many as --cold-runs
    first = columns[0][1]
    print(f"isolation: {first['isolation']}; medians of {args.runs} runs each; load average "
          f"{load_before} before, {_load()} after; huge pages in the fork worker: {first.get('huge_mb')} MB")
    print(f"{'':40}" + "".join(f"{name:>11}" for name, _ in columns))
    table = [("warm-up (first worker/spare ready), s", "warmup_s", "{:.2f}"),
             ("empty snippet, spaced, ms", "empty_spaced_ms", "{:.1f}"),
             ("empty snippet, back to back, ms", "empty_b2b_ms", "{:.1f}"),
             ("empty snippet, a stream, ms", "empty_stream_ms", "{:.1f}"),
             ("Linear + profiler, spaced, ms", "linear_spaced_ms", "{:.1f}"),
             ("Linear + profiler, back to back, ms", "linear_b2b_ms", "{:.1f}"),
             ("Linear + profiler, a stream, ms", "linear_stream_ms", "{:.1f}"),
             ("memory kept warm (RSS), MB", "memory_mb", "{:.0f}"),
             ("  every process kept (PSS), MB", "pss_mb", "{:.0f}"),
             ("CPU per run, spaced, spare incl., ms *", "cpu_ms", "{:.0f}"),
             ("CPU per run, back to back, ms *", "cpu_b2b_ms", "{:.0f}"),
             ("CPU per empty run read 2 s, ms *", "cpu_read_ms", "{:.0f}"),
             ("  the same, told no run profiles, ms *", "cpu_read_said_ms", "{:.0f}")]
    unmeasured = False
    for label, key, fmt in table:
        cells = []
        for _, row in columns:
            if key not in row:
                cells.append("")
            elif row[key] is None and key.startswith("cpu"):
                cells.append("n/m")
                unmeasured = True
            elif row[key] is None:  # the PSS, off Linux (no /proc)
                cells.append("n/a")
            else:
                cells.append(fmt.format(row[key]))
        print(f"{label:40}" + "".join(f"{cell:>11}" for cell in cells))
    print("* measured at isolation none (see cpu_per_run)")
    if unmeasured:
        print("n/m: not measured this pass: the CPU of the sandbox's own start and close varied by more "
              "than the runs cost (a busy machine); run it again on a quieter one, or with more --runs")
    if cold is not None:
        print(f"cold python -c, Linear snippet:   {cold:.0f} ms")
    if jupyter is None:
        print("warm Jupyter kernel:              not measured (pip install -e '.[bench]')")
    print(f"bare `import torch` RSS:          {bare:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
