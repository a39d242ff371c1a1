"""The workers of one Sandbox: made, taken for a run, refilled, rearmed, retired and replaced.

A ``Sandbox`` (``pool.py``) warms up, runs one job at a time per worker and closes; ``Spares`` is
the part between: the warm workers (fork mode) or spares (spawn mode) waiting in a queue, those on
their way to it or promised by a run in flight, and the threads that bring them there off the
run's path. Every worker is started from one long-lived thread (``SPAWNER``): bubblewrap's
``--die-with-parent`` and the worker's own PDEATHSIG fire when the *thread* that started them
ends, not the process.
"""

from __future__ import annotations

import concurrent.futures
import os
import queue
import threading
from typing import Callable

from tutor.errors import TutorError
from tutor.sandbox.process import WorkerProcess

SPAWNER = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="tutor-sandbox-spawner")


class SandboxUnavailable(TutorError):
    """The sandbox could not start (no torch in the worker interpreter, bwrap required but broken)."""


class Spares:
    """The warm workers or spares of one sandbox and the ones to come.

    Args:
        make: a new, unstarted worker of the sandbox's settings, given its name.
        mode: the sandbox's resolved mode, "fork" or "spawn".
        runs: the runs the sandbox expects (None: many).
        lock: the sandbox's lock (one lock for the sandbox's state and this).
        ended: whether the sandbox is closed or being ended (start nothing more).
        closed: whether the sandbox is closed (a spare that comes after is closed, not queued).
    """

    def __init__(self, make: Callable[[str], WorkerProcess], mode: str, runs: int | None,
                 lock: threading.Lock, ended: Callable[[], bool], closed: Callable[[], bool]):
        self._make = make
        self.mode = mode
        self.runs = runs
        self._lock = lock
        self._ended = ended
        self._closed = closed
        self.idle: "queue.Queue[WorkerProcess | None]" = queue.Queue()
        #: Every worker or spare made and not retired, started or not.
        self.all: list[WorkerProcess] = []
        self.counter = 0
        # Spawn mode: spares warm in the queue, on their way to it, or promised by a run in flight
        # (its judge serves again, or a spare replaces it, once it is over); and runs taken so far.
        self.coming = 0
        self.taken = 0

    def new(self) -> WorkerProcess:
        """A worker of the sandbox's settings, counted and kept, not started."""
        with self._lock:
            self.counter += 1
            name = f"w{self.counter}"
        worker = self._make(name)
        with self._lock:
            self.all.append(worker)
        return worker

    def promise(self, count: int) -> None:
        """Spawn mode: ``count`` spares are on their way (warm-up's first ones)."""
        if self.mode == "spawn":
            with self._lock:
                self.coming += count

    def take(self) -> WorkerProcess:
        """An idle worker or spare; a spare that failed to start is tried once more, here, and
        so is one that no earlier run promised (a run beyond ``runs``)."""
        if self.mode == "spawn":
            with self._lock:
                promised = self.coming > 0
                self.coming -= 1 if promised else 0
            if not promised:
                return self.start_now()
        worker = self.idle.get()
        if worker is None:
            worker = self.start_now()
        return worker

    def last_run(self) -> bool:
        """Spawn mode, the run just taken: whether it is its judge's last, because the spares
        warm, on their way or promised by the runs in flight are enough for the runs still to
        come (``runs``). Otherwise it promises a spare: its judge's next runner, or a new one."""
        if self.mode != "spawn":
            return False
        with self._lock:
            self.taken += 1
            if self.runs is not None and self.coming >= self.runs - self.taken:
                return True
            self.coming += 1
            return False

    def start_now(self) -> WorkerProcess:
        """A worker started and warm, on the caller's path (none was waiting)."""
        try:
            worker = self.replace(None)
        except Exception as exc:
            raise SandboxUnavailable(f"no sandbox worker could start: {exc}") from None
        if worker is None:
            raise SandboxUnavailable("the sandbox is closed")
        return worker

    def refill(self) -> None:
        """Spawn mode: start one spare (from the spawner thread) and queue it once warm; a spare
        that fails to start queues None, and the run that takes it tries again."""
        if self._ended():
            return
        started = SPAWNER.submit(self._spawn_one)

        def finish() -> None:
            worker = None
            try:
                worker = started.result()
                worker.wait_ready(timeout=300)
            except Exception:
                if worker is not None:
                    self.retire(worker, keep_log=True)
                self.idle.put(None)
                return
            self._queue(worker)

        threading.Thread(target=finish, name="tutor-sandbox-spare", daemon=True).start()

    def rearm(self, worker: WorkerProcess) -> None:
        """Spawn mode: a judge whose run is over starts its next runner; queue it once it says
        ready again, off the run's path. One that fails or ends instead is retired and replaced."""

        def finish() -> None:
            try:
                worker.wait_ready(timeout=300)
            except Exception:
                self.retire(worker, keep_log=True)
                self.refill()
                return
            self._queue(worker)

        threading.Thread(target=finish, name="tutor-sandbox-rearm", daemon=True).start()

    def _queue(self, worker: WorkerProcess) -> None:
        if self._closed():
            worker.close()
        else:
            self.idle.put(worker)

    def _spawn_one(self) -> WorkerProcess:
        worker = self.new()
        with self._lock:
            if self._ended():
                raise SandboxUnavailable("the sandbox is closed")
            worker.spawn()
        return worker

    def retire(self, worker: WorkerProcess, keep_log: bool = False) -> None:
        """Spawn mode: a judge on its last run, or one that failed, exits by itself; make sure of
        it, off the run's path."""
        with self._lock:
            if worker in self.all:
                self.all.remove(worker)

        def close() -> None:
            worker.close()
            if not keep_log:
                try:
                    os.unlink(worker.log_path)
                except OSError:
                    pass

        threading.Thread(target=close, name="tutor-sandbox-retire", daemon=True).start()

    def replace(self, dead: WorkerProcess | None) -> WorkerProcess | None:
        """Forget ``dead`` (if any) and start a worker in its place, warm when returned; None
        once the sandbox is closed or being ended."""
        with self._lock:
            if dead in self.all:
                self.all.remove(dead)
        if self._ended():
            return None
        return SPAWNER.submit(self._start_one).result()

    def _start_one(self) -> WorkerProcess:
        worker = self.new()
        worker.spawn()
        worker.wait_ready(timeout=300)
        return worker
