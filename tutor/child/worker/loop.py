"""The worker's own loop: import torch once, keep a keeper/runner pair forked ahead, serve runs.

What only the profiler needs (``startup.SPARE_DEFERS``: ``torch._dynamo``, 1.2-1.8 s of CPU) is
not loaded before the worker says ready. It is loaded here, in the worker, before any run forked
from it could need it: when the worker has waited ``IDLE_WARM_S`` for a request (a learner reading
the exercise; an interactive sandbox only, unless the tutor said the runs to come need none of it:
an ``idle`` message, ``Sandbox.expect``) or when a request that needs it arrives
(``judging.needs_dynamo``). Then the spares forked before it are discarded and forked again, so a
run never pays for the import. A `check` or a `grade` batch whose runs never profile never loads it.
"""

from __future__ import annotations

import gc
import json
import os
import select
import socket
import sys
import time
from typing import TYPE_CHECKING, Callable

from tutor.sandbox import wire
from tutor.child.worker import linux
from tutor.child.worker.judging import needs_dynamo
from tutor.child.worker.keeper import Spare, sweep
from tutor.child.worker.startup import IDLE_WARM_S, RUNNER_START_S, SPARE_DEFERS, load_deferred, preload, ready_message

if TYPE_CHECKING:
    from typing import Any

#: Keeper/runner pairs kept forked ahead. Two: a Run right after a Run takes the second, whose
#: forks are done (a keeper forks its relay, the relay its init, the init the runner: three forks
#: before a spare can take a request), while the first is replaced (``serve``, after a verdict).
SPARES = 2

#: An interactive worker with a spare left waits this long (seconds) for a request before it forks
#: the spare a run took (``serve``'s ``refill_when_idle``; a run sent sooner starts a stream).
REFILL_S = 0.05


def serve(channel: socket.socket, containment: dict[str, Any], warm_when_idle: bool = True, huge_pages: bool = True,
          refill_when_idle: bool = False) -> None:
    deferred = not all(name in sys.modules for name in SPARE_DEFERS)

    def make(stream: bool = False) -> Spare:
        return _spare(containment, channel.fileno(), warm_when_idle and not deferred and not stream)

    spares = [make() for _ in range(SPARES)]

    def load_deferred_and_fork_again() -> None:
        nonlocal deferred
        deferred = False
        _load_deferred_and_fork_again(spares, make, huge_pages)

    # Keepers whose verdict is out, still exiting (their relay's teardown, their sweep, their own
    # exit: ~10 ms of a process that ran torch), by pidfd: reaped when they end, not before the
    # next request is read, so a Run right after a Run does not wait for them (``_finish``).
    finishing: dict[int, Spare] = {}

    def fill(stream: bool = False) -> None:
        spares.extend(make(stream) for _ in range(SPARES - len(spares)))

    # After a verdict, the spare its run took is replaced at once when the runs come in a stream
    # (a batch's; an interactive worker's run sent within REFILL_S of the last verdict), so that
    # in steady state the next run finds a spare whose forks are done, or when none is left. A
    # learner's runs come one or two at a time (Run, then Check): with a spare left, an
    # interactive worker first waits REFILL_S for a request, so that a Run right after a Run takes
    # that spare without the replacement's three forks and set-up beside it on the cores (20-25
    # -> 11-15 ms on two cores; docs/performance.md).
    last_verdict = -1e9

    while True:
        idle = IDLE_WARM_S if deferred and warm_when_idle else None
        short = len(spares) < SPARES
        ready, _, _ = select.select([channel.fileno(), *finishing], [], [], REFILL_S if short else idle)
        if not ready and short:  # no run came at once: fork the spare the last run took
            fill()
            continue
        if not ready:  # a learner is reading: load what a profile needs, ahead of their run
            load_deferred_and_fork_again()
            continue
        for fd in ready:
            if fd in finishing:
                _finish(fd, finishing, spares)
        if channel.fileno() not in ready:
            continue
        try:
            message, fds = wire.recv_frame(channel)
        except wire.WireError:
            for spare in spares:
                spare.discard()
            return
        op = message.get("op")
        if op == "exit":
            for spare in spares:
                spare.discard()
            return
        if op == "idle":  # the tutor says whether the next runs may need the deferred modules
            warm_when_idle = message.get("warm") is True
        if op != "run":
            for fd in fds:
                os.close(fd)
            continue
        if deferred and needs_dynamo(message):  # before the run starts: its time is its own
            load_deferred_and_fork_again()
            # The tutor's wait for the verdict starts now (the ready message bounds the load
            # above). Said only then: it wakes the tutor beside the run, on the run's path.
            wire.send_frame(channel, {"op": "started", "id": message["id"]})
        at_once = not refill_when_idle or time.monotonic() - last_verdict < REFILL_S
        current = spares.pop(0)
        current.start(message, fds)
        for fd in fds:
            os.close(fd)
        left, warm = _watch_run(channel, current, message["id"])
        if warm is not None:
            warm_when_idle = warm
        if left:
            for spare in spares:
                spare.discard()
            return
        verdict = current.verdict()
        verdict.update(op="done", id=message["id"])
        others = frozenset(k.pid for k in finishing.values())
        # Swept: nothing of the run is left (the keeper swept, or the run's PID namespace is gone),
        # so the tutor has the result, and the next spare is forked, while the keeper exits.
        swept = verdict.get("swept") is True
        if not swept:
            current.reap()
            sweep(time.monotonic() + 1.0, keep=others | {s.pid for s in spares})
        wire.send_frame(channel, verdict)
        last_verdict = time.monotonic()
        linux.let_the_woken_run()  # the tutor, before the fork below
        if at_once or not spares:
            fill(stream=at_once)
        if swept:
            try:
                finishing[os.pidfd_open(current.pid)] = current
            except (AttributeError, OSError):
                current.reap()
                sweep(time.monotonic() + 1.0, keep=others | {s.pid for s in spares})


