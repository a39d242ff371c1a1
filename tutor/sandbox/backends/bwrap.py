"""Bubblewrap: each worker runs with every namespace unshared (no network, own PIDs, a private
/tmp, and of the machine's files only an allow-list, read-only), and each run gets its own user,
PID and mount namespace inside that. Linux only. The command line and the probe's run are
``tutor.sandbox.isolation``'s (``bwrap_command``, ``bwrap_candidates``, ``_try_bwrap``)."""

from __future__ import annotations

import os
import sys
from typing import Any

from tutor.sandbox import isolation as iso
from tutor.sandbox.backends import Backend, Probe
from tutor.sandbox.isolation import Interpreter, IsolationInfo


def _probe(probe: Probe) -> IsolationInfo | None:
    notes = probe.not_used
    process_limit = probe.process_limit
    platform = "win32 (emulated)" if os.environ.get("TORCH_TUTOR_EMULATE_WINDOWS") == "1" else sys.platform
    if platform != "linux":
        notes.append(f"bubblewrap: Linux only (this is {platform})")
        candidates = []
    else:
        candidates = iso.bwrap_candidates()
    for which, path, absent in candidates:
        if path is None:
            notes.append(f"{which} bubblewrap: {absent}")
            continue
        works, namespaces, drops_root, why = iso._try_bwrap(probe.python, path)
        if not works:
            notes.append(f"{which} bubblewrap ({path}): {why}")
            continue
        gaps: tuple[str, ...] = () if namespaces else ("runs share the worker's PID namespace",)
        if iso.is_root() and not drops_root:
            gaps += ("runs keep root's access to files (" + why + ")",)
        if process_limit != "cgroup":
            process_limit = "none"
            gaps += ("no limit on processes (needs root for a pids cgroup)",)
        reason = ("bubblewrap: no network, private /tmp, only the system, the interpreter and the tutor "
                  "visible, read-only"
                  + ("" if namespaces else f"; {why}"))
        return IsolationInfo("bwrap", reason, namespaces, process_limit, gaps, bwrap=path,
                             bwrap_source=which, not_used=tuple(notes),
                             worker_uid=iso.worker_uid() if drops_root else None)
    return None


def _wrap(info: IsolationInfo, interpreter: Interpreter, scratch_root: str, private: tuple[str, ...]) -> list[str]:
    return iso.bwrap_command(interpreter, scratch_root, as_root=info.worker_uid is not None,
                             bwrap=info.bwrap or "bwrap", private=private)


def _containment(info: IsolationInfo) -> dict[str, Any]:
    found: dict[str, Any] = {"namespaces": info.per_run_namespaces}
    if info.worker_uid is not None:
        found["worker_uid"] = info.worker_uid
    return found


def _doctor(info: IsolationInfo) -> list[tuple[str, dict[str, Any]]]:
    return [("cli.doctor.bubblewrap", {"path": info.bwrap, "source": info.bwrap_source})] if info.bwrap else []


BACKEND = Backend(name="bwrap", probe=_probe, wrap=_wrap, containment=_containment, doctor=_doctor,
                  in_container=lambda info: "bubblewrap, inside the autograder's container", isolates=True)
