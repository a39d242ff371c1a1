"""Spawn mode: single-use interpreters started ahead of time, for where forking a warm worker is
not possible or not safe (no fork on Windows; on macOS, forking a process that loaded system
frameworks is unsafe), and where a fresh warm process answers faster than a fork (Linux, see
docs/performance.md).

A spare is two interpreters, each started with exec, never forked after torch ran an op:

* the **judge** (``judge_main``), started by the tutor, starts the runner interpreter at once
  (so the two import torch side by side), imports torch, the profiler and the probe, waits
  for the runner to be warm, says ready, waits for exactly one request (asking the runner to
  ``warm_up`` first when the spare waited or the run needs it: ``startup.SPARE_DEFERS``), and
  then does what a fork-mode keeper does (the transport's ``keep``): judges, enforces wall time,
  reaps, sweeps, reports the verdict, and exits. It keeps the report; learner code never runs
  in it.
* the **runner** (``runner_main``) is the judge's child: it imports the same modules but
  ``torch._dynamo``, tells the judge it is warm, warms up when the judge asks (imports it and
  runs one op under the profiler, whose first use costs about a second: a process that is never
  forked afterwards may pay it ahead, the libgomp hazard is about forking after an op), and
  runs the one request (``runner.runner``).

This is the one loop of a spare's life, whatever carries its frames. A ``Transport`` says how
the processes reach each other: ``fds.FdsTransport`` (a socket that passes descriptors, Linux
and macOS; the runner is PID 1 of its own namespace where namespaces work) or
``pipes.PipeTransport`` (the judge's stdin and stdout, Windows). Same wire format, same report,
same messages as fork mode.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from typing import Callable, Protocol

from tutor.sandbox import wire
from tutor.sandbox.worker import linux
from tutor.sandbox.worker.judging import needs_dynamo
from tutor.sandbox.worker.runner import runner, wait_for_request
from tutor.sandbox.worker.startup import (IDLE_WARM_S, RUNNER_START_S, judge_preload, load_deferred, ready_message,
                                          spare_preload, warm_up)


class Transport(Protocol):
    """How a spare's judge reaches the tutor and its runner, and keeps a run."""

    #: The judge's link to the tutor.
    tutor: wire.Link
    #: What the spare's ready message adds (the tutor's view of the transport).
    ready_extra: dict

    def start_runner(self, runner_config: dict) -> None:
        """Start the runner interpreter (``runner_main``) with ``runner_config`` and whatever
        the transport adds to it."""

    def runner_channel(self) -> socket.socket:
        """The judge's end of the runner's channel, once the runner reached it (it may not have
        said it is warm yet); WireError when it never does."""

    def end_runner(self) -> None:
        """Kill the runner (and what it started, where the transport can tell) and wait for it."""

    def keep(self, judge_end: socket.socket, message: dict, fds: list[int], ctl: int, containment: dict,
             early: Callable[[dict], None]) -> dict | None:
        """Judge the run, enforce its wall time (``ctl`` readable: cancelled), reap and sweep.
        The verdict, or None when it was handed to ``early`` already (nothing of the run left)."""


def _transport(config: dict) -> Transport:
    if config.get("channel") == "stdio":  # no descriptor passing here (Windows)
        from tutor.sandbox.worker.pipes import PipeTransport

        return PipeTransport(config)
    from tutor.sandbox.worker.fds import FdsTransport

    return FdsTransport(config)


