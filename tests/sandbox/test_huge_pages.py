"""Issue 32: a fork-mode worker (and spawn mode's runner template) folds its preloaded memory
into transparent huge pages, so that the forks and exits of every run copy and free page tables
2 MiB at a time, not 4 KiB. Issue 55: a later fold leaves alone what a living child shares."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


def _collapse_possible() -> str | None:
    """Why this kernel cannot collapse memory into huge pages (MADV_COLLAPSE, Linux 6.1), or None."""
    enabled = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if not enabled.is_file() or "[never]" in enabled.read_text():
        return "transparent huge pages are off here"
    major, minor = (int(x) for x in os.uname().release.split(".")[:2])
    if (major, minor) < (6, 1):
        return "MADV_COLLAPSE needs Linux 6.1"
    return None


def test_a_worker_and_a_runner_template_hold_their_preloaded_memory_in_huge_pages(sandbox):
    """Fork mode's worker forks three processes per run; spawn mode's runner template forks each
    runner, whose exit is on the run's path (empty runs 7-8 ms folded, 11-13 ms not, quiet)."""
    why = _collapse_possible()
    if why:
        pytest.skip(why)
    # torch, numpy and torch._dynamo leave ~190 MB of private anonymous memory here.
    assert sandbox.worker_info["huge_pages_mb"] >= 64, sandbox.worker_info
    result = sandbox.run("import torch\nprint(torch.ones(3).sum().item())")
    assert (result.status, result.stdout) == ("ok", "3.0\n")


#: A parent folds after forking a child: region A is shared with the child, B is the parent's alone.
_FOLD_AFTER_FORK = textwrap.dedent("""
    import ctypes, mmap, os, sys
    from tutor.child.worker import linux

    SIZE = 16 * 2**20
    def region():
        m = mmap.mmap(-1, SIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        m.write(b"x" * SIZE)
        return m, ctypes.addressof(ctypes.c_char.from_buffer(m))

    def vma(pid, address):  # the smaps fields of the region holding address, in kB
        fields, inside = {}, False
        for line in open(f"/proc/{pid}/smaps"):
            head = line.split()[0]
            if "-" in head and ":" not in head:
                low, high = (int(x, 16) for x in head.split("-"))
                inside = low <= address < high
            elif inside and line.split()[-1] == "kB":
                fields[head.rstrip(":")] = int(line.split()[1])
        return fields

    a, a_at = region()
    shared = linux.anonymous_ranges()
    go_r, go_w = os.pipe()
    child = os.fork()
    if child == 0:
        os.read(go_r, 1)
        os._exit(0)
    b, b_at = region()
    folded = linux.collapse_huge_pages(shared if sys.argv[1] == "shared" else ())
    child_a, parent_b = vma(child, a_at), vma(os.getpid(), b_at)
    os.write(go_w, b"x")
    os.waitpid(child, 0)
    print(folded, child_a["Shared_Dirty"], child_a["Private_Dirty"], parent_b["AnonHugePages"])
""")


def test_a_fold_after_a_fork_leaves_what_the_child_shares_shared():
    """Spawn mode's runner template folds what it loads for the profiler after it forked its
    judge. A fold copies what it folds into new pages; over pages the judge shared, the judge was
    left holding the old ones as its own (~70 MB more, 1.42x fork mode's memory kept warm)."""
    why = _collapse_possible()
    if why:
        pytest.skip(why)

    def fold(how: str) -> tuple[int, int, int, int]:
        done = subprocess.run([sys.executable, "-c", _FOLD_AFTER_FORK, how], capture_output=True, text=True,
                              timeout=60, cwd=Path(__file__).resolve().parents[2])
        assert done.returncode == 0, done.stderr
        folded, shared_kb, private_kb, huge_kb = (int(x) for x in done.stdout.split())
        return folded, shared_kb, private_kb, huge_kb

    # Folding everything: the child's copy of A became its own.
    folded, shared_kb, private_kb, huge_kb = fold("all")
    assert private_kb >= 8 * 1024 and huge_kb >= 8 * 1024, (folded, shared_kb, private_kb, huge_kb)
    # Told what the child shares: A stays shared, B is folded.
    folded, shared_kb, private_kb, huge_kb = fold("shared")
    assert shared_kb >= 15 * 1024 and private_kb < 1024, (folded, shared_kb, private_kb)
    assert huge_kb >= 8 * 1024 and 8 * 2**20 <= folded, (folded, huge_kb)


def test_a_sandbox_told_it_serves_one_run_does_not_fold_its_memory():
    """The fold costs 0.3-0.5 s of CPU and of the wait for the worker, before it says ready, and
    pays back ~20 ms a run: `check`, `run` and `doctor` (one run each) were half a second slower
    for it. Their worker skips it; one told nothing (the app, `grade`) still folds."""
    why = _collapse_possible()
    if why:
        pytest.skip(why)
    from tutor.sandbox import Limits, Sandbox, pool

    with Sandbox(Limits(), mode="fork", runs=1) as one:
        assert one.wait_ready(300)
        assert one.worker_info["huge_pages_mb"] is None, one.worker_info
        result = one.run("import torch\nprint(torch.ones(3).sum().item())")
        assert (result.status, result.stdout) == ("ok", "3.0\n")
    with Sandbox(Limits(), mode="fork", runs=pool.HUGE_PAGES_MIN_RUNS) as many:
        assert many.wait_ready(300)
        assert many.worker_info["huge_pages_mb"] >= 64, many.worker_info
