"""What every check shares: dependencies, errors at the learner's line, time limits, run failures."""

import pytest

from tests.checks.conftest import by_id

SHAPE = {"id": "shape", "kind": "tensor", "value": "f(x)", "setup": "x = torch.ones(3)", "shape": [3]}
DEPENDENT = {"id": "values", "kind": "tensor", "value": "f(x)", "setup": "x = torch.ones(3)", "close_to": "x * 2",
             "after": ["shape"]}


def test_after_skips_and_later_checks_still_run(grade):
    other = {"id": "other", "kind": "expr", "predicate": "True", "message": "never"}
    checks = by_id(grade("def f(x):\n    return x[:2]\n", SHAPE, DEPENDENT, other))
    assert checks["shape"].status == "failed"
    assert (checks["values"].status, checks["values"].message) == ("skipped", "skipped: needs 'shape' to pass first")
    assert checks["other"].status == "passed"


def test_error_shows_exception_and_learner_line(grade):
    code = "import torch\n\ndef f(x):\n    y = x * 2\n    return y @ torch.ones(5, 5)\n"
    check = grade(code, SHAPE).checks[0]
    assert check.status == "error"
    assert check.lineno == 5
    assert check.message.startswith("RuntimeError: ")
    assert "(line 5 of your code: `return y @ torch.ones(5, 5)`)" in check.message


def test_missing_function_is_an_error_naming_the_expression(grade):
    check = grade("def g(x):\n    return x\n", SHAPE).checks[0]
    assert check.status == "error"
    assert check.message.startswith("NameError: name 'f' is not defined (while evaluating `f(x)`)")


@pytest.mark.both_modes  # a limit stops the run: the sandbox's, per mode
def test_infinite_loop_inside_a_check_stops_that_check_only(grade):
    loop = {"id": "loop", "kind": "tensor", "value": "spin()", "number": True}
    code = ("def spin():\n    while True:\n        try:\n            pass\n        except BaseException:\n"
            "            pass\n\ndef f(x):\n    return x\n")
    # Two more quick checks after it: with one, the loop's wall cap (3x its CPU share, within the
    # run's wall time left) was all the time left, and on a machine that gave the spin under half a
    # core (three test workers on two cores) it used it up and SHAPE was "not run". With three after
    # it the cap is three quarters of the time left, so theirs is never spent by the loop.
    quick = [{"id": f"quick{i}", "kind": "expr", "predicate": "True", "message": "never"} for i in (1, 2)]
    report = grade(code, loop, SHAPE, *quick, timeout=6)
    checks = by_id(report)
    assert checks["loop"].status == "timeout"  # its own status (issue 17.4), not an error
    assert checks["loop"].message.startswith("stopped after ")
    assert "its share of the time" in checks["loop"].message
    # what was running and where, and no guess at why (issue 26: "an infinite loop?" was said of
    # a loop over 2,048 elements on a busy machine)
    assert "while running `spin()`" in checks["loop"].message and "of your code" in checks["loop"].message
    assert "infinite loop" not in checks["loop"].message
    for after in ("shape", "quick1", "quick2"):
        assert checks[after].status == "passed", (checks[after].message, checks["loop"].message)
    assert report.run.status == "ok" and not report.passed


@pytest.mark.both_modes  # a limit stops the run: the sandbox's, per mode
def test_top_level_infinite_loop_times_out_the_run(grade):
    report = grade("while True:\n    pass\n", SHAPE, timeout=2)
    assert report.run.status == "timeout"
    assert not report.passed
    assert report.checks[0].status == "error"
    assert report.checks[0].message.startswith("not checked: Stopped after 2 s")
    assert report.message.startswith("Stopped after 2 s")


def test_learner_error_at_top_level_fails_the_exercise(grade):
    report = grade("def f(x):\n    return x\n1 / 0\n", SHAPE)
    assert report.checks[0].status == "passed"
    assert not report.passed
    assert report.message.startswith("your code raised ZeroDivisionError at line 3")


def test_seeded_cases_are_deterministic(grade):
    spec = {"id": "seed", "kind": "expr", "setup": "v = torch.randn(1).item()", "predicate": "f() == v",
            "message": "not the same", "seed": 7}
    assert grade("import torch\ndef f():\n    torch.manual_seed(7)\n    return torch.randn(1).item()\n", spec).passed


def test_report_json_shape(grade):
    report = grade("def f(x):\n    return x\n", SHAPE)
    data = report.to_json()
    assert data["exercise"] == "fixture" and data["passed"] is True
    assert data["checks"][0]["id"] == "shape" and data["checks"][0]["status"] == "passed"
    assert {"id", "status", "message", "expected", "got"} <= set(data["checks"][0])
    assert data["run"]["status"] == "ok" and "report" not in data["run"]
