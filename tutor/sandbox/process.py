"""One warm worker, seen from the tutor: start it, hand it a run, collect what comes back."""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Callable

from tutor.sandbox import isolation, wire
from tutor.sandbox.classify import RawRun
from tutor.sandbox.limits import Limits

#: How long past its wall time a worker may stay silent before the tutor gives up on it.
_GRACE_S = 10.0


class WorkerDied(Exception):
    """The worker process is gone or stopped answering; the pool replaces it."""


@dataclass(frozen=True)
class ProbeSpec:
    """What the check engine runs once the learner's code has run: in the run's judge (the
    keeper), never in the process that ran the learner's code.

    ``getattr(import_module(module), function)(namespace, payload, learner_error)`` must return
    a JSON-able dict: it becomes ``RunResult.report``. ``namespace`` maps the learner's names to
    the judge's proxies of them (``tutor.checks.remote``).
    """

    module: str
    function: str
    payload: object = None

    def to_dict(self) -> dict:
        return {"module": self.module, "function": self.function, "payload": self.payload}


class WorkerProcess:
    def __init__(self, *, python: str, info: isolation.IsolationInfo, scratch_root: str,
                 preload: list[str], processes: int, name: str, cgroups: bool,
                 hide: tuple[str, ...] = (), role: str = "worker"):
        self.python = python
        #: "worker" (fork mode: serves run after run) or "judge" (spawn mode: one run, then exits).
        self.role = role
        self.info = info
        self.scratch_root = scratch_root
        self.preload = preload
        self.hide = hide
        self.name = name
        self.ready: dict = {}
        self._sock: socket.socket | None = None
        self._proc: subprocess.Popen | None = None
        self._group = None
        self._send_lock = threading.Lock()
        self._run_id = 0
        self._active_id: int | None = None
        self._cancel_reason: str | None = None
        self._runs = 0
        self.log_path = os.path.join(scratch_root, f"{name}.log")
        if cgroups:
            from tutor.sandbox.cgroup import PidsGroup

            try:
                self._group = PidsGroup(f"{os.getpid()}-{name}-{id(self):x}", processes)
            except OSError:
                self._group = None

    # ------------------------------------------------------------------ lifecycle

    def spawn(self) -> None:
        """Start the process (returns at once; ``wait_ready`` waits for torch to load)."""
        parent_end, child_end = socket.socketpair()
        interpreter = isolation.inspect_interpreter(self.python)
        config = {"fd": child_end.fileno(), "preload": self.preload, "role": self.role,
                  "containment": isolation.containment(self.info)}
        cmd = [interpreter.executable, "-m", "tutor.sandbox.worker", json.dumps(config)]
        if self.info.level == "bwrap":
            cmd = isolation.bwrap_command(interpreter, self.scratch_root,
                                          as_root=self.info.worker_uid is not None,
                                          bwrap=self.info.bwrap or "bwrap", private=self.hide) + cmd
        if self._group is not None:
            cmd = self._group.wrap(cmd)
        with open(self.log_path, "ab") as log:
            self._proc = subprocess.Popen(
                cmd, pass_fds=[child_end.fileno()], stdin=subprocess.DEVNULL, stdout=log,
                stderr=log, start_new_session=True, env=isolation.scrubbed_env(), cwd="/")
        child_end.close()
        self._sock = parent_end

    def wait_ready(self, timeout: float | None) -> dict:
        assert self._sock is not None
        self._sock.settimeout(timeout)
        try:
            message, fds = wire.recv_frame(self._sock)
        except (wire.WireError, OSError) as exc:
            raise WorkerDied(f"the worker did not start: {exc}; {self.log_tail()}") from None
        finally:
            if self._sock is not None:
                self._sock.settimeout(None)
        for fd in fds:
            os.close(fd)
        if message.get("op") != "ready":
            raise WorkerDied(f"the worker could not load torch: {message.get('error')}")
        self.ready = message
        return message

    def log_tail(self, size: int = 2000) -> str:
        try:
            with open(self.log_path, "rb") as log:
                log.seek(0, os.SEEK_END)
                log.seek(max(0, log.tell() - size))
                tail = log.read().decode("utf-8", "replace").strip()
        except OSError:
            return "no worker log"
        return f"worker log: {tail}" if tail else "the worker log is empty"

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def close(self, timeout: float = 1.0) -> None:
        """Ask the worker to exit, then make sure it and everything it started are gone.

        A worker still warming up (importing torch) reads nothing: it is killed at once rather
        than given ``timeout`` to answer, so quitting during warm-up does not wait."""
        polite = bool(self.ready)
        if self._sock is not None and polite:
            try:
                with self._send_lock:
                    wire.send_frame(self._sock, {"op": "exit"})
            except OSError:
                pass
        if self._proc is not None:
            if polite:
                try:
                    self._proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    pass
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self._proc.kill()
                self._proc.wait(timeout)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._group is not None:
            self._group.destroy()

    # ------------------------------------------------------------------ runs

    def cancel(self, reason: str = "cancelled") -> None:
        """Stop the run in flight (thread-safe; no-op when idle)."""
        with self._send_lock:
            run_id = self._active_id
            if run_id is None or self._sock is None:
                return
            if self._cancel_reason is None:
                self._cancel_reason = reason
            try:
                wire.send_frame(self._sock, {"op": "cancel", "id": run_id})
            except OSError:
                pass

    def run(self, request: dict, limits: Limits, cancelled: Callable[[], bool] = lambda: False) -> RawRun:
        """Send one request and gather output, report and verdict; raises WorkerDied.
        ``cancelled`` says whether a cancel came while the request waited for this worker."""
        if self._sock is None or not self.alive():
            raise WorkerDied("the worker is not running")
        if self._group is not None:
            self._group.set_limit(limits.processes)
        scratch = os.path.join(self.scratch_root, f"run-{self.name}-{self._runs}")
        self._runs += 1
        os.mkdir(scratch)
        os.chmod(scratch, 0o777)  # the run may be uid nobody
        pipes = [os.pipe() for _ in range(3)]
        with self._send_lock:
            self._run_id += 1
            self._active_id = self._run_id
            self._cancel_reason = None
        message = dict(request, op="run", id=self._run_id, scratch=scratch,
                       limits=limits.to_dict())
        try:
            try:
                with self._send_lock:
                    wire.send_frame(self._sock, message, [w for _, w in pipes])
            except OSError as exc:
                raise WorkerDied(f"cannot reach the worker: {exc}") from None
            finally:
                for _, w in pipes:
                    os.close(w)
            if cancelled():
                self.cancel("cancelled")
            raw = self._collect([r for r, _ in pipes], limits)
        finally:
            with self._send_lock:
                self._active_id = None
            for r, _ in pipes:
                try:
                    os.close(r)
                except OSError:
                    pass
            _remove_tree(scratch)
        return raw

    def _collect(self, reads: list[int], limits: Limits) -> RawRun:
        cap = limits.output_kb * 1024
        caps = {reads[0]: cap + 1, reads[1]: cap + 64 * 1024, reads[2]: wire.MAX_REPORT + 8}
        buffers = {fd: bytearray() for fd in reads}
        over = {fd: False for fd in reads}
        selector = selectors.DefaultSelector()
        for fd in reads:
            selector.register(fd, selectors.EVENT_READ)
        assert self._sock is not None
        selector.register(self._sock, selectors.EVENT_READ)
        deadline = time.monotonic() + limits.wall_time + _GRACE_S
        verdict = None
        try:
            while verdict is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self.kill()
                    raise WorkerDied(f"the worker stopped answering ({self.log_tail()})")
                for key, _ in selector.select(min(remaining, 1.0)):
                    if key.fileobj is self._sock:
                        verdict = self._read_verdict()
                        break
                    fd = key.fd
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        selector.unregister(fd)
                        continue
                    buffers[fd] += chunk
                    if len(buffers[fd]) > caps[fd]:
                        over[fd] = True
                        del buffers[fd][caps[fd]:]
                        selector.unregister(fd)
                        if fd != reads[2]:
                            self.cancel("output-limit")
            # The keeper has reaped the run and everything it left: drain without blocking.
            for fd in reads:
                os.set_blocking(fd, False)
                while not over[fd]:
                    try:
                        chunk = os.read(fd, 1 << 16)
                    except BlockingIOError:
                        break
                    if not chunk:
                        break
                    buffers[fd] += chunk
                    if len(buffers[fd]) > caps[fd]:
                        over[fd] = True
                        del buffers[fd][caps[fd]:]
        finally:
            selector.close()
        out, err, report = (bytes(buffers[fd]) for fd in reads)
        # The stderr cap is checked after the profiler's noise is removed, in classify.
        err_over = over[reads[1]]
        if err_over and self._cancel_reason is None:
            self._cancel_reason = "output-limit"
        return RawRun(verdict=verdict, stdout=out, stderr=err, stdout_over=over[reads[0]],
                      stderr_over=err_over, report=report, report_over=over[reads[2]],
                      cancel_reason=self._cancel_reason, isolation=self.info.level)

    def _read_verdict(self) -> dict:
        assert self._sock is not None
        try:
            message, fds = wire.recv_frame(self._sock)
        except (wire.WireError, OSError) as exc:
            self.kill()
            raise WorkerDied(f"the worker died during the run ({exc}; {self.log_tail()})") from None
        for fd in fds:
            os.close(fd)
        if message.get("op") != "done" or message.get("id") != self._active_id:
            self.kill()
            raise WorkerDied(f"the worker answered out of turn: {message.get('op')}")
        return message

    def kill(self) -> None:
        if self._proc is not None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _remove_tree(path: str) -> None:
    import shutil

    def make_writable(func, target, _exc):
        # A run may have left a read-only directory (chmod 0) behind.
        try:
            os.chmod(os.path.dirname(target), 0o700)
            os.chmod(target, 0o700)
            func(target)
        except OSError:
            pass

    shutil.rmtree(path, onerror=make_writable)
