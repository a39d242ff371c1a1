"""Spawn mode: interpreters started ahead of time, for where forking a warm worker is not
possible or not safe (no fork on Windows; on macOS, forking a process that loaded system
frameworks is unsafe), and where a fresh warm process answers faster than a fork (Linux, see
docs/performance.md).

A spare is a judge and a runner, neither forked after torch ran an op in its parent:

* the **judge** (``judge_main``) imports torch, the profiler and the probe, has a runner made,
  waits for it to be warm, says ready, waits for one request (asking the runner to ``warm_up``
  first when the spare waited or the run needs it: ``startup.SPARE_DEFERS``), and then does what
  a fork-mode keeper does (the transport's ``keep``): judges, enforces wall time, reaps, sweeps,
  reports the verdict. Then it takes the next runner and says ready again, up to the number of
  runs the tutor gave it (``process.JUDGE_RUNS``), and exits. It keeps the report; learner code
  never runs in it, so it need not be fresh per run.
* the **runner** (``runner_main``), one per run: it has the same modules but ``torch._dynamo``,
  tells the judge it is warm, warms up when the judge asks (imports it, and runs nothing: it still
  holds its capabilities then, and a thread an op started would keep them; ``startup.warm_up``),
  and runs the one request (``runner.runner``).

Where they come from is the transport's business. Over the descriptor transport where there is a
fork, the interpreter the tutor started loads what a runner loads, forks the judge and stays
behind as the **runner template**, which forks every runner (``template.py``: one thread at every
fork, never an op); elsewhere (no fork, a template that must not fork, ``runners: "fresh"``) the
judge starts each runner as an interpreter of its own, with exec, and the two import torch side by
side.

The judge's loop is the same whatever carries its frames. A ``Transport`` says how the processes
reach each other: ``fds.FdsTransport`` (a socket that passes descriptors, Linux and macOS; the
runner is PID 1 of its own namespace where namespaces work) or ``pipes.PipeTransport`` (the
judge's stdin and stdout, Windows). Same wire format, same report, same messages as fork mode.
"""

from __future__ import annotations

import gc
import os
import queue
import socket
import sys
import threading
import time
from typing import TYPE_CHECKING, Callable, Protocol

from tutor.sandbox import wire
from tutor.child.worker import linux
from tutor.child.worker.judging import needs_dynamo
from tutor.child.worker.runner import ahead_of_the_request, profiles_safely_ahead, runner, settle_ahead, wait_for_request
from tutor.child.worker.startup import IDLE_WARM_S, RUNNER_START_S, SPARE_DEFERS, judge_preload, ready_message, spare_preload, warm_profiler, warm_up

if TYPE_CHECKING:
    from typing import Any


class Transport(Protocol):
    """How a spare's judge reaches the tutor and its runner, and keeps a run."""

    #: The judge's link to the tutor.
    tutor: wire.Link
    #: What the spare's ready message adds (the tutor's view of the transport).
    ready_extra: dict[str, Any]

    def start_runner(self, runner_config: dict[str, Any]) -> None:
        """Start the runner interpreter (``runner_main``) with ``runner_config`` and whatever
        the transport adds to it."""

    def runner_channel(self) -> socket.socket:
        """The judge's end of the runner's channel, once the runner reached it (it may not have
        said it is warm yet); WireError when it never does."""

    def load_deferred(self) -> None:
        """Have the runners started from now on come with ``startup.SPARE_DEFERS`` loaded: the
        runner template loads them once (``template.py``); a runner started with exec loads them
        itself when it warms up, so there this does nothing."""

    def end_runner(self) -> None:
        """Kill the runner (and what it started, where the transport can tell) and wait for it."""

    def keep(self, judge_end: socket.socket, message: dict[str, Any], fds: list[int], ctl: int,
             containment: dict[str, Any],
             early: Callable[[dict[str, Any]], None]) -> dict[str, Any] | None:
        """Judge the run, enforce its wall time (``ctl`` readable: cancelled), reap and sweep.
        The verdict, or None when it was handed to ``early`` already (nothing of the run left)."""


def _transport(config: dict[str, Any]) -> Transport:
    if config.get("channel") == "stdio":  # no descriptor passing here (Windows)
        from tutor.child.worker.pipes import PipeTransport

        return PipeTransport(config)
    from tutor.child.worker.fds import FdsTransport

    return FdsTransport(config, runner_main)


