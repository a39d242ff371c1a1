"""Spawn mode: single-use interpreters started ahead of time, for where forking a warm worker is
not possible or not safe (no fork on Windows; on macOS, forking a process that loaded system
frameworks is unsafe), and where a fresh warm process answers faster than a fork (Linux, see
docs/performance.md).

A spare is two interpreters, each started with exec, never forked after torch ran an op:

* the **judge** (``judge_main``), started by the tutor, starts the runner interpreter at once
  (so the two import torch side by side), imports torch, the profiler and the probe, waits
  for the runner to be warm, says ready, waits for exactly one request (asking the runner to
  ``warm_up`` first when the spare waited or the run needs it: ``serve.SPARE_DEFERS``), and then
  does what a fork-mode keeper does (``keeper.keep``): judges, enforces wall time, reaps, sweeps,
  reports the verdict, and exits. It keeps the report pipe; learner code never runs in it.
* the **runner** (``runner_main``) is the judge's child: where per-run namespaces work it
  unshares them first and forks once (before importing anything heavy) so that it is PID 1 of
  its own namespace, exactly as in fork mode; then it imports the same modules but
  ``torch._dynamo``, tells the judge it is warm, warms up when the judge asks (imports it and
  runs one op under the profiler, whose first use costs about a second: a process that is never
  forked afterwards may pay it ahead, the libgomp hazard is about forking after an op), and
  runs the one request (``runner.runner``).

Same wire format, same report, same messages as fork mode.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from typing import Callable

from tutor.sandbox import wire
from tutor.sandbox.worker import linux
from tutor.sandbox.worker.judging import needs_dynamo
from tutor.sandbox.worker.keeper import _relay, fork, init_below, keep
from tutor.sandbox.worker.runner import runner, wait_for_request
from tutor.sandbox.worker.serve import IDLE_WARM_S, judge_preload, load_deferred, ready_message, spare_preload

#: How long the judge waits for its runner to import torch and warm up.
RUNNER_START_S = 300.0


def warm_up() -> None:
    """What the runner defers (``serve.SPARE_DEFERS``), then one op under the profiler (on
    constant tensors: the random state stays untouched). Its output is not the run's: it goes to
    /dev/null. A profiler that fails here fails again in the run that uses it, and says why there."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    try:
        load_deferred()
        import torch
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU]) as prof:
            torch.nn.functional.linear(torch.ones(2, 8), torch.ones(8, 8)).sum()
        prof.key_averages()
    except Exception:  # noqa: BLE001 - see above
        pass
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        for fd, target in zip(saved, (1, 2)):
            os.dup2(fd, target)
            os.close(fd)


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


