"""Spawn mode's runner template (Linux, macOS): the interpreter the tutor started for a spare, once
it has imported what a runner imports, forks its judge (``split_off``) and then only forks
runners, one per run (``serve``).

A runner interpreter started with exec imports torch for every run: 1.4-2.1 s of CPU here, the
whole cost of a spawn-mode run. Forked from a template that imported it, a runner costs a fork.
What makes that fork safe where a fork of a warm fork-mode worker may not be (macOS):

* the template never runs a torch op (one multi-threaded op before a fork leaves every child
  hung in libgomp's barrier) and never runs learner or check code: it only imports, forks, reaps;
* it forks only while it is **one thread** (``thread_count``, asked of the kernel, not of Python,
  before every fork): macOS's Objective-C runtime and libdispatch refuse to work in a child
  forked from a multithreaded parent, and are sound in one forked from a single-threaded parent
  that started none of their threads. A template that cannot tell, or finds a second thread,
  refuses the fork, and its judge starts runners with exec from then on (``fds.FdsTransport``).

The judge shares the template's pages (a judge started with exec beside the template kept
146 MB of its own). The template is each forked runner's parent, so it reaps them: once a runner (or, where per-run
namespaces work, the relay that stands for the run) has ended, the template writes how it ended
(``keeper.ending``, with ``"by": "template"``) on the run's exit pipe, the one the relay and the
run's init write on, and closes it: the judge learns from that record that the process it kept
is gone (it is not the judge's child, so the judge cannot wait for it). Learner code never holds
that pipe. A template whose judge goes away kills its runners and exits; a judge whose template
dies dies with it (its parent-death signal), and the tutor starts another spare.
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import socket
import sys
import time
from typing import TYPE_CHECKING, Callable

from tutor.sandbox import wire
from tutor.child.worker import linux
from tutor.child.worker.keeper import close_other_fds, ending, fork, kill
from tutor.child.worker.startup import load_deferred, spare_preload

if TYPE_CHECKING:
    from typing import Any


def thread_count() -> int | None:
    """This process's threads as the kernel counts them (torch's own pools, not only Python's);
    None where it cannot be read (a template then forks nothing)."""
    if sys.platform == "darwin":  # pragma: no cover - macOS only: proc_pidinfo(PROC_PIDTASKINFO)
        return _darwin_thread_count()
    # Linux; also with its helpers off (``TORCH_TUTOR_PORTABLE_CHILD=1``, the suite's stand-in
    # for macOS), where this read stands in for macOS's own count, so the forked path runs there.
    if sys.platform.startswith("linux"):
        try:
            return len(os.listdir("/proc/self/task"))
        except OSError:
            return None
    return None


def _darwin_thread_count() -> int | None:  # pragma: no cover - macOS only, unverified here
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.dylib", use_errno=True)
        # struct proc_taskinfo: six uint64 fields, then twelve int32, pti_threadnum the tenth.
        buffer = ctypes.create_string_buffer(96)
        got = libc.proc_pidinfo(os.getpid(), 4, ctypes.c_uint64(0), buffer, ctypes.c_int(96))  # 4: PROC_PIDTASKINFO
    except (OSError, AttributeError):
        return None
    if got != 96:
        return None
    count = int.from_bytes(buffer.raw[84:88], sys.byteorder, signed=True)
    return count if count > 0 else None


#: Runners the template keeps forked ahead, waiting for the judge to ask: a Run right after a Run
#: finds one whose set-up (namespaces, the run's init) is done, as fork mode's two spares do.
AHEAD = 2
#: With one runner still ahead, how long the template waits for the judge's next request before
#: it forks the replacement (as ``serve.REFILL_S``): a Run sent the moment the last one came back
#: runs without the fork beside it on a 2-core machine. A request that comes within it starts a
#: stream, and the runners it takes are replaced at once.
REFILL_S = 0.05


class _Ahead:
    """A runner forked ahead: the judge's end of its channel, the read end of its run's exit
    pipe, and a pidfd where there are pidfds (opened before the template could reap it)."""

    def __init__(self, pid: int, judge_end: int, exit_r: int, pidfd: int | None):
        self.pid, self.judge_end, self.exit_r, self.pidfd = pid, judge_end, exit_r, pidfd

    def fds(self) -> list[int]:
        return [self.judge_end, self.exit_r] + ([self.pidfd] if self.pidfd is not None else [])

    def close(self) -> None:
        for fd in self.fds():
            os.close(fd)


def split_off(config: dict[str, Any], runner_main: Callable[..., int]) -> tuple[socket.socket | None, str | None]:
    """Called first in a spawn-mode judge over the descriptor transport, before it starts any
    thread: load what a runner loads (``spare_preload``, a superset of the judge's) and, if this
    process is then one thread, fork. The parent stays behind as the runner template and never
    returns (``serve``, then ``os._exit``); the child returns as the judge, with its link to the
    template and the pages they share. Where it must not fork: (None, why), and this process is
    the judge alone, starting its runners with exec.

    The judge is the template's child, so it dies with it; the template, a subreaper, adopts
    what a forked run leaves behind and kills it before it says the run ended (``_sweep``)."""
    try:
        spare_preload(config.get("preload", []))
    except BaseException as exc:  # the judge's own preload fails the same way and says why
        return None, f"the runner template could not load torch: {type(exc).__name__}: {exc}"
    huge_pages = config.get("huge_pages", True) is not False
    # As a fork-mode worker does (``serve.main``): a fork and an exit then cost ~4x less.
    huge = linux.collapse_huge_pages() if huge_pages else None
    gc.freeze()  # forked processes' collections then leave these objects (and their pages) alone
    shared = linux.anonymous_ranges()  # the judge shares these pages: no later fold copies them
    why = _why_not_fork()
    if why is not None:
        return None, f"{why}: runners start with exec"
    judge_end, template_end = socket.socketpair()
    judge = fork()
    if judge == 0:
        template_end.close()
        linux.die_with_parent()  # not inherited across a fork
        linux.become_subreaper()  # for what runners it starts with exec leave behind, if it must
        return judge_end, None
    judge_end.close()
    code = 1
    try:
        close_other_fds({template_end.fileno()})  # the tutor's link is the judge's alone
        wire.send_frame(template_end, {"op": "warm", "rss_mb": linux.rss_mb(),
                                       "huge_pages_mb": None if huge is None else round(huge / 2**20, 1)})
        runner_config = {"role": "runner", "containment": config.get("containment", {}),
                         "preload": config.get("preload", [])}
        code = serve(template_end, judge, runner_config, runner_main, huge_pages, shared)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve(judge: socket.socket, judge_pid: int, runner_config: dict[str, Any], runner_main: Callable[..., int],
          huge_pages: bool, shared: list[tuple[int, int]]) -> int:
    """The template's life once the judge is forked: keep ``AHEAD`` runners forked, hand one to
    the judge for each ``runner`` request, load the deferred modules when asked
    (``load-deferred``: the runners forked ahead before are replaced by ones that have them),
    reap, and say how each handed-out runner ended on its exit pipe. Ends when the judge does."""
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    signal.set_wakeup_fd(wake_w)
    ahead: list[_Ahead] = []
    exits: dict[int, int] = {}  # a forked runner's pid: the write end of its run's exit pipe
    refused: str | None = None  # why this template no longer forks
    handed = float("-inf")  # when the judge last took a runner
    refill_at = float("-inf")  # when to fork the runners it took, with one still ahead
    try:
        while True:
            timeout = None
            if refused is None and len(ahead) < AHEAD:
                if not ahead or time.monotonic() >= refill_at:
                    refused = _fork_ahead(runner_config, runner_main, ahead, exits)
                    continue
                timeout = refill_at - time.monotonic()
            ready, _, _ = select.select([judge.fileno(), wake_r], [], [], timeout)
            if wake_r in ready:
                _drain(wake_r)
            _reap(exits, {judge_pid})
            if judge.fileno() not in ready:
                continue
            try:
                message, fds = wire.recv_frame(judge)
            except (wire.WireError, OSError):  # the judge went away
                return 0
            for fd in fds:
                os.close(fd)
            op = message.get("op")
            if op == "runner":
                if not ahead:
                    error = refused or "the runner template could not fork"
                    wire.send_frame(judge, {"op": "refused", "error": f"{error}: runners start with exec"})
                    continue
                taken = ahead.pop(0)
                try:
                    wire.send_frame(judge, {"op": "forked", "pid": taken.pid}, taken.fds())
                finally:
                    taken.close()
                # A request within REFILL_S of the last one is a stream (a grade batch, a key
                # held down): refill at once, so the next finds a runner ready (``serve`` too).
                now = time.monotonic()
                refill_at = now if now - handed < REFILL_S else now + REFILL_S
                handed = now
            elif op == "load-deferred":
                for waiting in ahead:  # forked without them: replaced by runners that have them
                    kill(waiting.pid, waiting.pidfd)
                    waiting.close()
                ahead.clear()
                load_deferred()  # imports only: no op runs here
                if huge_pages:  # what they added, folded too: forks and exits stay cheap. Not
                    # what the judge shares: a fold copies a region, and the judge would keep the old
                    # pages as its own (~70 MB here).
                    linux.collapse_huge_pages(shared)
                gc.freeze()
    finally:
        for pid in exits:
            kill(pid)


def _drain(fd: int) -> None:
    while True:
        try:
            if not os.read(fd, 512):
                return
        except BlockingIOError:
            return


def _fork_ahead(runner_config: dict[str, Any], runner_main: Callable[..., int], ahead: list[_Ahead],
                exits: dict[int, int]) -> str | None:
    """Fork one runner ahead (``spawn.runner_main``, its preload inherited); why not, when this
    process is not one thread and must not fork."""
    why = _why_not_fork()
    if why is not None:
        return why
    judge_end, runner_end = socket.socketpair()
    exit_r, exit_w = os.pipe()  # the relay, the run's init and this process say on it how the run ended
    pid = fork()
    if pid == 0:
        code = 71
        try:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            close_other_fds({runner_end.fileno(), exit_w})  # the judge's channel, other runs' pipes
            code = runner_main(dict(runner_config, fd=runner_end.fileno(), exit_fd=exit_w), preloaded=True)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    runner_end.close()
    try:
        pidfd: int | None = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    exits[pid] = exit_w
    ahead.append(_Ahead(pid, judge_end.detach(), exit_r, pidfd))
    return None


def _why_not_fork() -> str | None:
    """Why this process must not fork now (it is not one thread, or cannot tell), or None."""
    threads = thread_count()
    if threads == 1:
        return None
    return "the runner template cannot count its threads here" if threads is None else \
        f"the runner template has {threads} threads"


def _reap(exits: dict[int, int], known: set[int]) -> None:
    """Reap every runner that ended and, once what its run left behind is gone too (``_sweep``),
    say how it ended on its run's exit pipe, then close it. ``known``: children that are no
    run's (the judge)."""
    while True:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        except InterruptedError:
            continue
        if pid == 0:
            return
        exit_w = exits.pop(pid, None)
        if exit_w is None:  # the judge, or a run's leftover reaped by the way
            continue
        _sweep(known | set(exits))
        record = dict(ending(status, usage), by="template")
        try:
            os.write(exit_w, json.dumps(record).encode() + b"\n")
        except OSError:  # a runner discarded before it was handed out: no one reads its pipe
            pass
        os.close(exit_w)


def _sweep(known: set[int]) -> None:
    """Kill and reap what a run left behind: this process is a subreaper, so a forked runner's
    orphans come to it (without per-run namespaces; with them nothing outlives the run's init).
    Every child that is not ``known`` (the judge, runners still forked) is one. Only each such
    pid is waited for: a runner's own status must stay for ``_reap``. Off Linux children cannot
    be listed, and orphans go to init: the judge kills the run's session instead."""
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        strays = [pid for pid in linux.children(os.getpid()) if pid not in known]
        if not strays:
            return
        for pid in strays:
            kill(pid)
        for pid in strays:
            try:
                os.waitpid(pid, 0)
            except (ChildProcessError, InterruptedError):
                pass
