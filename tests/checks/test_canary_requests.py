"""No field of a request tells a canary from a real question (issue 26, part 2).

The profile canary always asked ``warmup 0 / repeat 2`` and the timing canary ``0 / 3``: a runner
that lied only when those differed passed `batched-scores` with the starter loop. Here a spy in
the judge records the fields of every call, time and profile request it sends (all but the
arguments and the values that change with every request: its budget, case and seed); every
request of a kind must look the same, canaries' included. The arguments themselves (the function
asked for, its tensors) still differ: that door stays open, and docs/architecture.md's threat
model says why (since issue 50 only native code in the runner could read a request).
"""

from __future__ import annotations


import pytest

#: The trust boundary: in fork and in spawn mode (tests/checks/conftest.py, sandbox_modes).
pytestmark = pytest.mark.both_modes

#: The spy reads each request as the judge sends it: a check's ``setup`` runs in the judge, and
#: this one wraps its ``Session.request`` (once per run) and keeps each request's shape in the
#: judge. A last ``expr`` check reads them back as its value. Until issue 50 the spy was the
#: learner's own, a profile function (``sys.setprofile``) that read each request in the runner's
#: frames; the seal refuses profile functions now and the runner's frames are out of the
#: learner's reach, so only native code could still read a request there (docs/architecture.md,
#: "Threat model"): what a canary's request looks like still matters against it.
SPY = """
import sys as _sys, json as _json
_remote = _sys.modules["tutor.child.checks.remote"]
if not hasattr(_remote, "SPIED"):
    _remote.SPIED = []
    _real = _remote.Session.request
    def _request(self, message, blobs=(), _real=_real, _seen=_remote.SPIED, _json=_json):
        shape = {k: v for k, v in message.items() if k not in ("budget", "wall", "case", "seed", "args", "tensors")}
        shape["fields"] = sorted(message)
        if isinstance(shape.get("observe"), dict):  # the module watched: which one changes with the case
            shape["observe"] = dict(shape["observe"], module=sorted(shape["observe"]["module"]))
        _seen.append(_json.dumps(shape, sort_keys=True, default=str))
        return _real(self, message, blobs)
    _remote.Session.request = _request
"""
CODE = "import torch\ndef fast():\n    return torch.ones(4)\ndef work(x):\n    return (x @ x).sum()\n"


#: The first check: puts the spy in place before any request is sent (a canary may come first).
INSTALL = {"id": "spy", "kind": "expr", "setup": SPY, "predicate": "True", "message": "never"}




def _read_back(ops: tuple, at_least: int) -> dict:
    """The last check, in the judge: each op's requests so far (then forgotten) were ``at_least``
    (exactly, if negative: ``-at_least``), and those that measure and observe alike (a memory
    check also asks an unmeasured call, a mode check an unobserved one) were all of one shape."""
    return {"id": "read-back", "kind": "expr",
            "setup": "import sys, json\nspied = sys.modules['tutor.child.checks.remote'].SPIED\n"
                     "seen = [json.loads(item) for item in spied]\nspied.clear()\n"
                     f"kind = lambda r: (r['op'], r.get('measure'), 'observe' in r)\n"
                     f"shapes = {{kind(r): set() for r in seen if r['op'] in {ops!r}}}\n"
                     "for r in seen:\n    if kind(r) in shapes:\n"
                     "        shapes[kind(r)].add(json.dumps(r, sort_keys=True))\n"
                     f"counts = {{op: sum(1 for r in seen if r['op'] == op) for op in {ops!r}}}",
            "predicate": f"all(len(v) == 1 for v in shapes.values()) and all((n >= {at_least}) if {at_least} > 0 "
                         f"else (n == -{at_least}) for n in counts.values())",
            "message": "requests {{ json.dumps(counts) }}, shapes {{ json.dumps([sorted(v) for v in shapes.values()]) }}"}


TIMING = {"id": "speed", "kind": "timing", "fast": "fast", "slow": "lambda: [torch.ones(4) for _ in range(50)]",
          "ratio": {"min": 1.1}, "warmup": 2, "repeat": 7, "cases": [{"n": 1}, {"n": 2}]}
PROFILE = {"id": "prof", "kind": "profile", "setup": "x = torch.randn(64, 64)", "workload": "lambda: work(x)",
           "top1_in": ["aten::mm"], "warmup": 1, "repeat": 4, "cases": [{"n": 1}, {"n": 2}]}


def test_a_canarys_time_and_profile_requests_look_like_the_checks_own(grade):
    # two cases, each a real question and a canary: four requests of each op, of one shape
    report = grade(CODE, INSTALL, TIMING, PROFILE, _read_back(("time", "profile"), -4), timeout=60)
    checks = {c.id: c for c in report.checks}
    assert checks["read-back"].status == "passed", [(c.id, c.status, c.message) for c in report.checks]


SHIFT = "import torch\ndef shift(t, k):\n    return t + k\ndef serve(model, x):\n    with torch.inference_mode():\n" \
        "        return model(x)\n"
TENSOR = {"id": "values", "kind": "tensor", "setup": "x = torch.randn(r, 3)", "value": "shift(x, 2)",
          "close_to": "x + 2", "cases": [{"r": 2}, {"r": 5}]}
MEMORY = {"id": "mem", "kind": "memory", "setup": "x = torch.randn(3, 3)", "call": "shift(x, n)", "steps": [2, 4, 8]}
MODE = {"id": "m", "kind": "mode", "setup": "model = nn.Linear(4, 2); x = torch.randn(3, 4)", "module": "model",
        "call": "serve(model, x)", "during": {"inference_mode": True}, "cases": [{"r": 1}, {"r": 2}]}


def test_a_canarys_call_requests_look_like_the_checks_own(grade):
    """The tensor, memory and mode canaries' calls: the same fields and options as the real questions
    (the callee travels inside the arguments, for a learner's function and the judge's alike)."""
    for check in (TENSOR, MEMORY, MODE):
        report = grade(SHIFT, INSTALL, check, _read_back(("call",), 4), timeout=60)  # real questions and canaries
        assert report.checks[1].status == "passed", report.checks[1].message
        assert report.checks[2].status == "passed", (check["id"], report.checks[2].message)
