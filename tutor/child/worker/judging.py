"""The judge's run: wait for the runner to run the learner's code, then run the probe here.

Runs in the keeper after it forked the runner. Learner code never runs in this process: what the
runner sends is read as plain data (``tutor.child.checks.protocol``), and the report goes to the parent
on a descriptor the runner never had. Standard library (and, through the probe, torch) only.
"""

from __future__ import annotations

import importlib
import socket
import traceback
from typing import TYPE_CHECKING, Callable

from tutor.sandbox.deferred import may_need_deferred

if TYPE_CHECKING:
    from typing import Any

    from tutor.child.checks.remote import Session


def judge_run(channel: socket.socket, message: dict[str, Any], ctl_r: int, deadline: float,
              kill: Callable[[], None]) -> tuple[str | None, dict[str, Any] | None]:
    """(why the run was stopped or None, the report or None when the runner never got that far).
    ``ctl_r``: a descriptor that becomes readable on a cancel (a socket where only sockets can be
    waited on: Windows); ``kill`` ends the runner."""
    from tutor.child.checks.remote import Session

    session = Session(channel, stop_fd=ctl_r, deadline=deadline, kill=kill)
    try:
        return _judge(session, message)
    finally:
        session.forget()  # a spawn-mode judge serves further runs (worker/spawn.py)


