"""Ordinary runs: results, tracebacks, probes, fresh processes, torch threads and the profiler."""

from __future__ import annotations

import pytest

from tutor.sandbox import Limits, ProbeSpec, RunResult

ECHO = ProbeSpec("tutor.sandbox.echo_probe", "run_checks", {"n": 1})


def test_output_and_times(sandbox):
    result = sandbox.run("print('hello')\nimport sys\nprint('warn', file=sys.stderr)\n")
    assert result.status == "ok" and result.exit_code == 0
    assert (result.stdout, result.stderr) == ("hello\n", "warn\n")
    assert result.wall_time > 0 and result.peak_memory_mb > 0
    assert result.isolation == sandbox.isolation.level


def test_traceback_shows_only_the_learners_lines_with_their_numbers(sandbox):
    code = "import torch\n\ndef f(a):\n    return a @ a\n\nf(torch.ones(2, 3))\n"
    result = sandbox.run(code, filename="exercise.py")
    assert result.status == "error"
    assert result.error.type == "RuntimeError" and "mat1 and mat2" in result.error.message
    assert result.error.lineno == 4
    assert 'File "exercise.py", line 6, in <module>' in result.error.traceback
    assert 'File "exercise.py", line 4, in f' in result.error.traceback
    assert "torch/" not in result.error.traceback and "tutor/child/worker" not in result.error.traceback


def test_syntax_error_points_at_the_learners_line(sandbox):
    result = sandbox.run("x = 1\ny = (\n", filename="ex.py")
    assert result.status == "error" and result.error.type == "SyntaxError"
    assert result.error.lineno == 2


def test_sys_exit_codes(sandbox):
    assert sandbox.run("import sys\nsys.exit(0)\n").status == "ok"
    failed = sandbox.run("import sys\nsys.exit(3)\n")
    assert failed.status == "error" and failed.error.type == "SystemExit"


def test_probe_report_travels_back(sandbox):
    result = sandbox.run("weights = [1, 2]\nraise ValueError('bad')\n", probe=ECHO)
    assert result.status == "error" and result.error.type == "ValueError"
    assert result.report == {"verdict": "genuine", "names": ["weights"], "payload": {"n": 1},
                             "learner_error": "ValueError"}


def test_a_probe_that_raises_is_a_sandbox_failure(sandbox):
    probe = ProbeSpec("tutor.sandbox.echo_probe", "run_checks", {"raise": True})
    result = sandbox.run("print('mine')\n", probe=probe)
    assert result.status == "sandbox-failure"
    assert "the probe failed on purpose" in result.error.traceback
    assert result.stdout == "mine\n"


def test_every_run_is_a_fresh_process(sandbox):
    first = sandbox.run("import torch\ntorch.add = None\ntorch.manual_seed(0)\nimport builtins\n"
                        "builtins.leaked = 1\nprint(torch.randn(1).item())\n")
    second = sandbox.run("import torch, builtins\nprint(torch.add is None, hasattr(builtins, 'leaked'))\n")
    assert first.status == second.status == "ok"
    assert second.stdout == "False False\n"


def test_intra_op_threads_and_the_profiler_work_after_fork(sandbox):
    code = ("import torch\ntorch.set_num_threads(2)\na = torch.randn(512, 512)\n"
            "for _ in range(3):\n    a = a @ a / 512\n"
            "model = torch.nn.Linear(64, 64)\n"
            "with torch.profiler.profile() as prof:\n    model(torch.randn(8, 64)).sum()\n"
            "names = {e.key for e in prof.key_averages()}\n"
            "print(torch.get_num_threads(), 'aten::addmm' in names or 'aten::linear' in names)\n")
    for _ in range(2):
        result = sandbox.run(code)
        assert result.status == "ok", (result.error, result.message)
        assert result.stdout == "2 True\n"
        assert "USDT" not in result.stderr


def test_a_run_has_the_intra_op_threads_it_asks_for(sandbox):
    """A run has the thread count it asks for, and the next run the default again (the runner sets
    it after its request, never before: a thread started then would keep its capabilities)."""
    from tutor.sandbox.limits import usable_cpus

    code = "import torch\nprint(torch.get_num_threads())\n"
    asked = [sandbox.run(code, threads=n).stdout for n in (1, None, 3, None)]
    assert asked == ["1\n", f"{usable_cpus()}\n", "3\n", f"{usable_cpus()}\n"]


def test_a_batchs_run_has_one_intra_op_thread_unless_it_asks():
    """`grade` and `validate` run in parallel through their workers: each run gets one intra-op
    thread (two cost each run of a class 4-5x the CPU), and a run that asks for more has them."""
    from tests.sandbox.conftest import TEST_LIMITS
    from tutor.sandbox import Sandbox

    code = "import torch\nprint(torch.get_num_threads())\n"
    with Sandbox(TEST_LIMITS, isolation="none", mode="fork", purpose="batch", runs=2).start() as batch:
        assert batch.wait_ready(timeout=300)
        assert [batch.run(code, threads=n).stdout for n in (None, 2)] == ["1\n", "2\n"]


