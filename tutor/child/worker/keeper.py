"""The keeper: forked ahead of a request, it forks the runner, enforces wall time, and sweeps."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import time
from typing import TYPE_CHECKING, Callable

from tutor.sandbox import wire
from tutor.sandbox.limits import Limits
from tutor.child.worker import linux
from tutor.child.worker.runner import runner

if TYPE_CHECKING:
    import resource
    from typing import Any


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
    """A keeper/runner pair forked ahead, waiting for its one request.

    The worker keeps a copy of the judge's end of the channel to the runner until the request
    comes, and hands the runner its start itself (``start``): the runner then begins while the
    keeper takes the request, instead of after (one wake-up less before the learner's code runs;
    docs/performance.md). The worker never reads that channel, and no learner code exists before
    the start it sends; it closes its copy at once."""

    def __init__(self, containment: dict[str, Any], keep: set[int]):
        self.containment = containment
        self.ctl_r, self.ctl_w = os.pipe()
        self.status_r, status_w = os.pipe()
        self.request, keeper_end = socket.socketpair()
        self.to_runner, runner_end = socket.socketpair()  # the judge's end, the runner's end
        pid = fork()
        if pid == 0:
            os.close(self.ctl_w)
            os.close(self.status_r)
            self.request.close()
            try:
                close_other_fds({self.ctl_r, status_w, keeper_end.fileno(), self.to_runner.fileno(),
                                 runner_end.fileno()})
                keeper(self.ctl_r, status_w, keeper_end, containment, (self.to_runner, runner_end))
            finally:
                os._exit(70)
        self.pid = pid
        os.close(self.ctl_r)
        os.close(status_w)
        keeper_end.close()
        runner_end.close()

    def start(self, message: dict[str, Any], fds: list[int]) -> None:
        """Hand the run over: its start (the code, never the checks) and its stdout and stderr
        to the runner, then the whole request and the report's descriptor to the keeper."""
        out_fd, err_fd, report_fd = fds
        try:
            wire.send_frame(self.to_runner, runner_end_message(message, dict(self.containment, uid_key=self.pid)),
                            [out_fd, err_fd])
        except OSError:
            pass  # no runner (its namespaces could not be made): the keeper's judge says why
        self.to_runner.close()
        wire.send_frame(self.request, message, [report_fd])
        self.request.close()
        os.write(self.ctl_w, b"S%f\n" % Limits.from_wire(message["limits"]).wall_time)

    def cancel(self) -> None:
        try:
            os.write(self.ctl_w, b"C\n")
        except OSError:
            pass

    def verdict(self) -> dict[str, Any]:
        """The keeper's verdict, once nothing of the run is left (``swept``); the keeper itself
        may still be finishing (``reap`` waits for it)."""
        data = b""
        while True:
            chunk = os.read(self.status_r, 65536)
            if not chunk:
                break
            data += chunk
        try:
            found = json.loads(data)
        except ValueError:
            found = None
        return found if type(found) is dict else {"failure": "the sandbox keeper died without a verdict"}

    def reap(self) -> None:
        """Wait for the keeper to finish (its sweep included) and exit."""
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        self.close()

    def result(self) -> dict[str, Any]:
        """The keeper's verdict, once it has reaped the runner and everything it left."""
        verdict = self.verdict()
        self.reap()
        return verdict

    def close(self) -> None:
        for fd in (self.ctl_w, self.status_r):
            try:
                os.close(fd)
            except OSError:
                pass
        self.request.close()
        self.to_runner.close()

    def discard(self) -> None:
        self.close()  # EOF on its control pipe: the keeper kills the runner and exits
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def sweep(deadline: float, session: int | None = None, keep: frozenset[int] = frozenset()) -> bool:
    """Kill and reap every process the run left behind (they were reparented to us); ``keep``:
    children of ours that are no run's leftovers (the worker's spare, keepers still exiting)."""
    me = os.getpid()
    while time.monotonic() < deadline:
        if session is not None:
            linux.kill_session(session)
        for pid in linux.children(me):
            if pid not in keep:
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
        if keep and linux.AVAILABLE and not set(linux.children(me)) - keep:
            return True
        time.sleep(0.002)
    return False


