"""Signals a run sends itself behave as on a normal machine (issue 26, part 1).

A run used to be PID 1 of its PID namespace, and the kernel drops a signal sent to a namespace's
init from inside it unless init handles it: ``os.kill(os.getpid(), SIGSEGV)`` was ignored and a
submission meant to crash carried on (and SIGXCPU at the CPU limit was ignored too, so a loop
read as killed by the later SIGKILL). The learner's code now runs below a PID 1 of the tutor's
own, which reaps and reports how the code ended.
"""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("name", ["SIGSEGV", "SIGTERM", "SIGABRT", "SIGUSR1"])
def test_a_signal_the_run_sends_itself_ends_it(sandbox, name):
    code = f"import os, signal\nos.kill(os.getpid(), signal.{name})\nprint('carried on')\n"
    result = sandbox.run(code)
    assert "carried on" not in result.stdout, (result.status, result.stdout)
    assert result.status == "killed", (result.status, result.message)
    assert f"({name})" in result.message, result.message


def test_raise_signal_and_a_handler_of_the_learners_work_as_usual(sandbox):
    code = ("import os, signal\n"
            "signal.signal(signal.SIGUSR1, lambda *a: print('handled'))\n"
            "os.kill(os.getpid(), signal.SIGUSR1)\n"
            "signal.raise_signal(signal.SIGTERM)\n"
            "print('carried on')\n")
    result = sandbox.run(code)
    assert result.stdout == "handled\n", result.stdout
    assert result.status == "killed" and "(SIGTERM)" in result.message, (result.status, result.message)


def test_a_child_the_run_leaves_behind_is_ended_with_it(sandbox):
    """The run ends when the learner's code does, as before: a child it left sleeping is ended."""
    code = ("import os, sys, time\n"
            "if os.fork() == 0:\n"
            "    time.sleep(30)\n"
            "    os._exit(0)\n"
            "print('parent done')\n")
    result = sandbox.run(code)
    assert (result.status, result.stdout) == ("ok", "parent done\n"), (result.status, result.message)
    assert result.wall_time < 3.5, result.wall_time


def test_a_crash_of_the_learners_code_is_still_a_crash(sandbox):
    result = sandbox.run("import ctypes\nctypes.string_at(0)\n")
    assert result.status == "killed" and "(SIGSEGV)" in result.message, (result.status, result.message)
