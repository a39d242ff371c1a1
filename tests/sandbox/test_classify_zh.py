"""The sandbox's sentences about a run reach the learner in their language: English stays in
``message`` (JSON, logs), the key and fields travel beside it and are rendered by the parent; a
said the tutor cannot render shows the English as it came (issue 29)."""

from __future__ import annotations

import signal

import pytest

from tutor.words import i18n
from tutor.sandbox import Limits, wire
from tutor.sandbox.classify import RawRun, classify
from tutor.sandbox.result import RunResult


def _shown(result: RunResult, code: str) -> str:
    i18n.set_language(code)
    return i18n.shown(result.message, result.extra.get("said"))


def test_a_timeout_is_said_in_english_and_shown_in_chinese():
    result = classify(RawRun(verdict={"reason": "timeout", "wall_time": 10.2}), Limits(wall_time=2.5))
    assert result.status == "timeout"
    assert result.message == "Stopped after 2.5 s — still running; an infinite loop?"
    assert _shown(result, "zh") == "运行 2.5 s 后仍未结束，已停止；是死循环吗？"
    assert _shown(result, "en") == result.message


def test_a_crash_names_its_signal_in_chinese_and_keeps_the_signal_name():
    result = classify(RawRun(verdict={"signal": int(signal.SIGSEGV), "exit_code": None}), Limits())
    assert result.status == "killed" and "segmentation fault" in result.message
    shown = _shown(result, "zh")
    assert "段错误" in shown and "SIGSEGV" in shown and "segmentation" not in shown


def test_a_sentence_inside_a_sentence_is_rendered_in_the_same_language():
    result = classify(RawRun(verdict={"reason": "timeout"}), Limits(wall_time=10), compiles=True)
    assert "Your code calls torch.compile" in result.message
    shown = _shown(result, "zh")
    assert "torch.compile" in shown and "backend=\"eager\"" in shown and "Your code" not in shown


def test_limits_memory_output_and_exit_codes_in_chinese():
    memory = classify(RawRun(verdict={"exit_code": 1},
                             report=wire.encode_report({"learner_error": {"type": "MemoryError", "message": "",
                                                                          "traceback": ""}})),
                      Limits(memory_mb=512))
    assert memory.status == "memory" and "512 MB" in _shown(memory, "zh") and "内存" in _shown(memory, "zh")
    output = classify(RawRun(verdict={}, stdout=b"x" * 10, stdout_over=True, cancel_reason="output-limit"),
                      Limits(output_kb=1))
    assert output.status == "output-limit" and _shown(output, "zh").startswith("已停止：程序向 stdout 输出了超过 1 KiB")
    exited = classify(RawRun(verdict={"exit_code": 3}), Limits())
    assert exited.message == "The program exited with code 3." and _shown(exited, "zh") == "程序以退出码 3 结束。"


def test_the_truncation_mark_in_the_output_is_in_the_language_in_use():
    i18n.set_language("zh")
    result = classify(RawRun(verdict={}, stdout=b"y" * 2048, stdout_over=True), Limits(output_kb=1))
    assert result.stdout.endswith("[stdout 已截断：超过 1 KiB]")


@pytest.mark.parametrize("said", [
    {"key": "no.such.key", "fields": {}},  # a newer sandbox's sentence
    {"key": "run.timeout", "fields": {"seconds": "ten"}},  # a field that does not fit its format
    {"key": "run.timeout", "fields": {}},  # a field missing
    {"key": "run.crashed", "fields": {"words": {"key": "nope", "fields": {}}, "name": "X"}},
    {"key": 3, "fields": {}},
    {"key": "run.exit_code", "fields": "code"},
    "run.exit_code",
])
def test_a_said_that_cannot_be_rendered_shows_the_english_message(said):
    i18n.set_language("zh")
    assert i18n.shown("The English as it came.", said) == "The English as it came."


def test_a_hostile_field_cannot_reach_into_the_table_or_the_process():
    """Field values are data: a format string inside one is shown as it is, never formatted."""
    i18n.set_language("zh")
    said = {"key": "run.failure", "fields": {"failure": "{0.__class__.__mro__}"}}
    assert i18n.shown("x", said) == "沙箱出错：{0.__class__.__mro__}。"


def test_grading_carries_a_checks_said_and_renders_its_own_in_chinese():
    """The way a child-side check message will travel: a ``said`` beside ``message`` in the
    report's check, kept by grade() and rendered by the parent; a forged or unknown one shows the
    English message as it came. grade()'s own sentences are saids already."""
    from tutor.pack.loader import load_pack
    from tutor.grading.exercise import grade
    from pathlib import Path

    pack = load_pack(Path(__file__).parents[1] / "app" / "packs" / "mini")
    exercise = pack.lesson("exercises").steps[0]
    report = {"checks": [{"id": "doubles", "status": "failed", "message": "not run: your code has to run first",
                          "said": {"key": "check.not_run", "fields": {}}}]}
    graded = grade(exercise, RunResult(status="ok", report=report))
    (check,) = graded.checks
    assert check.message == "not run: your code has to run first"
    i18n.set_language("zh")
    assert i18n.shown(check.message, check.said) == "未运行：你的代码得先能运行"
    assert i18n.shown(graded.message, graded.said) == "1 项检查中通过了 0 项"
    forged = grade(exercise, RunResult(status="ok", report={"checks": [
        {"id": "doubles", "status": "passed", "message": "as it came", "said": {"key": "x.y", "fields": {}}}]}))
    assert i18n.shown(forged.checks[0].message, forged.checks[0].said) == "as it came"
    assert forged.passed  # a said changes words only, never a verdict
    timed_out = grade(exercise, classify(RawRun(verdict={"reason": "timeout"}), Limits(wall_time=3)))
    assert i18n.shown(timed_out.checks[0].message, timed_out.checks[0].said) == \
        "未检查：运行 3 s 后仍未结束，已停止；是死循环吗？"