def keeper(ctl_r: int, status_w: int, request: socket.socket, containment: dict[str, Any],
           channel: tuple[socket.socket, socket.socket]) -> None:
    """A spare's keeper: forks the runner, then waits for its request. ``channel``: the judge's and
    the runner's ends of the channel between them; the worker sends the runner's start on its own
    copy of the judge's end, so the request that comes here holds only the report's descriptor."""
    linux.die_with_parent()
    linux.become_subreaper()
    judge_end, runner_end = channel
    exit_r, exit_w = os.pipe()
    pid = _start_runner(runner_end, containment, {ctl_r, status_w, request.fileno(), judge_end.fileno(), exit_r},
                        exit_w)
    runner_end.close()
    os.close(exit_w)
    if not containment.get("namespaces"):  # no relay: the runner is this process's child
        os.close(exit_r)
    taken = _take_request(request, ctl_r)
    if taken is None:  # discarded before use
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return
    message, fds = taken

    def early(verdict: dict[str, Any]) -> None:
        report_status(status_w, verdict)
        linux.step_aside()  # what is left (the relay's end, the sweep, this exit) waits for no one

    verdict = keep(pid, judge_end, message, fds, ctl_r, containment,
                   exit_r if containment.get("namespaces") else None, early, start_sent=True)
    if verdict is not None:
        report_status(status_w, verdict)


def keep(pid: int, judge_end: socket.socket, message: dict[str, Any], fds: list[int], ctl_r: int,
         containment: dict[str, Any], exit_r: int | None = None,
         early: Callable[[dict[str, Any]], None] | None = None, *, pidfd: int | None = None,
         forked: bool = False, start_sent: bool = False) -> dict[str, Any] | None:
    """One run, from the judge's side, in fork and spawn mode alike: hand the runner (``pid``, a
    child of this process, waiting on ``judge_end``) its request, judge it, enforce wall time
    (a byte on ``ctl_r`` or its EOF cancels), reap it and sweep what it left. The verdict.

    With per-run namespaces, ``pid`` is the relay and ``exit_r`` the pipe on which it says how
    the runner (PID 1 of the run's namespace) ended, once the kernel has killed and reaped every
    process of that namespace. Nothing of the run is left then, so the verdict goes to ``early``
    at once (and None is returned); the relay's own exit (the namespaces' teardown, 10-30 ms on
    a busy machine) and the sweep come after, before this process exits.

    ``forked``: ``pid`` was forked by spawn mode's runner template (``template.py``), not by
    this process, which therefore cannot wait for it: the template reaps it and says how it
    ended on ``exit_r`` (the last record there, ``"by": "template"``); ``pidfd``, where there
    are pidfds, is the template's, opened before it could reap the pid. This function closes
    ``pidfd``.

    ``fds``: the run's stdout, stderr and report descriptors, or, ``start_sent`` (fork mode's worker
    sent the runner its start and stdout and stderr itself: ``Spare.start``), the report's alone."""
    if pidfd is None and not forked:
        try:
            pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pidfd = None
    records = Records(exit_r) if exit_r is not None else None
    wall_time = Limits.from_wire(message["limits"]).wall_time
    started = time.monotonic()
    *stdio, report_fd = fds
    reason = judge(judge_end, None if start_sent else runner_end_message(message, containment), message, ctl_r,
                   started + wall_time, kill=lambda: kill(pid, pidfd),
                   write_report=lambda data: write_all(report_fd, data), stdio=tuple(stdio), closing=(report_fd,))
    ended: dict[str, Any] | None = None
    exited = False  # ``pidfd`` said so: the template's record follows
    polls = pidfd is None and not forked  # nothing to wait on for the runner's end but waitpid
    while reason is None:
        remaining = wall_time - (time.monotonic() - started)
        if remaining <= 0:
            reason = "timeout"
            break
        watch = [ctl_r] + ([pidfd] if pidfd is not None and not exited else []) + \
            ([records.fd] if records is not None else [])
        ready, _, _ = select.select(watch, [], [], min(remaining, 0.01) if polls else remaining)
        if ctl_r in ready:
            reason = "cancelled"  # a cancel, or the worker went away
            break
        if records is not None and records.fd in ready:
            ended = records.next()
            if ended is not None:
                break
            records.close()  # EOF without a record: the relay's own exit says it all
            records = None
            if forked:  # the template went away: nothing will say how the run ended
                return _lost(pid, pidfd, containment, started)
            continue
        if pidfd is not None and pidfd in ready:
            if not forked:
                break
            exited = True
        if polls and os.waitpid(pid, os.WNOHANG)[0] == pid:
            return {"failure": "runner reaped early"}
    if ended is not None and early is not None and ended.get("by") != "template":
        early(dict(ending_of(ended), reason=None, wall_time=time.monotonic() - started, swept=True))
        if not forked:  # the relay is this process's child; a forked one is its template's to reap
            os.wait4(pid, 0)
        if records is not None:
            records.close()
        if pidfd is not None:
            os.close(pidfd)
        sweep(time.monotonic() + 2.0, None if containment.get("namespaces") else pid)
        return None
    spent = None
    if reason:
        spent = linux.tree_cpu_seconds(pid)  # before the kill: the relay never reaps what it ran
        kill(pid, pidfd)
    if pidfd is not None:
        os.close(pidfd)
    if ended is not None and ended.get("by") == "template":
        reaped: dict[str, Any] | None = ended
    else:
        reaped = _reap(pid, forked, records)
    if records is not None:
        records.close()
    wall = time.monotonic() - started
    swept = sweep(time.monotonic() + 2.0, None if containment.get("namespaces") else pid)
    if reaped is None:
        return {"failure": "the runner's template went away"}
    found = ending_of(reaped)
    if spent is not None and spent > found["cpu_time"]:
        found["cpu_time"] = spent
    return dict(found, reason=reason, wall_time=wall, swept=swept)


