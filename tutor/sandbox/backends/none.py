"""No isolation beyond the limits: resource limits, a scratch working directory, a scrubbed
environment, and (as root) each run drops to a uid of its own. Always available: the fallback."""

from __future__ import annotations

from typing import Any

from tutor.words.i18n import said
from tutor.sandbox import isolation as iso
from tutor.sandbox.backends import Backend, Probe
from tutor.sandbox.isolation import Interpreter, IsolationInfo

NAME = "none"


def _probe(probe: Probe) -> IsolationInfo:
    notes = probe.not_used
    if probe.requested == NAME:
        fallback_why = said("isolation.why.set_none")
    else:
        fallback_why = iso._joined(notes) if notes else said("isolation.why.no_bwrap")
    gaps: tuple[dict[str, Any], ...] = (said("isolation.gap.network"), said("isolation.gap.outside_scratch"))
    if iso.is_root():
        gaps = (said("isolation.gap.network"), said("isolation.gap.world_writable"))
        folder = iso.unreadable_for_runs(probe.python)
        if folder is not None:
            gaps += (said("isolation.gap.unreadable", folder=folder),)
    return iso._info(NAME, said("isolation.reason.none", why=fallback_why), False, probe.process_limit, gaps,
                     tuple(notes))


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