def test_per_run_limits_override_the_sandbox_defaults(sandbox):
    result = sandbox.run("import time\ntime.sleep(5)\n", limits=sandbox.limits.with_overrides(wall_time=1))
    assert result.status == "timeout"
    assert result.message.startswith("Stopped after 1 s")


def test_the_cpu_limit_counts_the_learners_code_only(sandbox):
    """The CPU limit and the CPU time reported are the learner's: a spawn-mode runner spent seconds
    importing torch before the code arrived, and that counted, so a loop was stopped after a
    fraction of its limit (0.05 s of a 3 s limit at isolation none) and reported the import."""
    limits = sandbox.limits.with_overrides(cpu_time=2.0, wall_time=30.0)
    result = sandbox.run("while True:\n    pass\n", limits=limits)
    assert result.status == "timeout" and "2 s of CPU time" in result.message, (result.status, result.message)
    # A busy loop gets at most one core: its wall time is at least its CPU time.
    assert result.wall_time >= 1.5, result.wall_time
    assert 1.5 <= result.cpu_time <= 3.5, result.cpu_time


def test_the_code_sees_the_argv_of_a_script_run_without_arguments(sandbox):
    """Training scripts parse their arguments: the worker's own command line (its configuration)
    made `parse_args()` exit with "unrecognized arguments", and showed the sandbox's set-up."""
    code = ("import argparse, sys\n"
            "parser = argparse.ArgumentParser()\n"
            "parser.add_argument('--lr', type=float, default=0.1)\n"
            "print(parser.parse_args().lr, sys.argv, sys.orig_argv[1:])\n")
    result = sandbox.run(code, filename="train.py")
    assert (result.status, result.stdout) == ("ok", "0.1 ['train.py'] ['train.py']\n"), (result.status, result.stdout,
                                                                                          result.stderr)


def test_torch_compile_that_outlasts_the_run_is_explained_not_called_a_loop(sandbox):
    """torch.compile's first call compiles C++ for the CPU (24 s for a one-line function here):
    the learner is told so, and how to see what it captures without compiling."""
    from tutor.sandbox.isolation import UNREADABLE

    if sandbox.mode != "fork" or sandbox.isolation.level != "bwrap":
        pytest.skip("one setup is enough: the message is the tutor's, the compile is torch's (20 s here)")
    if any(gap.startswith(UNREADABLE) for gap in sandbox.isolation.gaps):
        pytest.skip("torch.compile imports modules the runs here cannot read (test_tmp_interpreter.py)")
    code = "import torch\nf = torch.compile(lambda x: x.sin() + 1)\nprint(f(torch.ones(3)))\n"
    slow = sandbox.run(code, limits=sandbox.limits.with_overrides(wall_time=2.0))
    assert slow.status == "timeout", (slow.status, slow.message, slow.stderr[-500:])
    assert "infinite loop" not in slow.message
    assert "torch.compile, whose first call compiles the function" in slow.message
    assert 'backend="eager"' in slow.message
    eager = sandbox.run(code.replace("x.sin() + 1)", "x.sin() + 1, backend='eager')"))
    assert (eager.status, eager.stdout) == ("ok", "tensor([1.8415, 1.8415, 1.8415])\n"), (eager.status, eager.message)
    loop = sandbox.run("while True:\n    pass\n", limits=sandbox.limits.with_overrides(wall_time=1.0))
    assert loop.message == "Stopped after 1 s — still running; an infinite loop?"


def test_result_serialises_to_json(sandbox):
    import json

    data = json.loads(sandbox.run("print(1/0)").to_json())
    assert data["status"] == "error" and data["error"]["type"] == "ZeroDivisionError"


def test_limits_from_settings():
    from tutor.settings.config import load_settings
    from tutor.grading.sandboxes import limits_from

    settings = load_settings({"wall_time": 3, "memory_mb": 100}, environ={})
    limits = limits_from(settings)
    assert (limits.wall_time, limits.memory_mb, limits.output_kb) == (3.0, 100, 1024)
    with pytest.raises(TypeError):
        limits.with_overrides(walltime=1)


def test_statuses_are_the_documented_ones():
    from tutor.sandbox import STATUSES

    assert STATUSES == ("ok", "error", "timeout", "memory", "output-limit", "killed", "sandbox-failure")
    assert RunResult(status="ok").ok


def test_closing_during_warm_up_stops_it_instead_of_waiting():
    """Quitting the app while torch is still importing must not wait for the import."""
    import time

    from tutor.sandbox import Sandbox

    box = Sandbox(isolation="none").start()
    time.sleep(0.3)  # the worker is spawned and importing torch
    box.close()
    assert box.warmup_s is None, "warm-up ran to the end before close() returned"
    assert box.status == "closed"
    spawned = [w._proc for w in box._spares.all if w._proc is not None]
    assert spawned and all(proc.poll() is not None for proc in spawned), "a worker outlived close()"
