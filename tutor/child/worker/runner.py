"""The runner: one fresh process per run. Takes the request, applies the limits, runs the
learner's code, then whatever the tutor asked to run after it, and writes one report."""

from __future__ import annotations

import _thread
import math
import os
import signal
import socket
import sys
import threading
import time
from typing import TYPE_CHECKING

try:
    import resource
except ImportError:  # Windows: wall time and output caps are the only limits there
    resource = None  # type: ignore[assignment]

from tutor.sandbox import wire
from tutor.sandbox.limits import Limits
from tutor.child.worker import linux
from tutor.child.worker.startup import warm_profiler

if TYPE_CHECKING:
    from typing import Any, Callable


def _set_limit(which: int, value: int, hard_value: int | None = None) -> None:
    soft, hard = resource.getrlimit(which)
    wanted = value if hard_value is None else hard_value
    if hard != resource.RLIM_INFINITY:
        value, wanted = min(value, hard), min(wanted, hard)
    resource.setrlimit(which, (value, wanted))


def apply_limits(limits: Limits, containment: dict[str, Any], baseline: int | None = None) -> None:
    """The run's rlimits, those the OS has (``linux.unenforced_limits`` names the rest).
    ``baseline``: the address space the runner mapped when it was ready for its request, read
    then (``_Ahead.vm_size``); None: read now."""
    if resource is None:
        return
    mib = 1024 * 1024
    if containment.get("count_user_tasks") or containment.get("drop_uid") is not None:
        # RLIMIT_NPROC counts every task of the uid on the machine, so the limit is what the uid
        # has now plus the run's. At none as another user, that is every task of the user's (a
        # scan of /proc, 3-6 ms here, more on a machine with many processes); as root, each run
        # has a uid of its own, whose only tasks are this process's threads.
        if containment.get("drop_uid") == "per-run":
            tasks = linux.own_threads()
        else:
            tasks = linux.user_tasks(os.getuid())
        if tasks is not None:
            _set_limit(resource.RLIMIT_NPROC, limits.processes + tasks)
        elif containment.get("drop_uid") is not None:
            _set_limit(resource.RLIMIT_NPROC, limits.processes)
    _set_limit(resource.RLIMIT_CORE, 0)
    # RLIMIT_CPU counts the process's whole life: a spawn-mode runner spent seconds importing
    # torch and warming up before its request came, so the limit is that plus the run's, rounded
    # up (whole seconds: rounded to the nearest, a loop got as little as 1.5 s of a 2 s limit and
    # its stop read as a crash). SIGXCPU at the soft limit ends the run (the runner is no longer
    # PID 1 of its namespace, which ignored it); the hard limit a second later is SIGKILL, for
    # code that catches SIGXCPU.
    spent = time.process_time()
    soft = max(1, math.ceil(spent + limits.cpu_time))
    _set_limit(resource.RLIMIT_CPU, soft, soft + 1)
    _set_limit(resource.RLIMIT_FSIZE, limits.file_size_mb * mib)
    _set_limit(resource.RLIMIT_NOFILE, limits.open_files)
    # Address space above what the fork already maps: torch fails cleanly ("can't allocate
    # memory") with room to spare, where a tight limit makes it crash in odd ways.
    if baseline is None:
        baseline = linux.vm_size_bytes()
    if baseline is not None:
        ceiling = baseline + limits.memory_mb * mib
        _set_limit(resource.RLIMIT_AS, ceiling)
        _set_limit(resource.RLIMIT_DATA, ceiling)


def _hide_channel(channel: socket.socket) -> socket.socket:
    """Move the channel to the judge far from the low descriptors a run might guess and write
    to (it stays reachable by a run that looks for it: that can only spoil its own answers)."""
    import random

    if resource is None:
        return channel
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    top = min(hard if hard != resource.RLIM_INFINITY else 65536, 65536)
    target = top - 1 if top <= 1100 else random.SystemRandom().randrange(1024, top)
    if soft < target + 1:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target + 1, hard))
    os.dup2(channel.fileno(), target, inheritable=False)
    channel.close()
    return socket.socket(fileno=target)


