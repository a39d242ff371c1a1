"""The Sandbox: a pool of warm workers that the app and the check engine share.

Warm-up (choosing the isolation, starting workers, importing torch in them) happens in the
background so the app opens at once; a run that arrives early waits for it. Every worker is
started from one long-lived thread: bubblewrap's ``--die-with-parent`` and the worker's own
PDEATHSIG fire when the *thread* that started them ends, not the process.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import enum
import os
import queue
import shutil
import tempfile
import threading
import time
import weakref
from typing import Any

from tutor.sandbox import isolation as iso
from tutor.sandbox.classify import classify
from tutor.sandbox.limits import Limits, usable_cpus
from tutor.sandbox.process import ProbeSpec, WorkerDied, WorkerProcess
from tutor.sandbox.result import LearnerError, RunResult

_SPAWNER = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="tutor-sandbox-spawner")
_OPEN: "weakref.WeakSet[Sandbox]" = weakref.WeakSet()
#: Default preloads beyond torch's own: the check engine's probe captures torch functions early.
DEFAULT_PRELOAD = ("tutor.checks.probe",)


class SandboxState(enum.Enum):
    """Where a sandbox stands; ``Sandbox.error`` holds the reason when UNAVAILABLE."""

    NOT_STARTED = "not started"
    WARMING = "warming up"
    READY = "ready"
    BUSY = "busy"
    UNAVAILABLE = "unavailable"
    CLOSED = "closed"


class SandboxUnavailable(Exception):
    """The sandbox could not start (no torch in the worker interpreter, bwrap required but broken)."""


class Sandbox:
    """Runs code in fresh, limited children of warm workers. Thread-safe; use as a context manager.

    Args:
        settings_or_limits: a ``Settings`` (limits, workers, python and isolation are read from
            it), a ``Limits``, or None for the defaults.
        workers: warm workers kept ready (default: the setting, else 1).
        python: interpreter for the workers; it must have torch (default: this one).
        isolation: "auto", "bwrap" or "none" (see ``tutor.sandbox.isolation``).
        preload: modules every worker imports before forking, beyond torch's.
        hide: folders no run may see, even where the filesystem is otherwise readable (grading
            hides the class's submissions and the pack; each run gets only its own code, over
            the wire). Takes effect under bubblewrap.
    """

    def __init__(self, settings_or_limits: Any = None, workers: int | None = None,
                 python: str | None = None, isolation: str | None = None,
                 preload: list[str] | tuple[str, ...] | None = None,
                 hide: list[str] | tuple[str, ...] = ()):
        if isinstance(settings_or_limits, Limits):
            self.limits, settings = settings_or_limits, None
        elif settings_or_limits is None:
            self.limits, settings = Limits(), None
        else:
            self.limits, settings = Limits.from_settings(settings_or_limits), settings_or_limits
        self.workers = int(workers or getattr(settings, "workers", None) or 1)
        self.python = python or getattr(settings, "python", None) or iso.default_python()
        self.requested_isolation = isolation or getattr(settings, "isolation", None) or "auto"
        self.preload = list(DEFAULT_PRELOAD if preload is None else preload)
        self.hide = tuple(str(p) for p in hide)
        self._lock = threading.Lock()
        self._started = False
        self._closed = False
        self._ready = threading.Event()
        self._startup_error: str | None = None
        self._info: iso.IsolationInfo | None = None
        self._idle: "queue.Queue[WorkerProcess]" = queue.Queue()
        self._busy: set[WorkerProcess] = set()
        self._all: list[WorkerProcess] = []
        self._scratch_root: str | None = None
        self._owner_lock: int | None = None
        self._cgroups = False
        self._counter = 0
        self.warmup_s: float | None = None
        self.worker_info: dict = {}
        _OPEN.add(self)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> "Sandbox":
        """Begin warming up in the background; returns at once."""
        with self._lock:
            if self._started:
                return self
            if self._closed:
                raise SandboxUnavailable("the sandbox is closed")
            self._started = True
        _SPAWNER.submit(self._warm_up)
        return self

    def _warm_up(self) -> None:
        started = time.perf_counter()
        try:
            self._info = iso.choose(self.requested_isolation, self.python)
            self._cgroups = self._info.process_limit == "cgroup"
            sweep_stale_scratch()
            self._scratch_root = tempfile.mkdtemp(prefix=SCRATCH_PREFIX)
            os.chmod(self._scratch_root, 0o711)
            self._owner_lock = _hold_owner_lock(self._scratch_root)
            fresh = [self._new_worker() for _ in range(self.workers)]
            for worker in fresh:
                # Under the lock, so close() either sees this worker's process (and kills it,
                # which ends the readiness wait below at once) or stops it being started.
                with self._lock:
                    if self._closed:  # closed while warming up: start nothing more
                        raise SandboxUnavailable("the sandbox was closed while warming up")
                    worker.spawn()
            for worker in fresh:
                self.worker_info = worker.wait_ready(timeout=300)
                self._idle.put(worker)
            self.warmup_s = time.perf_counter() - started
        except Exception as exc:  # reported to every caller of run/wait_ready
            self._startup_error = str(exc)
        finally:
            self._ready.set()

    def _new_worker(self) -> WorkerProcess:
        self._counter += 1
        worker = WorkerProcess(python=self.python, info=self._info, scratch_root=self._scratch_root,
                               preload=self.preload, processes=self.limits.processes,
                               name=f"w{self._counter}", cgroups=self._cgroups, hide=self.hide)
        with self._lock:
            self._all.append(worker)
        return worker

    def wait_ready(self, timeout: float | None = None) -> bool:
        """True once warm; raises SandboxUnavailable when warm-up failed."""
        self.start()
        if not self._ready.wait(timeout):
            return False
        if self._startup_error:
            raise SandboxUnavailable(self._startup_error)
        return True

    @property
    def isolation(self) -> iso.IsolationInfo:
        self.wait_ready()
        assert self._info is not None
        return self._info

    @property
    def state(self) -> SandboxState:
        """Where this sandbox stands; never blocks (the app's status bar reads it)."""
        if self._closed:
            return SandboxState.CLOSED
        if not self._started:
            return SandboxState.NOT_STARTED
        if not self._ready.is_set():
            return SandboxState.WARMING
        if self._startup_error:
            return SandboxState.UNAVAILABLE
        return SandboxState.BUSY if self._busy else SandboxState.READY

    @property
    def error(self) -> str | None:
        """Why warm-up failed (the state is UNAVAILABLE), else None."""
        return self._startup_error if self._ready.is_set() else None

    @property
    def status(self) -> str:
        """One line for a status bar (``state`` with the error beside it)."""
        state = self.state
        if state is SandboxState.UNAVAILABLE:
            return f"unavailable: {self._startup_error}"
        return state.value

    def close(self) -> None:
        """Stop every worker and everything they started; remove the scratch directories."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            workers = list(self._all)
        # Stop what already runs first: a worker killed mid-warm-up fails its readiness wait at
        # once, so quitting during warm-up is quick instead of waiting for torch to import.
        for worker in workers:
            worker.close()
        if self._started:
            self._ready.wait(330)
        for worker in list(self._all):  # anything spawned while the first pass ran
            worker.close()
        if self._scratch_root:
            shutil.rmtree(self._scratch_root, ignore_errors=True)
        if self._owner_lock is not None:
            os.close(self._owner_lock)
            self._owner_lock = None

    def __enter__(self) -> "Sandbox":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ runs

    def cancel(self) -> None:
        """Stop the runs in flight: their whole process trees are gone within a second."""
        for worker in list(self._busy):
            worker.cancel("cancelled")

    def run(self, code: str, limits: Limits | None = None, filename: str = "<snippet>",
            probe: ProbeSpec | None = None, *, stats: bool = False,
            threads: int | None = None) -> RunResult:
        """Run ``code`` in a fresh child and wait for the result (blocking, thread-safe).

        Args:
            limits: this run's limits (an exercise's own timeout); default: the sandbox's.
            filename: what tracebacks call the code, so line numbers match the learner's editor.
            probe: the check engine's program, run after the code in the same child.
            stats: also measure the child's private memory (costs a few milliseconds).
            threads: torch intra-op threads for the run (default: the CPUs this process may use).
        """
        limits = limits or self.limits
        if not self.wait_ready(timeout=330):
            raise SandboxUnavailable("the sandbox did not finish warming up")
        if self._closed:
            raise SandboxUnavailable("the sandbox is closed")
        if not self._all:  # every worker died and could not be replaced: try once more now
            try:
                self._idle.put(self._replace(None))
            except Exception as exc:
                raise SandboxUnavailable(f"no sandbox worker could start: {exc}") from None
        worker = self._idle.get()
        with self._lock:
            self._busy.add(worker)
        request = {"code": code, "filename": filename, "probe": probe.to_dict() if probe else None,
                   "stats": stats, "threads": threads or usable_cpus()}
        try:
            raw = worker.run(request, limits)
            raw.probe_requested = probe is not None
            return classify(raw, limits)
        except WorkerDied as exc:
            worker.close()
            try:
                worker = self._replace(worker)
            except Exception:  # the next run reports it, through wait_ready or a new attempt
                worker = None
            return RunResult(status="sandbox-failure", isolation=self._info.level,
                             message="The sandbox worker died; a new one is starting.",
                             error=LearnerError("WorkerDied", str(exc), str(exc)))
        finally:
            with self._lock:
                self._busy.discard(worker)
            if worker is not None and not self._closed:
                self._idle.put(worker)

    def _replace(self, dead: WorkerProcess | None) -> WorkerProcess | None:
        with self._lock:
            if dead in self._all:
                self._all.remove(dead)
            self._busy.discard(dead)
            if self._closed:
                return None
        return _SPAWNER.submit(self._start_one).result()

    def _start_one(self) -> WorkerProcess:
        worker = self._new_worker()
        worker.spawn()
        worker.wait_ready(timeout=300)
        return worker


SCRATCH_PREFIX = "torch-tutor-"
#: Held (flock) by the tutor that made the scratch folder, for as long as it lives.
OWNER_LOCK = ".owner.lock"


def _hold_owner_lock(root: str) -> int | None:
    try:
        import fcntl
    except ImportError:  # Windows: no flock; folders of a killed tutor stay (see the README)
        return None
    fd = os.open(os.path.join(root, OWNER_LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def sweep_stale_scratch(parent: str | None = None) -> list[str]:
    """Remove the scratch folders of tutors that died without cleaning up (kill -9, a crash).

    A folder is stale when it holds our owner lock file, belongs to this user, and nobody holds
    the lock: the kernel releases a flock when its holder dies, whatever killed it. Anything else
    named alike is left alone. Returns the folders removed."""
    try:
        import fcntl
    except ImportError:
        return []
    from tutor.sandbox.process import _remove_tree

    removed = []
    parent = parent or tempfile.gettempdir()
    try:
        names = [n for n in os.listdir(parent) if n.startswith(SCRATCH_PREFIX)]
    except OSError:
        return []
    for name in names:
        root = os.path.join(parent, name)
        lock_path = os.path.join(root, OWNER_LOCK)
        try:
            if os.lstat(root).st_uid != os.geteuid() or not os.path.isfile(lock_path):
                continue
            fd = os.open(lock_path, os.O_RDWR | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # its tutor is alive
            os.close(fd)
            continue
        try:
            _remove_tree(root)
            removed.append(root)
        finally:
            os.close(fd)
    return removed


_default: Sandbox | None = None
_default_lock = threading.Lock()


def default_sandbox() -> Sandbox:
    """A process-wide Sandbox with the user's settings, started on first use."""
    global _default
    with _default_lock:
        if _default is None or _default._closed:
            try:
                from tutor.core.config import load_settings

                _default = Sandbox(load_settings())
            except Exception:
                _default = Sandbox()
        return _default.start()


def run(code: str, limits: Limits | None = None, **kwargs: Any) -> RunResult:
    """One run on the default sandbox (warm after the first call)."""
    return default_sandbox().run(code, limits, **kwargs)


@atexit.register
def _close_all() -> None:
    for sandbox in list(_OPEN):
        try:
            sandbox.close()
        except Exception:
            pass
