"""The sandbox worker: imports torch once, then forks a fresh child for every run.

Runs inside the sandbox (under bubblewrap when it works), possibly under another interpreter
that has torch but none of the tutor's dependencies: standard library, torch and numpy only.

Three kinds of process live here:

* the **worker** (this module's ``main``) imports torch and the profiler's modules and never runs
  a torch op: one multi-threaded op before a fork leaves every child hung in libgomp's barrier;
* a **keeper**, forked ahead of the next request, becomes a child subreaper (and, where
  namespaces work, unshares a user, PID and mount namespace), forks the runner, enforces wall
  time, and after the run kills whatever the run left behind before it reports;
* the **runner** is the keeper's child (PID 1 of its own namespace where namespaces work): it
  waits for the request, applies the limits, runs the learner's code, then the probe, and
  writes one report to a private pipe. Nothing it does reaches the next run: it never serves two.

Keeping the keeper/runner pair forked ahead takes two forks out of the request's path.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import select
import signal
import socket
import sys
import time

#: Set before torch loads: OpenBLAS threads started in the worker would not survive the fork.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from tutor.sandbox import wire  # noqa: E402  (after the variable above, as torch must be)

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
MS_RDONLY = 1
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
PR_SET_PDEATHSIG = 1
PR_SET_NAME = 15
PR_SET_CHILD_SUBREAPER = 36

_libc = ctypes.CDLL(None, use_errno=True)

#: Modules the profiler and the checks reach for: loading them per run costs about a second.
BASE_PRELOAD = ("torch", "torch.nn", "torch.nn.functional", "torch.profiler", "numpy")
OPTIONAL_PRELOAD = ("torch._dynamo",)


def _prctl(option: int, value: int) -> None:
    _libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0)


def _die_with_parent() -> None:
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _fork() -> int:
    """fork, waiting out EAGAIN: right after a fork bomb the pids cgroup drains for a moment."""
    deadline = time.monotonic() + 5.0
    while True:
        try:
            return os.fork()
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _close_other_fds(keep: set[int]) -> None:
    """A forked process keeps only what it needs: the tutor's channel must not reach a run."""
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        fds = list(range(3, 1024))
    for fd in fds:
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


# --------------------------------------------------------------------------- worker


def preload(extra: list[str]) -> tuple[list[str], dict[str, str]]:
    import importlib

    loaded, failed = [], {}
    for name in BASE_PRELOAD:
        importlib.import_module(name)
        loaded.append(name)
    for name in [*OPTIONAL_PRELOAD, *extra]:
        try:
            importlib.import_module(name)
            loaded.append(name)
        except Exception as exc:  # optional: a missing probe module is not fatal
            failed[name] = f"{type(exc).__name__}: {exc}"
    return loaded, failed


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Spare:
    """A keeper/runner pair forked ahead, waiting for its one request."""

    def __init__(self, containment: dict, keep: set[int]):
        self.ctl_r, self.ctl_w = os.pipe()
        self.status_r, status_w = os.pipe()
        self.request, runner_end = socket.socketpair()
        pid = _fork()
        if pid == 0:
            os.close(self.ctl_w)
            os.close(self.status_r)
            self.request.close()
            try:
                _close_other_fds({self.ctl_r, status_w, runner_end.fileno()})
                keeper(self.ctl_r, status_w, runner_end, containment)
            finally:
                os._exit(70)
        self.pid = pid
        os.close(self.ctl_r)
        os.close(status_w)
        runner_end.close()

    def start(self, message: dict, fds: list[int]) -> None:
        wire.send_frame(self.request, message, fds)
        self.request.close()
        os.write(self.ctl_w, b"S%f\n" % float(message["limits"]["wall_time"]))

    def cancel(self) -> None:
        try:
            os.write(self.ctl_w, b"C\n")
        except OSError:
            pass

    def result(self) -> dict:
        """The keeper's verdict, once it has reaped the runner and everything it left."""
        data = b""
        while True:
            chunk = os.read(self.status_r, 65536)
            if not chunk:
                break
            data += chunk
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        self.close()
        try:
            return json.loads(data)
        except ValueError:
            return {"failure": "the sandbox keeper died without a verdict"}

    def close(self) -> None:
        for fd in (self.ctl_w, self.status_r):
            try:
                os.close(fd)
            except OSError:
                pass
        self.request.close()

    def discard(self) -> None:
        self.close()  # EOF on its control pipe: the keeper kills the runner and exits
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def serve(channel: socket.socket, containment: dict) -> None:
    spare = Spare(containment, {channel.fileno()})
    while True:
        try:
            message, fds = wire.recv_frame(channel)
        except wire.WireError:
            spare.discard()
            return
        op = message.get("op")
        if op == "exit":
            spare.discard()
            return
        if op != "run":
            for fd in fds:
                os.close(fd)
            continue
        current, spare = spare, None
        current.start(message, fds)
        for fd in fds:
            os.close(fd)
        while True:
            ready, _, _ = select.select([channel, current.status_r], [], [])
            if current.status_r in ready:
                break
            try:
                control, stray = wire.recv_frame(channel)
            except wire.WireError:
                current.cancel()
                current.result()
                return
            for fd in stray:
                os.close(fd)
            if control.get("op") == "exit":
                current.cancel()
                current.result()
                return
            if control.get("op") == "cancel" and control.get("id") == message["id"]:
                current.cancel()
        verdict = current.result()
        # Whatever escaped the keeper's sweep was reparented to us, the subreaper; no spare
        # exists yet, so every child left is the run's.
        _sweep(time.monotonic() + 1.0)
        verdict.update(op="done", id=message["id"])
        wire.send_frame(channel, verdict)
        spare = Spare(containment, {channel.fileno()})


