"""No field of a request tells a canary from a real question (issue 26, part 2).

The profile canary always asked ``warmup 0 / repeat 2`` and the timing canary ``0 / 3``: a runner
that lied only when those differed passed `batched-scores` with the starter loop. Here the
learner's code records the fields of every time and profile request it is asked (all but the
arguments and the values that change with every request: its budget, case and seed) and prints
them; every request of a kind must look the same, canaries' included. The arguments themselves (the
function asked for, its tensors) still differ: that door stays open, and docs/architecture.md's
threat model says why.
"""

from __future__ import annotations

import json

import pytest

#: The trust boundary: in fork and in spawn mode (tests/checks/conftest.py, sandbox_modes).
pytestmark = pytest.mark.both_modes

RECORD = """
import json, sys
_server = sys.modules["tutor.checks.server"]
_real_repeat = _server.Server.repeat
_seen = []

def _repeat(self, op, request, blobs):
    shape = {k: v for k, v in request.items() if k not in ("budget", "wall", "case", "seed", "args", "tensors")}
    shape["fields"] = sorted(request)
    _seen.append(shape)
    print("REQUEST " + json.dumps(shape, sort_keys=True))
    return _real_repeat(self, op, request, blobs)

_server.Server.repeat = _repeat
"""
CODE = "import torch\ndef fast():\n    return torch.ones(4)\ndef work(x):\n    return (x @ x).sum()\n" + RECORD
TIMING = {"id": "speed", "kind": "timing", "fast": "fast", "slow": "lambda: [torch.ones(4) for _ in range(50)]",
          "ratio": {"min": 1.1}, "warmup": 2, "repeat": 7, "cases": [{"n": 1}, {"n": 2}]}
PROFILE = {"id": "prof", "kind": "profile", "setup": "x = torch.randn(64, 64)", "workload": "lambda: work(x)",
           "top1_in": ["aten::mm"], "warmup": 1, "repeat": 4, "cases": [{"n": 1}, {"n": 2}]}


def _requests(stdout: str) -> list[dict]:
    return [json.loads(line.split(" ", 1)[1]) for line in stdout.splitlines() if line.startswith("REQUEST ")]


def test_a_canarys_time_and_profile_requests_look_like_the_checks_own(grade):
    report = grade(CODE, TIMING, PROFILE, timeout=60)
    seen = _requests(report.run.stdout)
    for op in ("time", "profile"):
        asked = [json.dumps(r, sort_keys=True) for r in seen if r.get("op") == op]
        assert len(asked) == 4, (op, asked)  # two cases, each a real question and a canary
        assert len(set(asked)) == 1, (op, sorted(set(asked)))
