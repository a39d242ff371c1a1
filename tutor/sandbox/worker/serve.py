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
from tutor.sandbox.worker.startup import preload, ready_message

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
    if role != "worker":  # an interpreter of a spawn-mode spare, over either transport
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
