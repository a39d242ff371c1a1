"""Author patterns that backtrack catastrophically never hang validate, the app or a check.

`^(a|aa)+$` against forty `a`s and a `!` takes minutes with a backtracking matcher (``re``; the
``regex`` package that matches an author's pattern in the parent too, where its timeout stops it).
"""

from __future__ import annotations

import json
import threading
import time

from tests.checks.test_cli import _small_pack, tutor
from tutor.grading.exercise import compare_outcome
from tutor.pack.models import Example
from tutor.pack.validation import validate
from tutor.sandbox import RunResult
from tutor.sandbox.result import LearnerError

EVIL = "^(a|aa)+$"
VICTIM = "a" * 40 + "!"


def _example(expect: dict) -> Example:
    return validate(Example, {"id": "ex", "kind": "example", "code": "print(1)", "expect": expect})


def test_output_pattern_is_bounded_and_named():
    started = time.monotonic()
    matched, summary = compare_outcome(_example({"output": EVIL}).expect, RunResult(status="ok", stdout=VICTIM))
    assert time.monotonic() - started < 10
    assert matched is False
    assert summary.startswith(f"the pattern /{EVIL}/ took longer than 1 s on this output")


def test_raises_pattern_is_bounded():
    result = RunResult(status="error", error=LearnerError("ValueError", VICTIM, "", None))
    matched, summary = compare_outcome(_example({"raises": {"type": "ValueError", "match": EVIL}}).expect, result)
    assert matched is False and "took longer than" in summary


def test_ordinary_patterns_still_match():
    expect = _example({"output": r"loss \d+\.\d+"}).expect
    assert compare_outcome(expect, RunResult(status="ok", stdout="step 3: loss 0.25\n" * 50)) == (True, "output matches")
    assert compare_outcome(expect, RunResult(status="ok", stdout="no numbers here, just words"))[0] is False


def test_the_search_does_not_hold_other_threads():
    """The app's UI thread kept running while a worker thread compared (a matcher holds the GIL)."""
    ticks = []
    stop = threading.Event()

    def ui():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    thread = threading.Thread(target=ui)
    thread.start()
    try:
        compare_outcome(_example({"output": EVIL}).expect, RunResult(status="ok", stdout=VICTIM))
    finally:
        stop.set()
        thread.join()
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert len(ticks) > 20 and max(gaps) < 0.5


def test_validate_finishes_with_a_problem(tmp_path):
    pack = _small_pack(tmp_path / "pack", "def double(x):\n    return x * 2")
    text = (pack / "engine.yaml").read_text()
    text = text.replace('code: "print(1)"', f"code: \"print('{VICTIM}')\"").replace('output: "2"', f"output: '{EVIL}'")
    (pack / "engine.yaml").write_text(text)
    done = tutor("validate", str(pack), "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    [entry] = json.loads(done.stdout)
    example = next(p for p in entry["problems"] if p["message"].startswith("example 'wrong-example'"))
    assert "took longer than 1 s" in example["message"]


def test_a_check_pattern_is_bounded_by_the_check_time(grade):
    code = f"def f():\n    raise ValueError({VICTIM!r})\n"
    check = {"id": "r", "kind": "raises", "call": "f()", "type": "ValueError", "match": EVIL}
    started = time.monotonic()
    report = grade(code, check, timeout=4)
    assert time.monotonic() - started < 30
    assert report.checks[0].status == "error"
    assert report.checks[0].message.startswith(f"the check's pattern /{EVIL}/ did not finish in")


def test_a_pattern_is_in_res_syntax_and_the_bound_holds_in_process(monkeypatch):
    """``re``'s syntax (a pattern it refuses is its error, though ``regex`` would take it), and
    the bound holds with no child process: the search stops itself."""
    import os
    import re
    import subprocess

    import pytest

    from tutor.pack import safe_regex

    def no_child(*args, **kwargs):
        raise AssertionError("a child process was started")

    monkeypatch.setattr(os, "fork", no_child, raising=False)
    monkeypatch.setattr(subprocess, "Popen", no_child)
    with pytest.raises(re.error):
        safe_regex.search("(", "x" * 20)
    with pytest.raises(re.error):
        safe_regex.search(r"\p{L}+", "x" * 20)  # regex's own syntax: not an author's
    started = time.monotonic()
    with pytest.raises(safe_regex.PatternTimeout, match=r"took longer than 0.2 s"):
        safe_regex.search(EVIL, VICTIM, bound=0.2)
    assert time.monotonic() - started < 5
    assert safe_regex.search("^(a+)+$", VICTIM) is False  # catastrophic for re, answered at once here
