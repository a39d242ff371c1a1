"""From what a run left behind (keeper verdict, output, report) to a RunResult with one plain
sentence for the learner. A limit reached is explained, never shown as the tutor's traceback."""

from __future__ import annotations

import signal as signals
from dataclasses import dataclass, field
from typing import Any

from tutor.words.i18n import english, said, t
from tutor.sandbox import wire
from tutor.sandbox.limits import Limits
from tutor.sandbox.result import LearnerError, RunResult
from tutor.sandbox.textclean import clean_output, strip_profiler_noise

#: The words for a crash by signal: keys of the UI table (tutor/words/i18n.py, ``run.signal.*``).
_WORDS_BY_NAME = {name: f"run.signal.{name}" for name in ("SIGSEGV", "SIGBUS", "SIGABRT", "SIGILL", "SIGFPE")}
#: The signals this OS has (Windows lacks SIGBUS, SIGKILL, SIGXCPU and SIGXFSZ).
_SIGNAL_WORDS = {getattr(signals, name): words for name, words in _WORDS_BY_NAME.items() if hasattr(signals, name)}
#: What a cancelled run reports as its signal: SIGKILL's number where there is none (Windows).
SIGKILL = int(getattr(signals, "SIGKILL", 9))
_CPU_SIGNALS = {int(getattr(signals, name)) for name in ("SIGKILL", "SIGXCPU") if hasattr(signals, name)}
#: The CPU limit's own signal (at the soft limit): a stop for CPU time whatever the time reported.
_SIGXCPU = getattr(signals, "SIGXCPU", None)
_SIGXFSZ = getattr(signals, "SIGXFSZ", None)


@dataclass
class RawRun:
    """Everything the parent collected for one run, before interpretation."""

    verdict: dict[str, Any]
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_over: bool = False
    stderr_over: bool = False
    report: bytes = b""
    report_over: bool = False
    cancel_reason: str | None = None
    probe_requested: bool = False
    isolation: str = "none"
    extra: dict[str, Any] = field(default_factory=dict)
    #: The size of the run's private /tmp (a tmpfs, with per-run namespaces), or None (a folder
    #: on the machine's disk).
    tmp_mb: int | None = None


def _text(data: bytes, over: bool, limits: Limits, stream: str) -> tuple[str, bool]:
    cap = limits.output_kb * 1024
    truncated = over or len(data) > cap
    text = clean_output(data[:cap])
    if truncated:
        text += "\n" + t("run.truncated", stream=stream, kb=limits.output_kb)
    return text, truncated


def _say(result: RunResult, key: str, **fields: object) -> None:
    """The run's sentence: English in ``message`` (JSON, logs), the key and fields beside it in
    ``extra["said"]`` so the app and the learner commands show it in the learner's language
    (``tutor.words.i18n.shown``)."""
    message = said(key, **fields)
    result.message = english(message)
    result.extra["said"] = message


def _failure(result: RunResult, key: str, detail: str | None = None, **fields: object) -> RunResult:
    result.status = "sandbox-failure"
    _say(result, key, **fields)
    message = result.message or ""
    if detail:
        result.error = LearnerError(type="SandboxFailure", message=message, traceback=detail)
    return result


def _is_memory(error: dict[str, Any]) -> bool:
    text = f"{error.get('type')}: {error.get('message')}"
    return (error.get("type") == "MemoryError" or "can't allocate memory" in text
            or "Cannot allocate memory" in text or "std::bad_alloc" in text)


#: What a learner who tries ``torch.compile`` here needs to know: its first call compiles (C++ for
#: the CPU: 24 s for a one-line function on a 2-core machine), and nothing is cached between runs.
COMPILE_NOTE_SAID = said("run.compile_note")
COMPILE_NOTE = english(COMPILE_NOTE_SAID)


def classify(raw: RawRun, limits: Limits, compiles: bool = False, unreadable: str | dict[str, Any] | None = None) -> RunResult:
    """The run's outcome for the learner. ``compiles``: the code calls ``torch.compile`` (a stop
    for time or a compiler that ran into a limit then says why). ``unreadable``: the isolation's
    gap when the runs' users cannot read the interpreter (a failed import then says so)."""
    verdict = raw.verdict
    stdout, out_cut = _text(raw.stdout, raw.stdout_over, limits, "stdout")
    stderr, err_cut = _text(strip_profiler_noise(raw.stderr), raw.stderr_over, limits, "stderr")
    result = RunResult(
        status="ok", exit_code=verdict.get("exit_code"), signal=verdict.get("signal"),
        stdout=stdout, stderr=stderr, stdout_truncated=out_cut, stderr_truncated=err_cut,
        wall_time=float(verdict.get("wall_time") or 0.0), cpu_time=float(verdict.get("cpu_time") or 0.0),
        peak_memory_mb=round(float(verdict.get("maxrss_kb") or 0) / 1024, 1),
        isolation=raw.isolation, extra=dict(raw.extra),
    )
    if verdict.get("failure"):
        return _failure(result, "run.failure", failure=verdict["failure"])
    report, report_problem = _read_report(raw, result)
    # Limits and stops first: whatever the report says, the run did not finish on its own.
    if _stopped(result, raw, limits, compiles, report, out_cut):
        return result
    if report and report.get("setup_error"):
        return _failure(result, "run.setup_error", report["setup_error"])
    if report and report.get("probe_error"):
        return _failure(result, "run.probe_error", report["probe_error"])
    if report_problem:
        return _failure(result, "run.report.unreadable", problem=report_problem)
    if report is None:
        if raw.probe_requested:
            if result.exit_code == 0:
                return _failure(result, "run.no_checks.exit")
            return _failure(result, "run.no_checks.code", code=result.exit_code)
        if result.exit_code not in (0, None):
            result.status = "error"
            _say(result, "run.exit_code", code=result.exit_code)
        return result
    if raw.probe_requested:
        result.report = report.get("report")
    if result.error:
        _learner_error(result, raw, limits, compiles, unreadable)
    return result


