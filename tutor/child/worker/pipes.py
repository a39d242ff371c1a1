"""Spawn mode's pipe transport: a spare for where descriptors cannot be passed and only sockets
can be waited on (Windows). The judge loop is the same (``spawn.judge_main``), and so are the
wire format, report and messages; what differs is how the three processes reach each other:

* the tutor talks to the **judge** over the judge's stdin and stdout (``wire.PipeLink``: frames,
  read by a thread). The judge moves its stdout aside first, so nothing it prints can corrupt a
  frame;
* the judge starts the **runner** with its stdout and stderr on pipes the judge reads (a thread
  each) and relays to the tutor as ``output`` frames for the run, under the run's caps. The
  runner's channel to the judge (requests, the probe's questions) is a loopback TCP connection
  that the runner opens to a listener the judge closes once it is taken; the runner proves
  itself with a secret it read from its stdin, which nobody else can see. Anything the runner
  wrote while warming up is dropped: the runner marks its end with a second secret;
* cancels reach the judge as frames and wake it through a socket pair (on Windows ``select``
  takes sockets only); wall time is kept by a thread that waits for the runner;
* on Windows the runner is held in a Job Object (``windows.py``), so what it started ends with
  it; elsewhere this transport is only used by tests, which emulate Windows on Linux
  (``tests/platform_emulation.py``).

Standard library only until torch loads, like the rest of the child side.
"""

from __future__ import annotations

import base64
import hmac
import json
import os
import secrets
import select
import socket
import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING, IO, Callable

from tutor.sandbox import wire
from tutor.sandbox.limits import Limits
from tutor.child.worker import windows
from tutor.child.worker.keeper import judge, runner_end_message
from tutor.child.worker.startup import RUNNER_START_S

if TYPE_CHECKING:
    from typing import Any


#: After the runner ends, how long its output may take to drain (longer only when something it
#: started still holds the pipe, which ends with the run's job where there is one).
DRAIN_S = 1.0