def _reap(pid: int, forked: bool, records: "Records | None") -> dict[str, Any] | None:
    """Wait for ``pid`` to be gone and say how it ended: by ``wait4`` (this process's child), or
    by the template's record (``forked``); None when the template went away without one."""
    if not forked:
        _, status, usage = os.wait4(pid, 0)
        return ending(status, usage)
    while records is not None:
        record = records.next()
        if record is None:
            return None
        if record.get("by") == "template":
            return record
    return None


def _lost(pid: int, pidfd: int | None, containment: dict[str, Any], started: float) -> dict[str, Any]:
    """A forked run whose template went away before saying how it ended: end it, sweep, fail."""
    kill(pid, pidfd)
    if pidfd is not None:
        os.close(pidfd)
    sweep(time.monotonic() + 2.0, None if containment.get("namespaces") else pid)
    return {"failure": "the runner's template went away", "wall_time": time.monotonic() - started}


def ending_of(record: dict[str, Any]) -> dict[str, Any]:
    """The fields of ``ending`` from a record on the exit pipe (the init's, the relay's or the
    template's), whatever else it carries."""
    return {key: record.get(key) for key in ("exit_code", "signal", "cpu_time", "maxrss_kb")}


def ending(status: int, usage: "resource.struct_rusage") -> dict[str, Any]:
    """How a process ended, as the verdict says it."""
    return {
        "exit_code": os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "cpu_time": usage.ru_utime + usage.ru_stime,
        "maxrss_kb": usage.ru_maxrss,
    }