def main() -> int:
    config = json.loads(sys.argv[1])
    channel = socket.socket(fileno=int(config["fd"]))
    _die_with_parent()
    started = time.perf_counter()
    try:
        loaded, failed = preload(config.get("preload", []))
    except BaseException as exc:  # torch itself failed to import: say why, then stop
        wire.send_frame(channel, {"op": "failed", "error": f"{type(exc).__name__}: {exc}"})
        return 1
    import torch

    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    wire.send_frame(channel, {
        "op": "ready", "pid": os.getpid(), "torch": torch.__version__,
        "python": sys.version.split()[0], "executable": sys.executable,
        "preloaded": loaded, "preload_failures": failed,
        "warmup_s": time.perf_counter() - started, "rss_mb": _rss_mb(),
    })
    serve(channel, config.get("containment", {}))
    return 0


# --------------------------------------------------------------------------- keeper


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            return [int(x) for x in handle.read().split()]
    except OSError:
        found = []
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open(f"/proc/{name}/stat") as handle:
                        fields = handle.read().rsplit(")", 1)[1].split()
                    if int(fields[1]) == pid:
                        found.append(int(name))
                except (OSError, IndexError, ValueError):
                    pass
        return found


def _kill_session(sid: int) -> None:
    """One pass over /proc kills a whole fork bomb at once: its members share the run's session."""
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
                if int(fields[3]) == sid:
                    os.kill(int(name), signal.SIGKILL)
            except (OSError, IndexError, ValueError):
                pass


def _sweep(deadline: float, session: int | None = None) -> bool:
    """Kill and reap every process the run left behind (they were reparented to us)."""
    me = os.getpid()
    while time.monotonic() < deadline:
        if session is not None:
            _kill_session(session)
        for pid in _children(me):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            while True:
                pid, _ = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
        except ChildProcessError:
            return True
        time.sleep(0.002)
    return False


def keeper(ctl_r: int, status_w: int, runner_end: socket.socket, containment: dict) -> None:
    _die_with_parent()
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    if containment.get("namespaces"):
        if _libc.unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS) != 0:
            err = ctypes.get_errno()
            _report_status(status_w, {"failure": f"cannot create the run's namespaces: {os.strerror(err)}"})
            return
    pid = _fork()
    if pid == 0:
        os.close(ctl_r)
        os.close(status_w)
        _die_with_parent()
        try:
            runner(runner_end, containment)
        finally:
            os._exit(71)
    runner_end.close()
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None

    command = b""
    while not command.endswith(b"\n"):
        chunk = os.read(ctl_r, 64)
        if not chunk:  # discarded before use
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return
        command += chunk
    wall_time = float(command[1:].strip())
    started = time.monotonic()
    reason = None
    while True:
        remaining = wall_time - (time.monotonic() - started)
        if remaining <= 0:
            reason = "timeout"
            break
        watch = [ctl_r] + ([pidfd] if pidfd is not None else [])
        ready, _, _ = select.select(watch, [], [], remaining if pidfd is not None else min(remaining, 0.01))
        if ctl_r in ready:
            reason = "cancelled"  # a cancel, or the worker went away
            break
        if pidfd is not None and pidfd in ready:
            break
        if pidfd is None and os.waitpid(pid, os.WNOHANG)[0] == pid:
            _report_status(status_w, {"failure": "runner reaped early"})
            return
    if reason:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - started
    swept = _sweep(time.monotonic() + 2.0, None if containment.get("namespaces") else pid)
    verdict = {
        "reason": reason,
        "exit_code": os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "wall_time": wall,
        "cpu_time": usage.ru_utime + usage.ru_stime,
        "maxrss_kb": usage.ru_maxrss,
        "swept": swept,
    }
    _report_status(status_w, verdict)


