"""Choosing how strongly runs are isolated, and saying so.

What every backend shares: the records (``IsolationInfo``, ``Interpreter``), the scrubbed
environment, the uids runs take, and what a run's uid can read. Which backend runs, and how, is
``tutor/sandbox/backends/``'s (``backends.choose``, ``backends.containment``); each backend's own
helpers are in its module (bubblewrap's command line and probe in ``backends/bwrap.py``).

Two levels, one backend module each. ``bwrap``: workers run inside
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
import json
import os
import subprocess
import sys
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


def cgroup_available() -> bool:
    from tutor.sandbox import cgroup

    return cgroup.available()


def _joined(notes: list[dict[str, Any]]) -> dict[str, Any]:
    """The notes one after another ("a; b"), as one said."""
    joined = notes[-1]
    for note in reversed(notes[:-1]):
        joined = said("isolation.semicolon", first=note, rest=joined)
    return joined


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
