"""The worker's own loop: import torch once, keep a keeper/runner pair forked ahead, serve runs."""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import time

from tutor.sandbox import wire
from tutor.sandbox.worker import linux
from tutor.sandbox.worker.keeper import Spare, sweep

#: Modules the profiler and the checks reach for: loading them per run costs about a second.
#: ``torch._dynamo`` is what the profiler's first use imports (~800 modules, 1.2-1.8 s of CPU):
#: paid here, before forking, not in every learner's run.
BASE_PRELOAD = ("torch", "torch.nn", "torch.nn.functional", "torch.profiler", "numpy")
OPTIONAL_PRELOAD = ("torch._dynamo", "tutor.checks.server", "tutor.checks.remote", "tutor.sandbox.worker.judging")

#: What a spawn-mode judge does not load before it says ready: it runs no learner code, so the
#: runner's server is not its business.
JUDGE_LEAVES_OUT = ("tutor.checks.server",)
#: What neither interpreter of a spawn-mode spare loads before it says ready: the profiler's
#: machinery (its first use imports ``torch._dynamo``, 1.2-2.4 s of CPU, and the runner's warm-up
#: runs one op under it). A spare that waits ``IDLE_WARM_S`` for its request (a learner reading
#: the exercise) loads it then, in both; a spare taken at once (back-to-back runs, a ``grade``
#: batch) loads it only where its run needs it (``judging.needs_dynamo``), before the run
#: starts, so the run is never charged for it.
SPARE_DEFERS = ("torch._dynamo",)
IDLE_WARM_S = 1.0


def preload(extra: list[str], leave_out: tuple[str, ...] = ()) -> tuple[list[str], dict[str, str]]:
    import importlib

    loaded: list[str] = []
    failed: dict[str, str] = {}
    for name in BASE_PRELOAD:
        importlib.import_module(name)
        loaded.append(name)
    _import_optional([n for n in [*OPTIONAL_PRELOAD, *extra] if n not in leave_out], loaded, failed)
    return loaded, failed


def _import_optional(names: list[str], loaded: list[str], failed: dict[str, str]) -> None:
    import importlib

    for name in names:
        try:
            importlib.import_module(name)
            loaded.append(name)
        except Exception as exc:  # optional: a missing probe module is not fatal
            failed[name] = f"{type(exc).__name__}: {exc}"


def spare_preload(extra: list[str], leave_out: tuple[str, ...] = ()) -> tuple[list[str], dict[str, str]]:
    """What an interpreter of a spawn-mode spare loads before it says ready (see ``SPARE_DEFERS``)."""
    return preload(extra, leave_out + SPARE_DEFERS)


def judge_preload(extra: list[str]) -> tuple[list[str], dict[str, str]]:
    return spare_preload(extra, JUDGE_LEAVES_OUT)


def load_deferred() -> None:
    """What a spare's interpreter loads later (``SPARE_DEFERS``). A module that fails here fails
    again where it is needed, and says why there."""
    _import_optional(list(SPARE_DEFERS), [], {})


def ready_message(loaded: list[str], failed: dict[str, str], warmup_s: float, mode: str) -> dict:
    """What a worker (fork mode) or a spare (spawn mode) says once it is warm."""
    import torch

    return {"op": "ready", "pid": os.getpid(), "torch": torch.__version__, "mode": mode,
            "python": sys.version.split()[0], "executable": sys.executable,
            "preloaded": loaded, "preload_failures": failed, "warmup_s": warmup_s,
            "rss_mb": linux.rss_mb(), "os_helpers": linux.AVAILABLE,
            "unenforced": linux.unenforced_limits()}


#: Keeper/runner pairs kept forked ahead. Two: a Run right after a Run takes the second while the
#: first one's replacement is still being forked (a keeper forks its relay, the relay its init, the
#: init the runner: three forks before a spare can take a request).
SPARES = 2


