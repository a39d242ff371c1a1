"""The Sandbox: a pool of warm workers that the app and the check engine share.

Fork mode (warm workers that fork a child per run) or spawn mode (a runner interpreter started
ahead for each run by a judge interpreter that serves several): see ``resolve_mode`` and
docs/architecture.md. Warm-up (choosing the isolation, starting workers, importing torch in them)
happens in the background so the app opens at once; a run that arrives early waits for it. The
workers waiting, coming and going between runs are ``spares.Spares``'s; every one is started
from its one long-lived thread (``spares.SPAWNER``).
"""

from __future__ import annotations

import atexit
import enum
import os
import shutil
import sys
import tempfile
import threading
import time
import weakref
from typing import Any, Literal

from tutor.sandbox import backends
from tutor.sandbox import isolation as iso
from tutor.sandbox.classify import classify
from tutor.sandbox.limits import Limits, usable_cpus
from tutor.sandbox import process
from tutor.sandbox.process import ProbeSpec, WorkerDied, WorkerProcess
from tutor.sandbox.result import LearnerError, RunResult
from tutor.sandbox.spares import SPAWNER, Spares
from tutor.sandbox.spares import SandboxUnavailable as SandboxUnavailable  # where callers import it

_OPEN: "weakref.WeakSet[Sandbox]" = weakref.WeakSet()
#: Default preloads beyond torch's own: the check engine's probe captures torch functions early.
DEFAULT_PRELOAD = ("tutor.child.checks.probe",)


Mode = Literal["auto", "fork", "spawn"]
Purpose = Literal["interactive", "batch"]
#: What ``auto`` means on Linux, per use (docs/performance.md has the measurements behind it).
AUTO_ON_LINUX: dict[str, str] = {"interactive": "fork", "batch": "fork"}


def resolve_mode(requested: str, purpose: str = "interactive") -> str:
    """"fork" or "spawn" for a requested mode. ``auto`` is spawn wherever forking a warm worker is
    not possible or not safe (everywhere but Linux), and on Linux what measured best for the use."""
    if requested == "fork" and not hasattr(os, "fork"):
        raise ValueError("sandbox_mode fork needs fork(), which this OS does not have: use spawn (or auto)")
    if requested in ("fork", "spawn"):
        return requested
    if requested != "auto":
        raise ValueError(f"unknown sandbox mode {requested!r} (auto, fork or spawn)")
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return "spawn"
    return AUTO_ON_LINUX.get(purpose, "fork")


#: Spawn mode: start the next spare when one is taken (True), or once its run is over (False):
#: a spare importing torch beside a run slowed the run by ~10 ms here (docs/performance.md).
REFILL_AT_TAKE = False

#: How a spawn-mode judge starts its runners (``Sandbox(spawn_runners=...)``, docs/architecture.md).
SPAWN_RUNNERS = ("forked", "fresh")

#: Intra-op threads (torch.set_num_threads) of a batch's run that asks for none; an interactive
#: run gets the CPUs this process may use. A batch (``grade``, ``validate``) runs in parallel
#: through its workers, and a check's ops are small: with two threads each run of ``grade``
#: spent 4-5x the CPU in its runner (the second thread waits for a core, and waiting costs CPU)
#: and the class took 1.5-2x the time, with one worker or two (docs/authoring.md, "Workers").
BATCH_THREADS = 1

#: Fork mode: the fewest runs a sandbox must expect (``runs``; unsaid counts as many) for its
#: workers to fold their memory into huge pages before forking (``linux.collapse_huge_pages``).
#: The fold costs 0.3-0.5 s of CPU and wall time once, before the worker says ready; it saves
#: ~20 ms of CPU per run here, in the three forks and exits of each (docs/performance.md).
#: Spawn mode's runner template folds too (its runner's exit is on the run's path: empty runs 7-8
#: against 11-13 ms unfolded), and folds what it loads later only outside the pages its judge
#: shares (``template.serve``).
HUGE_PAGES_MIN_RUNS = 16


class SandboxState(enum.Enum):
    """Where a sandbox stands; ``Sandbox.error`` holds the reason when UNAVAILABLE."""

    NOT_STARTED = "not started"
    WARMING = "warming up"
    READY = "ready"
    BUSY = "busy"
    UNAVAILABLE = "unavailable"
    CLOSED = "closed"


