"""Spawn mode's descriptor transport (Linux, macOS): the tutor hands the spare's judge a socket
that carries descriptors (the run's stdout, stderr and report pipes ride along with the request,
as in fork mode), and the judge reaches its runner over a socket pair: one the runner template
made and handed over with a runner it forked ahead (``template.py``), or one the judge passes to a
runner it starts with exec. Where per-run namespaces work the runner unshares them and forks once
(an exec'd one before it imports anything heavy), so that it is PID 1 of its own namespace
exactly as in fork mode (``keeper.split_below_relay``).

The judge loop over this transport is ``spawn.judge_main``; this module only says how the
processes reach each other and how a run is kept (``keeper.keep``, shared with fork mode).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from typing import TYPE_CHECKING, Callable

from tutor.sandbox import wire
from tutor.child.worker import linux
from tutor.child.worker.keeper import keep, kill, split_below_relay
from tutor.child.worker.startup import RUNNER_START_S
from tutor.child.worker.template import split_off

if TYPE_CHECKING:
    from typing import Any


class FdsTransport:
    """The judge's side: its link to the tutor is the socket it was started with. Where runners
    may be forked (``config["runners"]``: "forked", the default where there is a fork, or
    "fresh"), this interpreter first becomes the runner template and forks the judge
    (``template.split_off``); otherwise, or from the template's first refusal on, each runner is
    started with exec."""

    def __init__(self, config: dict[str, Any], runner_main: Callable[..., int]):
        self.tutor: wire.Link = wire.SocketLink(socket.socket(fileno=int(config["fd"])))
        linux.die_with_parent()
        containment = config.get("containment", {})
        if containment.get("worker_uid") is not None:
            # bubblewrap started as root: leave root before anything else runs here.
            linux.become_user(int(containment["worker_uid"]))
        linux.become_subreaper()
        self.proc: subprocess.Popen[bytes] | None = None
        self.judge_end: socket.socket | None = None
        self.exit_r: int | None = None
        self.template_link: socket.socket | None = None
        self.forking = config.get("runners", "forked") == "forked" and hasattr(os, "fork")
        self.ready_extra: dict[str, Any] = {"runners": "fresh"}
        if self.forking:
            # Returns in the judge (the template stays behind in the parent), or here alone.
            self.template_link, why = split_off(config, runner_main)
            if self.template_link is None:
                self._stop_forking(str(why))
            else:
                self.ready_extra = {"runners": "forked"}
        self._runner_config: dict[str, Any] = {}
        self._pending = False  # a runner asked of the template, its answer not read yet
        self._deferred_asked = False
        #: The process kept for the run (the runner, or its relay), when the template forked it.
        self.forked_pid: int | None = None
        self.pidfd: int | None = None

    def start_runner(self, runner_config: dict[str, Any]) -> None:
        self._runner_config = runner_config
        self.forked_pid = None
        if self.forking:
            try:
                assert self.template_link is not None
                wire.send_frame(self.template_link, {"op": "runner"})
                self._pending = True  # its answer is read in ``runner_channel``: the judge imports meanwhile
                return
            except OSError as exc:
                self._stop_forking(f"the runner template could not be reached: {exc}")
        self._exec_runner(runner_config)

    def _new_channel(self) -> tuple[socket.socket, int]:
        """A fresh channel and exit pipe for a runner started with exec: the judge's ends kept
        here, the runner's returned."""
        self._close_channel()
        judge_end, runner_end = socket.socketpair()
        exit_r, exit_w = os.pipe()  # the relay says on it how the runner ended (see keeper._relay)
        self.judge_end, self.exit_r = judge_end, exit_r
        return runner_end, exit_w

    def _close_channel(self) -> None:
        if self.exit_r is not None:  # the last run's (its relay is gone)
            os.close(self.exit_r)
            self.exit_r = None
        if self.judge_end is not None:
            self.judge_end.close()
            self.judge_end = None

    def _exec_runner(self, runner_config: dict[str, Any]) -> None:
        runner_end, exit_w = self._new_channel()
        runner_config = dict(runner_config, fd=runner_end.fileno(), exit_fd=exit_w)
        try:
            self.proc = subprocess.Popen([sys.executable, "-m", "tutor.child.worker", json.dumps(runner_config)],
                                         pass_fds=[runner_end.fileno(), exit_w], stdin=subprocess.DEVNULL)
        finally:
            runner_end.close()
            os.close(exit_w)

    def _stop_forking(self, why: str) -> None:
        """From now on each runner starts with exec; the ready message says why. (A template
        that refused stays idle: it is this judge's parent.)"""
        self.forking = False
        self.ready_extra = {"runners": "fresh", "runners_why": why}

    def _template_answer(self) -> dict[str, Any]:
        """The template's answer to the fork asked of it (its ``warm``, once, comes first)."""
        assert self.template_link is not None
        self.template_link.settimeout(RUNNER_START_S)
        try:
            while True:
                message, fds = wire.recv_frame(self.template_link)
                if message.get("op") == "warm":
                    self.ready_extra.update(template_rss_mb=message.get("rss_mb"),
                                            huge_pages_mb=message.get("huge_pages_mb"))
                    for fd in fds:
                        os.close(fd)
                    continue
                if message.get("op") == "forked" and isinstance(message.get("pid"), int) and len(fds) in (2, 3):
                    self._close_channel()
                    self.forked_pid = message["pid"]
                    self.judge_end, self.exit_r = socket.socket(fileno=fds[0]), fds[1]
                    self.pidfd = fds[2] if len(fds) == 3 else None
                    return message
                for fd in fds:
                    os.close(fd)
                return message
        except (wire.WireError, OSError) as exc:
            return {"op": "failed", "error": f"the runner template ended: {exc}"}
        finally:
            if self.template_link is not None:
                self.template_link.settimeout(None)

    def runner_channel(self) -> socket.socket:
        if self._pending:
            self._pending = False
            answer = self._template_answer()
            if self.forked_pid is None:
                self._stop_forking(str(answer.get("error") or "the runner template did not fork"))
                self._exec_runner(self._runner_config)
        assert self.judge_end is not None
        return self.judge_end

    def load_deferred(self) -> None:
        if self.template_link is not None and not self._deferred_asked:
            self._deferred_asked = True  # once: the template then replaces the runners it forked ahead
            try:
                wire.send_frame(self.template_link, {"op": "load-deferred"})
            except OSError:
                pass

    def end_runner(self) -> None:
        if self._pending:  # asked of the template, not handed over: it goes when the judge does
            self._pending = False
            return
        if self.forked_pid is not None:
            kill(self.forked_pid, self.pidfd)
            if self.pidfd is not None:
                os.close(self.pidfd)
            self.forked_pid = self.pidfd = None
            return
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()

    def keep(self, judge_end: socket.socket, message: dict[str, Any], fds: list[int], ctl: int,
             containment: dict[str, Any],
             early: Callable[[dict[str, Any]], None]) -> dict[str, Any] | None:
        if self.forked_pid is not None:
            pid, pidfd, exit_r = self.forked_pid, self.pidfd, self.exit_r
            self.forked_pid = self.pidfd = self.exit_r = None
            # A uid of the run's own where each run gets one (see below): the forked runner's pid.
            return keep(pid, judge_end, message, fds, ctl, dict(containment, uid_key=pid), exit_r, early,
                        pidfd=pidfd, forked=True)
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


def runner_channel(config: dict[str, Any]) -> tuple[socket.socket, None] | int:
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
