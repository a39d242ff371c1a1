"""The keeper: forked ahead of a request, it forks the runner, enforces wall time, and sweeps."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import time

from tutor.sandbox import wire
from tutor.sandbox.worker import linux
from tutor.sandbox.worker.runner import runner


def fork() -> int:
    """fork, waiting out EAGAIN: right after a fork bomb the pids cgroup drains for a moment."""
    deadline = time.monotonic() + 5.0
    while True:
        try:
            return os.fork()
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def close_other_fds(keep: set[int]) -> None:
    """A forked process keeps only what it needs: the tutor's channel must not reach a run."""
    fds = linux.open_fds()
    if fds is None:
        fds = list(range(3, 1024))
    for fd in fds:
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


class Spare:
    """A keeper/runner pair forked ahead, waiting for its one request."""

    def __init__(self, containment: dict, keep: set[int]):
        self.ctl_r, self.ctl_w = os.pipe()
        self.status_r, status_w = os.pipe()
        self.request, runner_end = socket.socketpair()
        pid = fork()
        if pid == 0:
            os.close(self.ctl_w)
            os.close(self.status_r)
            self.request.close()
            try:
                close_other_fds({self.ctl_r, status_w, runner_end.fileno()})
                keeper(self.ctl_r, status_w, runner_end, containment)
            finally:
                os._exit(70)
        self.pid = pid
        os.close(self.ctl_r)
        os.close(status_w)
        runner_end.close()

    def start(self, message: dict, fds: list[int]) -> None:
        wire.send_frame(self.request, message, fds)
        self.request.close()
        os.write(self.ctl_w, b"S%f\n" % float(message["limits"]["wall_time"]))

    def cancel(self) -> None:
        try:
            os.write(self.ctl_w, b"C\n")
        except OSError:
            pass

    def result(self) -> dict:
        """The keeper's verdict, once it has reaped the runner and everything it left."""
        data = b""
        while True:
            chunk = os.read(self.status_r, 65536)
            if not chunk:
                break
            data += chunk
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        self.close()
        try:
            return json.loads(data)
        except ValueError:
            return {"failure": "the sandbox keeper died without a verdict"}

    def close(self) -> None:
        for fd in (self.ctl_w, self.status_r):
            try:
                os.close(fd)
            except OSError:
                pass
        self.request.close()

    def discard(self) -> None:
        self.close()  # EOF on its control pipe: the keeper kills the runner and exits
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def sweep(deadline: float, session: int | None = None) -> bool:
    """Kill and reap every process the run left behind (they were reparented to us)."""
    me = os.getpid()
    while time.monotonic() < deadline:
        if session is not None:
            linux.kill_session(session)
        for pid in linux.children(me):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            while True:
                pid, _ = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
        except ChildProcessError:
            return True
        time.sleep(0.002)
    return False


def keeper(ctl_r: int, status_w: int, runner_end: socket.socket, containment: dict) -> None:
    linux.die_with_parent()
    linux.become_subreaper()
    if containment.get("namespaces"):
        why = linux.unshare_run_namespaces()
        if why is not None:
            report_status(status_w, {"failure": f"cannot create the run's namespaces: {why}"})
            return
    pid = fork()
    if pid == 0:
        os.close(ctl_r)
        os.close(status_w)
        linux.die_with_parent()
        try:
            runner(runner_end, containment)
        finally:
            os._exit(71)
    runner_end.close()
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None

    command = b""
    while not command.endswith(b"\n"):
        chunk = os.read(ctl_r, 64)
        if not chunk:  # discarded before use
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return
        command += chunk
    wall_time = float(command[1:].strip())
    started = time.monotonic()
    reason = None
    while True:
        remaining = wall_time - (time.monotonic() - started)
        if remaining <= 0:
            reason = "timeout"
            break
        watch = [ctl_r] + ([pidfd] if pidfd is not None else [])
        ready, _, _ = select.select(watch, [], [], remaining if pidfd is not None else min(remaining, 0.01))
        if ctl_r in ready:
            reason = "cancelled"  # a cancel, or the worker went away
            break
        if pidfd is not None and pidfd in ready:
            break
        if pidfd is None and os.waitpid(pid, os.WNOHANG)[0] == pid:
            report_status(status_w, {"failure": "runner reaped early"})
            return
    if reason:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - started
    swept = sweep(time.monotonic() + 2.0, None if containment.get("namespaces") else pid)
    verdict = {
        "reason": reason,
        "exit_code": os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "wall_time": wall,
        "cpu_time": usage.ru_utime + usage.ru_stime,
        "maxrss_kb": usage.ru_maxrss,
        "swept": swept,
    }
    report_status(status_w, verdict)


def report_status(fd: int, verdict: dict) -> None:
    data = json.dumps(verdict).encode()
    while data:
        data = data[os.write(fd, data):]
    os.close(fd)
