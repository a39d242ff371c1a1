"""Spawn mode's descriptor transport (Linux, macOS): the tutor hands the spare's judge a socket
that carries descriptors (the run's stdout, stderr and report pipes ride along with the request,
as in fork mode), and the judge reaches its runner over a socket pair it passes to it. Where
per-run namespaces work the runner unshares them and forks once, before it imports anything
heavy, so that it is PID 1 of its own namespace exactly as in fork mode (``keeper.split_below_relay``).

The judge loop over this transport is ``spawn.judge_main``; this module only says how the
processes reach each other and how a run is kept (``keeper.keep``, shared with fork mode).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from typing import Callable

from tutor.sandbox import wire
from tutor.sandbox.worker import linux
from tutor.sandbox.worker.keeper import keep, split_below_relay


class FdsTransport:
    """The judge's side: its link to the tutor is the socket it was started with."""

    ready_extra: dict = {}

    def __init__(self, config: dict):
        self.tutor: wire.Link = wire.SocketLink(socket.socket(fileno=int(config["fd"])))
        linux.die_with_parent()
        containment = config.get("containment", {})
        if containment.get("worker_uid") is not None:
            # bubblewrap started as root: leave root before anything else runs here.
            linux.become_user(int(containment["worker_uid"]))
        linux.become_subreaper()
        self.proc: subprocess.Popen | None = None
        self.judge_end: socket.socket | None = None
        self.exit_r: int | None = None

    def start_runner(self, runner_config: dict) -> None:
        if self.exit_r is not None:  # the last run's (its relay is gone)
            os.close(self.exit_r)
            self.exit_r = None
        judge_end, runner_end = socket.socketpair()
        exit_r, exit_w = os.pipe()  # the relay says on it how the runner ended (see keeper._relay)
        runner_config = dict(runner_config, fd=runner_end.fileno(), exit_fd=exit_w)
        self.judge_end, self.exit_r = judge_end, exit_r
        try:
            self.proc = subprocess.Popen([sys.executable, "-m", "tutor.sandbox.worker", json.dumps(runner_config)],
                                         pass_fds=[runner_end.fileno(), exit_w], stdin=subprocess.DEVNULL)
        finally:
            runner_end.close()
            os.close(exit_w)

    def runner_channel(self) -> socket.socket:
        assert self.judge_end is not None
        return self.judge_end

    def end_runner(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()

    def keep(self, judge_end: socket.socket, message: dict, fds: list[int], ctl: int, containment: dict,
             early: Callable[[dict], None]) -> dict | None:
        assert self.proc is not None
        # A uid of the run's own where each run gets one: this judge serves run after run, so its
        # own pid would give consecutive runs one uid (a run could read the last one's scratch
        # folder before the tutor removes it); the runner's is the run's alone.
        containment = dict(containment, uid_key=self.proc.pid)
        exit_r = self.exit_r if containment.get("namespaces") else None
        if exit_r is not None:  # ``keep`` reads it and closes it
            self.exit_r = None
        found = keep(self.proc.pid, judge_end, message, fds, ctl, containment, exit_r, early)
        self.proc.returncode = 0  # reaped by keep (wait4); Popen must not wait for it again
        return found


def runner_channel(config: dict) -> tuple[socket.socket, None] | int:
    """The runner's side: its channel to the judge, once it is PID 1 of the run's namespace
    where namespaces work (then this process stays behind as the relay); an exit code when the
    namespaces cannot be made."""
    channel = socket.socket(fileno=int(config["fd"]))
    exit_w = int(config["exit_fd"]) if config.get("exit_fd") is not None else None
    linux.die_with_parent()
    containment = config.get("containment", {})
    if exit_w is not None and not containment.get("namespaces"):  # no relay: the judge waits for this process
        os.close(exit_w)
        exit_w = None
    if containment.get("namespaces"):
        # Still one thread, nothing imported: unshare here, then fork once so the runner is
        # PID 1 of the run's namespace; this process stays as the relay.
        why = linux.unshare_run_namespaces()
        if why is not None:
            wire.send_frame(channel, {"op": "failed", "error": f"cannot create the run's namespaces: {why}"})
            return 72
        split_below_relay(channel, exit_w)
        if exit_w is not None:
            os.close(exit_w)
    return channel, None
