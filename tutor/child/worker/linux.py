"""Every Linux-specific call of the child side: prctl, namespaces, mounts and the ``/proc`` readers.

Each is guarded by ``AVAILABLE``: off Linux (macOS, or a test that sets
``TORCH_TUTOR_PORTABLE_CHILD=1`` to run the child side as it would run there) no libc call is
made and no ``/proc`` file is read; each helper degrades to a portable equivalent or to nothing,
and ``unenforced_limits`` says which limits that leaves unenforced.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Sequence

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
PR_SET_PDEATHSIG = 1
PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4
PR_SET_NAME = 15
PR_SET_CHILD_SUBREAPER = 36
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAP_VERSION_3 = 0x20080522

#: True where the Linux-only calls below may be made (Linux, unless a test turns them off).
AVAILABLE = sys.platform.startswith("linux") and os.environ.get("TORCH_TUTOR_PORTABLE_CHILD") != "1" \
    and os.environ.get("TORCH_TUTOR_EMULATE_WINDOWS") != "1"

_libc = ctypes.CDLL(None, use_errno=True) if AVAILABLE else None


# --------------------------------------------------------------------------- prctl, unshare, mount


def prctl(option: int, value: int) -> None:
    """prctl where it exists; elsewhere nothing (no parent-death signal, no subreaper, no name)."""
    if _libc is not None:
        _libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0)


def die_with_parent() -> None:
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def become_subreaper() -> None:
    prctl(PR_SET_CHILD_SUBREAPER, 1)


def set_name(name: bytes) -> None:
    prctl(PR_SET_NAME, int.from_bytes(name, "little"))


#: ``step_aside``'s niceness: a tenth of a normal process's share of a contended core.
STEP_ASIDE_NICE = 10


def step_aside() -> None:
    """Lower this process's priority for what it still does once a run's verdict is out, which
    no one waits for: its exit (a forked torch process's address space: ~2 ms of CPU), the
    namespaces' teardown, the keeper's sweep. A Run right after a Run, or one beside a busy core,
    competed with ~6 ms of that from the last run's init, relay and keeper for the free core; the
    next run's processes go first now, and the rest still ends (a nice value, not an idle class:
    a batch keeping every core busy must not leave finished runs' processes waiting)."""
    try:
        os.nice(STEP_ASIDE_NICE)
    except OSError:
        pass


def let_the_woken_run() -> None:
    """Give this CPU to the process a write just woke, before heavy work of this one's own.

    Linux wakes the reader of a pipe or socket on the writer's CPU, expecting the writer to wait
    next; a writer that instead exits (its address space's teardown) or forks a torch process
    kept it waiting there 1-2 ms on 2 cores (a run's init saying how the run ended, then exiting;
    the worker sending a verdict, then forking the next spare): a tenth of a Run."""
    if hasattr(os, "sched_yield"):
        os.sched_yield()


#: The run's uid and gid inside its user namespace, as they read before it had a map (the
#: overflow id): the one id mapped there, to this process's own outside it.
RUN_ID = 65534


def unshare_run_namespaces() -> str | None:
    """A user, PID and mount namespace of the run's own; why not, or None when done.

    The user namespace maps one id, ``RUN_ID``, to this process's own uid and gid outside it
    (the one map a process may write for the namespace it just made). Without a map the run's
    ids are unmapped there, and a filesystem the run's namespace mounts (its private /tmp)
    refuses to create a file it cannot give an owner (EOVERFLOW)."""
    if _libc is None:
        return "namespaces are a Linux feature"
    uid, gid = os.geteuid(), os.getegid()
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS) != 0:
        return os.strerror(ctypes.get_errno())
    # /proc/self's files belong to root while this process is not dumpable (a worker that left
    # root), and the maps can then not be written: dumpable for these three writes only. Nothing
    # outside this namespace's ancestors may trace it meanwhile (other runs' are siblings).
    dumpable = _libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)
    if dumpable != 1:
        _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    why = None
    try:
        for name, line in (("setgroups", "deny"), ("uid_map", f"{RUN_ID} {uid} 1"), ("gid_map", f"{RUN_ID} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as handle:
                handle.write(line)
    except OSError as exc:
        why = f"cannot map the run's ids: {exc}"
    # Not dumpable again (0: the only other value a process may set; 2, suid_dumpable's "root
    # only", cannot be set back and would leave it dumpable).
    if dumpable != 1 and _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        why = why or "cannot make the run's relay undumpable again"
    return why


def enter_unmapped_user_namespace() -> None:
    """A user namespace of this process's own in which no id is mapped, entered by a runner once
    its private /tmp is mounted: the run's ids are unmapped there, and a process whose id is
    unmapped cannot make a user namespace. (With the run's id mapped, learner code made one and
    held every capability in it: enough to mount a tmpfs of any size, RAM no limit counts.) The
    process gets every capability of this namespace, which ``gain_nothing_by_exec`` and
    ``drop_capabilities`` then end. Must be called while the process is one thread."""
    if _libc is None:
        raise OSError(38, "namespaces are a Linux feature")
    if _libc.unshare(CLONE_NEWUSER) != 0:
        raise OSError(ctypes.get_errno(), "cannot enter the runner's own user namespace")


def bind_mount(source: str, target: str) -> None:
    if _libc is None:
        raise OSError(38, "bind mounts are a Linux feature")
    if _libc.mount(source.encode(), target.encode(), None, MS_BIND | MS_REC, None) != 0:
        raise OSError(ctypes.get_errno(), f"cannot bind {source} on {target}")


def mount_tmpfs(target: str, size_bytes: int) -> None:
    """A fresh tmpfs of ``size_bytes`` on ``target`` (mode 0700, no setuid or device files)."""
    if _libc is None:
        raise OSError(38, "tmpfs mounts are a Linux feature")
    flags = MS_NOSUID | MS_NODEV
    options = f"size={int(size_bytes)},mode=0700".encode()
    if _libc.mount(b"tmpfs", target.encode(), b"tmpfs", flags, options) != 0:
        raise OSError(ctypes.get_errno(), f"cannot mount a {int(size_bytes) >> 20} MB tmpfs on {target}")


def remount_read_only(path: str) -> None:
    if _libc is None:
        raise OSError(38, "remounts are a Linux feature")
    flags = os.statvfs(path).f_flag
    if not flags & os.ST_RDONLY:  # a bind keeps the source's flags: bwrap's ro-bind is already ro
        # a remount must repeat the flags the kernel locked (nosuid, nodev...) or it is refused
        kept = flags & (os.ST_NOSUID | os.ST_NODEV | os.ST_NOEXEC | os.ST_NOATIME | os.ST_NODIRATIME)
        if _libc.mount(None, path.encode(), None, MS_BIND | MS_REMOUNT | MS_RDONLY | kept, None) != 0:
            raise OSError(ctypes.get_errno(), f"cannot make {path} read-only")


# --------------------------------------------------------------------------- huge pages

MADV_COLLAPSE = 25  # Linux 6.1
_HUGE = 2 * 1024 * 1024


def anonymous_ranges() -> list[tuple[int, int]]:
    """This process's private, writable, anonymous regions (the heap included), as (low, high)."""
    try:
        with open("/proc/self/maps") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    ranges = []
    for line in lines:
        fields = line.split()
        # private, writable, anonymous (no file behind it; the heap counts, the stack does not)
        if len(fields) < 5 or fields[1][:2] != "rw" or fields[1][3] != "p" or fields[4] != "0":
            continue
        if len(fields) > 5 and fields[5] != "[heap]":
            continue
        low, high = (int(x, 16) for x in fields[0].split("-"))
        ranges.append((low, high))
    return ranges


def _outside(low: int, high: int, kept: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of [low, high) that no range of ``kept`` covers."""
    parts = [(low, high)]
    for k_low, k_high in kept:
        parts = [piece for p_low, p_high in parts
                 for piece in ((p_low, min(p_high, k_low)), (max(p_low, k_high), p_high)) if piece[0] < piece[1]]
    return parts


def collapse_huge_pages(shared: Sequence[tuple[int, int]] = ()) -> int | None:
    """Fold this process's private anonymous memory into transparent huge pages (2 MiB), once,
    after the preload and before any fork: a fork copies, and an exit frees, one page-table entry
    per 4 KiB page, so a torch worker's fork took 11.7-13.3 ms and its children's exits 12-14 ms;
    with the memory collapsed, 2-3 ms each. Copy-on-write still copies 4 KiB at a time (the kernel
    splits a huge page a child writes to). Bytes collapsed; None where the kernel cannot
    (THP off or ``never``, a kernel before 6.1, not Linux). Best effort: a region that cannot be
    collapsed (busy, not enough free huge pages) is left as it is.

    ``shared``: ranges (``anonymous_ranges`` before a fork) a living child still shares, left as
    they are. A fold copies what it folds into new pages, so the child would be left holding the
    old ones alone: its own copy of everything folded."""
    if _libc is None:
        return None
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as handle:
            if "[never]" in handle.read():
                return None
    except OSError:
        return None
    madvise = _libc.madvise
    madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    collapsed, tried = 0, False
    for region in anonymous_ranges():
        for low, high in _outside(*region, shared):
            start, end = (low + _HUGE - 1) & ~(_HUGE - 1), high & ~(_HUGE - 1)
            if end <= start:
                continue
            tried = True
            if madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start), MADV_COLLAPSE) == 0:
                collapsed += end - start
            elif ctypes.get_errno() == 22 and collapsed == 0:  # EINVAL: no MADV_COLLAPSE here
                return None
    return collapsed if tried else 0


# --------------------------------------------------------------------------- privileges


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _drop_bounding_set() -> None:
    if _libc is None:
        return
    # Needs CAP_SETPCAP; without it the set stays, and no_new_privs keeps it from mattering.
    for cap in range(64):
        if _libc.prctl(PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0) != 0 and ctypes.get_errno() == 22:
            break  # EINVAL: past the last capability this kernel knows


def gain_nothing_by_exec() -> None:
    """No privilege to be gained by exec (setuid files, file capabilities): ``no_new_privs``, an
    empty bounding set and ambient set. The capabilities the process holds stay effective;
    ``drop_capabilities`` ends those. A new user
    namespace gives its first process every capability again, bounding set included: call this in
    the process that will run code, after its namespaces exist."""
    if _libc is None:
        return
    _libc.prctl(PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), 0, 0, 0)
    _drop_bounding_set()
    _libc.prctl(PR_CAP_AMBIENT, ctypes.c_ulong(PR_CAP_AMBIENT_CLEAR_ALL), 0, 0, 0)


def drop_capabilities(exec_gains_nothing: bool = False) -> None:
    """No capability in any set, and none to be gained by exec (setuid files included).
    ``exec_gains_nothing``: this process called ``gain_nothing_by_exec`` already (a runner does,
    before its request)."""
    if _libc is None:  # capabilities are Linux's; elsewhere a non-root uid holds none
        return
    if not exec_gains_nothing:
        gain_nothing_by_exec()
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    if _libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "cannot drop capabilities")


def become_user(uid: int) -> None:
    """From root to ``uid`` (group too, no supplementary groups), keeping no capability. No user
    database knows the tutor's uids: ``getpass.getuser()`` (torch's caches, logging) reads USER
    and LOGNAME first."""
    os.environ.update(USER="tutor-run", LOGNAME="tutor-run")
    if _libc is None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)  # as root, sets the real, effective and saved uid alike
        return
    gain_nothing_by_exec()
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)  # every uid non-zero: the kernel clears all capabilities
    drop_capabilities()


# --------------------------------------------------------------------------- /proc


def proc_status(pid: int | str = "self") -> dict[str, str]:
    """``/proc/PID/status`` as a mapping of field to raw value (the one reader of that file);
    OSError where there is no ``/proc``."""
    if not AVAILABLE:
        raise OSError(38, "no /proc on this OS")
    with open(f"/proc/{pid}/status") as status:
        text = status.read()
    return {key: value.strip() for key, value in
            (line.split(":", 1) for line in text.splitlines() if ":" in line)}


def trim_heap() -> None:
    """Hand the heap's free memory back to the system (glibc's ``malloc_trim``): a spawn-mode
    judge serves several runs, and what one run's data took should not stay resident between
    them. A no-op where there is no such call."""
    trim = getattr(_libc, "malloc_trim", None) if _libc is not None else None
    if trim is not None:
        trim(0)


def rss_mb() -> float:
    """Resident memory now; off Linux, the peak so far (the one portable measure)."""
    if not AVAILABLE:
        try:
            import resource
        except ImportError:
            return 0.0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024
    value = proc_status().get("VmRSS")
    return int(value.split()[0]) / 1024 if value else 0.0


def vm_size_bytes() -> int | None:
    """Address space mapped now; None where it cannot be read (the memory limit is then off:
    a ceiling that ignores what torch already maps would fail every run)."""
    if not AVAILABLE:
        return None
    value = proc_status().get("VmSize")
    return int(value.split()[0]) * 1024 if value else None


def user_tasks(uid: int) -> int | None:
    """Threads of every process that ``uid`` owns (RLIMIT_NPROC counts them all); None where
    they cannot be counted."""
    if not AVAILABLE:
        return None
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                fields = proc_status(name)
            except OSError:
                continue
            if int(fields.get("Uid", "-1 0").split()[0]) == uid:
                count += int(fields.get("Threads", "1"))
    return count


def own_threads() -> int | None:
    """This process's threads; None where they cannot be counted."""
    if not AVAILABLE:
        return None
    return int(proc_status().get("Threads", "1"))


def private_memory_mb() -> float | None:
    if not AVAILABLE:
        return None
    try:
        with open("/proc/self/smaps_rollup") as rollup:
            total = 0
            for line in rollup:
                if line.startswith(("Private_Clean:", "Private_Dirty:")):
                    total += int(line.split()[1])
        return total / 1024
    except OSError:
        return None


def open_fds() -> list[int] | None:
    if not AVAILABLE:
        return None
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return None


def children(pid: int) -> list[int]:
    """Child processes of ``pid``; off Linux, none found (the run's session is killed instead)."""
    if not AVAILABLE:
        return []
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


def tree_cpu_seconds(pid: int, depth: int = 0) -> float | None:
    """CPU time (user + system) of ``pid`` and every live descendant, each with what it already
    reaped, from ``/proc/PID/stat``; None where it cannot be read. What a run cost before the
    keeper kills it for time: its wait status then has only the relay's own few milliseconds
    (a busy loop stopped after 10 s read "10.04 s wall, 0.02 s CPU")."""
    if not AVAILABLE or depth > 64:
        return None
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime stime cutime cstime
    except (OSError, IndexError, ValueError):
        return None
    total = ticks / os.sysconf("SC_CLK_TCK")
    for child in children(pid):
        below = tree_cpu_seconds(child, depth + 1)
        total += below or 0.0
    return total


def kill_session(sid: int) -> None:
    """One pass over /proc kills a whole fork bomb at once: its members share the run's session.
    Off Linux, the session's process group instead (the runner leads both)."""
    if not AVAILABLE:
        try:
            os.killpg(sid, signal.SIGKILL)
        except OSError:
            pass
        return
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
                if int(fields[3]) == sid:
                    os.kill(int(name), signal.SIGKILL)
            except (OSError, IndexError, ValueError):
                pass


def unenforced_limits() -> list[str]:
    """The limits a run here goes without (empty on Linux): what ``doctor`` reports."""
    try:
        import resource  # noqa: F401
    except ImportError:
        return ["cpu_time", "memory_mb", "processes", "file_size_mb", "open_files"]
    missing = []
    if not AVAILABLE:
        missing.append("memory_mb")  # no baseline to add to (and macOS ignores RLIMIT_AS)
        missing.append("processes")  # RLIMIT_NPROC counts the user's processes, which we cannot
    return missing
