"""A check's time is the CPU its code used, not the wall time a busy machine stole (issue 26).

A correct but slow starter ended `timeout` ("stopped after 3.9 s (its share of the time): still
running (an infinite loop?)") on a busy 2-core machine and scored 0. A check's budget now counts
CPU time (the judge's own and what the runner reports for its requests), with a wall-time cap a
few times larger for code that waits; a timeout says which it was and what was running, and
never guesses at an infinite loop.
"""

from __future__ import annotations

import pytest

from tests.checks.conftest import by_id

#: The trust boundary: in fork and in spawn mode (tests/checks/conftest.py, sandbox_modes).
pytestmark = pytest.mark.both_modes

NAPS = "import time\ndef nap(seconds):\n    time.sleep(seconds)\n    return True\n"
SPIN = "def spin(n):\n    total = 0\n    while True:\n        total += n\n"


def test_time_spent_waiting_is_not_cpu_time(grade):
    """1 s of sleep under a 0.6 s time_limit: no CPU used, well within the wall-time cap (it was
    a timeout when the limit was wall time, as on a machine that gave the code no core)."""
    check = {"id": "waits", "kind": "expr", "predicate": "nap(1.0)", "message": "m", "time_limit": 0.6}
    result = grade(NAPS, check, timeout=20).checks[0]
    assert result.status == "passed", result.message


# Waits out the wall-time cap (the run's 5 s: the one check's share of it), in each mode.
def test_waiting_past_the_wall_cap_is_a_timeout_that_says_so(grade):
    check = {"id": "waits", "kind": "expr", "predicate": "nap(30)", "message": "m", "time_limit": 0.4}
    result = grade(NAPS, check, timeout=5).checks[0]
    assert result.status == "timeout", result.message
    assert "of CPU time" in result.message and "waited" in result.message, result.message
    assert "infinite loop" not in result.message, result.message


def test_a_cpu_timeout_names_what_was_running_and_does_not_guess(grade):
    check = {"id": "spins", "kind": "expr", "predicate": "spin(3) is None", "message": "m", "time_limit": 0.5}
    after = {"id": "after", "kind": "expr", "predicate": "True", "message": "m"}
    report = grade(SPIN, check, after, timeout=20)
    result = by_id(report)["spins"]
    assert result.status == "timeout", result.message
    assert result.message.startswith("stopped after 0.") and "s of CPU time" in result.message, result.message
    assert "the check's time_limit of 0.5 s" in result.message, result.message
    assert "while running `spin(3) is None`" in result.message, result.message
    assert "of your code: `total += n`" in result.message or "of your code: `while True:`" in result.message, \
        result.message
    assert "infinite loop" not in result.message, result.message
    assert by_id(report)["after"].status == "passed"


def test_a_run_whose_wall_time_passes_its_timeout_is_not_stopped_while_under_its_cpu_budget(sandbox):
    """In a batch (`grade`, `validate`) the run's wall time is about three times its checks' CPU
    budget: a check that waits (as code does on a machine that gives it no core) 1.5 times the
    exercise's timeout, using no CPU, passes. It was `timeout` when the run's wall time was the
    timeout itself, so the same code was `timeout` on a busy machine (or in a shard of `grade`) and
    not on a quiet one. (A learner's own Check keeps the timeout: test_engine's infinite loop.)"""
    from tests.checks.conftest import make_exercise
    from tutor.grading.exercise import BATCH_WALL_FACTOR, check_exercise

    check = {"id": "waits", "kind": "expr", "predicate": "nap(4.5)", "message": "m"}
    report = check_exercise(sandbox, make_exercise(check, timeout=3), NAPS, wall_factor=BATCH_WALL_FACTOR)
    assert report.checks[0].status == "passed", report.checks[0].message
    assert report.run.status == "ok", report.run.message