class Records:
    """The records on a run's exit pipe, one JSON line each, in order: how the runner ended as
    its init says it (nothing of the run left), as its relay says it, and, for a runner forked
    by spawn mode's template, as the template that reaped it says it. The first tells the
    verdict; the template's tells that the process kept is gone."""

    def __init__(self, fd: int):
        self.fd = fd
        self._buffer = b""

    def next(self) -> dict[str, Any] | None:
        """The next record (waiting for it), or None at EOF without one."""
        while b"\n" not in self._buffer:
            chunk = os.read(self.fd, 4096)
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            record = json.loads(line)
        except ValueError:
            return None
        return record if type(record) is dict else None

    def close(self) -> None:
        os.close(self.fd)


def _start_runner(runner_end: socket.socket, containment: dict[str, Any], close: set[int], exit_w: int) -> int:
    """Fork the runner; with namespaces, through a relay that unshares them and forks it.

    The keeper itself must stay outside the run's PID namespace: a process that unshared
    CLONE_NEWPID can no longer create threads (EINVAL), and the keeper, as the judge, runs torch
    and the profiler. So a relay child unshares, forks the runner (PID 1 of the new namespace),
    and waits for it, leaving with the runner's exit status; the keeper waits for the relay
    (``wait4`` counts the runner's CPU time and peak memory too). Killing the relay kills the
    runner (its parent-death signal), and with it the whole namespace. The relay writes how the
    runner ended on ``exit_w`` (see ``_relay``); the runner never holds that pipe."""
    pid = fork()
    if pid:
        return pid
    for fd in close:
        os.close(fd)
    linux.die_with_parent()
    if containment.get("namespaces"):
        why = linux.unshare_run_namespaces()
        if why is not None:
            from tutor.child.checks import protocol

            protocol.send(runner_end, {"op": "ready", "names": {}, "learner_error": None, "repaired": [],
                                       "setup_error": f"cannot create the run's namespaces: {why}"})
            os._exit(72)
        split_below_relay(runner_end, exit_w)
    os.close(exit_w)
    try:
        runner(runner_end, containment)
    finally:
        os._exit(71)


def split_below_relay(channel: socket.socket, exit_w: int | None) -> None:
    """Called with the run's namespaces just unshared, while this process is still one thread:
    fork the namespace's PID 1. This process stays as the relay (``_relay``, which never returns:
    it leaves the way the runner did, first saying how on ``exit_w``), without the runner's
    ``channel``; the call returns in the runner, the child of the tiny init (``init_below``).
    Fork mode's keeper and spawn mode's runner interpreter both start a run this way."""
    init_r, init_w = os.pipe()
    child = fork()
    if child:
        channel.close()
        os.close(init_w)
        _relay(child, exit_w, init_r)
    os.close(init_r)
    linux.die_with_parent()
    init_below(init_w, exit_w=exit_w)


