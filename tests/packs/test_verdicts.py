"""Verdicts the built-in pack prints are the learner's machine's, not the scheduler's.

Three examples end with a verdict: Lab 3 ("looks compute-bound"), the profiler lesson's
memory-bound workload ("hot spot by median self time: ..."), and the autocast lesson's timing
("at batch 256, bf16 autocast is faster than float32", one line per shape). A verdict that
flips between two runs of the same code teaches nothing, and a learner's machine is rarely
idle, so each example runs here the way
the learner's Run button runs it (the real sandbox, the interpreter's default thread count) ten
times, with another process keeping one core busy, and must give one verdict.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter

import pytest

grading = pytest.importorskip("tutor.grading.exercise", reason="the check engine is not installed")

VERDICTS = {
    ("labs", "hotspot-cpu"): re.compile(r"^looks (.+)$", re.MULTILINE),
    ("profiler", "copy-example"): re.compile(r"^hot spot by median self time: (.+)$", re.MULTILINE),
    ("autocast", "speed"): re.compile(r"^at batch \d+, bf16 autocast is (.+) float32$", re.MULTILINE),
}
RUNS = 10


@pytest.fixture(scope="module")
def sandbox():
    from tutor.sandbox import Limits, Sandbox

    box = Sandbox(Limits(wall_time=120.0, cpu_time=240.0, memory_mb=4096), workers=1).start()
    assert box.wait_ready(300), "the sandbox did not warm up"
    yield box
    box.close()


@pytest.fixture
def busy_core():
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    yield
    spinner.kill()
    spinner.wait()


@pytest.mark.slow
@pytest.mark.parametrize("where", sorted(VERDICTS), ids="/".join)
def test_one_verdict_in_ten_runs_with_a_busy_core(pack, sandbox, busy_core, where):
    lesson_id, step_id = where
    step = next(s for s in pack.lesson(lesson_id).steps if s.id == step_id)
    verdicts: Counter = Counter()
    for _ in range(RUNS):
        outcome = grading.run_example(sandbox, step)
        assert outcome.matched, outcome.summary
        found = VERDICTS[where].findall(outcome.run.stdout)
        assert found, f"no verdict line in {outcome.run.stdout!r}"
        verdicts[" / ".join(found)] += 1  # one verdict per line (the timing example has one per shape)
    assert len(verdicts) == 1, f"{lesson_id}/{step_id}: the verdict changed between runs: {dict(verdicts)}"


def test_lab3_calls_an_exact_half_neither_side(pack):
    """`share > 0.5` once called exactly 50% memory-bound; the verdict follows the printed percent."""
    step = next(s for s in pack.lesson("labs").steps if s.id == "hotspot-cpu")
    tail = step.code[step.code.index("percent = "):]
    outputs = {}
    for percent in (49, 50, 51):
        lines: list[str] = []
        exec(tail.replace("percent = round(", f"percent = {percent} or round(", 1),
             {"median": {}, "COMPUTE": set(), "print": lambda *a, **k: lines.append(" ".join(map(str, a)))})
        outputs[percent] = lines[-1]
    assert outputs == {49: "looks memory-bound", 50: "looks balanced: neither kind dominates",
                       51: "looks compute-bound"}
