"""From what a run left behind (keeper verdict, output, report) to a RunResult with one plain
sentence for the learner. A limit reached is explained, never shown as the tutor's traceback."""

from __future__ import annotations

import signal as signals
from dataclasses import dataclass, field

from tutor.sandbox import wire
from tutor.sandbox.limits import Limits
from tutor.sandbox.result import LearnerError, RunResult
from tutor.sandbox.textclean import clean_output, strip_profiler_noise

_WORDS_BY_NAME = {
    "SIGSEGV": "a segmentation fault — often a bad ctypes call, or recursion so deep the C stack overflowed",
    "SIGBUS": "a bus error (a bad memory access)",
    "SIGABRT": "an abort — a C library gave up",
    "SIGILL": "an illegal instruction",
    "SIGFPE": "a floating-point exception",
}
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

    verdict: dict
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_over: bool = False
    stderr_over: bool = False
    report: bytes = b""
    report_over: bool = False
    cancel_reason: str | None = None
    probe_requested: bool = False
    isolation: str = "none"
    extra: dict = field(default_factory=dict)


def _text(data: bytes, over: bool, limits: Limits, stream: str) -> tuple[str, bool]:
    cap = limits.output_kb * 1024
    truncated = over or len(data) > cap
    text = clean_output(data[:cap])
    if truncated:
        text += f"\n[{stream} truncated: more than {limits.output_kb} KiB]"
    return text, truncated


def _failure(result: RunResult, message: str, detail: str | None = None) -> RunResult:
    result.status = "sandbox-failure"
    result.message = message
    if detail:
        result.error = LearnerError(type="SandboxFailure", message=message, traceback=detail)
    return result


def _is_memory(error: dict) -> bool:
    text = f"{error.get('type')}: {error.get('message')}"
    return (error.get("type") == "MemoryError" or "can't allocate memory" in text
            or "Cannot allocate memory" in text or "std::bad_alloc" in text)


#: What a learner who tries ``torch.compile`` here needs to know: its first call compiles (C++ for
#: the CPU: 24 s for a one-line function on a 2-core machine), and nothing is cached between runs.
COMPILE_NOTE = ("Your code calls torch.compile, whose first call compiles the function (for the CPU, C++ "
                "that can take longer than a run here may; nothing compiled is kept between runs). To see "
                "what it captures without compiling, pass backend=\"eager\" or backend=\"aot_eager\".")


def classify(raw: RawRun, limits: Limits, compiles: bool = False, unreadable: str | None = None) -> RunResult:
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
        return _failure(result, f"The sandbox failed: {verdict['failure']}.")

    report = None
    report_problem = None
    if raw.report_over:
        report_problem = f"the report was larger than {wire.MAX_REPORT} bytes"
    elif raw.report:
        try:
            report = wire.decode_report(raw.report)
        except ValueError as exc:
            report_problem = f"the report was malformed ({exc})"
    if report:
        result.private_memory_mb = report.get("private_mb")
        error = report.get("learner_error")
        if error:
            result.error = LearnerError(type=str(error.get("type")), message=str(error.get("message")),
                                        traceback=str(error.get("traceback")), lineno=error.get("lineno"))

    # Limits and stops first: whatever the report says, the run did not finish on its own.
    if raw.cancel_reason == "output-limit":
        stream = "stdout" if out_cut else "stderr"
        result.status = "output-limit"
        result.message = (f"Stopped: the program printed more than {limits.output_kb} KiB to {stream}; "
                          "the rest was cut off.")
        return result
    if raw.cancel_reason == "cancelled" or verdict.get("reason") == "cancelled":
        result.status, result.signal = "killed", SIGKILL
        result.message = "Stopped: the run was cancelled."
        return result
    if verdict.get("reason") == "timeout":
        result.status = "timeout"
        result.message = (f"Stopped after {limits.wall_time:g} s, still running. {COMPILE_NOTE}" if compiles
                          else f"Stopped after {limits.wall_time:g} s — still running; an infinite loop?")
        return result
    refused = report.get("refused") if report else None
    if isinstance(refused, dict) and refused.get("status") in ("memory", "error"):
        # the judge stopped reading the program's process (and ended it): what it sent was the
        # program's doing (too much data to hold, a message nested too deep), never a crash
        result.status, result.signal = ("memory" if refused["status"] == "memory" else "error"), None
        what = str(refused.get("message") or "")
        result.message = f"Stopped: {what}." if refused["status"] == "memory" else f"The checks stopped: {what}."
        return result
    sig = result.signal
    if sig is not None:
        if (_SIGXCPU is not None and sig == _SIGXCPU) or \
                (sig in _CPU_SIGNALS and result.cpu_time >= limits.cpu_time - 0.5):
            result.status = "timeout"
            result.message = (f"Stopped after using {limits.cpu_time:g} s of CPU time — a long "
                              "computation or an infinite loop?")
            return result
        result.status = "killed"
        if _SIGXFSZ is not None and sig == _SIGXFSZ:
            result.message = f"Stopped: a file grew past the {limits.file_size_mb} MB limit."
        else:
            words = _SIGNAL_WORDS.get(signals.Signals(sig), f"signal {sig}") \
                if sig in signals.Signals._value2member_map_ else f"signal {sig}"
            name = signals.Signals(sig).name if sig in signals.Signals._value2member_map_ else str(sig)
            result.message = f"The program crashed with {words} ({name})."
        return result

    if report and report.get("setup_error"):
        return _failure(result, "The sandbox could not prepare the run.", report["setup_error"])
    if report and report.get("probe_error"):
        return _failure(result, "The checks themselves failed: this is a bug in the tutor or the pack.",
                        report["probe_error"])
    if report_problem:
        return _failure(result, f"The checks' report could not be read: {report_problem}.")
    if report is None:
        if raw.probe_requested:
            if result.exit_code == 0:
                why = "the program ended its process (os._exit?) before the checks could run"
            else:
                why = f"the program ended with exit code {result.exit_code} before the checks could run"
            return _failure(result, f"No check results: {why}.")
        if result.exit_code not in (0, None):
            result.status = "error"
            result.message = f"The program exited with code {result.exit_code}."
        return result
    if raw.probe_requested:
        result.report = report.get("report")
    if result.error:
        if _is_memory({"type": result.error.type, "message": result.error.message}):
            result.status = "memory"
            result.message = (f"Stopped: the program needed more than the {limits.memory_mb} MB of "
                              "memory a run may use.")
        else:
            result.status = "error"
            if "File too large" in result.error.message:
                result.message = f"A file grew past the {limits.file_size_mb} MB a run may write."
            elif result.error.type == "EOFError" and "when reading a line" in result.error.message:
                # input() at the end of an empty stdin: a run here has no keyboard
                result.message = ("The program asked for keyboard input (input() or sys.stdin), but a run "
                                  "here has no keyboard: put the value in the code instead.")
            elif unreadable and result.error.type == "ModuleNotFoundError":
                # The module may well be there: the run's user cannot read it.
                result.message = f"The import failed here because {unreadable} (see `torch-tutor doctor`)."
            elif compiles and "File size limit exceeded" in result.error.message:
                # Inductor's C++ compiler writes a precompiled header past the run's file limit.
                result.message = (f"torch.compile's C++ compiler wrote a file past the {limits.file_size_mb} MB "
                                  f"a run may write. {COMPILE_NOTE}")
    return result