def judge_main(config: dict) -> int:
    channel = socket.socket(fileno=int(config["fd"]))
    linux.die_with_parent()
    containment = config.get("containment", {})
    if containment.get("worker_uid") is not None:
        # bubblewrap started as root: leave root before anything else runs here.
        linux.become_user(int(containment["worker_uid"]))
    linux.become_subreaper()
    started = time.perf_counter()
    judge_end, runner_end = socket.socketpair()
    exit_r, exit_w = os.pipe()  # the relay says on it how the runner ended (see keeper._relay)
    runner_config = {"role": "runner", "fd": runner_end.fileno(), "exit_fd": exit_w, "containment": containment,
                     "preload": config.get("preload", [])}
    proc = subprocess.Popen([sys.executable, "-m", "tutor.sandbox.worker", json.dumps(runner_config)],
                            pass_fds=[runner_end.fileno(), exit_w], stdin=subprocess.DEVNULL)
    runner_end.close()
    os.close(exit_w)
    try:
        loaded, failed = judge_preload(config.get("preload", []))  # no warm-up: ops run in the runner
        judge_end.settimeout(RUNNER_START_S)
        warm, stray = wire.recv_frame(judge_end)
        judge_end.settimeout(None)
        for fd in stray:
            os.close(fd)
        if warm.get("op") != "warm":
            raise RuntimeError(f"the runner did not warm up: {warm.get('error')}")
    except BaseException as exc:  # torch failed to import here or in the runner: say why, stop
        proc.kill()
        why = "the runner interpreter ended before it was ready" if isinstance(exc, wire.WireError) else \
            f"{type(exc).__name__}: {exc}"
        wire.send_frame(channel, {"op": "failed", "error": why})
        return 1
    ready = ready_message(loaded, failed, time.perf_counter() - started, "spawn")
    ready["runner_rss_mb"] = warm.get("rss_mb")
    wire.send_frame(channel, ready)
    warmed = False
    try:
        if config.get("warm_when_idle", True) and not select.select([channel], [], [], IDLE_WARM_S)[0]:
            # A learner is reading: warm up both.
            warm_runner(judge_end, warm, meanwhile=load_deferred)
            warmed = True
        message, fds = wire.recv_frame(channel)
    except (wire.WireError, OSError):
        message, fds = {}, []
    if message.get("op") != "run":  # "exit", or the tutor went away: the runner goes too
        for fd in fds:
            os.close(fd)
        proc.kill()
        proc.wait()
        return 0
    if not warmed and needs_dynamo(message):  # before the run starts: its time is its own
        warm_runner(judge_end, warm)
    ctl_r, ctl_w = os.pipe()
    threading.Thread(target=_relay_cancels, args=(channel, message["id"], ctl_w), daemon=True).start()
    def done(verdict: dict) -> None:
        # The CPU time is the run's: what the runner spent importing and warming up is not.
        cpu, before = verdict.get("cpu_time"), warm.get("cpu_s")
        if isinstance(cpu, (int, float)) and isinstance(before, (int, float)):
            verdict["cpu_time"] = max(0.0, cpu - before)
        verdict.update(op="done", id=message["id"])
        wire.send_frame(channel, verdict)

    found = keep(proc.pid, judge_end, message, fds, ctl_r, containment,
                 exit_r if containment.get("namespaces") else None, done)
    proc.returncode = 0  # reaped by keep (wait4); Popen must not wait for it again
    if found is not None:
        done(found)
    return 0


def _relay_cancels(channel: socket.socket, run_id: object, ctl_w: int) -> None:
    """What the fork-mode worker does for its keeper: a cancel for this run, an exit, or the
    tutor going away becomes a byte on the control pipe ``keep`` watches."""
    while True:
        try:
            control, stray = wire.recv_frame(channel)
        except (wire.WireError, OSError):
            control, stray = {"op": "exit"}, []
        for fd in stray:
            os.close(fd)
        op = control.get("op")
        if op == "exit" or (op == "cancel" and control.get("id") == run_id):
            try:
                os.write(ctl_w, b"C\n")
            except OSError:
                return
            if op == "exit":
                return


def runner_main(config: dict) -> int:
    channel = socket.socket(fileno=int(config["fd"]))
    exit_w = int(config["exit_fd"]) if config.get("exit_fd") is not None else None
    linux.die_with_parent()
    containment = config.get("containment", {})
    if exit_w is not None and not containment.get("namespaces"):  # no relay: the judge waits for this process
        os.close(exit_w)
        exit_w = None
    if containment.get("namespaces"):
        # Still one thread, nothing imported: unshare here, then fork once so the runner is
        # PID 1 of the run's namespace; this process stays as the relay (see keeper._start_runner).
        why = linux.unshare_run_namespaces()
        if why is not None:
            wire.send_frame(channel, {"op": "failed", "error": f"cannot create the run's namespaces: {why}"})
            return 72
        init_r, init_w = os.pipe()
        child = fork()
        if child:
            channel.close()
            os.close(init_w)
            _relay(child, exit_w, init_r)
        os.close(init_r)
        linux.die_with_parent()
        # PID 1 stays a tiny init of ours; the runner is its child (signals it sends itself land)
        init_below(init_w, {exit_w} if exit_w is not None else set())
    return warm_and_run(channel, config)


def warm_and_run(channel: socket.socket, config: dict, mark: Callable[[], None] | None = None) -> int:
    """The runner's second half in either transport: preload, (``mark`` the end of start-up
    output), tell the judge it is warm, warm up when the judge asks (``warm_runner``), run the
    one request."""
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
