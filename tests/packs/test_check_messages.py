"""What the built-in pack's failing checks say, read as a learner reads it (issue 52, item 11):
the message is about what the title is about, a number the learner cannot see is given, and the
first failure leaves the hint ladder something to do."""

from __future__ import annotations

import pytest

from tests.packs.conftest import CASES_DIR

grading = pytest.importorskip("tutor.grading.exercise", reason="the check engine is not installed")


@pytest.fixture(scope="module")
def sandbox():
    from tutor.sandbox import Limits, Sandbox

    box = Sandbox(Limits(wall_time=120.0, cpu_time=240.0, memory_mb=4096), workers=1).start()
    assert box.wait_ready(300), "the sandbox did not warm up"
    yield box
    box.close()


def _checks(pack, sandbox, exercise_id: str, case: str, language: str = "en"):
    _, exercise = pack.find_exercise(exercise_id)
    code = (CASES_DIR / exercise_id / case).read_text(encoding="utf-8")
    report = grading.check_exercise(sandbox, exercise, code, language=language)
    return exercise, {check.id: check for check in report.checks}


def test_the_meta_device_check_says_the_counts_its_message_gives(pack, sandbox):
    """scale as nn.Parameter(requires_grad=False): "expected 6 parameters, got 7" under a title
    about devices. The title now names the counts it holds the model to."""
    exercise, checks = _checks(pack, sandbox, "unregistered-submodule", "wrong_scale_parameter.py")
    spec = next(c for c in exercise.checks if c.id == "moves-to-meta")
    assert "6 parameters" in spec.description["en"] and "6 个参数" in spec.description["zh"]
    if checks["moves-to-meta"].status == "failed":
        assert "6" in checks["moves-to-meta"].message


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_median_check_says_what_bench_returned(pack, sandbox, language):
    _, checks = _checks(pack, sandbox, "fair-benchmark", "wrong_mean.py", language)
    failed = [c for c in checks.values() if c.status == "failed" and ("median" in c.message or "中位数" in c.message)]
    assert failed, checks
    said = failed[0].message
    assert ("bench returned 0." if language == "en" else "bench 返回了 0.") in said, said


def test_the_first_failure_of_accumulate_graph_leaves_the_answer_to_the_hints(pack, sandbox):
    """Its first failed Check ended "log loss.item() or loss.detach()": the hints' last rungs."""
    exercise, checks = _checks(pack, sandbox, "accumulate-graph", "wrong_clone.py")
    failed = [c for c in checks.values() if c.status == "failed"]
    assert failed
    for check in failed:
        shown = f"{check.message} {check.hint or ''}"
        assert ".item()" not in shown and ".detach()" not in shown, shown


@pytest.mark.parametrize("prediction,right", [("float64", True), ("torch.float64", True), ("float32", False)])
def test_a_dtype_predicted_by_its_bare_name_is_right(pack, prediction, right):
    """A new learner's walk-through: lesson 1's silent-promotion quiz prints `torch.float64`, and
    `float64`, the right idea, was marked a miss (and recorded so)."""
    from tutor.pack.quizzes.predict import judge_run

    quiz = next(step for lesson in pack.lessons for step in lesson.steps if step.id == "silent-promotion")
    assert bool(judge_run(quiz, prediction, "torch.float64\n", None).right) is right
