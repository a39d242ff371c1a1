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

#: The spy reads each request as the runner's handler receives it, through a profile function
#: (sys.setprofile): it changes none of the runner's code, which its seal would see
#: (tutor.checks.seal: a spy that wrapped ``server.HANDLERS``, as this one did, is now tampering).
RECORD = """
import json, sys
_seen = []

def _spy(frame, event, arg):
    if event == "call" and frame.f_code.co_name in ("repeat", "call") \\
            and frame.f_code.co_filename.endswith("server.py") and "request" in frame.f_locals:
        request = frame.f_locals["request"]
        shape = {k: v for k, v in request.items() if k not in ("budget", "wall", "case", "seed", "args", "tensors")}
        shape["fields"] = sorted(request)
        if isinstance(shape.get("observe"), dict):  # the module watched: which one changes with the case
            shape["observe"] = dict(shape["observe"], module=sorted(shape["observe"]["module"]))
        _seen.append(shape)
        sys.__stdout__.write("REQUEST " + json.dumps(shape, sort_keys=True) + "\\n")
        sys.__stdout__.flush()

sys.setprofile(_spy)
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
        # two cases, each a real question and a canary
        assert len(asked) == 4, (op, asked, [(c.id, c.status, c.message) for c in report.checks],
                                 report.run.status, report.run.stderr[-2000:])
        assert len(set(asked)) == 1, (op, sorted(set(asked)))


SHIFT = "import torch\ndef shift(t, k):\n    return t + k\ndef serve(model, x):\n    with torch.inference_mode():\n" \
        "        return model(x)\n" + RECORD
TENSOR = {"id": "values", "kind": "tensor", "setup": "x = torch.randn(r, 3)", "value": "shift(x, 2)",
          "close_to": "x + 2", "cases": [{"r": 2}, {"r": 5}]}
MEMORY = {"id": "mem", "kind": "memory", "setup": "x = torch.randn(3, 3)", "call": "shift(x, n)", "steps": [2, 4, 8]}
MODE = {"id": "m", "kind": "mode", "setup": "model = nn.Linear(4, 2); x = torch.randn(3, 4)", "module": "model",
        "call": "serve(model, x)", "during": {"inference_mode": True}, "cases": [{"r": 1}, {"r": 2}]}


def test_a_canarys_call_requests_look_like_the_checks_own(grade):
    """The tensor, memory and mode canaries' calls: the same fields and options as the real questions
    (the callee travels inside the arguments, for a learner's function and the judge's alike)."""
    for check in (TENSOR, MEMORY, MODE):
        report = grade(SHIFT, check, timeout=60)
        assert report.checks[0].status == "passed", report.checks[0].message
        asked = [json.dumps(r, sort_keys=True) for r in _requests(report.run.stdout) if r.get("op") == "call"]
        assert len(asked) >= 4, asked  # real questions and canaries
        assert len(set(asked)) == 1, (check["id"], "\n".join(sorted(set(asked))))