def _read_report(raw: RawRun, result: RunResult) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The run's report (None: none came) and, when it could not be read, why (a said); the
    learner's error it carries goes on ``result``."""
    report = None
    report_problem = None
    if raw.report_over:
        report_problem = said("run.report.too_large", size=wire.MAX_REPORT)
    elif raw.report:
        try:
            report = wire.decode_report(raw.report)
        except ValueError as exc:
            report_problem = said("run.report.malformed", error=str(exc))
    if report:
        result.private_memory_mb = report.get("private_mb")
        error = report.get("learner_error")
        if error:
            result.error = LearnerError(type=str(error.get("type")), message=str(error.get("message")),
                                        traceback=str(error.get("traceback")), lineno=error.get("lineno"))
    return report, report_problem


def _stopped(result: RunResult, raw: RawRun, limits: Limits, compiles: bool, report: dict[str, Any] | None,
             out_cut: bool) -> bool:
    """Whether the run was stopped before it finished on its own (a limit, a cancel, the judge
    refusing what it sent, a signal), with ``result`` saying so."""
    verdict = raw.verdict
    if raw.cancel_reason == "output-limit":
        stream = "stdout" if out_cut else "stderr"
        result.status = "output-limit"
        _say(result, "run.output_limit", kb=limits.output_kb, stream=stream)
        return True
    if raw.cancel_reason == "cancelled" or verdict.get("reason") == "cancelled":
        result.status, result.signal = "killed", SIGKILL
        _say(result, "run.cancelled")
        return True
    if verdict.get("reason") == "timeout":
        result.status = "timeout"
        if compiles:
            _say(result, "run.timeout.compile", seconds=limits.wall_time, note=COMPILE_NOTE_SAID)
        else:
            _say(result, "run.timeout", seconds=limits.wall_time)
        return True
    refused = report.get("refused") if report else None
    if isinstance(refused, dict) and refused.get("status") in ("memory", "error"):
        # the judge stopped reading the program's process (and ended it): what it sent was the
        # program's doing (too much data to hold, a message nested too deep), never a crash
        result.status, result.signal = ("memory" if refused["status"] == "memory" else "error"), None
        what = str(refused.get("message") or "")
        _say(result, "run.refused.memory" if refused["status"] == "memory" else "run.refused.error", what=what)
        return True
    if result.signal is not None:
        _by_signal(result, result.signal, limits)
        return True
    return False


def _by_signal(result: RunResult, sig: int, limits: Limits) -> None:
    """A run ended by a signal: CPU time (SIGXCPU, or SIGKILL at the CPU limit), a file too
    large, or a crash named by its signal."""
    if (_SIGXCPU is not None and sig == _SIGXCPU) or \
            (sig in _CPU_SIGNALS and result.cpu_time >= limits.cpu_time - 0.5):
        result.status = "timeout"
        _say(result, "run.cpu_time", seconds=limits.cpu_time)
        return
    result.status = "killed"
    if _SIGXFSZ is not None and sig == _SIGXFSZ:
        _say(result, "run.file_size.signal", mb=limits.file_size_mb)
    else:
        known = sig in signals.Signals._value2member_map_
        words = said(_SIGNAL_WORDS[signals.Signals(sig)]) if known and signals.Signals(sig) in _SIGNAL_WORDS \
            else said("run.signal.other", number=sig)
        name = signals.Signals(sig).name if known else str(sig)
        _say(result, "run.crashed", words=words, name=name)


def _learner_error(result: RunResult, raw: RawRun, limits: Limits, compiles: bool,
                   unreadable: str | dict[str, Any] | None) -> None:
    """A run that ended with the learner's exception: ``memory`` when it ran out of memory, else
    ``error``, with words for the causes a learner cannot see from the traceback alone."""
    assert result.error is not None
    if _is_memory({"type": result.error.type, "message": result.error.message}):
        result.status = "memory"
        _say(result, "run.memory", mb=limits.memory_mb)
        return
    result.status = "error"
    if "File too large" in result.error.message:
        _say(result, "run.file_size", mb=limits.file_size_mb)
    elif "No space left on device" in result.error.message and raw.tmp_mb:
        # The run's private /tmp (a tmpfs of its own) is full, not the machine's disk.
        _say(result, "run.tmp_full", mb=raw.tmp_mb)
    elif result.error.type == "EOFError" and "when reading a line" in result.error.message:
        # input() at the end of an empty stdin: a run here has no keyboard
        _say(result, "run.no_keyboard")
    elif unreadable and result.error.type == "ModuleNotFoundError":
        # The module may well be there: the run's user cannot read it.
        _say(result, "run.unreadable", reason=unreadable)
    elif compiles and "File size limit exceeded" in result.error.message:
        # Inductor's C++ compiler writes a precompiled header past the run's file limit.
        _say(result, "run.file_size.compile", mb=limits.file_size_mb, note=COMPILE_NOTE_SAID)