class _Relay:
    """One of the runner's output pipes: read by a thread from the spare's start; what comes
    before the warm-up marker is dropped, what comes after goes to the tutor as frames of the
    run, up to the stream's cap (the rest is read and dropped, so the runner never blocks)."""

    def __init__(self, pipe: IO[bytes], stream: int, marker: bytes):
        self.pipe, self.stream, self.marker = pipe, stream, marker
        self._lock = threading.Lock()
        self._held = bytearray()  # after the marker, before the run is attached
        self._seen_marker = False
        self._send: Callable[[bytes], None] | None = None
        self._left = 0
        self.thread = threading.Thread(target=self._read, name=f"tutor-relay-{stream}", daemon=True)
        self.thread.start()

    def attach(self, send: Callable[[bytes], None], cap: int) -> None:
        with self._lock:
            self._send, self._left = send, cap
            held, self._held = bytes(self._held), bytearray()
        if held:
            self._forward(held)

    def _forward(self, chunk: bytes) -> None:
        with self._lock:
            send, take = self._send, min(len(chunk), self._left)
            if send is None:
                self._held += chunk[: max(0, (1 << 20) - len(self._held))]
                return
            self._left -= take
        if take:
            try:
                send(chunk[:take])
            except OSError:
                pass

    def _read(self) -> None:
        pending = b""
        while True:
            try:
                chunk = os.read(self.pipe.fileno(), 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            if not self._seen_marker:
                pending += chunk
                at = pending.find(self.marker)
                if at < 0:
                    pending = pending[-len(self.marker):]  # the marker may come split in two reads
                    continue
                self._seen_marker = True
                chunk, pending = pending[at + len(self.marker):], b""
                if not chunk:
                    continue
            self._forward(chunk)


class PipeTransport:
    """The judge's side: its link to the tutor is its own stdin and stdout."""

    ready_extra: dict[str, Any] = {"transport": "pipes"}

    def __init__(self, config: dict[str, Any]):
        link_out = os.dup(1)
        os.dup2(2, 1)  # print() here goes to the log, never into a frame
        self.tutor: wire.Link = wire.PipeLink(0, link_out, name="tutor-judge-link")
        self.listener: socket.socket | None = None
        self.token = self.marker = ""
        self.proc: subprocess.Popen[bytes] | None = None
        self.job: windows.Job | None = None
        self.relays: list[_Relay] = []

    def start_runner(self, runner_config: dict[str, Any]) -> None:
        # Each runner its own listener and secrets: the judge serves run after run.
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.token, self.marker = secrets.token_hex(16), secrets.token_hex(16)
        runner_config = dict(runner_config, connect=self.listener.getsockname()[1])
        group = {"start_new_session": True} if hasattr(os, "setsid") else \
            {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
        proc = self.proc = subprocess.Popen(
            [sys.executable, "-m", "tutor.child.worker", json.dumps(runner_config)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **group)
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.relays = [_Relay(proc.stdout, 0, self.marker.encode()), _Relay(proc.stderr, 1, self.marker.encode())]
        self.job = windows.Job(proc.pid) if windows.AVAILABLE else None
        proc.stdin.write(f"{self.token} {self.marker}\n".encode())
        proc.stdin.close()

    def runner_channel(self) -> socket.socket:
        assert self.proc is not None and self.listener is not None
        try:
            return _accept(self.listener, self.token, self.proc)
        finally:
            self.listener.close()

    def load_deferred(self) -> None:  # a runner started with exec loads them as it warms up
        pass

    def end_runner(self) -> None:
        if self.listener is not None:
            self.listener.close()
        if self.proc is not None:
            _end(self.proc, self.job)

    def keep(self, judge_end: socket.socket, message: dict[str, Any], fds: list[int], ctl: int,
             containment: dict[str, Any],
             early: Callable[[dict[str, Any]], None]) -> dict[str, Any] | None:
        assert self.proc is not None
        run_id = message["id"]
        # Past the tutor's caps (it cuts, and cancels the run) with room to spare, so it sees the overflow.
        cap = Limits.from_wire(message["limits"]).output_kb * 1024 + 128 * 1024
        for relay in self.relays:
            relay.attach(_sender(self.tutor, run_id, relay.stream), cap)
        return _keep(self.proc, self.job, judge_end, message, ctl, _sender(self.tutor, run_id, 2), self.relays,
                    containment)


def _sender(link: wire.Link, run_id: object, stream: int) -> Callable[[bytes], None]:
    return lambda data: _send_output(link, run_id, stream, data)


def _send_output(link: wire.Link, run_id: object, stream: int, data: bytes) -> None:
    link.send({"op": "output", "id": run_id, "stream": stream, "data": base64.b64encode(data).decode("ascii")})


def _accept(listener: socket.socket, token: str, proc: subprocess.Popen[bytes]) -> socket.socket:
    """The runner's connection, told apart from anyone else's on this loopback by the secret."""
    deadline = time.monotonic() + RUNNER_START_S
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or proc.poll() is not None:
            raise wire.WireError("the runner did not connect")
        listener.settimeout(min(remaining, 1.0))
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        conn.settimeout(5.0)
        try:
            hello, _ = wire.recv_frame(conn)
        except (wire.WireError, OSError):
            conn.close()
            continue
        if hmac.compare_digest(str(hello.get("token", "")), token):
            conn.settimeout(None)
            return conn
        conn.close()


def _keep(proc: subprocess.Popen[bytes], job: windows.Job | None, judge_end: socket.socket, message: dict[str, Any],
          ctl: int, write_report: Callable[[bytes], None], relays: list[_Relay],
          containment: dict[str, Any]) -> dict[str, Any]:
    """``keeper.keep`` with only what every OS has: judge, wait for the runner's end (a thread
    waits; wall time and cancels wake this one through sockets), end it and what it started,
    let its output drain. The verdict has no CPU time or peak memory: there is no ``wait4``."""
    wall_time = Limits.from_wire(message["limits"]).wall_time
    started = time.monotonic()
    deadline = started + wall_time
    reason = judge(judge_end, runner_end_message(message, containment), message, ctl, deadline,
                   kill=proc.kill, write_report=write_report)
    ended_r, ended_w = socket.socketpair()

    def wait() -> None:
        proc.wait()
        try:
            ended_w.send(b"E")
        except OSError:
            pass

    threading.Thread(target=wait, name="tutor-runner-wait", daemon=True).start()
    while reason is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            reason = "timeout"
            break
        ready, _, _ = select.select([ctl, ended_r.fileno()], [], [], remaining)
        if ctl in ready:
            reason = "cancelled"
        elif ended_r.fileno() in ready:
            break
    _end(proc, job)
    wall = time.monotonic() - started
    until = time.monotonic() + DRAIN_S
    for relay in relays:
        relay.thread.join(max(0.0, until - time.monotonic()))
    code = proc.returncode
    return {"exit_code": code if code is not None and code >= 0 else None,
            "signal": -code if code is not None and code < 0 else None,
            "cpu_time": None, "maxrss_kb": None, "reason": reason, "wall_time": wall,
            "swept": job is not None}


def _end(proc: subprocess.Popen[bytes], job: windows.Job | None) -> None:
    """The runner and, where there is a job, everything it started."""
    if job is not None:
        job.close()
    try:
        proc.kill()
    except OSError:
        pass
    proc.wait()


def runner_channel(config: dict[str, Any]) -> tuple[socket.socket, Callable[[], None]]:
    """The runner's side: connect back and prove itself; then what marks the end of its
    start-up output (the judge drops whatever came before it on stdout and stderr)."""
    token, marker = sys.stdin.buffer.readline().decode().split()
    channel = socket.create_connection(("127.0.0.1", int(config["connect"])))
    wire.send_frame(channel, {"op": "hello", "token": token})
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)

    def mark() -> None:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os.write(1, marker.encode())
        os.write(2, marker.encode())

    return channel, mark
