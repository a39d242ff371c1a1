"""Issue 32: a fork-mode worker folds its preloaded memory into transparent huge pages, so that
the three forks and exits of every run copy and free page tables 2 MiB at a time, not 4 KiB."""

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


def test_a_fork_worker_holds_its_preloaded_memory_in_huge_pages(sandbox):
    if sandbox.mode != "fork":
        pytest.skip("spawn mode forks no warm worker per run")
    why = _collapse_possible()
    if why:
        pytest.skip(why)
    # torch, numpy and torch._dynamo leave ~190 MB of private anonymous memory here.
    assert sandbox.worker_info["huge_pages_mb"] >= 64, sandbox.worker_info
    result = sandbox.run("import torch\nprint(torch.ones(3).sum().item())")
    assert (result.status, result.stdout) == ("ok", "3.0\n")