def _paths_under_tmp() -> list[str]:
    """Folders under /tmp this interpreter reads from (a venv or a checkout can live there)."""
    candidates = {sys.prefix, sys.base_prefix, os.path.dirname(sys.executable),
                  *sys.path, *os.environ.get("PYTHONPATH", "").split(os.pathsep)}
    found = sorted({os.path.realpath(p) for p in candidates
                    if p and os.path.isdir(p) and os.path.realpath(p).startswith("/tmp/")})
    roots: list[str] = []
    for path in found:  # sorted, so a parent comes before its children
        if not any(path == r or path.startswith(r + "/") for r in roots):
            roots.append(path)
    return roots


def _open_paths_under_tmp() -> list[tuple[str, int]]:
    """``_paths_under_tmp``, each with a descriptor opened on it (``O_PATH``) for ``_private_tmp``."""
    keep = []
    for path in _paths_under_tmp():
        try:
            keep.append((path, os.open(path, os.O_PATH | os.O_DIRECTORY)))
        except OSError:
            continue
    return keep


def _private_tmp(size_mb: int) -> None:
    """In the run's own mount namespace, /tmp becomes a fresh tmpfs of ``size_mb``, the run's
    folder: what the run writes stays in memory, no other run can see it, and it is gone with the
    run's namespaces (nothing for the tutor to make or remove). Done before the request, while the
    runner still holds the capabilities of the run's user namespace (``_prepare`` then gives them
    up). Its size is the sandbox's (``Limits.tmp_mb``): once the runner has given up those
    capabilities nothing can resize it, so a run with limits of its own keeps it.

    Covering /tmp would also hide a virtual environment or a checkout that lives under it (CI
    clones into /tmp), and lazy imports (numpy.ma, torch submodules) would then fail. Each such
    folder is opened before the cover and bound back, read-only, from its file descriptor.
    """
    keep = _open_paths_under_tmp()
    linux.mount_tmpfs("/tmp", size_mb << 20)
    for path, fd in keep:
        os.makedirs(path, exist_ok=True)
        try:
            linux.bind_mount(f"/proc/self/fd/{fd}", path)
        except OSError as exc:
            raise OSError(exc.errno, f"cannot bind {path} back over the private /tmp") from None
        os.close(fd)
        linux.remount_read_only(path)


def _learner_error(exc: BaseException, filename: str) -> dict[str, Any]:
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    lines = []
    if frames:
        lines.append("Traceback (most recent call last):\n")
        lines.extend(traceback.format_list(frames))
    lines.extend(traceback.format_exception_only(type(exc), exc))
    lineno = frames[-1].lineno if frames else None
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        lineno = exc.lineno
    try:
        message = str(exc)
    except Exception:
        message = "<unprintable>"
    return {"type": type(exc).__name__, "message": message, "traceback": "".join(lines),
            "lineno": lineno}


class TopLevelStopped(BaseException):
    """Raised (at every tick, until it gets out) in learner code whose top level ran past its
    limit in a checked run (``TopLevel``): checks wait for the top level, so they never start."""