def init_below(status_w: int, close: set[int] = frozenset(),  # type: ignore[assignment]
               exit_w: int | None = None) -> None:
    """Called in PID 1 of the run's namespace: stay there as a tiny init of the tutor's own and
    run the learner's code in a child, so that signals the code sends itself behave as on a
    normal machine (the kernel drops a signal sent to a namespace's init from inside it unless
    init handles it: ``os.kill(os.getpid(), SIGSEGV)`` was ignored, and so was SIGXCPU at the CPU
    limit). Returns in the child, which must close ``exit_w`` before any learner code runs.
    PID 1 reaps every process of the namespace until the child ends, writes the child's wait
    status on ``status_w`` (``_relay`` leaves with it), and exits, which ends whatever the run
    left. It forwards nothing: the tutor only ever stops a run with SIGKILL, through the relay,
    which ends the whole namespace.

    When the child's end leaves this process alone in the namespace (``_alone``: nothing of the
    run is left, every process of it having exited and been reaped), it first says how the run
    ended on ``exit_w``, the keeper's own pipe, itself: the verdict then waits neither for this
    process's exit (its address space, the namespace's teardown: 3-4 ms here) nor for the
    relay's wait and its message. A run that left a process running takes the relay's way."""
    for fd in close:
        os.close(fd)
    child = fork()
    if child == 0:
        os.close(status_w)
        linux.die_with_parent()
        return
    linux.set_name(b"tutor-init")
    close_other_fds({status_w} if exit_w is None else {status_w, exit_w})
    status = None
    while True:
        try:
            pid, found = os.waitpid(-1, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            break
        if pid == child:
            status = found
            break
    if status is not None and exit_w is not None and _alone():
        import resource

        # What the relay's wait4 would say: the CPU time and peak memory of every process this
        # one reaped (the runner, with what it reaped, and anything orphaned to this init).
        record = dict(ending(status, resource.getrusage(resource.RUSAGE_CHILDREN)), by="init")
        try:
            os.write(exit_w, json.dumps(record).encode() + b"\n")
        except OSError:
            pass
        linux.let_the_woken_run()  # the keeper, before this process's exit
        linux.step_aside()
    if status is not None:
        try:
            os.write(status_w, b"%d\n" % status)
        except OSError:
            pass
    os._exit(0)


def _alone() -> bool:
    """In a namespace's init, once its child (the runner) is reaped: whether no process of the
    run is left, reaping any that ended meanwhile. Every other process of the namespace descends
    from the runner, and one whose parent dies is given to this init (no ancestor of theirs in
    the namespace can be a subreaper: the runner is gone), so none left as a child means none
    at all; one still running (or starting: a fork the runner's exit cut short is undone before
    the runner's wait returns) is a child, and then the run takes the relay's way."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except InterruptedError:
            continue
        except ChildProcessError:
            return True
        if pid == 0:
            return False


def _relay(child: int, exit_w: int | None = None, init_r: int | None = None) -> None:
    """Wait for the run's PID 1 and leave the way the learner's code did; first, on ``exit_w``,
    say how it ended.

    ``child`` is PID 1 of the run's namespace (``init_below``): when its wait returns, the kernel
    has killed and reaped every process of the namespace, so the record means that nothing of the
    run is left. Its CPU time and peak memory include the runner's, which it reaped; the runner's
    wait status comes on ``init_r`` (none there: PID 1 itself was killed, and its status stands).
    The relay's own exit, which tears down the namespaces, can come after the verdict."""
    linux.set_name(b"tutor-relay")
    _, status, usage = os.wait4(child, 0)
    if init_r is not None:
        reported = b""
        try:
            while chunk := os.read(init_r, 64):
                reported += chunk
        except OSError:
            pass
        os.close(init_r)
        if reported.strip().isdigit():
            status = int(reported)
    if exit_w is not None:
        try:
            os.write(exit_w, json.dumps(dict(ending(status, usage), by="relay")).encode() + b"\n")
        except OSError:
            pass
    linux.step_aside()  # the namespaces' teardown, as this process exits
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 70)


def _take_request(request: socket.socket, ctl_r: int) -> tuple[dict[str, Any], list[int]] | None:
    """The worker's request (and its descriptors), then its start line; None when discarded."""
    try:
        message, fds = wire.recv_frame(request)
    except (wire.WireError, OSError):
        return None
    request.close()
    command = b""
    while not command.endswith(b"\n"):
        chunk = os.read(ctl_r, 64)
        if not chunk:
            for fd in fds:
                os.close(fd)
            return None
        command += chunk
    return message, fds


def runner_end_message(message: dict[str, Any], containment: dict[str, Any]) -> dict[str, Any]:
    """What the runner is told: the code and how to run it, never the checks. Where each run
    gets a uid of its own (root at isolation none), it is derived from this process's pid (a
    fork-mode keeper serves one run and outlives everything of it, so no two live runs share one)
    or, for a spawn-mode judge that serves run after run, from its runner's (``uid_key``)."""
    start = {"op": "start", "code": message["code"], "filename": message.get("filename") or "<snippet>",
             "scratch": message["scratch"], "limits": message["limits"], "threads": message.get("threads"),
             "stats": bool(message.get("stats")), "serve": message.get("probe") is not None}
    if message.get("probe") is not None:
        start["top_level"] = top_level_cpu(message)
    if message.get("prelude"):
        start["prelude"] = message["prelude"]
    if message.get("uses"):
        start["uses"] = message["uses"]
    if containment.get("drop_uid") == "per-run":
        start["uid"] = int(containment["uid_base"]) + int(containment.get("uid_key") or os.getpid())
    return start


