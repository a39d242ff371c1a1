"""No isolation beyond the limits: resource limits, a scratch working directory, a scrubbed
environment, and (as root) each run drops to a uid of its own. Always available: the fallback."""

from __future__ import annotations

from typing import Any

from tutor.sandbox import isolation as iso
from tutor.sandbox.backends import Backend, Probe
from tutor.sandbox.isolation import Interpreter, IsolationInfo

NAME = "none"


def _probe(probe: Probe) -> IsolationInfo:
    notes = probe.not_used
    if probe.requested == NAME:
        fallback_why = "isolation is set to none"
    else:
        fallback_why = "; ".join(notes) or "no bubblewrap"
    gaps: tuple[str, ...] = ("network is reachable",
                             "files outside the scratch dir can be written where permissions allow")
    if iso.is_root():
        gaps = ("network is reachable", "world-writable places such as /tmp can be written")
        folder = iso.unreadable_for_runs(probe.python)
        if folder is not None:
            gaps += (f"{iso.UNREADABLE} ({folder}): a module the worker did not import ahead fails to "
                     "import in a run; make the interpreter readable by other users, or use bubblewrap",)
    reason = f"limits only ({fallback_why})"
    return IsolationInfo(NAME, reason, False, probe.process_limit, gaps, not_used=tuple(notes))


def _wrap(info: IsolationInfo, interpreter: Interpreter, scratch_root: str, private: tuple[str, ...]) -> list[str]:
    return []  # the worker runs as the tutor started it


def _containment(info: IsolationInfo) -> dict[str, Any]:
    if iso.is_root():
        return {"namespaces": False, "drop_uid": iso.PER_RUN, "uid_base": iso.RUN_UID_BASE}
    return {"namespaces": False, "count_user_tasks": True}


BACKEND = Backend(
    name=NAME, probe=_probe, wrap=_wrap, containment=_containment, doctor=lambda info: [],
    # the container is thrown away after this submission: it is the isolation here
    in_container=lambda info: f"the autograder's container only (the tutor's own isolation is off: {info.reason})",
    isolates=False)