class TopLevel:
    """The time limit on the learner's top-level code when checks follow (``start["top_level"]``):
    CPU seconds of the main thread, as a check's ``context.TimeLimit`` counts them. No wall-time
    cap of its own: a busy machine never stops honest code there, and code that waits runs to the
    run's own wall time. A loop there once ran to the exercise's whole ``timeout`` (7-20 s) before
    the Check said anything; now it is stopped here and the judge says where
    (``judging.top_level_report``). The learner's code may catch the stop: ``ESCALATE`` seconds
    after the first, this runner tells the judge itself and ends. Where there are no interval
    timers (Windows) a thread interrupts the main one instead."""

    REPEAT = 0.02
    #: Seconds the learner's code may go on catching the stop before this runner tells the judge
    #: itself, from the timer's handler, and ends (``_give_up``).
    ESCALATE = 0.5

    def __init__(self, limit: object, channel: socket.socket | None = None, filename: str = "") -> None:
        self.cpu = float(limit) if type(limit) in (int, float) else 0.0  # type: ignore[arg-type]
        self.armed = self.cpu > 0 and channel is not None
        self.inside = False
        self.fired = False
        self.fired_at = 0.0
        self._cpu0 = self._wall0 = 0.0
        self._channel = channel
        self._filename = filename
        self._send = None
        self._stop_thread: threading.Event | None = None
        if self.armed:  # bound before any learner code exists here (its module's names are the learner's)
            from tutor.child.checks import protocol

            self._send = protocol.send

    def used(self) -> float:
        return time.thread_time() - self._cpu0

    def _tick(self, signum: int, frame: Any) -> None:
        if not self.inside:  # the top level is over: this runner's own code is never interrupted
            return
        if not self.fired:
            if self.used() < self.cpu:
                return
            self.fired, self.fired_at = True, time.monotonic()
        elif time.monotonic() - self.fired_at >= self.ESCALATE:
            self._give_up(frame)
        raise TopLevelStopped()

    def _give_up(self, frame: Any) -> None:
        """The learner's code caught every stop for ``ESCALATE`` seconds: tell the judge where it
        was (the ready message ``after_learner_code`` would send) and end, from this handler."""
        self.inside = False
        self._disarm()
        lineno = None
        while frame is not None:
            if frame.f_code.co_filename == self._filename:
                lineno = frame.f_lineno
                break
            frame = frame.f_back
        where = f'  File "{self._filename}", line {lineno}\n' if lineno is not None else ""
        error = self.stopped(TopLevelStopped(), {"type": "TopLevelStopped", "message": "", "lineno": lineno,
                                                 "traceback": where})
        try:
            _flush_streams()
            if self._send is not None and self._channel is not None:
                self._send(self._channel, {"op": "ready", "names": {}, "learner_error": error, "setup_error": None,
                                           "repaired": []})
        finally:
            os._exit(1)

    def run(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``function(*args, **kwargs)`` with the learner's code in it under this limit; the
        learner's code calls ``enter``/``leave`` around itself (``_run_learner_code``)."""
        if not self.armed:
            return function(*args, **kwargs)
        self._cpu0, self._wall0 = time.thread_time(), time.monotonic()
        first = max(self.cpu, 0.001)  # CPU time cannot run ahead of wall time in one thread
        if hasattr(signal, "setitimer"):
            previous = signal.signal(signal.SIGALRM, self._tick)
            signal.setitimer(signal.ITIMER_REAL, first, self.REPEAT)
        else:  # Windows: a thread interrupts the main one through SIGINT's handler, as TimeLimit does
            previous = signal.signal(signal.SIGINT, self._tick)
            stop = threading.Event()

            def interrupt() -> None:
                if stop.wait(first):
                    return
                while True:
                    _thread.interrupt_main(signal.SIGINT)
                    if stop.wait(self.REPEAT):
                        return

            self._stop_thread = stop
            threading.Thread(target=interrupt, name="tutor-top-level-timer", daemon=True).start()
        try:
            return function(*args, top_level=self, **kwargs)
        finally:
            self.inside = False
            self._disarm()
            signal.signal(signal.SIGALRM if hasattr(signal, "setitimer") else signal.SIGINT,
                          previous if previous is not None else signal.SIG_DFL)

    def _disarm(self) -> None:
        if hasattr(signal, "setitimer"):
            signal.setitimer(signal.ITIMER_REAL, 0, 0)
        elif self._stop_thread is not None:
            self._stop_thread.set()

    def stopped(self, exc: BaseException, error: dict[str, Any]) -> dict[str, Any]:
        """The learner's error for a top level stopped here: what the judge reads."""
        if type(exc) is TopLevelStopped and self.fired:
            error["stopped"] = {"cpu": round(self.used(), 2), "wall": round(time.monotonic() - self._wall0, 2),
                                "limit": self.cpu}
        return error


def _flush_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass


def wait_for_request(channel: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """The next frame from the keeper (the judge), with its descriptors; a discarded spare ends here."""
    try:
        return wire.recv_frame(channel)
    except (wire.WireError, OSError):
        os._exit(0)


def _stdio_ahead() -> None:
    """What of the run's stdio needs no request: stdin is the null device, and stdout and
    stderr are text streams on descriptors 1 and 2, where ``_take_request`` puts the run's pipes
    (the streams write to whatever those descriptors are then)."""
    import io

    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdin = open(os.devnull)
    _flush_streams()
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", line_buffering=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", line_buffering=True)


def _take_request(channel: socket.socket, request: tuple[dict[str, Any], list[int]] | None) -> dict[str, Any]:
    """Wait for the one request (from the keeper) unless it came already; wire stdout and
    stderr (``_stdio_ahead`` did the rest); return it. The report descriptor stays with the
    keeper, the judge: this process never has it. With the pipe transport no descriptor comes:
    stdout and stderr already are the pipes the judge reads (``pipes.py``)."""
    message, fds = request if request is not None else wait_for_request(channel)
    if hasattr(os, "setsid"):
        os.setsid()  # its own session and group: nothing it signals as a group reaches the worker
    if len(fds) == 2:
        _flush_streams()  # nothing written before the request may reach the run's output
        out_fd, err_fd = fds
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        os.close(out_fd)
        os.close(err_fd)
    else:
        for fd in fds:
            os.close(fd)
    linux.set_name(b"tutor-run")
    return message


class _Ahead:
    """What a runner did before its request came (``_prepare``, ``settle_ahead``). A failure
    there is the run's setup error, so ``_set_up`` only ever sees all of it done."""

    def __init__(self, exec_gains_nothing: bool) -> None:
        self.exec_gains_nothing = exec_gains_nothing  # linux.gain_nothing_by_exec was called
        self.vm_size: int | None = None  # the address space mapped once ready (apply_limits)


def _prepare(containment: dict[str, Any]) -> _Ahead:
    """What needs no request, done before it: in fork mode a runner is forked ahead and waits
    (``keeper.Spare``), so a run does not wait for these (docs/performance.md). No learner code
    exists here yet. With the run's namespaces, /tmp becomes the run's own tmpfs (``_private_tmp``),
    the runner enters a user namespace in which no id is mapped (``linux.enter_unmapped_user_namespace``)
    and gives up every capability and what exec could give; stdin and the text streams of stdout
    and stderr are made (``_stdio_ahead``).

    Nothing here may start a thread: capabilities, ``no_new_privs`` and the bounding set belong to
    each thread, and one started before they are given up keeps them (here, or, as root at
    isolation none, in ``_set_up``). (Torch's intra-op threads, set here once, left a pool thread
    with every capability of the run's user namespace and made a profiled run 10 ms slower:
    tests/sandbox/test_hostile.py reads every thread's.)"""
    if containment.get("namespaces"):
        _private_tmp(int(containment.get("tmp_mb") or Limits().tmp_mb))
        linux.enter_unmapped_user_namespace()
    gains_nothing = bool(containment.get("namespaces") or containment.get("drop_uid") == "per-run")
    if gains_nothing:
        linux.gain_nothing_by_exec()
    if containment.get("namespaces"):  # nothing left to do that needs a capability
        linux.drop_capabilities(exec_gains_nothing=True)
    _stdio_ahead()
    return _Ahead(gains_nothing)


def profiles_safely_ahead(containment: dict[str, Any]) -> bool:
    """Whether ``_prepare`` gave up every capability (the run's namespaces), so a thread started
    now (the profiler's, ``startup.warm_profiler``) holds none."""
    return bool(containment.get("namespaces"))


def settle_ahead(ahead: _Ahead, why: str | None, containment: dict[str, Any]) -> str | None:
    """What a runner does last each time before it waits for its request (spawn mode's again
    after each warm-up, which grows the address space): with the run's namespaces its folder is
    /tmp, so HOME, TMPDIR and PWD say so now; and the address space it maps is read for the
    memory limit. Each cost a run 0.2-0.5 ms after its request: a forked process's first writes to
    pages it shares with its parent are copies (``os.environ.update``: ~120 page faults). Why the
    set-up ahead failed (``why``, or now), or None."""
    if why is not None:
        return why
    try:
        _settle_ahead(ahead, containment)
    except BaseException as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _settle_ahead(ahead: _Ahead, containment: dict[str, Any]) -> None:
    import tempfile

    if containment.get("namespaces"):  # _set_up does it at the request otherwise
        os.environ.update(HOME="/tmp", TMPDIR="/tmp", PWD="/tmp")
        tempfile.tempdir = None
    ahead.vm_size = linux.vm_size_bytes()


def _set_up(message: dict[str, Any], containment: dict[str, Any], ahead: _Ahead) -> str | None:
    """Working folder (the private /tmp mounted ahead, with the run's namespaces), the run's uid
    (as root at isolation none), limits, threads; why it failed, or None."""
    try:
        if containment.get("namespaces"):  # HOME and the rest say so already (settle_ahead)
            scratch = "/tmp"
            os.chdir(scratch)
        else:
            named = message.get("scratch")
            if type(named) is not str:
                raise ValueError("the request names no folder for the run")
            scratch = named
            os.chdir(scratch)
            os.environ.update(HOME=scratch, TMPDIR=scratch, PWD=scratch)
            import tempfile

            tempfile.tempdir = None
        if containment.get("drop_uid") == "per-run":  # isolation.PER_RUN: root at isolation none
            # Still root: the folder becomes this run's alone before the run becomes its uid.
            uid = int(message["uid"])
            os.chown(scratch, uid, uid)
            os.chmod(scratch, 0o700)
            linux.become_user(uid)
        apply_limits(Limits.from_wire(message["limits"]), containment, ahead.vm_size)
        import torch

        threads = int(message.get("threads") or 0)
        if threads > 0:
            torch.set_num_threads(threads)
    except BaseException as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _run_learner_code(code: str, filename: str, prelude: str | None = None,
                      checked: bool = False, uses: list[Any] | None = None,
                      top_level: TopLevel | None = None) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Execute the learner's code as ``__main__`` (after the pack's ``prelude``, in the same
    namespace); its namespace and its error, if any. ``checked``: checks follow, so even
    ``sys.exit(0)`` is an error (the file did not run to its end); in a plain run it is a clean end.
    ``uses``: the learner's own answers to earlier exercises, ``[filename, code]`` pairs, run after
    the prelude and before ``code`` in the same namespace (each with ``__name__`` set to its file's
    stem, so its ``if __name__ == "__main__":`` block stays quiet); an error in one is the learner's."""
    learner_error = None
    namespace = {"__name__": "__main__", "__builtins__": __builtins__, "__file__": filename}
    # As `python FILE` with no arguments: the worker's own command line (its configuration) is not
    # the learner's, and a script's `parse_args()` would reject it.
    sys.argv = [filename]
    sys.orig_argv = [sys.executable, filename]
    import linecache

    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    if top_level is not None:
        top_level.inside = True  # its timer may raise from here on (TopLevel._tick)
    try:
        if prelude:
            linecache.cache["<prelude>"] = (len(prelude), None, prelude.splitlines(True), "<prelude>")
            exec(compile(prelude, "<prelude>", "exec", dont_inherit=True), namespace)
        for used_name, used_code in uses or ():
            linecache.cache[used_name] = (len(used_code), None, used_code.splitlines(True), used_name)
            namespace["__name__"], namespace["__file__"] = used_name.rsplit(".", 1)[0], used_name
            try:
                exec(compile(used_code, used_name, "exec", dont_inherit=True), namespace)
            except BaseException as exc:
                if top_level is not None:
                    top_level.inside = False
                    return namespace, top_level.stopped(exc, _learner_error(exc, used_name))
                return namespace, _learner_error(exc, used_name)
            finally:
                namespace["__name__"], namespace["__file__"] = "__main__", filename
        exec(compile(code, filename, "exec", dont_inherit=True), namespace)
    except SystemExit as exc:
        if top_level is not None:
            top_level.inside = False
        if checked or exc.code not in (None, 0):
            learner_error = _learner_error(exc, filename)
    except BaseException as exc:
        if top_level is not None:
            top_level.inside = False
            return namespace, top_level.stopped(exc, _learner_error(exc, filename))
        learner_error = _learner_error(exc, filename)
    finally:
        if top_level is not None:
            top_level.inside = False
    return namespace, learner_error


