"""What a learner reads for outcomes too slow to produce for real in the suite: torch.compile's C++
compiler stopped by a run's file limit takes 15-20 s of CPU here (tests/sandbox/test_runs.py has
the compile that outlasts its wall time, for real)."""

from __future__ import annotations

from tutor.sandbox import Limits
from tutor.sandbox import wire
from tutor.sandbox.classify import COMPILE_NOTE, RawRun, classify

#: What inductor raised in a run at the default limits (its message, cut).
INDUCTOR = {"type": "InductorError", "lineno": 3, "traceback": "Traceback ...\n",
            "message": "CppCompileError: C++ compile error\n...\ng++: internal compiler error: File size limit "
                       "exceeded signal terminated program cc1plus\n"}


def _failed(error: dict) -> RawRun:
    return RawRun(verdict={"exit_code": 1, "signal": None, "wall_time": 18.8, "cpu_time": 18.1},
                  report=wire.encode_report({"learner_error": error, "setup_error": None}))


def test_a_compiler_stopped_by_the_file_limit_is_explained_when_the_code_compiles():
    result = classify(_failed(INDUCTOR), Limits(), compiles=True)
    assert result.status == "error" and result.error.type == "InductorError"
    assert result.message == ("torch.compile's C++ compiler wrote a file past the 64 MB a run may write. "
                              + COMPILE_NOTE)


def test_other_errors_keep_their_own_words():
    plain = classify(_failed(INDUCTOR), Limits(), compiles=False)  # no torch.compile in the code
    assert plain.status == "error" and plain.message is None
    other = dict(INDUCTOR, message="CppCompileError: C++ compile error\nerror: 'foo' was not declared")
    assert classify(_failed(other), Limits(), compiles=True).message is None


def test_the_cpu_limits_own_signal_is_a_stop_for_cpu_time_never_a_crash():
    """Issue 26: a busy loop under a 2 s CPU limit in spawn mode came back `killed`, "The program
    crashed with signal 9 (SIGKILL)": the runner, PID 1 of its namespace, ignored SIGXCPU, the
    hard limit's SIGKILL landed, and the CPU time reported (less what the runner said it spent
    warming up) was under the limit's last half second. SIGXCPU now lands, and is read as such."""
    import signal

    raw = RawRun(verdict={"exit_code": None, "signal": int(signal.SIGXCPU), "wall_time": 2.4, "cpu_time": 1.3})
    result = classify(raw, Limits(cpu_time=2.0))
    assert result.status == "timeout" and "2 s of CPU time" in result.message, (result.status, result.message)
    crashed = RawRun(verdict={"exit_code": None, "signal": int(signal.SIGKILL), "wall_time": 0.4, "cpu_time": 0.3})
    assert classify(crashed, Limits(cpu_time=2.0)).status == "killed"


NO_SPACE = {"type": "OSError", "lineno": 2, "traceback": "Traceback ...\n",
            "message": "[Errno 28] No space left on device"}


def test_a_full_private_tmp_is_explained_and_a_full_disk_is_not_blamed_on_it():
    full = _failed(NO_SPACE)
    full.tmp_mb = 256  # the run had a private /tmp (a tmpfs of that size)
    result = classify(full, Limits())
    assert result.status == "error" and result.error.type == "OSError"
    assert result.message == ("The run's files filled the 256 MB its folder may hold "
                              "(four times the largest file a run may write).")
    # A run whose folder is on the machine's disk (no per-run namespaces): the disk is full, and
    # the learner reads Python's own words, not a limit the run never had.
    assert classify(_failed(NO_SPACE), Limits()).message is None