def judge_main(config: dict) -> int:
    """The judge of one spare: its whole life, over either transport."""
    transport = _transport(config)
    tutor = transport.tutor
    containment = config.get("containment", {})
    started = time.perf_counter()
    try:
        transport.start_runner({"role": "runner", "containment": containment, "preload": config.get("preload", [])})
        loaded, failed = judge_preload(config.get("preload", []))  # no warm-up: ops run in the runner
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
        tutor.send({"op": "failed", "error": why})
        return 1
    ready = ready_message(loaded, failed, time.perf_counter() - started, "spawn")
    ready["runner_rss_mb"] = warm.get("rss_mb")
    ready["warm_up_s"] = RUNNER_START_S  # the most a warm-up before the run may take (``started``)
    ready.update(transport.ready_extra)
    tutor.send(ready)
    warmed = False
    try:
        try:
            message, fds = tutor.recv(IDLE_WARM_S if config.get("warm_when_idle", True) else None)
        except TimeoutError:  # a learner is reading: warm up both
            warm_runner(judge_end, warm, meanwhile=load_deferred)
            warmed = True
            message, fds = tutor.recv()
    except (wire.WireError, OSError):
        message, fds = {}, []
    if message.get("op") != "run":  # "exit", or the tutor went away: the runner goes too
        for fd in fds:
            os.close(fd)
        transport.end_runner()
        return 0
    if not warmed and needs_dynamo(message):  # before the run starts: its time is its own
        warm_runner(judge_end, warm)
    run_id = message["id"]
    try:  # the tutor's wait for a verdict starts now, not when it sent the request
        tutor.send({"op": "started", "id": run_id})
    except OSError:
        pass
    ctl_judge, ctl_relay = socket.socketpair()
    threading.Thread(target=relay_cancels, args=(tutor, run_id, ctl_relay), daemon=True).start()
    sent: list[bool] = []

    def done(verdict: dict) -> None:
        # The CPU time is the run's: what the runner spent importing and warming up is not.
        cpu, before = verdict.get("cpu_time"), warm.get("cpu_s")
        if isinstance(cpu, (int, float)) and isinstance(before, (int, float)):
            verdict["cpu_time"] = max(0.0, cpu - before)
        verdict.update(op="done", id=run_id)
        try:
            tutor.send(verdict)
            sent.append(True)
        except OSError:  # the tutor went away during the run
            pass

    found = transport.keep(judge_end, message, fds, ctl_judge.fileno(), containment, done)
    if found is not None:
        done(found)
    return 0 if sent else 1


def warm_runner(judge_end: socket.socket, warm: dict, meanwhile: Callable[[], None] | None = None) -> None:
    """Ask the runner to warm up (``warm_up``) and wait until it has, running ``meanwhile`` here
    in the meantime. Its answer replaces ``warm``: the CPU it counts is still from before any
    learner code ran. A runner that ended here fails its run, whose verdict says so."""
    try:
        wire.send_frame(judge_end, {"op": "warm-up"})
        if meanwhile is not None:
            meanwhile()
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


def relay_cancels(tutor: wire.Link, run_id: object, ctl: socket.socket) -> None:
    """What the fork-mode worker does for its keeper: a cancel for this run, an exit, or the
    tutor going away becomes a byte on ``ctl``, which the run's keeper watches."""
    while True:
        try:
            control, stray = tutor.recv()
        except (wire.WireError, OSError):
            control, stray = {"op": "exit"}, []
        for fd in stray:
            os.close(fd)
        op = control.get("op")
        if op == "exit" or (op == "cancel" and control.get("id") == run_id):
            try:
                ctl.send(b"C")
            except OSError:
                return
            if op == "exit":
                return


def runner_main(config: dict) -> int:
    """The runner of one spare, over either transport: reach the judge (``runner_channel``),
    preload, (``mark`` the end of start-up output), tell the judge it is warm, warm up when the
    judge asks (``warm_runner``), run the one request."""
    if config.get("connect") is not None:
        from tutor.sandbox.worker.pipes import runner_channel
    else:
        from tutor.sandbox.worker.fds import runner_channel  # type: ignore[assignment]
    reached = runner_channel(config)
    if isinstance(reached, int):
        return reached
    channel, mark = reached
    try:
        spare_preload(config.get("preload", []))
    except BaseException as exc:
        wire.send_frame(channel, {"op": "failed", "error": f"{type(exc).__name__}: {exc}"})
        return 1
    if mark is not None:
        mark()
    # Sent before any learner code runs, so the judge may trust them: the CPU spent so far.
    wire.send_frame(channel, {"op": "warm", "rss_mb": linux.rss_mb(), "cpu_s": time.process_time()})
    request = wait_for_request(channel)
    while request[0].get("op") == "warm-up":
        for fd in request[1]:
            os.close(fd)
        warm_up()
        wire.send_frame(channel, {"op": "warm", "rss_mb": linux.rss_mb(), "cpu_s": time.process_time()})
        request = wait_for_request(channel)
    runner(channel, config.get("containment", {}), request)
    return 0