def after_learner_code(channel: socket.socket, message: dict[str, Any], namespace: dict[str, Any],
                       learner_error: dict[str, Any] | None, setup_error: str | None,
                       check: Callable[..., None] | None = None) -> None:
    """Everything the runner does once the learner's code has run: tell the judge (the keeper)
    how it ended and what it defined, then answer the judge's requests until it says bye. The
    verdict is the judge's: nothing this process sends is one."""
    from tutor.child.checks import protocol

    serve = bool(message.get("serve")) and setup_error is None
    ready: protocol.Ready = {"op": "ready", "names": {}, "learner_error": learner_error, "setup_error": setup_error,
             "repaired": [], "private_mb": linux.private_memory_mb() if message.get("stats") else None}
    blobs: list[Any] = []
    server = None
    if serve:
        from tutor.child.checks import guard
        from tutor.child.checks.context import Learner
        from tutor.child.checks.server import Server

        ready["repaired"] = guard.restore()
        server = Server(channel, namespace, Learner(message.get("filename") or "<snippet>", message["code"]))
        ready["names"] = server.manifest(blobs)  # may run the learner's code (a property)
        if check is not None:
            check(server)
    try:
        protocol.send(channel, ready, blobs)
    except OSError:
        return  # the run closed its own channel; the judge sees no answer and says so
    if server is not None:
        from tutor.child.checks.driver import drive, leave_modes

        # The learner's code runs from drive's frame on (tutor.child.checks.driver): no frame under it may
        # hold the server, so this one lets it go, and the modes its top level left pushed go too.
        serving, server = server.serving(), None
        leave_modes()
        drive(serving)
        _flush_streams()