def judge_main(config: dict[str, Any]) -> int:
    """The judge of one spare: its whole life, over either transport. It serves up to
    ``config["runs"]`` runs (``JUDGE_RUNS`` from the tutor), each in a runner interpreter of its
    own started for it, and says ready before each; it never runs learner code, so it need not
    be fresh: only the runner is."""
    started = time.perf_counter()
    transport = _transport(config)  # first: it may fork this process (no thread may have started)
    tutor = transport.tutor
    containment = config.get("containment", {})
    preload = config.get("preload", [])
    inbox = Inbox(tutor, bool(config.get("warm_when_idle", True)))
    judged: tuple[list[str], dict[str, str]] | None = None
    start_state: dict[str, Any] = {}  # torch_state(), once torch is loaded
    runs = max(1, int(config.get("runs", 1)))
    for left in range(runs, 0, -1):
        try:
            transport.start_runner({"role": "runner", "containment": containment, "preload": preload})
            if judged is None:  # once, while the first runner imports torch beside it
                judged = judge_preload(preload)  # no warm-up: ops run in the runner
                start_state = torch_state()
                gc.freeze()  # what is loaded now lives as long as the judge: see reset_between_runs
            judge_end = transport.runner_channel()
            judge_end.settimeout(RUNNER_START_S)
            warm, stray = wire.recv_frame(judge_end)
            judge_end.settimeout(None)
            for fd in stray:
                os.close(fd)
            if warm.get("op") != "warm":
                raise RuntimeError(f"the runner did not warm up: {warm.get('error')}")
        except BaseException as exc:  # torch failed to import here or in the runner: say why, stop
            transport.end_runner()
            why = "the runner interpreter ended before it was ready" if isinstance(exc, wire.WireError) else \
                f"{type(exc).__name__}: {exc}"
            try:
                tutor.send({"op": "failed", "error": why})
            except OSError:
                pass
            return 1
        ready = ready_message(*judged, time.perf_counter() - started, "spawn")
        ready["runner_rss_mb"] = warm.get("rss_mb")
        ready["warm_up_s"] = RUNNER_START_S  # the most a warm-up before the run may take (``started``)
        ready["runs_left"] = left  # this run included: after it, another ready comes while > 1
        ready.update(transport.ready_extra)
        try:
            tutor.send(ready)
        except OSError:  # the tutor went away
            transport.end_runner()
            return 0
        try:
            outcome = judge_one(transport, inbox, judge_end, warm, containment)
        finally:
            judge_end.close()
        # "exit": asked to, or the tutor went away; "lost": during the run; "last": the tutor
        # said it will ask for no other run, so no runner is started for nothing.
        if outcome != "sent":
            return 1 if outcome == "lost" else 0
        reset_between_runs(start_state)
        started = time.perf_counter()
    return 0


#: How long (seconds) a judge whose runner has the profiler's machinery waits for a request before
#: the runner takes the profiler's first session (``warm_runner``): a Run sent at once (the
#: second of two, a stream) finds the runner free.
PROFILE_WARM_S = 0.05


def judge_one(transport: Transport, inbox: "Inbox", judge_end: socket.socket, warm: dict[str, Any],
              containment: dict[str, Any]) -> str:
    """One run on a warm runner: wait for its request (warming up while a learner reads, unless
    the tutor said the next runs need no warm-up: ``Inbox.warm_when_idle``), keep it, send the
    verdict: "sent" ("last" when the request said the tutor will ask for no other run: no next
    runner is started for nothing); "lost" when the tutor went away during the run, "exit" when
    it said exit or went away before one."""
    warmed = False
    idle_since = time.monotonic()
    # A runner forked after its template loaded the profiler's machinery has only the profiler's
    # first session to take: soon, not after a learner's second of reading.
    delay = PROFILE_WARM_S if warm.get("deferred") else IDLE_WARM_S
    while True:
        wait = max(0.0, idle_since + delay - time.monotonic()) if inbox.warm_when_idle and not warmed else None
        try:
            message, fds = inbox.next(wait)
        except TimeoutError:  # a learner is reading: warm the runner up (and the template, for the next ones)
            transport.load_deferred()
            warm_runner(judge_end, warm, profile=True)
            warmed = True
            continue
        if message.get("op") != "idle":  # "idle": the tutor changed its mind about warming up
            break
    if message.get("op") != "run":  # "exit", or the tutor went away: the runner goes too
        for fd in fds:
            os.close(fd)
        transport.end_runner()
        return "exit"
    if not warmed and not warm.get("deferred") and needs_dynamo(message):  # before the run starts: its time is its own
        transport.load_deferred()
        warm_runner(judge_end, warm)
        warmed = True
    run_id = message["id"]
    if warmed:  # the request may have waited for a warm-up: the tutor's wait for a verdict starts now
        try:  # (said only then: it wakes the tutor beside the run; the ready message bounds a warm-up)
            transport.tutor.send({"op": "started", "id": run_id})
        except OSError:
            pass
    ctl_judge, ctl_relay = socket.socketpair()
    inbox.watch(run_id, ctl_relay)
    sent: list[bool] = []

    def done(verdict: dict[str, Any]) -> None:
        # The CPU time is the run's: what the runner spent importing and warming up is not.
        cpu, before = verdict.get("cpu_time"), warm.get("cpu_s")
        if isinstance(cpu, (int, float)) and isinstance(before, (int, float)):
            verdict["cpu_time"] = max(0.0, cpu - before)
        verdict.update(op="done", id=run_id)
        try:
            transport.tutor.send(verdict)
            sent.append(True)
            linux.let_the_woken_run()  # the tutor, before the relay's exit and the next runner's start
        except OSError:  # the tutor went away during the run
            pass

    try:
        found = transport.keep(judge_end, message, fds, ctl_judge.fileno(), containment, done)
        if found is not None:
            done(found)
    finally:
        inbox.unwatch()
        ctl_judge.close()
        ctl_relay.close()
    if not sent:
        return "lost"
    return "last" if message.get("last") is True else "sent"


