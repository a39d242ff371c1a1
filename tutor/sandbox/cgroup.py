"""A pids cgroup per worker: the process and thread ceiling that still holds for root.

As root RLIMIT_NPROC is ignored, and inside bubblewrap the runs stay uid 0, so a fork bomb is
contained here instead: the worker (and so every run it forks) lives in a cgroup whose
``pids.max`` is the run's limit plus the worker's own few processes. Only cgroup v1's pids
hierarchy is used: v2 needs a delegated subtree that a plain root shell rarely has set up.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

_V1_ROOT = Path("/sys/fs/cgroup/pids")
_PARENT = "torch-tutor"
#: What is in the group besides the run: bubblewrap's init and the worker (2), the running keeper,
#: its relay and the init of the run's namespace (3), two spares of four processes each (keeper,
#: relay, init, runner: 8), and a finished run's keeper and relay still exiting (2). A run may so
#: get up to a few processes above its limit while fewer of these exist; a fork bomb still ends.
OVERHEAD = 15


def _base() -> Path | None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not (_V1_ROOT / "cgroup.procs").is_file():
        return None
    try:
        with open("/proc/self/cgroup") as handle:
            for line in handle:
                _, controllers, path = line.strip().split(":", 2)
                if "pids" in controllers.split(","):
                    return _V1_ROOT / path.lstrip("/")
    except OSError:
        return None
    return None


def available() -> bool:
    base = _base()
    return base is not None and os.access(base, os.W_OK)


class PidsGroup:
    """One worker's cgroup; ``wrap`` puts a command in it before that command can fork."""

    def __init__(self, name: str, processes: int):
        base = _base()
        if base is None:
            raise OSError("no writable pids cgroup")
        parent = base / _PARENT
        parent.mkdir(exist_ok=True)
        _remove_stale(parent)
        self.path = parent / name
        self.path.mkdir()
        self._limit: int | None = None  # what pids.max says, as this object last wrote it
        self.set_limit(processes)

    def set_limit(self, processes: int) -> None:
        """The group's ceiling for runs of ``processes``; written only when it changes (a write to
        cgroupfs costs ~0.25 ms, on the path of every run). Nothing else writes it: runs are no
        root of the machine's namespace, where the file's owner is."""
        value = int(processes) + OVERHEAD
        if self._limit != value:
            (self.path / "pids.max").write_text(str(value))
            self._limit = value

    def wrap(self, command: list[str]) -> list[str]:
        return ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(self.path), *command]

    def pids(self) -> list[int]:
        try:
            return [int(x) for x in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def destroy(self, timeout: float = 2.0) -> None:
        """Kill anything still inside (nothing should be), then remove the group."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pids = self.pids()
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.01)
        try:
            self.path.rmdir()
        except OSError:
            pass


def _remove_stale(parent: Path) -> None:
    """Groups left by a tutor that was killed: empty ones whose owner process is gone."""
    for child in parent.iterdir():
        if not child.is_dir():
            continue
        owner = child.name.split("-", 1)[0]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            try:
                child.rmdir()
            except OSError:
                pass
