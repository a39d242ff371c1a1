"""Issue 55: every Check of the built-in pack under a second; an infinite loop stopped in a few.

What made a Check slow is held here by what it costs, never by a timed assertion: an import a
judge did not need, the number of checks that ran to their limit.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.checks.conftest import by_id


def test_a_mode_canary_builds_its_module_without_importing_sympy():
    """The mode canary's Linear was made with ``to_empty()``, whose meta-to-CPU path imports
    sympy: 0.4-0.7 s of CPU in every judge that asked a mode canary (most of numpy-dtype's
    Check). Its parameters still come from the canary's own generator."""
    script = textwrap.dedent("""
        import sys
        import torch
        from tutor.child.checks import canary
        first = canary._linear(torch.Generator().manual_seed(3))
        second = canary._linear(torch.Generator().manual_seed(3))
        assert isinstance(first, torch.nn.Linear) and first.weight.device.type == "cpu"
        assert first.weight.shape == (2, 3) and first.bias.shape == (2,)
        assert torch.equal(first.weight, second.weight) and torch.equal(first.bias, second.bias)
        assert first.weight.requires_grad
        print("sympy" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


SPIN = ("def spin(n):\n    total = 0\n    while True:\n        total += n\n\n"
        "def double(x):\n    return x * 2\n")


@pytest.mark.both_modes  # a limit stops the run: the sandbox's, per mode
def test_an_infinite_loop_costs_one_check_its_share_and_the_others_that_call_it_are_told(grade):
    """Four checks call a function that never returns. The first runs to its share and is
    stopped at the learner's line; the three after it that call the same function are told so
    at once (each ran to its own share before: ~8 s for a learner's Check); a check that calls
    other code still runs and passes."""
    calls = [{"id": f"calls{i}", "kind": "expr", "predicate": f"spin({i}) is None", "message": "m"}
             for i in range(1, 5)]
    other = {"id": "other", "kind": "tensor", "setup": "x = torch.ones(3)", "value": "double(x)",
             "close_to": "x * 2"}
    report = grade(SPIN, calls[0], other, *calls[1:], timeout=8)
    checks = by_id(report)
    stopped = [c for c in report.checks if c.message.startswith("stopped after ")]
    assert [c.id for c in stopped] == ["calls1"], [c.message for c in report.checks]
    first = checks["calls1"]
    assert first.status == "timeout" and "while running `spin(1) is None`" in first.message, first.message
    assert "at line 4 of your code: `total += n`" in first.message or \
        "at line 3 of your code: `while True:`" in first.message, first.message
    for told in ("calls2", "calls3", "calls4"):
        result = checks[told]
        assert result.status == "timeout", result.message
        assert result.message.startswith(f"not run: check 'calls1' had to stop your code at line {first.lineno} ("), \
            result.message
        assert result.message.endswith("and this check calls the same code"), result.message
        assert result.lineno == first.lineno
        # told, not run: none of its CPU went into the loop (the stopped check's went into it)
        assert result.seconds is not None and first.seconds is not None
        assert result.seconds[0] < first.seconds[0] / 4, (result.seconds, first.seconds)
    assert checks["other"].status == "passed", checks["other"].message
    assert not report.passed


@pytest.mark.both_modes
def test_a_check_that_stopped_in_its_own_code_tells_no_other_check(grade):
    """Only a stop in the learner's code is told on: a check whose own expression spins (the
    pack's loop, no line of the learner's) leaves the next check that calls the same function
    to run and pass."""
    spin_here = {"id": "own", "kind": "expr", "setup": "y = double(1)\nwhile True:\n    pass\n",
                 "predicate": "True", "message": "m"}
    again = {"id": "again", "kind": "tensor", "setup": "x = torch.ones(3)", "value": "double(x)", "close_to": "x * 2"}
    # two quick checks after them, as in test_engine's loop: the spin's wall cap is then never all
    # the time left on a machine that gives it under half a core
    quick = [{"id": f"quick{i}", "kind": "expr", "predicate": "True", "message": "m"} for i in (1, 2)]
    report = grade(SPIN, spin_here, again, *quick, timeout=6)
    checks = by_id(report)
    assert checks["own"].status in ("timeout", "error"), checks["own"].message
    assert checks["again"].status == "passed", checks["again"].message


def test_every_built_in_exercise_stops_an_infinite_loop_in_its_first_check_within_3_s_of_cpu():
    """With the checks told of a stuck function, a Check of an infinite loop costs the share of
    the first check that calls it: the probe's own split of the exercise's budget (a learner's
    Check at the app's default 10 s where the exercise sets none). It was 27 s for
    profiler-hotspot (timeout 240), 24 s for fair-benchmark (120) and 3.9 s for shape-mismatch."""
    from tutor.child.checks.probe import Budget
    from tutor.pack.loader import load_pack
    from tutor.pack.spec import as_data
    from tutor.grading.exercise import _CHECK_SHARE
    from tutor.sandbox.limits import Limits

    pack = Path(__file__).resolve().parents[2] / "lessons" / "debugging-and-speed"
    shares = {}
    for _lesson, exercise in load_pack(pack).exercises():
        timeout = exercise.timeout or Limits().wall_time
        checks = [as_data(check) for check in exercise.checks]
        budget = Budget(max(0.5, timeout * _CHECK_SHARE - 0.2), checks, clock=lambda: 0.0)
        shares[exercise.id] = budget.slice(0)
    assert len(shares) == 10
    assert max(shares.values()) <= 3.0, shares


def test_the_code_a_call_runs_is_named_by_the_learners_callable_never_by_the_checks_own():
    """What ``Session.stuck`` is keyed by: a function or object of the learner's (a Remote, by its
    handle), a module of theirs called or a method of it; a check's own function (a canary's, a
    workload shipped to the runner) is nobody's stuck code."""
    from tutor.child.checks.remote import Remote, callee_key

    spin = Remote(object(), 7, "function", True)  # type: ignore[arg-type]  # no session: never called here
    assert callee_key({"callee": True}, (spin, 1)) == ("handle", 7)
    assert callee_key({"callee": True}, (lambda: None,)) is None
    assert callee_key({"callee": True}, ()) is None
    assert callee_key({"handle": 9}, ()) == ("handle", 9)
    assert callee_key({"getattr": [9, "forward"]}, ()) == ("method", 9, "forward")
    assert callee_key({"getattr": [9, "forward"]}, ()) != callee_key({"getattr": [9, "train"]}, ())
    # a handle the runner sent as something else than a number keys nothing (it cannot be hashed
    # into a judge's table to fail a check that never called it)
    assert callee_key({"callee": True}, (Remote(object(), [7], "function", True),)) is None  # type: ignore[arg-type]
    assert callee_key({"handle": [9]}, ()) is None