def reset_between_runs(start: dict[str, Any]) -> None:
    """What a check's code (the pack's, which runs here; the learner's never does) or a mode
    adopted from the learner's call (``remote.adopt_modes``) may have changed in this
    interpreter's torch, put back as ``start`` (``torch_state``) had it before the next run is
    judged. (Each run's own judge-side objects and their facts go at its end:
    ``remote.Session.forget``.)"""
    import torch

    torch.set_grad_enabled(start["grad_enabled"])
    torch.set_default_dtype(start["default_dtype"])
    torch.set_autocast_enabled("cpu", start["autocast"])
    torch.set_autocast_dtype("cpu", start["autocast_dtype"])
    if torch.get_num_threads() != start["threads"]:
        torch.set_num_threads(start["threads"])
    # Only when a run changed it: its first call imports what costs 1.6 s of CPU here.
    if (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()) != \
            (start["deterministic"], start["deterministic_warn_only"]):
        torch.use_deterministic_algorithms(start["deterministic"], warn_only=start["deterministic_warn_only"])
    torch.autograd.set_detect_anomaly(start["anomaly"])
    # A run's mirrored modules and its session refer to each other: free them now. What the
    # judge loaded before its first run was frozen out of the collector's sight (``gc.freeze``
    # in ``judge_main``): a full collection over torch's objects took 0.1 s of CPU per run.
    gc.collect()
    linux.trim_heap()  # what the last run's data took, handed back to the system


def torch_state() -> dict[str, Any]:
    """The state ``reset_between_runs`` puts back, read when the judge is ready for its first run."""
    import torch

    return {"grad_enabled": torch.is_grad_enabled(), "default_dtype": torch.get_default_dtype(),
            "autocast": torch.is_autocast_enabled("cpu"), "autocast_dtype": torch.get_autocast_dtype("cpu"),
            "threads": torch.get_num_threads(), "deterministic": torch.are_deterministic_algorithms_enabled(),
            "deterministic_warn_only": torch.is_deterministic_algorithms_warn_only_enabled(),
            "anomaly": torch.is_anomaly_enabled()}


