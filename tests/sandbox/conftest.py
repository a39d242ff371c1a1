"""One warm Sandbox per isolation level for the whole session: warming up costs seconds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tutor.sandbox import Limits, Sandbox
from tutor.sandbox.backends import choose
from tutor.sandbox.isolation import IsolationError

#: Small enough that limit tests finish quickly, large enough for torch.
TEST_LIMITS = Limits(wall_time=4.0, cpu_time=8.0, memory_mb=768, output_kb=256, processes=64,
                     file_size_mb=16, open_files=128)


def _bwrap_reason() -> str | None:
    try:
        choose("bwrap", os.environ.get("TORCH_TUTOR_TEST_PYTHON") or __import__("sys").executable)
    except IsolationError as exc:
        return str(exc)
    return None


#: (isolation, mode): both modes under bubblewrap, and the limits-only fallback in the mode Linux
#: uses by default (spawn mode at isolation none, the macOS path, has its own tests in
#: test_portable.py). Every test that takes ``sandbox`` runs in each (issue 13).
#: ``TORCH_TUTOR_TEST_MODES=fork`` or ``=spawn`` narrows the matrix (``all`` is every setup, as by default).
SETUPS = [("bwrap", "fork"), ("bwrap", "spawn"), ("none", "fork")]


def setups() -> list:
    wanted = os.environ.get("TORCH_TUTOR_TEST_MODES", "").replace("all", "") or "fork,spawn"
    return [pytest.param(s, id=f"{s[0]}-{s[1]}") for s in SETUPS if s[1] in wanted.split(",")]


def warm_sandbox(isolation: str, mode: str) -> Sandbox:
    if isolation == "bwrap":
        why = _bwrap_reason()
        if why:
            pytest.skip(f"bubblewrap does not work here: {why}")
    # Spawn mode keeps two spares: a test's runs come back to back, and each takes one.
    box = Sandbox(TEST_LIMITS, isolation=isolation, mode=mode, workers=2 if mode == "spawn" else 1,
                  preload=["tutor.sandbox.echo_probe"])
    try:
        box.start()
        assert box.wait_ready(timeout=300), f"the {isolation}/{mode} sandbox did not warm up in 300 s"
    except BaseException:
        box.close()  # nothing of a failed warm-up outlives it
        raise
    return box


@pytest.fixture(scope="session")
def warm_sandboxes():
    """Each setup's warm sandbox, started when a test first asks for it and kept for the session.
    A session fixture with the setups as its parameters was torn down and started again each
    time a worker's tests switched setups (a spawn-mode sandbox is a judge and two spares, each
    importing torch): 8 switches on one worker of a run of tests/sandbox."""
    boxes: dict[tuple[str, str], Sandbox | BaseException] = {}
    yield boxes
    for box in boxes.values():
        if isinstance(box, Sandbox):
            box.close()


@pytest.fixture(params=setups())
def sandbox(request, warm_sandboxes):
    if request.param not in warm_sandboxes:
        try:
            warm_sandboxes[request.param] = warm_sandbox(*request.param)
        except pytest.skip.Exception:
            raise  # bubblewrap missing: asked again (cheaply) by the next test, which skips too
        except Exception as exc:  # a setup that cannot warm up fails each of its tests, once started
            warm_sandboxes[request.param] = exc
    found = warm_sandboxes[request.param]
    if isinstance(found, BaseException):
        raise found
    return found


def leftover_processes(*names: str, root: int | None = None) -> list[str]:
    """Processes whose name shows they came from a run (the runner sets 'tutor-run') and that
    are this test process's (``root``'s): its descendants, or orphans adopted by PID 1 (what a
    run that got out of its worker's reach would become) but those another pytest-xdist worker
    of this run started. Runs of other test processes (the other workers, anyone else's suite
    on the machine) are theirs to check. An
    orphan adopted by a subreaper above this process (systemd --user on a desktop) is not seen;
    in CI's containers PID 1 adopts orphans (tests/sandbox/test_leftovers.py)."""
    names = names or ("tutor-run",)
    parents: dict[int, int] = {}
    candidates = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                comm = (entry / "comm").read_text().strip()
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
            if comm in names and fields[0] != "Z":
                candidates.append((int(entry.name), comm))
    me = os.getpid() if root is None else root
    found = []
    for pid, comm in candidates:
        ancestor, seen = parents.get(pid, 0), 0
        while ancestor not in (0, 1, me) and seen < 4096:
            ancestor, seen = parents.get(ancestor, 0), seen + 1
        if ancestor == me or (parents.get(pid) == 1 and not _another_workers(pid)):
            found.append(f"{pid}:{comm}")
    return found


def _another_workers(pid: int) -> bool:
    """Whether the process was started by another pytest-xdist worker of this run (the sandbox
    passes ``PYTEST_XDIST_WORKER`` on: ``tutor.sandbox.process.PASSED_ON``): an orphan of
    theirs is theirs to find. Unreadable, or no worker's: it counts."""
    mine = os.environ.get("PYTEST_XDIST_WORKER")
    if mine is None:
        return False
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False
    theirs = [e.split(b"=", 1)[1] for e in environ if e.startswith(b"PYTEST_XDIST_WORKER=")]
    return bool(theirs) and theirs[0] != mine.encode()


def assert_recovered(box: Sandbox) -> None:
    """After anything hostile: the next ordinary run works, and no run left a process or a file."""
    result = box.run("print('still fine')")
    assert result.status == "ok", (result.status, result.message, result.error)
    assert result.stdout == "still fine\n"
    assert leftover_processes() == []
    from tutor.sandbox.process import scratch_removed

    assert scratch_removed(30.0), "a finished run's scratch folder is removed (off the request path)"
    root = Path(box._scratch_root)
    assert [p.name for p in root.iterdir() if not p.name.endswith(".log") and p.name != ".owner.lock"] == []


@pytest.fixture
def recovered():
    return assert_recovered


@pytest.fixture
def leftovers():
    return leftover_processes


def wait_for_idle(box: Sandbox, timeout: float = 120.0) -> None:
    """Until a worker (or, in spawn mode, a spare) is warm and waiting: a test that times a run
    or cancels it mid-run must not count a spare's warm-up."""
    import time

    deadline = time.monotonic() + timeout
    while box.idle_count() < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