def serve(channel: socket.socket, containment: dict) -> None:
    spares = [Spare(containment, {channel.fileno()}) for _ in range(SPARES)]
    # Keepers whose verdict is out, still exiting (their relay's teardown, their sweep, their own
    # exit: ~10 ms of a process that ran torch), by pidfd: reaped when they end, not before the
    # next request is read, so a Run right after a Run does not wait for them.
    finishing: dict[int, Spare] = {}

    def finish(pidfd: int) -> None:
        done = finishing.pop(pidfd)
        done.reap()
        os.close(pidfd)
        # Whatever escaped that keeper's sweep was reparented to us, the subreaper: every child
        # that is neither a spare nor a keeper still finishing is a run's.
        sweep(time.monotonic() + 1.0, keep=frozenset({*(s.pid for s in spares), *(k.pid for k in finishing.values())}))

    while True:
        ready, _, _ = select.select([channel.fileno(), *finishing], [], [])
        for fd in ready:
            if fd in finishing:
                finish(fd)
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
        if op != "run":
            for fd in fds:
                os.close(fd)
            continue
        current = spares.pop(0)
        current.start(message, fds)
        for fd in fds:
            os.close(fd)
        while True:
            ready, _, _ = select.select([channel.fileno(), current.status_r], [], [])
            if current.status_r in ready:
                break
            try:
                control, stray = wire.recv_frame(channel)
            except wire.WireError:
                current.cancel()
                current.result()
                for spare in spares:
                    spare.discard()
                return
            for fd in stray:
                os.close(fd)
            if control.get("op") == "exit":
                current.cancel()
                current.result()
                for spare in spares:
                    spare.discard()
                return
            if control.get("op") == "cancel" and control.get("id") == message["id"]:
                current.cancel()
        verdict = current.verdict()
        verdict.update(op="done", id=message["id"])
        others = frozenset(k.pid for k in finishing.values())
        if verdict.get("swept") is True:
            # Nothing of the run is left (the keeper swept, or the run's PID namespace is gone):
            # the tutor has the result, and the next spare is forked, while the keeper exits.
            wire.send_frame(channel, verdict)
            spares.append(Spare(containment, {channel.fileno()}))
            try:
                finishing[os.pidfd_open(current.pid)] = current
            except (AttributeError, OSError):
                current.reap()
                sweep(time.monotonic() + 1.0, keep=others | {s.pid for s in spares})
            continue
        current.reap()
        sweep(time.monotonic() + 1.0, keep=others | {s.pid for s in spares})
        wire.send_frame(channel, verdict)
        spares.append(Spare(containment, {channel.fileno()}))


def main() -> int:
    config = json.loads(sys.argv[1])
    role = config.get("role", "worker")
    if role != "worker":
        if config.get("channel") == "stdio" or config.get("connect") is not None:
            from tutor.sandbox.worker import pipes  # no descriptor passing here (Windows)

            return pipes.judge_main(config) if role == "judge" else pipes.runner_main(config)
        from tutor.sandbox.worker import spawn

        return spawn.judge_main(config) if role == "judge" else spawn.runner_main(config)
    channel = socket.socket(fileno=int(config["fd"]))
    linux.die_with_parent()
    containment = config.get("containment", {})
    if containment.get("worker_uid") is not None:
        # bubblewrap started as root: leave root before anything else runs here.
        linux.become_user(int(containment["worker_uid"]))
    started = time.perf_counter()
    try:
        loaded, failed = preload(config.get("preload", []))
    except BaseException as exc:  # torch itself failed to import: say why, then stop
        wire.send_frame(channel, {"op": "failed", "error": f"{type(exc).__name__}: {exc}"})
        return 1
    linux.become_subreaper()
    # Every run costs this process's forks and their exits: page tables, cut ~3x by huge pages.
    huge = linux.collapse_huge_pages()
    ready = ready_message(loaded, failed, time.perf_counter() - started, "fork")
    ready["huge_pages_mb"] = None if huge is None else round(huge / 2**20, 1)
    wire.send_frame(channel, ready)
    serve(channel, containment)
    return 0
