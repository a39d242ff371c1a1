"""One warm Sandbox per isolation level for the whole session: warming up costs seconds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tutor.sandbox import Limits, Sandbox
from tutor.sandbox.isolation import IsolationError, choose

#: Small enough that limit tests finish quickly, large enough for torch.
TEST_LIMITS = Limits(wall_time=4.0, cpu_time=8.0, memory_mb=768, output_kb=256, processes=64,
                     file_size_mb=16, open_files=128)


def _bwrap_reason() -> str | None:
    try:
        choose("bwrap", os.environ.get("TORCH_TUTOR_TEST_PYTHON") or __import__("sys").executable)
    except IsolationError as exc:
        return str(exc)
    return None


@pytest.fixture(scope="session", params=["bwrap", "none"])
def sandbox(request):
    if request.param == "bwrap":
        why = _bwrap_reason()
        if why:
            pytest.skip(f"bubblewrap does not work here: {why}")
    box = Sandbox(TEST_LIMITS, isolation=request.param, preload=["tutor.sandbox.echo_probe"])
    box.start()
    box.wait_ready(timeout=300)
    yield box
    box.close()


def leftover_processes(*names: str) -> list[str]:
    """Processes on the host whose name shows they came from a run (the runner sets 'tutor-run')."""
    names = names or ("tutor-run",)
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                comm = (entry / "comm").read_text().strip()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if comm in names and state != "Z":
                found.append(f"{entry.name}:{comm}")
    return found


def assert_recovered(box: Sandbox) -> None:
    """After anything hostile: the next ordinary run works, and no run left a process or a file."""
    result = box.run("print('still fine')")
    assert result.status == "ok", (result.status, result.message, result.error)
    assert result.stdout == "still fine\n"
    assert leftover_processes() == []
    root = Path(box._scratch_root)
    assert [p.name for p in root.iterdir() if not p.name.endswith(".log") and p.name != ".owner.lock"] == []


@pytest.fixture
def recovered():
    return assert_recovered


@pytest.fixture
def leftovers():
    return leftover_processes
