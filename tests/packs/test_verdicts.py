"""Verdicts the built-in pack prints are the learner's machine's, not the scheduler's.

Lab 3 (``labs/hotspot-cpu``) ends with "looks compute-bound" or "looks memory-bound". A verdict
that flips between two runs of the same code teaches nothing, and a learner's machine is rarely
idle, so the example runs here the way the learner's Run button runs it (the real sandbox, the
interpreter's default thread count) with another process keeping one core busy.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter

import pytest

grading = pytest.importorskip("tutor.core.grading", reason="the check engine is not installed")

VERDICT = re.compile(r"^looks (.+)$", re.MULTILINE)
SHARE = re.compile(r"matrix-multiply share of self time: (\d+)%")


@pytest.fixture(scope="module")
def sandbox():
    from tutor.sandbox import Limits, Sandbox

    box = Sandbox(Limits(wall_time=120.0, cpu_time=240.0, memory_mb=4096), workers=1).start()
    assert box.wait_ready(300), "the sandbox did not warm up"
    yield box
    box.close()


@pytest.mark.slow
def test_lab3_gives_one_verdict_in_ten_runs_with_a_busy_core(pack, sandbox):
    step = next(s for s in pack.lesson("labs").steps if s.id == "hotspot-cpu")
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    verdicts: Counter = Counter()
    shares = []
    try:
        for _ in range(10):
            outcome = grading.run_example(sandbox, step)
            assert outcome.matched, outcome.summary
            verdicts[VERDICT.search(outcome.run.stdout).group(1)] += 1
            shares.append(int(SHARE.search(outcome.run.stdout).group(1)))
    finally:
        spinner.kill()
        spinner.wait()
    assert len(verdicts) == 1, f"the verdict changed between runs: {dict(verdicts)}; shares {shares}%"
