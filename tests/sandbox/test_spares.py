"""How a fork-mode worker keeps its spares (issue 32).

A spare is a keeper forked ahead of the request (its relay, init and runner below it). An
interactive worker replaces the spare a run took only once no request came for a moment
(``serve.REFILL_S``), so that a Run right after a Run takes the other spare without three forks
beside it on the cores; a run sent within that time starts a stream, whose spares are replaced
at once, as a batch worker's always are. Either
way every run gets a spare of its own, and however the runs come the worker ends with exactly
``serve.SPARES`` spares, never a growing number of them.
"""

from __future__ import annotations

import time

import pytest

from tutor.sandbox import Limits, Sandbox
from tutor.child.worker import linux, loop as serve

pytestmark = pytest.mark.skipif(not linux.AVAILABLE, reason="a fork-mode worker's children are read from /proc")


def _children(pid: int) -> set[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as handle:
        return {int(p) for p in handle.read().split()}


def _spares_once_idle(pid: int, settle: float = 0.5) -> set[int]:
    """The worker's children once it has had time to refill and reap (none of them a run's)."""
    deadline = time.monotonic() + 10
    while True:
        time.sleep(settle)
        children = _children(pid)
        if len(children) == serve.SPARES or time.monotonic() > deadline:
            return children


@pytest.mark.parametrize("purpose", ["interactive", "batch"])
def test_spaced_back_to_back_and_streamed_runs_each_take_a_spare_and_leave_two(purpose):
    # Isolation none: the worker is the process the sandbox started (under bubblewrap it would
    # be bubblewrap's child). The refill is the same at every isolation level.
    with Sandbox(Limits(wall_time=20.0), isolation="none", mode="fork", purpose=purpose) as box:
        assert box.wait_ready(300)
        box.expect(False)
        worker = box._spares.all[0]._proc.pid
        first = _spares_once_idle(worker)
        assert len(first) == serve.SPARES, first

        outputs: list[str] = []

        def run() -> None:
            result = box.run(f"print({len(outputs)} * 2)")
            assert result.status == "ok", result.message
            outputs.append(result.stdout)

        run()  # spaced: one spare taken
        time.sleep(0.5)
        run()
        run()  # back to back: takes the spare left, or the replacement
        for _ in range(6):  # a stream: the spares run out and are forked again
            run()
        assert outputs == [f"{i * 2}\n" for i in range(9)]
        after = _spares_once_idle(worker)
        assert len(after) == serve.SPARES, (first, after)
        assert not after & first, "a spare served a run and was kept as a spare"


def _zombie_children(pid: int) -> list[int]:
    found = []
    for child in _children(pid):
        try:
            with open(f"/proc/{child}/stat") as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] == "Z":
                    found.append(child)
        except OSError:
            pass
    return found


def test_a_stream_of_runs_leaves_no_finished_keeper_unreaped():
    """A batch worker's requests come back to back, so one is nearly always waiting when the
    worker looks: a worker that reaped finished keepers only when none was (an intermediate
    version of 74d1bd2) left them as zombies, up to 50 after 400 runs, each counted by the
    worker's pids cgroup, until a run's own processes ran out. Each is reaped as it ends."""
    with Sandbox(Limits(wall_time=20.0), isolation="none", mode="fork", purpose="batch") as box:
        assert box.wait_ready(300)
        worker = box._spares.all[0]._proc.pid
        most = 0
        for i in range(150):
            assert box.run("pass").status == "ok"
            if i % 5 == 0:
                most = max(most, len(_zombie_children(worker)))
    assert most <= 3, f"{most} finished keepers waited to be reaped at once"
