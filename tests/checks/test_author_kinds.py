"""Issue 17's new check vocabulary, through the real sandbox: call counts in profile checks,
the `warns` kind, a per-check time limit with its own status, hints by case and status, and
measurement checks that say what they measured (threads included) when they pass."""

from __future__ import annotations

from tests.checks.conftest import by_id
from tutor.child.checks.kinds.measure import honest, margin

LOOP = """
import torch
def double(x):
    out = torch.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] * 2
    return out
"""
VECTORISED = """
import torch
def double(x):
    return x * 2
"""
COUNT = {"id": "vectorised", "kind": "profile", "setup": "x = torch.randn(64, 8)",
         "workload": "lambda: double(x)", "warmup": 1, "repeat": 3,
         "calls": [{"ops": ["aten::select"], "at_most": 4}]}


def test_call_count_fails_the_loop_and_names_the_count(grade):
    check = grade(LOOP, COUNT).checks[0]
    assert check.status == "failed"
    assert check.message.startswith("aten::select ran 128 times per call of the workload, expected at most 4")


def test_call_count_passes_the_vectorised_version_and_says_so(grade):
    check = grade(VECTORISED, COUNT).checks[0]
    assert check.status == "passed", check.message
    assert "aten::select: 0 call(s) per call" in check.message and "(1 thread)" in check.message


def test_at_least_counts_a_set_of_operators(grade):
    wanted = dict(COUNT, calls=[{"ops": ["aten::mul", "aten::mul_"], "at_least": 1}])
    assert grade(VECTORISED, wanted).checks[0].status == "passed"
    none = dict(COUNT, calls=[{"ops": ["aten::mm"], "at_least": 1}])
    check = grade(VECTORISED, none).checks[0]
    assert check.status == "failed" and "aten::mm ran 0 time(s)" in check.message


WARNS = {"id": "warns", "kind": "warns", "call": "old_api(1)", "category": "DeprecationWarning",
         "match": "use new_api"}


def test_warns_passes_when_the_learners_code_warns(grade):
    code = ("import warnings\ndef old_api(x):\n"
            "    warnings.warn('old_api is deprecated: use new_api', DeprecationWarning)\n    return x\n")
    check = grade(code, WARNS).checks[0]
    assert check.status == "passed", check.message
    assert check.message.startswith("DeprecationWarning: old_api is deprecated")


def test_warns_fails_without_a_warning_and_on_the_wrong_category_or_text(grade):
    silent = grade("def old_api(x):\n    return x\n", WARNS).checks[0]
    assert silent.status == "failed"
    assert silent.message.startswith("expected a DeprecationWarning, but the code emitted no warning")
    wrong = grade("import warnings\ndef old_api(x):\n    warnings.warn('use new_api')\n    return x\n",
                  WARNS).checks[0]
    assert wrong.status == "failed" and "warned only UserWarning: use new_api" in wrong.message
    text = grade("import warnings\ndef old_api(x):\n    warnings.warn('nope', DeprecationWarning)\n"
                 "    return x\n", WARNS).checks[0]
    assert text.status == "failed" and "does not match /use new_api/" in text.message


def test_warns_records_a_warning_filtered_away_by_the_learner(grade):
    """A learner's filter cannot hide the warning from the check: every warning is recorded."""
    code = ("import warnings\nwarnings.simplefilter('ignore')\ndef old_api(x):\n"
            "    warnings.warn('use new_api', DeprecationWarning)\n    return x\n")
    assert grade(code, WARNS).checks[0].status == "passed"


SPIN = "def spin():\n    while True:\n        pass\n"


def test_time_limit_is_per_check_and_gives_the_timeout_status(grade):
    check = {"id": "spin", "kind": "expr", "predicate": "spin()", "message": "m", "time_limit": 0.5}
    other = {"id": "after", "kind": "expr", "predicate": "True", "message": "m"}
    report = grade(SPIN, check, other, timeout=10)
    checks = by_id(report)
    assert checks["spin"].status == "timeout"
    assert checks["spin"].message.startswith("stopped after 0.")
    assert "the check's time_limit of 0.5 s" in checks["spin"].message
    assert checks["after"].status == "passed"


HINTED = {"id": "pos", "kind": "expr", "predicate": "f(v) > 0", "message": "not positive",
          "cases": [{"v": 1}, {"v": -1}], "hint": "the general hint",
          "hints": [{"case": 1, "text": "negative inputs too"}, {"status": ["timeout"], "text": "a loop?"}]}


def test_hints_by_case_and_status(grade):
    failing_second = grade("def f(v):\n    return v\n", HINTED).checks[0]
    assert failing_second.status == "failed" and failing_second.hint == "negative inputs too"
    failing_first = grade("def f(v):\n    return -v\n", HINTED).checks[0]
    assert failing_first.status == "failed" and failing_first.hint == "the general hint"
    spinning = grade("def f(v):\n    while True:\n        pass\n", dict(HINTED, time_limit=0.3),
                     timeout=8).checks[0]
    assert spinning.status == "timeout" and spinning.hint == "a loop?"
    erroring = grade("def f(v):\n    return v.nope\n", HINTED).checks[0]
    assert erroring.status == "error" and erroring.hint is None  # no hint written for an error


def test_passing_timing_check_says_what_it_measured_with_its_threads(grade):
    code = "import torch\ndef fast():\n    return torch.ones(4)\n"
    check = {"id": "speed", "kind": "timing", "fast": "fast", "repeat": 5, "warmup": 1,
             "slow": "lambda: [torch.ones(4) for _ in range(200)]", "ratio": {"min": 1.5}, "threads": 2}
    result = grade(code, check).checks[0]
    assert result.status == "passed", result.message
    assert "2 threads; needs at least 1.5x)" in result.message
    assert result.data["threads"] == 2 and result.data["margin"] > 1


def test_rounding_never_crosses_the_threshold():
    assert honest(19.6, 20) == "19.6"
    assert honest(19.96, 20) == "19.96"  # never "20", which would read as passing
    assert honest(20.004, 20) == "20.004"
    assert honest(31.24, 20) == "31.2"
    assert honest(1.3) == "1.30" and honest(1.003, 20) == "1.00"  # never "1x"
    assert honest(120.4) == "120"
    assert margin(31.0, 20, None) == 31.0 / 20
    assert margin(1.5, None, 2.0) == 2.0 / 1.5


def test_unchanged_reports_the_inputs_as_they_were_before_the_call(grade):
    """17.7: the case's description showed the shape after an in-place resize as the input's."""
    code = "def shrink(t):\n    t.resize_(2)\n    return t\n"
    check = {"id": "same", "kind": "unchanged", "setup": "x = torch.ones(4, 4)", "call": "shrink(x)",
             "names": ["x"]}
    result = grade(code, check).checks[0]
    assert result.status == "failed"
    assert result.message == ("your function resized the caller's tensor `x` in place: (4, 4) -> (2,) "
                              "(for x of shape (4, 4))")


def test_a_hint_for_a_timeout_in_one_case(grade):
    code = "def f(v):\n    while v < 0:\n        pass\n    return v\n"
    check = {"id": "pos", "kind": "expr", "predicate": "f(v) is not None", "message": "m", "time_limit": 0.5,
             "cases": [{"v": 1}, {"v": -1}],
             "hints": [{"case": 0, "status": ["timeout"], "text": "first"},
                       {"case": 1, "status": ["timeout"], "text": "negative inputs loop forever"}]}
    result = grade(code, check, timeout=8).checks[0]
    assert result.status == "timeout" and result.hint == "negative inputs loop forever"