def _spare(containment: dict[str, Any], channel: int, profile_ahead: bool) -> Spare:
    """A spare whose runner, with ``profile_ahead`` (a learner reading, the profiler's machinery
    loaded, not made for a stream, where it would take a core from the run beside it), takes the
    profiler's first session ahead of its request (``startup.warm_profiler``)."""
    return Spare(dict(containment, warm_profiler=True) if profile_ahead else containment, {channel})


def _load_deferred_and_fork_again(spares: list[Spare], make: Callable[[], Spare], huge_pages: bool) -> None:
    """Load what the profiler needs (``SPARE_DEFERS``) here, and fork ``spares`` again after it:
    no op has run in this process, so forking after the import is as safe as before it."""
    for spare in spares:
        spare.discard()
    load_deferred()
    if huge_pages:
        linux.collapse_huge_pages()  # what the import added, as at start (docs/performance.md)
    gc.freeze()
    spares[:] = [make() for _ in range(SPARES)]


def _finish(pidfd: int, finishing: dict[int, Spare], spares: list[Spare]) -> None:
    """A keeper whose verdict is out has ended: reap it, then sweep. Whatever escaped its sweep
    was reparented to this process, the subreaper: every child that is neither a spare nor a
    keeper still finishing is a run's."""
    done = finishing.pop(pidfd)
    done.reap()
    os.close(pidfd)
    sweep(time.monotonic() + 1.0, keep=frozenset({*(s.pid for s in spares), *(k.pid for k in finishing.values())}))


def _watch_run(channel: socket.socket, current: Spare, run_id: object) -> tuple[bool, bool | None]:
    """Until ``current``'s verdict is ready, read what the tutor sends meanwhile: a cancel of this
    run, whether idle spares may load the deferred modules, or its exit. (Whether the tutor left,
    in which case the run was cancelled and reaped; the last ``idle`` it said, or None.)"""
    warm: bool | None = None
    while True:
        ready, _, _ = select.select([channel.fileno(), current.status_r], [], [])
        if current.status_r in ready:
            return False, warm
        try:
            control, stray = wire.recv_frame(channel)
        except wire.WireError:
            control, stray = {"op": "exit"}, []
        for fd in stray:
            os.close(fd)
        if control.get("op") == "exit":
            current.cancel()
            current.result()
            return True, warm
        if control.get("op") == "cancel" and control.get("id") == run_id:
            current.cancel()
        if control.get("op") == "idle":
            warm = control.get("warm") is True


def main() -> int:
    config = json.loads(sys.argv[1])
    role = config.get("role", "worker")
    if role != "worker":  # an interpreter of a spawn-mode spare, over either transport
        from tutor.child.worker import spawn

        return spawn.judge_main(config) if role == "judge" else spawn.runner_main(config)
    channel = socket.socket(fileno=int(config["fd"]))
    linux.die_with_parent()
    containment = config.get("containment", {})
    if containment.get("worker_uid") is not None:
        # bubblewrap started as root: leave root before anything else runs here.
        linux.become_user(int(containment["worker_uid"]))
    started = time.perf_counter()
    try:
        loaded, failed = preload(config.get("preload", []), SPARE_DEFERS)
    except BaseException as exc:  # torch itself failed to import: say why, then stop
        wire.send_frame(channel, {"op": "failed", "error": f"{type(exc).__name__}: {exc}"})
        return 1
    linux.become_subreaper()
    # Every run costs this process's forks and their exits: page tables, cut ~3x by huge pages,
    # once enough runs are to come to pay for the collapse (the tutor says: pool.HUGE_PAGES_MIN_RUNS).
    huge_pages = config.get("huge_pages", True) is not False
    huge = linux.collapse_huge_pages() if huge_pages else None
    gc.freeze()
    ready = ready_message(loaded, failed, time.perf_counter() - started, "fork")
    ready["huge_pages_mb"] = None if huge is None else round(huge / 2**20, 1)
    ready["warm_up_s"] = RUNNER_START_S  # the most loading ``SPARE_DEFERS`` before a run may take
    wire.send_frame(channel, ready)
    serve(channel, containment, bool(config.get("warm_when_idle", True)), huge_pages,
          config.get("refill") == "when-idle")
    return 0