def _judge(session: Session, message: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
    from tutor.child.checks import protocol
    from tutor.child.checks.remote import RunnerRefused, RunStopped, Tampered

    probe = message.get("probe")
    _warm_up(probe)
    try:
        session._wait(None)
        ready, blobs = session.receive()
    except RunStopped as stop:
        return stop.reason, None
    except RunnerRefused as refused:  # the submission's doing: its status, not the sandbox's
        return None, {"learner_error": None, "setup_error": None, "refused": _refused(refused)}
    except Tampered:  # its code replaced the checker's (tutor.child.checks.seal): every check says so
        ready, blobs = {"op": "ready", "names": {}, "learner_error": None, "setup_error": None}, []
    except (protocol.ProtocolError, OSError):
        return None, None  # it ended (or closed its channel) before its code finished: no report
    if ready.get("op") != "ready":
        return None, None
    learner_error = ready.get("learner_error") if type(ready.get("learner_error")) is dict else None
    setup_error = ready.get("setup_error") if type(ready.get("setup_error")) is str else None
    report: dict[str, Any] = {"learner_error": learner_error, "setup_error": setup_error}
    if type(ready.get("private_mb")) in (int, float):
        report["private_mb"] = ready["private_mb"]
    if probe and learner_error is not None and type(learner_error.get("stopped")) is dict:
        # its top level ran out of time: no check starts (each says where the code was)
        report["learner_error"] = None
        report["report"] = top_level_report(probe, learner_error["stopped"], learner_error)
        try:
            session.bye()
        except RunnerRefused:
            pass
        return None, report
    if probe and setup_error is None:
        try:
            report["report"] = _probe(session, probe, ready, blobs, learner_error, message)
        except RunStopped as stop:
            return stop.reason, None
        except RunnerRefused as refused:
            report["refused"] = _refused(refused)
            return None, report
        except BaseException:  # noqa: BLE001 - a probe bug is reported, never fatal to the keeper
            report["probe_error"] = traceback.format_exc()
        try:
            session.bye()
        except RunnerRefused as refused:  # its last (late) answer was refused
            report["refused"] = _refused(refused)
    return None, report


def top_level_report(probe: dict[str, Any], stop: dict[str, Any], error: dict[str, Any] | None) -> dict[str, Any]:
    """The probe's report for a run whose top level did not finish within its limit
    (``keeper.top_level_cpu``): every check ``timeout`` and not run, saying that no check had
    started, the CPU time the top level used and the learner's line where it was stopped. ``error``: the runner's learner error."""
    from tutor.child.checks import render
    from tutor.words import engine as words
    from tutor.child.checks.context import Learner
    from tutor.child.checks.probe import REPORT_VERSION, _result

    found = probe.get("payload")
    payload: dict[str, Any] = found if isinstance(found, dict) else {}
    learner = Learner(str(payload.get("filename") or "<snippet>"), payload.get("source"))

    def number(value: object) -> str:
        return f"{value:.1f}" if type(value) in (int, float) else "?"

    message = words.say("checks.top_level_cpu", used=number(stop.get("cpu")), limit=number(stop.get("limit")))
    lineno = error.get("lineno") if error is not None and type(error.get("lineno")) is int else None
    traceback = str((error or {}).get("traceback") or "")
    if lineno is not None and f'File "{learner.filename}"' in traceback:  # not a line of an earlier answer's
        code = learner.line(lineno)
        message = (words.say("checks.at_line_code", sentence=message, line=lineno, code=render.clip(code, 80))
                   if code else words.say("checks.at_line", sentence=message, line=lineno))
    else:
        lineno = None
    listed = payload.get("checks")
    checks: list[Any] = listed if isinstance(listed, list) else []
    return {"version": REPORT_VERSION, "exercise": payload.get("exercise"),
            "checks": [_result(check, "timeout", message, lineno=lineno, timeout=True)
                       for check in checks if isinstance(check, dict)],
            "learner_error": None, "tampered": [], "elapsed": 0.0, "requests": 0}


def _refused(refused: Any) -> dict[str, Any]:
    """What the report says of a runner the judge stopped reading: the run's status and why."""
    return {"status": refused.status, "message": refused.message}


def _warm_up(probe: object) -> None:
    """While the runner runs the learner's code: start what this process's checks will need
    first, so its cost overlaps the learner's. A profiler's first session in a process costs
    ~15 ms (more on a busy machine); the checks of a profile exercise start several here."""
    if not _profiles(probe):
        return
    from tutor.child.checks import refs

    try:
        with refs.profile(activities=[refs.ProfilerActivity.CPU]):
            pass
    except Exception:  # noqa: BLE001 - only a head start: the check itself reports a broken profiler
        pass


def _profiles(probe: object) -> bool:
    """Whether the checks profile the learner's code (in the runner, and their answers here)."""
    payload = probe.get("payload") if isinstance(probe, dict) else None
    checks = payload.get("checks") if isinstance(payload, dict) else None
    if not isinstance(checks, list) or not checks:
        return False
    from tutor.child.checks.kinds import REGISTRY  # loaded with the probe, before any request

    profiling = {name for name, kind in REGISTRY.items() if kind.profiles}
    return any(isinstance(c, dict) and c.get("kind") in profiling for c in checks)


def needs_dynamo(message: dict[str, Any]) -> bool:
    """Whether a spawn-mode spare taken at once should warm its runner up before this run
    (``startup.SPARE_DEFERS``), so that the run's time, limits and measurements are its own."""
    if _profiles(message.get("probe")):
        return True
    import json

    try:
        text = json.dumps([message.get("code"), message.get("probe")])
    except (TypeError, ValueError):
        return True
    return may_need_deferred(text)


def _probe(session: Session, probe: dict[str, Any], ready: dict[str, Any], blobs: list[Any],
           learner_error: dict[str, Any] | None, message: dict[str, Any]) -> Any:
    from tutor.child.checks import refs
    from tutor.child.checks.probe import SESSION_KEY

    threads = int(message.get("threads") or 0)
    if threads > 0:
        refs.set_num_threads(threads)
    from tutor.child.checks.context import learner_names

    found = ready.get("names")
    names: dict[str, Any] = found if type(found) is dict else {}
    payload = probe.get("payload")
    # only the names a check may read are rebuilt here (the contract's; never one that would
    # shadow a builtin in the check's own code)
    names = learner_names(names, payload.get("contract") if type(payload) is dict else None)
    namespace = {str(name): session.decode(value, blobs, {}, {}, {}) for name, value in names.items()}
    for name in ready.get("repaired") or []:
        session.repaired.add(str(name))
    namespace[SESSION_KEY] = session
    function = getattr(importlib.import_module(probe["module"]), probe["function"])
    return function(namespace, probe.get("payload"), learner_error)
