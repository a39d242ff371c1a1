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

def serve(channel: socket.socket, containment: dict) -> None:
    spare = Spare(containment, {channel.fileno()})
    while True:
        try:
            message, fds = wire.recv_frame(channel)
        except wire.WireError:
            spare.discard()
            return
        op = message.get("op")
        if op == "exit":
            spare.discard()
            return
        if op != "run":
            for fd in fds:
                os.close(fd)
            continue
        current = spare
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
                return
            for fd in stray:
                os.close(fd)
            if control.get("op") == "exit":
                current.cancel()
                current.result()
                return
            if control.get("op") == "cancel" and control.get("id") == message["id"]:
                current.cancel()
        verdict = current.verdict()
        verdict.update(op="done", id=message["id"])
        if verdict.get("swept") is True:
            # Nothing of the run is left (the keeper swept, or the run's PID namespace is gone):
            # the tutor may have the result while the keeper exits (~10 ms, a process that ran
            # torch). The next request waits in the channel until the keeper is reaped, the
            # sweep below is done and a new spare is forked.
            wire.send_frame(channel, verdict)
        current.reap()
        # Whatever escaped the keeper's sweep was reparented to us, the subreaper; no spare
        # exists yet, so every child left is the run's.
        sweep(time.monotonic() + 1.0)
        if verdict.get("swept") is not True:
            wire.send_frame(channel, verdict)
        spare = Spare(containment, {channel.fileno()})


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
    wire.send_frame(channel, ready_message(loaded, failed, time.perf_counter() - started, "fork"))
    serve(channel, containment)
    return 0
