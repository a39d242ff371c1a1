"""Issue 32: a fork-mode worker folds its preloaded memory into
transparent huge pages, so that the forks and exits of every run copy and free page tables 2 MiB
at a time, not 4 KiB."""

from __future__ import annotations

import os
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


def test_a_fork_worker_holds_its_preloaded_memory_in_huge_pages_and_a_runner_template_does_not(sandbox):
    """Fork mode's worker forks three processes per run. Spawn mode's runner template forks its
    judge after the fold, which then kept ~70 MB more of its own (docs/performance.md), so it
    does not fold."""
    why = _collapse_possible()
    if why:
        pytest.skip(why)
    if sandbox.mode == "spawn":
        assert sandbox.worker_info["huge_pages_mb"] is None, sandbox.worker_info
    else:  # torch, numpy and torch._dynamo leave ~190 MB of private anonymous memory here.
        assert sandbox.worker_info["huge_pages_mb"] >= 64, sandbox.worker_info
    result = sandbox.run("import torch\nprint(torch.ones(3).sum().item())")
    assert (result.status, result.stdout) == ("ok", "3.0\n")


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
