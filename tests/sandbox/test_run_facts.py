"""What a run reports about itself is what happened (issue 28, from a learner at 80x24)."""

from __future__ import annotations


def test_a_loop_stopped_for_wall_time_reports_the_cpu_it_used(sandbox):
    """`torch-tutor run loop.py` said "10.04 s wall, 0.02 s CPU" for a busy loop: the keeper
    killed the relay, whose wait status holds only its own milliseconds (it never reaped the
    runner). The CPU time is read before the kill. (A busy loop on a busy machine gets a share of
    a core; a tenth of its wall time is far below that and far above what was reported.)"""
    result = sandbox.run("while True:\n    pass\n", limits=sandbox.limits.with_overrides(wall_time=3.0, cpu_time=30.0))
    assert result.status == "timeout", (result.status, result.message)
    assert result.cpu_time >= 0.3, (result.wall_time, result.cpu_time)


def test_input_says_the_program_has_no_keyboard(sandbox):
    """A bare EOFError told a learner nothing about why input() failed."""
    result = sandbox.run("name = input('Your name? ')\nprint('hello', name)\n")
    assert result.status == "error" and result.error.type == "EOFError", (result.status, result.error)
    assert "no keyboard" in result.message and "input()" in result.message, result.message