def _report_status(fd: int, verdict: dict) -> None:
    data = json.dumps(verdict).encode()
    while data:
        data = data[os.write(fd, data):]
    os.close(fd)


# --------------------------------------------------------------------------- runner


def _vm_size_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _user_tasks(uid: int) -> int:
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/status") as status:
                    text = status.read()
            except OSError:
                continue
            fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
            if int(fields.get("Uid", "-1 0").split()[0]) == uid:
                count += int(fields.get("Threads", "1"))
    return count


def _set_limit(which: int, value: int) -> None:
    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


def apply_limits(limits: dict, containment: dict, report_fd: int) -> None:
    mib = 1024 * 1024
    if containment.get("count_user_tasks"):
        _set_limit(resource.RLIMIT_NPROC, int(limits["processes"]) + _user_tasks(os.getuid()))
    elif containment.get("drop_uid") is not None:
        _set_limit(resource.RLIMIT_NPROC, int(limits["processes"]))
    _set_limit(resource.RLIMIT_CORE, 0)
    # Soft and hard together: as PID 1 of its namespace the runner ignores SIGXCPU, but the kernel's
    # SIGKILL at the hard limit always lands.
    _set_limit(resource.RLIMIT_CPU, max(1, int(round(float(limits["cpu_time"])))))
    _set_limit(resource.RLIMIT_FSIZE, int(limits["file_size_mb"]) * mib)
    _set_limit(resource.RLIMIT_NOFILE, int(limits["open_files"]))
    # Address space above what the fork already maps: torch fails cleanly ("can't allocate
    # memory") with room to spare, where a tight limit makes it crash in odd ways.
    ceiling = _vm_size_bytes() + int(limits["memory_mb"]) * mib
    _set_limit(resource.RLIMIT_AS, ceiling)
    _set_limit(resource.RLIMIT_DATA, ceiling)


def _hide_report_fd(fd: int) -> int:
    """Move the report pipe far from the low descriptors a run might guess and write to."""
    import random

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    top = min(hard if hard != resource.RLIM_INFINITY else 65536, 65536)
    if top <= 1100:
        target = top - 1
    else:
        target = random.SystemRandom().randrange(1024, top)
    if soft < target + 1:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target + 1, hard))
    os.dup2(fd, target, inheritable=False)
    os.close(fd)
    return target


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


def _isolate_tmp(scratch: str) -> str:
    """In the run's own mount namespace, the scratch dir *is* /tmp: nothing written there stays.

    Covering /tmp would also hide a virtual environment or a checkout that lives under it (CI
    clones into /tmp), and lazy imports (numpy.ma, torch submodules) would then fail. Each such
    folder is opened before the cover and bound back, read-only, from its file descriptor.
    """
    keep = []
    for path in _paths_under_tmp():
        try:
            keep.append((path, os.open(path, os.O_PATH | os.O_DIRECTORY)))
        except OSError:
            continue
    if _libc.mount(scratch.encode(), b"/tmp", None, MS_BIND | MS_REC, None) != 0:
        raise OSError(ctypes.get_errno(), "cannot bind the scratch directory on /tmp")
    for path, fd in keep:
        os.makedirs(path, exist_ok=True)
        source = f"/proc/self/fd/{fd}".encode()
        if _libc.mount(source, path.encode(), None, MS_BIND | MS_REC, None) != 0:
            raise OSError(ctypes.get_errno(), f"cannot bind {path} back over the private /tmp")
        os.close(fd)
        flags = os.statvfs(path).f_flag
        if not flags & os.ST_RDONLY:  # a bind keeps the source's flags: bwrap's ro-bind is already ro
            # a remount must repeat the flags the kernel locked (nosuid, nodev...) or it is refused
            kept = flags & (os.ST_NOSUID | os.ST_NODEV | os.ST_NOEXEC | os.ST_NOATIME | os.ST_NODIRATIME)
            if _libc.mount(None, path.encode(), None, MS_BIND | MS_REMOUNT | MS_RDONLY | kept, None) != 0:
                raise OSError(ctypes.get_errno(), f"cannot make {path} read-only")
    return "/tmp"


