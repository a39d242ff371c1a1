"""Issue 34, through the real sandbox: what a port of a puzzle set ran into at run time (dtype
aliases, a share bound of 1.0, a seed where nothing was drawn, comparing after broadcasting), and
the statuses of a submission that ends itself, before and during the checks (docs/authoring.md,
"When the code ends itself")."""

from __future__ import annotations

import pytest


def by_id(report):
    return {c.id: c for c in report.checks}


def test_dtype_long_means_int64_at_run_time(grade):
    check = {"id": "d", "kind": "tensor", "value": "f()", "dtype": "long"}
    assert grade("import torch\ndef f():\n    return torch.arange(3)\n", check).passed
    failed = by_id(grade("import torch\ndef f():\n    return torch.arange(3.0)\n", check))["d"]
    assert failed.status == "failed" and failed.expected == "int64"


def test_a_share_of_one_is_met_by_a_workload_that_runs_only_those_operators(grade):
    check = {"id": "s", "kind": "profile", "setup": "x = torch.randn(64, 64)", "workload": "lambda: f(x)",
             "share": {"ops": ["aten::*"], "at_least": 1.0}}
    report = grade("import torch\ndef f(x):\n    return torch.exp(x)\n", check)
    assert report.passed, [c.message for c in report.checks]


def test_a_failing_check_that_drew_nothing_names_no_seed(grade):
    literal = {"id": "lit", "kind": "tensor", "value": "f(torch.arange(3.))", "close_to": "torch.arange(3.) * 2"}
    drawn = {"id": "rnd", "kind": "tensor", "setup": "x = torch.randn(3)", "value": "f(x)", "close_to": "x * 2"}
    checks = by_id(grade("def f(x):\n    return x\n", literal, drawn))
    assert checks["lit"].status == "failed" and checks["lit"].seed is None
    assert checks["rnd"].status == "failed" and isinstance(checks["rnd"].seed, int)


def test_broadcast_compares_after_broadcasting_only_when_asked(grade):
    exact = {"id": "exact", "kind": "tensor", "value": "f()", "close_to": "torch.ones(3)"}
    loose = dict(exact, id="loose", broadcast=True)
    checks = by_id(grade("import torch\ndef f():\n    return torch.ones(1, 3)\n", exact, loose))
    assert checks["exact"].status == "failed" and "shape" in checks["exact"].message
    assert checks["loose"].status == "passed"
    wrong = by_id(grade("import torch\ndef f():\n    return torch.ones(2)\n", loose))["loose"]
    assert wrong.status == "failed" and "or a shape that broadcasts with it" in wrong.message


VALUE = {"id": "v", "kind": "tensor", "value": "f(torch.ones(2))", "close_to": "torch.ones(2) * 2"}
OTHER = {"id": "w", "kind": "tensor", "value": "f(torch.ones(3))", "close_to": "torch.ones(3) * 2"}


@pytest.mark.parametrize("code, cause", [
    ("import sys\nsys.exit(0)\ndef f(t):\n    return t * 2\n", "your code ended itself with sys.exit(0) at line 2"),
    ("import sys\nsys.exit()\ndef f(t):\n    return t * 2\n", "your code ended itself with sys.exit() at line 2"),
    ("import sys\nsys.exit(3)\ndef f(t):\n    return t * 2\n", "your code ended itself with sys.exit(3) at line 2"),
])
def test_code_that_ends_itself_before_the_checks_says_so_and_skips_them(grade, code, cause):
    report = grade(code, VALUE, OTHER)
    assert not report.passed
    assert report.cause is not None and report.cause.startswith(cause), report.cause
    assert [c.status for c in report.checks] == ["skipped", "skipped"]  # never a list of NameErrors


@pytest.mark.both_modes  # the process ends or runs out: the sandbox's, per mode
def test_os_exit_before_the_checks_leaves_them_unchecked(grade):
    report = grade("import os\nos._exit(0)\ndef f(t):\n    return t * 2\n", VALUE, OTHER)
    assert report.run.status == "sandbox-failure" and not report.passed  # `grade` rows it as `exited`
    assert [c.status for c in report.checks] == ["error", "error"]
    assert report.checks[0].message == ("not checked: No check results: the program ended its process (os._exit?) "
                                        "before the checks could run.")


@pytest.mark.both_modes  # the process ends or runs out: the sandbox's, per mode
def test_sys_exit_0_in_a_plain_run_is_still_a_clean_end(sandbox):
    assert sandbox.run("import sys\nprint('hi')\nsys.exit(0)\n").status == "ok"


@pytest.mark.both_modes  # the process ends or runs out: the sandbox's, per mode
def test_code_that_ends_itself_inside_a_check(grade):
    checks = by_id(grade("import sys\ndef f(t):\n    sys.exit(0)\n", VALUE))
    assert checks["v"].status == "error" and checks["v"].message.startswith("SystemExit: 0 (line 3 of your code")
    report = grade("import os\ndef f(t):\n    os._exit(0)\n", VALUE, OTHER)
    assert [c.status for c in report.checks] == ["error", "error"]
    assert report.checks[0].message.startswith("your code's process ended or stopped answering while this check ran")


@pytest.mark.both_modes  # the process ends or runs out: the sandbox's, per mode
def test_memory_blow_up_at_import_skips_the_checks_with_the_cause(grade):
    report = grade("big = bytearray(10**12)\ndef f(t):\n    return t * 2\n", VALUE)
    assert report.run.status == "memory"
    assert report.cause.startswith("your code ran out of memory at line 1"), report.cause
    assert report.checks[0].status == "skipped"


@pytest.mark.both_modes  # the process ends or runs out: the sandbox's, per mode
def test_memory_error_inside_a_check_is_that_checks_error(grade):
    check = by_id(grade("def f(t):\n    return bytearray(10**12)\n", VALUE))["v"]
    assert check.status == "error" and check.message.startswith("MemoryError (line 2 of your code"), check.message
