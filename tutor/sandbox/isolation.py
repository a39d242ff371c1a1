"""Choosing how strongly runs are isolated, and saying so.

Two levels. ``bwrap``: workers run inside bubblewrap with every namespace unshared (no network,
own PIDs, private /tmp, homes hidden, the filesystem read-only except a per-run scratch dir),
and each run gets its own user, PID and mount namespace inside that. ``none``: resource limits,
a scratch working directory, a scrubbed environment, and (as root) the run drops to ``nobody``.
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
from dataclasses import dataclass, field
from pathlib import Path

NOBODY = 65534
#: Directories whose contents a run must never see; bound back only where the interpreter lives.
_HIDDEN = ("/root", "/home")
#: Variables a worker keeps; everything else (tokens, keys, the learner's shell config) is dropped.
_KEEP_ENV = ("PATH", "LANG", "LANGUAGE", "TZ", "LD_LIBRARY_PATH", "CUDA_HOME", "VIRTUAL_ENV",
             "CONDA_PREFIX")
_KEEP_PREFIXES = ("LC_", "OPENBLAS_", "OMP_", "MKL_", "KMP_", "CUDA_", "NVIDIA_", "PYTORCH_")


class IsolationError(Exception):
    """Isolation was required (``isolation="bwrap"``) and is not available; says why."""


@dataclass(frozen=True)
class IsolationInfo:
    """What protects the machine from a run, in words fit for ``doctor`` and a status bar."""

    level: str  # "bwrap" or "none"
    reason: str
    per_run_namespaces: bool = False
    process_limit: str = "none"  # "cgroup", "rlimit" or "none"
    gaps: tuple[str, ...] = field(default_factory=tuple)

    def summary(self) -> str:
        return f"{self.level}: {self.reason}"


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


def _hidden_roots() -> list[str]:
    roots = list(_HIDDEN)
    home = os.environ.get("HOME")
    if home and home not in ("/", "") and not any(home == r or home.startswith(r + "/") for r in roots):
        roots.append(home)
    return [r for r in roots if os.path.isdir(r)]


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def bwrap_command(interpreter: Interpreter, scratch_root: str) -> list[str]:
    """The bubblewrap prefix for a worker: read-only /, private /tmp, homes hidden."""
    hidden = _hidden_roots()
    cmd = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
           "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for device in sorted(glob.glob("/dev/nvidia*")) + (["/dev/dri"] if os.path.exists("/dev/dri") else []):
        cmd += ["--dev-bind", device, device]
    for root in hidden:
        cmd += ["--tmpfs", root]
    # A venv under /tmp or a home directory would vanish with them: bind the interpreter back.
    needed = {package_root(), *interpreter.paths, os.path.dirname(interpreter.executable)}
    for path in sorted(needed):
        if os.path.exists(path) and _under(path, hidden + ["/tmp"]):
            cmd += ["--ro-bind", path, path]
    cmd += ["--bind", scratch_root, scratch_root, "--chdir", "/"]
    for root in hidden:
        cmd += ["--remount-ro", root]
    return cmd


def _userns_probe() -> str:
    return ("import ctypes, os, sys\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            f"sys.exit(0 if libc.unshare({0x10000000 | 0x20000000 | 0x00020000}) == 0 else 3)\n")


@functools.lru_cache(maxsize=8)
def _try_bwrap(python: str) -> tuple[bool, bool, str]:
    """(bwrap works, per-run namespaces work inside it, why not)."""
    if shutil.which("bwrap") is None:
        return False, False, "bubblewrap (bwrap) is not installed; install it for full isolation"
    interpreter = inspect_interpreter(python)
    scratch = "/tmp" if os.path.isdir("/tmp") else "/"
    cmd = bwrap_command(interpreter, scratch) + [interpreter.executable, "-c", _userns_probe()]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL, env=scrubbed_env())
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, False, f"bubblewrap could not start: {exc}"
    if done.returncode == 0:
        return True, True, ""
    if done.returncode == 3:
        return True, False, "nested user namespaces are not permitted inside bubblewrap"
    message = (done.stderr.strip().splitlines() or ["no message"])[-1]
    hint = ""
    if "uid map" in message or "Permission denied" in message or "Operation not permitted" in message:
        hint = (" (unprivileged user namespaces are restricted; on Ubuntu 23.10+ allow them with "
                "an AppArmor profile for bwrap or `sysctl kernel.apparmor_restrict_unprivileged_userns=0`)")
    return False, False, f"bubblewrap does not work here: {message}{hint}"


def cgroup_available() -> bool:
    from tutor.sandbox import cgroup

    return cgroup.available()


def choose(requested: str, python: str) -> IsolationInfo:
    """Resolve ``auto``/``bwrap``/``none`` into what will actually protect the runs."""
    if requested not in ("auto", "bwrap", "none"):
        raise ValueError(f"isolation must be auto, bwrap or none, not {requested!r}")
    # Without a cgroup, root drops runs to nobody and others count their own tasks, so
    # RLIMIT_NPROC applies in the fallback; inside bubblewrap runs stay uid 0, where it does not.
    process_limit = "cgroup" if cgroup_available() else "rlimit"
    if requested in ("auto", "bwrap"):
        works, namespaces, why = _try_bwrap(python)
        if works:
            gaps = () if namespaces else ("runs share the worker's PID namespace",)
            if process_limit != "cgroup":
                process_limit = "none"
                gaps += ("no limit on processes (needs root for a pids cgroup)",)
            reason = ("bubblewrap: no network, private /tmp, home hidden, read-only filesystem"
                      + ("" if namespaces else f"; {why}"))
            return IsolationInfo("bwrap", reason, namespaces, process_limit, gaps)
        if requested == "bwrap":
            raise IsolationError(why)
        fallback_why = why
    else:
        fallback_why = "isolation is set to none"
    gaps = ("network is reachable", "files outside the scratch dir can be written where permissions allow")
    if os.geteuid() == 0:
        gaps = ("network is reachable", "world-writable places such as /tmp can be written")
    reason = f"limits only ({fallback_why})"
    return IsolationInfo("none", reason, False, process_limit, gaps)


def containment(info: IsolationInfo) -> dict:
    """The worker's instructions for each run, derived from the chosen level."""
    if info.level == "bwrap":
        return {"namespaces": info.per_run_namespaces}
    if os.geteuid() == 0:
        return {"namespaces": False, "drop_uid": NOBODY}
    return {"namespaces": False, "count_user_tasks": True}


def default_python() -> str:
    return sys.executable