def _drop_privileges(uid: int) -> None:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


def _learner_error(exc: BaseException, filename: str) -> dict:
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


def _private_memory_mb() -> float | None:
    try:
        with open("/proc/self/smaps_rollup") as rollup:
            total = 0
            for line in rollup:
                if line.startswith(("Private_Clean:", "Private_Dirty:")):
                    total += int(line.split()[1])
        return total / 1024
    except OSError:
        return None


def runner(channel: socket.socket, containment: dict) -> None:
    try:
        message, fds = wire.recv_frame(channel)
    except wire.WireError:
        os._exit(0)  # discarded spare
    channel.close()
    out_fd, err_fd, report_fd = fds
    os.setsid()  # its own session and group: nothing it signals as a group reaches the worker
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    for fd in (null, out_fd, err_fd):
        os.close(fd)
    report_fd = _hide_report_fd(report_fd)
    _prctl(PR_SET_NAME, int.from_bytes(b"tutor-run", "little"))

    import io

    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", line_buffering=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", line_buffering=True)
    sys.stdin = open(os.devnull)

    limits = message["limits"]
    filename = message.get("filename") or "<snippet>"
    code = message["code"]
    scratch = message["scratch"]
    setup_error = None
    try:
        if containment.get("namespaces"):
            scratch = _isolate_tmp(scratch)
        os.chdir(scratch)
        os.environ.update(HOME=scratch, TMPDIR=scratch, PWD=scratch)
        import tempfile

        tempfile.tempdir = None
        if containment.get("drop_uid") is not None:
            _drop_privileges(int(containment["drop_uid"]))
        apply_limits(limits, containment, report_fd)
        import torch

        threads = int(message.get("threads") or 0)
        if threads > 0:
            torch.set_num_threads(threads)
    except BaseException as exc:
        setup_error = f"{type(exc).__name__}: {exc}"

    learner_error = None
    namespace = {"__name__": "__main__", "__builtins__": __builtins__, "__file__": filename}
    if setup_error is None:
        import linecache

        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        try:
            exec(compile(code, filename, "exec", dont_inherit=True), namespace)
        except SystemExit as exc:
            if exc.code not in (None, 0):
                learner_error = _learner_error(exc, filename)
        except BaseException as exc:
            learner_error = _learner_error(exc, filename)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass

    report = {"learner_error": learner_error, "setup_error": setup_error}
    probe = message.get("probe")
    if probe and setup_error is None:
        try:
            import importlib

            function = getattr(importlib.import_module(probe["module"]), probe["function"])
            report["report"] = function(namespace, probe.get("payload"), learner_error)
        except BaseException:
            import traceback

            report["probe_error"] = traceback.format_exc()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
    if message.get("stats"):
        report["private_mb"] = _private_memory_mb()
    try:
        data = wire.encode_report(report)
    except BaseException as exc:
        data = wire.encode_report({"learner_error": learner_error, "setup_error": setup_error,
                                   "probe_error": f"the probe's report is not JSON: {exc}"})
    if len(data) > wire.MAX_REPORT:
        data = wire.encode_report({"learner_error": learner_error, "setup_error": setup_error,
                                   "probe_error": f"the probe's report is {len(data)} bytes, over "
                                                  f"the {wire.MAX_REPORT}-byte limit"})
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(report_fd, view):]
    except OSError:
        pass  # the run closed it; the tutor sees no report and says so
    os._exit(1 if (learner_error or setup_error) else 0)


if __name__ == "__main__":
    code = main()
    # Leave without the interpreter's teardown: unloading torch took about a second, which every
    # quit of the app waited for. Nothing of the worker's needs finalising (the parent removes
    # the scratch folders; runs are over).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
