"""Bubblewrap: each worker runs with every namespace unshared (no network, own PIDs, a private
/tmp, and of the machine's files only an allow-list, read-only), and each run gets its own user,
PID and mount namespace inside that. Linux only. The command line and the probe's run are
``tutor.sandbox.isolation``'s (``bwrap_command``, ``bwrap_candidates``, ``_try_bwrap``)."""

from __future__ import annotations

import os
import sys
from typing import Any

from tutor.words.i18n import said, shown
from tutor.sandbox import isolation as iso
from tutor.sandbox.backends import Backend, Probe
from tutor.sandbox.isolation import Interpreter, IsolationInfo


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
        candidates = iso.bwrap_candidates()
    for which, path, absent in candidates:
        named = said("isolation.which." + which)
        if path is None:
            notes.append(said("isolation.note", named=said("isolation.named", which=named), why=absent))
            continue
        works, namespaces, drops_root, why = iso._try_bwrap_said(probe.python, path)
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
    return iso.bwrap_command(interpreter, scratch_root, as_root=info.worker_uid is not None,
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


BACKEND = Backend(name="bwrap", probe=_probe, wrap=_wrap, containment=_containment, doctor=_doctor,
                  in_container=lambda info: "bubblewrap, inside the autograder's container", isolates=True)