class Inbox:
    """The judge's only reader of the tutor's link, for its whole life. A run request or an
    exit goes to the judge's loop (``next``); a cancel of the run in flight, or an exit or the
    tutor going away during it, also becomes a byte on that run's ``ctl`` socket, which its
    keeper watches (what the fork-mode worker does for its keepers). A cancel that comes
    before its run is watched is remembered and delivered when it is."""

    def __init__(self, tutor: wire.Link, warm_when_idle: bool = True):
        #: Whether an idle spare loads ``startup.SPARE_DEFERS`` (``IDLE_WARM_S`` after it said
        #: ready): set at start, changed by the tutor's ``idle`` messages (``Sandbox.expect``).
        self.warm_when_idle = warm_when_idle
        self._queue: "queue.SimpleQueue[tuple[dict[str, Any], list[int]]]" = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._run: tuple[object, socket.socket] | None = None
        self._cancelled: set[object] = set()
        self._ended = False
        threading.Thread(target=self._read, args=(tutor,), name="tutor-judge-inbox", daemon=True).start()

    def _read(self, tutor: wire.Link) -> None:
        while True:
            try:
                message, fds = tutor.recv()
            except (wire.WireError, OSError):
                message, fds = {"op": "exit"}, []
            op = message.get("op")
            if op == "cancel":
                for fd in fds:
                    os.close(fd)
                with self._lock:
                    if self._run is not None and message.get("id") == self._run[0]:
                        _poke(self._run[1])
                    else:
                        self._cancelled.add(message.get("id"))
                continue
            if op == "idle":  # the judge's loop, if it waits, looks again (``judge_one``)
                for fd in fds:
                    os.close(fd)
                self.warm_when_idle = message.get("warm") is True
                self._queue.put((message, []))
                continue
            if op == "exit":
                with self._lock:
                    self._ended = True
                    if self._run is not None:
                        _poke(self._run[1])
            self._queue.put((message, fds))
            if op == "exit":
                return

    def next(self, timeout: float | None = None) -> tuple[dict[str, Any], list[int]]:
        """The next request or exit; TimeoutError after ``timeout`` seconds without one."""
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError from None

    def watch(self, run_id: object, ctl: socket.socket) -> None:
        with self._lock:
            self._run = (run_id, ctl)
            if run_id in self._cancelled or self._ended:
                _poke(ctl)
            self._cancelled.clear()

    def unwatch(self) -> None:
        with self._lock:
            self._run = None


def _poke(ctl: socket.socket) -> None:
    try:
        ctl.send(b"C")
    except OSError:
        pass


def warm_runner(judge_end: socket.socket, warm: dict[str, Any], profile: bool = False) -> None:
    """Ask the runner to warm up (``warm_up``; ``profile``: a learner is reading, so the profiler's
    first session too, ``warm_profiler``) and wait until it has. Its answer replaces ``warm``: the
    CPU it counts is still from before any learner code ran. A runner that ended here fails its
    run, whose verdict says so. (The judge itself loads none of it: its checks profile with
    ``refs.profile``, which never imports ``torch._dynamo``.)"""
    try:
        wire.send_frame(judge_end, {"op": "warm-up", "profile": profile})
        judge_end.settimeout(RUNNER_START_S)
        reply, stray = wire.recv_frame(judge_end)
    except (wire.WireError, OSError):
        return
    finally:
        judge_end.settimeout(None)
    for fd in stray:
        os.close(fd)
    if reply.get("op") == "warm":
        warm.update(reply)


def runner_main(config: dict[str, Any], preloaded: bool = False) -> int:
    """The runner of one spare, over either transport: reach the judge (``runner_channel``),
    preload (``preloaded``: forked by the runner template, which did), (``mark`` the end of
    start-up output), tell the judge it is warm, warm up when the judge asks (``warm_runner``),
    run the one request."""
    if config.get("connect") is not None:
        from tutor.child.worker.pipes import runner_channel
    else:
        from tutor.child.worker.fds import runner_channel  # type: ignore[assignment]
    reached = runner_channel(config)
    if isinstance(reached, int):
        return reached
    channel, mark = reached
    try:
        if not preloaded:
            spare_preload(config.get("preload", []))
    except BaseException as exc:
        wire.send_frame(channel, {"op": "failed", "error": f"{type(exc).__name__}: {exc}"})
        return 1
    if mark is not None:
        mark()
    containment = config.get("containment", {})
    channel, ahead, why = ahead_of_the_request(channel, containment)
    why = settle_ahead(ahead, why, containment)
    # Sent before any learner code runs, so the judge may trust them: the CPU spent so far, and
    # whether the runner has the profiler's machinery already (forked from a template that loaded it).
    wire.send_frame(channel, {"op": "warm", "rss_mb": linux.rss_mb(), "cpu_s": time.process_time(),
                              "deferred": all(name in sys.modules for name in SPARE_DEFERS)})
    request = wait_for_request(channel)
    while request[0].get("op") == "warm-up":
        for fd in request[1]:
            os.close(fd)
        warm_up()
        if request[0].get("profile") is True and why is None and profiles_safely_ahead(containment):
            warm_profiler()
        why = settle_ahead(ahead, why, containment)  # the warm-up grew the address space
        wire.send_frame(channel, {"op": "warm", "rss_mb": linux.rss_mb(), "cpu_s": time.process_time()})
        request = wait_for_request(channel)
    runner(channel, containment, request, (ahead, why))
    return 0