class Sandbox:
    """Runs code in fresh, limited processes kept warm ahead. Thread-safe; use as a context manager.

    In **fork** mode each run is a fresh child of a warm worker that serves run after run; in
    **spawn** mode each run gets a spare, a runner interpreter started ahead of time for that run
    alone by a judge interpreter that serves up to ``process.JUDGE_RUNS`` runs (a batch's judge
    ``process.BATCH_JUDGE_RUNS``) and starts its next runner once a run is over (``tutor.child.worker.spawn``).

    Args:
        limits: the runs' limits (default: ``Limits()``); a run may pass its own.
        workers: warm workers (fork mode) or spares (spawn mode) kept ready.
        python: interpreter for the workers; it must have torch (default: this one).
        isolation: "auto", "bwrap" or "none" (see ``tutor.sandbox.isolation``).
        mode: "auto", "fork" or "spawn" (see ``resolve_mode``).
        purpose: "interactive" (one run at a time, waiting on it) or "batch" (grading's
            throughput): what ``auto`` picks on Linux may differ between them, and a batch's
            spawn-mode spares never warm up while they wait (``startup.SPARE_DEFERS``), and a
            batch's runs get ``BATCH_THREADS`` intra-op threads unless they ask (``run_threads``).
        preload: modules every worker imports before forking, beyond torch's.
        hide: folders no run may see, even where the filesystem is otherwise readable (grading
            hides the class's submissions and the pack; each run gets only its own code, over
            the wire). Takes effect under bubblewrap.
        runs: how many runs this sandbox will be asked for, where the caller knows (a command
            that checks one exercise, a batch): no more workers start than there are runs, and
            in spawn mode no spare is started that no run would take (each costs an interpreter
            importing torch). A run beyond them still runs; it waits for a spare started for it.
        chosen: what ``backends.choose`` just answered for this ``isolation`` and ``python``
            (`grade` asks before it starts anything): warm-up then does not probe again
            (~0.15 s, before the first worker starts).
    """

    def __init__(self, limits: Limits | None = None, workers: int = 1, python: str | None = None,
                 isolation: str = "auto", mode: str = "auto", purpose: Purpose = "interactive",
                 preload: list[str] | tuple[str, ...] | None = None,
                 hide: list[str] | tuple[str, ...] = (), runs: int | None = None,
                 spawn_runners: str = "forked", chosen: iso.IsolationInfo | None = None):
        self.limits = limits if limits is not None else Limits()
        self.runs = None if runs is None else max(1, int(runs))
        self.workers = max(1, int(workers)) if self.runs is None else max(1, min(int(workers), self.runs))
        self.python = python or iso.default_python()
        self.requested_isolation = isolation or "auto"
        self.requested_mode = mode or "auto"
        self.mode = resolve_mode(self.requested_mode, purpose)
        self.purpose = purpose
        self.preload = list(DEFAULT_PRELOAD if preload is None else preload)
        self.hide = tuple(str(p) for p in hide)
        if spawn_runners not in SPAWN_RUNNERS:
            raise ValueError(f"spawn_runners must be one of {', '.join(SPAWN_RUNNERS)}, not {spawn_runners!r}")
        #: Spawn mode: runners forked from a template interpreter that imported torch and never
        #: ran an op ("forked", where the template can fork safely) or each started with exec ("fresh").
        self.spawn_runners = spawn_runners
        self._lock = threading.Lock()
        self._started = False
        self._closed = False
        self._stopping = False  # kill_now(): start nothing more (close() still cleans up)
        self._ready = threading.Event()
        self._startup_error: str | None = None
        self._startup_said: dict[str, Any] | None = None  # the same, said (an IsolationError's), for the learner's language
        self._info: iso.IsolationInfo | None = None
        self._chosen = chosen
        self._busy: set[WorkerProcess] = set()
        #: The warm workers or spares, and those to come (``spares.py``).
        self._spares = Spares(self._new_worker, self.mode, self.runs, self._lock,
                              ended=lambda: self._closed or self._stopping, closed=lambda: self._closed)
        self._scratch_root: str | None = None
        self._owner_lock: int | None = None
        self._cgroups = False
        self._cancels = 0  # bumped by cancel(): a run still waiting for a worker is cancelled too
        # Whether the runs to come may profile (``expect``): None until the caller says.
        self._expects_profiler: bool | None = None
        self.warmup_s: float | None = None
        self.worker_info: dict[str, Any] = {}
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
        SPAWNER.submit(self._warm_up)
        return self

    def _warm_up(self) -> None:
        started = time.perf_counter()
        try:
            self._info = self._chosen or backends.choose(self.requested_isolation, self.python)
            self._cgroups = self._info.process_limit == "cgroup"
            sweep_stale_scratch()
            self._scratch_root = tempfile.mkdtemp(prefix=SCRATCH_PREFIX)
            os.chmod(self._scratch_root, 0o711)
            self._owner_lock = _hold_owner_lock(self._scratch_root)
            fresh = [self._spares.new() for _ in range(self.workers)]
            self._spares.promise(len(fresh))
            for worker in fresh:
                # Under the lock, so close() either sees this worker's process (and kills it,
                # which ends the readiness wait below at once) or stops it being started.
                with self._lock:
                    if self._closed or self._stopping:  # closed while warming up: start nothing more
                        raise SandboxUnavailable("the sandbox was closed while warming up")
                    worker.spawn()
            for worker in fresh:
                self.worker_info = worker.wait_ready(timeout=300)
                self._spares.idle.put(worker)
            self.warmup_s = time.perf_counter() - started
        except Exception as exc:  # reported to every caller of run/wait_ready
            self._startup_error = str(exc)
            self._startup_said = getattr(exc, "said", None)
        finally:
            self._ready.set()

    def _new_worker(self, name: str) -> WorkerProcess:
        """An unstarted worker of this sandbox's settings (``Spares`` counts and keeps it)."""
        assert self._info is not None and self._scratch_root is not None
        worker = WorkerProcess(python=self.python, info=self._info, scratch_root=self._scratch_root,
                               preload=self.preload, processes=self.limits.processes, tmp_mb=self.limits.tmp_mb,
                               name=name, cgroups=self._cgroups, hide=self.hide,
                               role="judge" if self.mode == "spawn" else "worker",
                               warm_when_idle=self._warms_when_idle(),
                               huge_pages=self.runs is None or self.runs >= HUGE_PAGES_MIN_RUNS,
                               refill_when_idle=self.purpose == "interactive", runners=self.spawn_runners,
                               judge_runs=process.JUDGE_RUNS if self.purpose == "interactive" else process.BATCH_JUDGE_RUNS)
        return worker

    def _warms_when_idle(self) -> bool:
        return self.purpose == "interactive" and self._expects_profiler is not False

    def expect(self, profiler: bool | None) -> None:
        """Say whether the runs to come may need the profiler's machinery (``torch._dynamo``,
        which its first use imports: 1.2-2.4 s of CPU; ``startup.SPARE_DEFERS``). An interactive
        sandbox's idle worker (fork mode) or spare (spawn mode) loads it after a second's wait
        for a request, so that a Run whose code profiles is not charged for it; in spawn mode
        every spare pays that again, once per run. ``False`` (the app, on a step whose code and
        checks name nothing that reaches it: ``tutor.sandbox.deferred``) leaves it out of the
        idle ones; ``True`` or ``None`` (nothing said) load it. A run that needs it all the same
        still loads it before it starts (``judging.needs_dynamo``): slower, never wrong.
        Never blocks: callable from a UI thread, before or during warm-up."""
        with self._lock:
            if profiler == self._expects_profiler:
                return
            self._expects_profiler = profiler
            warm = self._warms_when_idle()
            workers = [w for w in self._spares.all if w.warm_when_idle != warm]
        for worker in workers:
            worker.set_warm_when_idle(warm)

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
    def error_said(self) -> dict[str, Any] | None:
        """:attr:`error` as a said, where its cause gave one (isolation required and missing)."""
        return self._startup_said if self._ready.is_set() else None

    @property
    def status(self) -> str:
        """One line for a status bar (``state`` with the error beside it)."""
        state = self.state
        if state is SandboxState.UNAVAILABLE:
            return f"unavailable: {self._startup_error}"
        return str(state.value)

    def close(self) -> None:
        """Stop every worker and everything they started; remove the scratch directories."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            workers = list(self._spares.all)
        # Stop what already runs first: a worker killed mid-warm-up fails its readiness wait at
        # once, so quitting during warm-up is quick instead of waiting for torch to import.
        for worker in workers:
            worker.close()
        if self._started:
            self._ready.wait(330)
        for worker in list(self._spares.all):  # anything spawned while the first pass ran
            worker.close()
        if self._scratch_root:
            shutil.rmtree(self._scratch_root, ignore_errors=True)
        if self._owner_lock is not None:
            os.close(self._owner_lock)
            self._owner_lock = None

    def kill_now(self) -> None:
        """End every worker's or spare's processes at once, from any thread, taking no lock: the
        app is being ended from outside (a signal, its terminal gone) and its main thread may be
        stuck. Nothing starts afterwards; ``close()`` still removes the scratch folders."""
        self._stopping = True
        for worker in list(self._spares.all):
            worker.kill()

    def __enter__(self) -> "Sandbox":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ runs

    def cancel(self) -> None:
        """Stop the runs in flight (and those waiting for a worker or spare, which stop as soon
        as they start): their whole process trees are gone within a second."""
        with self._lock:
            self._cancels += 1
        for worker in list(self._busy):
            worker.cancel("cancelled")

    def run(self, code: str, limits: Limits | None = None, filename: str = "<snippet>",
            probe: ProbeSpec | None = None, *, stats: bool = False,
            threads: int | None = None, prelude: str | None = None,
            uses: list[tuple[str, str]] | None = None) -> RunResult:
        """Run ``code`` in a fresh child and wait for the result (blocking, thread-safe).

        Args:
            limits: this run's limits (an exercise's own timeout); default: the sandbox's.
            filename: what tracebacks call the code, so line numbers match the learner's editor.
            probe: the check engine's program, run after the code in the same child.
            stats: also measure the child's private memory (costs a few milliseconds).
            threads: torch intra-op threads for the run (default: ``run_threads``).
            prelude: the pack's code, run before ``code`` in the same namespace (as ``<prelude>``).
            uses: ``(filename, code)`` of the learner's answers to earlier exercises, run after the
                prelude and before ``code`` in the same namespace, in the runner only.
        """
        limits = limits or self.limits
        cancels = self._cancels
        if not self.wait_ready(timeout=330):
            raise SandboxUnavailable("the sandbox did not finish warming up")
        if self._closed:
            raise SandboxUnavailable("the sandbox is closed")
        spares = self._spares
        if self.mode == "fork" and not spares.all:  # every worker died and none could replace them
            spares.idle.put(spares.start_now())
        worker = spares.take()
        last = spares.last_run()
        # Spawn mode: a judge that serves again comes back by itself (``rearm``); one on its
        # last run is replaced, at once (``REFILL_AT_TAKE``) or once the run is over; none is
        # when no run would take it (``last``: the judge exits after this run).
        refilled = self.mode == "spawn" and REFILL_AT_TAKE and not last and not worker.serves_again()
        if refilled:
            spares.refill()
        with self._lock:
            self._busy.add(worker)
        request: dict[str, Any] = {"code": code, "filename": filename, "probe": probe.to_dict() if probe else None,
                   "stats": stats, "threads": threads or self.run_threads}
        if prelude:
            request["prelude"] = prelude
        if uses:
            request["uses"] = [[name, text] for name, text in uses]
        kept: WorkerProcess | None = worker
        try:
            raw = worker.run(request, limits, cancelled=lambda: self._cancels != cancels, last=last)
            raw.probe_requested = probe is not None
            unreadable = next((g for g in self.isolation.gaps_said if g.get("key") == "isolation.gap.unreadable"),
                              None)  # a said: the run's sentence says it in the learner's language
            return classify(raw, limits, compiles="torch.compile" in code, unreadable=unreadable)
        except WorkerDied as exc:
            worker.close()
            kept = None
            if self.mode == "fork":
                with self._lock:
                    self._busy.discard(worker)
                try:
                    kept = spares.replace(worker)
                except Exception:  # the next run reports it, through wait_ready or a new attempt
                    kept = None
            assert self._info is not None
            return RunResult(status="sandbox-failure", isolation=self._info.level,
                             message="The sandbox worker died; a new one is starting.",
                             error=LearnerError("WorkerDied", str(exc), str(exc)))
        finally:
            with self._lock:
                self._busy.discard(worker)
            if self.mode == "spawn":
                if kept is not None and worker.serves_again():  # never after its ``last`` run
                    spares.rearm(worker)
                else:
                    spares.retire(worker)
                    if not refilled and not last:
                        spares.refill()
            elif kept is not None and not self._closed:
                spares.idle.put(kept)

    @property
    def run_threads(self) -> int:
        """Intra-op threads of a run that asks for none: ``BATCH_THREADS`` in a batch, else the
        CPUs this process may use."""
        return BATCH_THREADS if self.purpose == "batch" else usable_cpus()

    def idle_count(self) -> int:
        """Workers (fork mode) or spares (spawn mode) warm and waiting now."""
        return self._spares.idle.qsize()

    def unenforced_limits(self) -> list[str]:
        """The limits runs here go without, as the worker found its OS (empty on Linux)."""
        self.wait_ready()
        return list(self.worker_info.get("unenforced", []))


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
    """A process-wide Sandbox with the default limits, started on first use (callers with
    settings build their own: ``tutor.grading.sandboxes.sandbox_for``)."""
    global _default
    with _default_lock:
        if _default is None or _default._closed:
            _default = Sandbox()
        return _default.start()


def run(code: str, limits: Limits | None = None, filename: str = "<snippet>",
        probe: ProbeSpec | None = None) -> RunResult:
    """One run on the default sandbox (warm after the first call)."""
    return default_sandbox().run(code, limits, filename, probe)


@atexit.register
def _close_all() -> None:
    for sandbox in list(_OPEN):
        try:
            sandbox.close()
        except Exception:
            pass