#: CPU seconds (of its main thread) the learner's top-level code gets when checks follow (at most
#: half the run's CPU limit). Checks start once the top level has finished, so a loop there is
#: stopped within this (a Check of it reports in about 1.6 s on a quiet machine), not at the
#: exercise's whole timeout (7-20 s in the built-in pack); code that catches the stop is ended by
#: the runner half a second later (``runner.TopLevel``). CPU time only: a busy machine never turns
#: honest top-level work into a stop, and code that waits (a sleep) waits for the run's own limits.
TOP_LEVEL_CPU_S = 1.5


def top_level_cpu(message: dict[str, Any]) -> float:
    """CPU seconds for the top level of a checked run: ``TOP_LEVEL_CPU_S``, and at most half the
    run's own CPU limit."""
    limits = message.get("limits") or {}
    try:
        run_cpu = float(limits.get("cpu_time", 2 * TOP_LEVEL_CPU_S))
    except (TypeError, ValueError):
        run_cpu = 2 * TOP_LEVEL_CPU_S
    return max(min(TOP_LEVEL_CPU_S, run_cpu / 2), 0.05)


def kill(pid: int, pidfd: int | None = None) -> None:
    try:
        if pidfd is not None:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def judge(channel: socket.socket, start: dict[str, Any] | None, message: dict[str, Any], ctl_r: int, deadline: float, *,
          kill: Callable[[], None], write_report: Callable[[bytes], None], stdio: tuple[int, ...] = (),
          closing: tuple[int, ...] = ()) -> str | None:
    """The keeper's second job, once the runner is started (it never forks again, so it may run
    torch): hand the runner its code (and, with the descriptor transport, the run's stdout and
    stderr; ``start`` None: fork mode's worker did), then run the probe here, against the runner's
    answers, and hand the one report to ``write_report`` (a descriptor or frames only this process
    holds). Returns why the run was stopped ("timeout", "cancelled"), or None. ``closing``:
    descriptors to close when done."""
    try:
        if start is not None:
            wire.send_frame(channel, start, stdio)
    except OSError:
        pass
    finally:
        for fd in stdio:
            os.close(fd)
    try:
        from tutor.child.worker.judging import judge_run

        stopped, report = judge_run(channel, message, ctl_r, deadline, kill)
        if report is not None:
            write_report(report_bytes(report))
        return stopped
    finally:
        for fd in closing:
            os.close(fd)
        channel.close()


def report_bytes(report: dict[str, Any]) -> bytes:
    """The one report, encoded; a report that cannot be (not JSON, over the cap) says why."""
    learner_error, setup_error = report.get("learner_error"), report.get("setup_error")
    try:
        data = wire.encode_report(report)
    except BaseException as exc:
        data = wire.encode_report({"learner_error": learner_error, "setup_error": setup_error,
                                   "probe_error": f"the probe's report is not JSON: {exc}"})
    if len(data) > wire.MAX_REPORT:
        data = wire.encode_report({"learner_error": learner_error, "setup_error": setup_error,
                                   "probe_error": f"the probe's report is {len(data)} bytes, over "
                                                  f"the {wire.MAX_REPORT}-byte limit"})
    return data


def write_all(fd: int, data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        pass


def report_status(fd: int, verdict: dict[str, Any]) -> None:
    data = json.dumps(verdict).encode()
    while data:
        data = data[os.write(fd, data):]
    os.close(fd)