def _seal(channel: socket.socket) -> Callable[..., None]:
    from tutor.child.checks import seal

    return seal.take(channel)


def _uses(value: object) -> list[Any]:
    """The request's ``uses`` as ``[filename, code]`` pairs of strings (anything else: none)."""
    if type(value) is not list:
        return []
    return [item for item in value
            if type(item) is list and len(item) == 2 and all(type(part) is str for part in item)]


def ahead_of_the_request(channel: socket.socket,
                         containment: dict[str, Any]) -> tuple[socket.socket, _Ahead, str | None]:
    """The channel moved out of the way (``_hide_channel``) and ``_prepare`` done, before the
    request comes; a failure is said as the run's setup error once it has come."""
    channel = _hide_channel(channel)
    try:
        return channel, _prepare(containment), None
    except BaseException as exc:
        return channel, _Ahead(False), f"{type(exc).__name__}: {exc}"


def runner(channel: socket.socket, containment: dict[str, Any], request: tuple[dict[str, Any], list[int]] | None = None,
           ahead: tuple[_Ahead, str | None] | None = None) -> None:
    """Run one request (``request``, or the next frame on ``channel``). ``ahead``: what
    ``ahead_of_the_request`` did and said (spawn mode's runner calls it before its warm-up)."""
    if ahead is None:  # fork mode: forked ahead, waiting here until its request
        channel, done, why = ahead_of_the_request(channel, containment)
        if why is None and containment.get("warm_profiler") and profiles_safely_ahead(containment):
            warm_profiler()  # the worker loaded the profiler's machinery: a learner is reading
        why = settle_ahead(done, why, containment)
    else:
        done, why = ahead
    message = _take_request(channel, request)
    filename = message.get("filename") or "<snippet>"
    setup_error = why or _set_up(message, containment, done)
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__, "__file__": filename}
    learner_error = None
    # Checks follow: seal the code that will answer them before any learner code exists here
    # (tutor.child.checks.seal). Held in locals from now on: the module's names are the learner's to
    # replace, and this frame's code runs on after the learner's.
    check = _seal(channel) if message.get("serve") and setup_error is None else None
    after = after_learner_code
    if setup_error is None:
        prelude = message.get("prelude")
        top_level = TopLevel(message.get("top_level") if check is not None else None, channel, filename)
        namespace, learner_error = top_level.run(_run_learner_code, message["code"], filename,
                                                 prelude if type(prelude) is str else None,
                                                 checked=bool(message.get("serve")),
                                                 uses=_uses(message.get("uses")))
    if check is not None:
        check()  # before any name of this module is looked up again
    _flush_streams()
    after(channel, message, namespace, learner_error, setup_error, check)
    os._exit(1 if (learner_error or setup_error) else 0)
