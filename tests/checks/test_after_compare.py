"""A profile check with ``compare`` leaves the session able to ship the check's functions
(issue 26, part 1): a later check's canary of an honest reference must not read as tampering."""

from __future__ import annotations

import textwrap

import pytest

from tests.checks.conftest import make_exercise
from tutor.grading.exercise import check_exercise

#: The trust boundary: in fork and in spawn mode (tests/checks/conftest.py, sandbox_modes).
pytestmark = pytest.mark.both_modes

RANKING = textwrap.dedent("""\
    import statistics
    import torch
    from torch.profiler import ProfilerActivity, profile

    def top_ops(workload, k, runs=3):
        workload()
        times = {}
        for _ in range(runs):
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                workload()
            for event in prof.key_averages():
                times.setdefault(event.key, []).append(event.self_cpu_time_total)
        medians = {op: statistics.median(v + [0] * (runs - len(v))) for op, v in times.items()}
        return sorted(medians, key=medians.get, reverse=True)[:k]

    def shifted(t, k):
        return t[0] + k
""")
COMPARE = {"id": "ranking", "kind": "profile",
           "setup": "a = torch.randn(320, 320)\nb = torch.randn(320, 320)\n"
                    "def mm_heavy():\n    return torch.exp((a @ b)[:32])[:2].sum()\n",
           "compare": {"call": "top_ops(workload, k)", "k": 2, "workloads": ["mm_heavy"]}}
AFTER = [{"id": f"values-{i}", "kind": "tensor", "setup": "t = torch.randn(4, 3)", "value": "shifted(t, 2.0)",
          "close_to": "t[0] + 2.0"} for i in range(4)]


def test_checks_after_a_compare_profile_are_not_tampered(sandbox):
    """Four tensor checks (four canaries, each a shipped function of the check's) after the
    compare: before, every one ran as a judge-side callback and the honest answer was 'tampered'."""
    report = check_exercise(sandbox, make_exercise(COMPARE, *AFTER, timeout=60), RANKING)
    statuses = {c.id: c.status for c in report.checks}
    assert statuses == {c: "passed" for c in statuses}, [(c.id, c.message) for c in report.checks]
