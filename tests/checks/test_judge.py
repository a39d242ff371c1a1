"""The judge/runner split, as a pack author sees it: the check's code runs in the judge, the
learner's in the runner, and values, callbacks and crashes cross between them faithfully."""

from __future__ import annotations

import pytest

from tests.checks.conftest import by_id

#: The trust boundary: in fork and in spawn mode (tests/checks/conftest.py, sandbox_modes).
pytestmark = pytest.mark.both_modes


def test_a_bound_method_of_the_check_is_called_back(grade):
    code = "def run_twice(fn):\n    fn(1)\n    fn('two')\n"
    check = {"id": "cb", "kind": "expr", "setup": "calls = []\nrun_twice(calls.append)",
             "predicate": "calls == [1, 'two']", "message": "calls were lost"}
    assert grade(code, check).passed


def test_lists_a_check_function_fills_come_back(grade):
    code = "def run_thrice(fn):\n    for i in range(3):\n        fn(i)\n"
    check = {"id": "fill", "kind": "expr", "setup": "seen = []\ndef record(i):\n    seen.append(i * 10)\nrun_thrice(record)",
             "predicate": "seen == [0, 10, 20]", "message": "lost"}
    assert grade(code, check).passed


def test_the_learners_values_and_modules_are_readable(grade):
    code = ("import torch\nfrom torch import nn\nW = torch.arange(4.)\n"
            "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.lin = nn.Linear(2, 3)\n    def forward(self, x):\n        return self.lin(x)\n")
    value = {"id": "w", "kind": "tensor", "value": "W", "close_to": "torch.arange(4.)"}
    module = {"id": "m", "kind": "expr", "setup": "net = Net()",
              "predicate": "isinstance(net.lin, nn.Linear) and net.lin.weight.shape == (3, 2) "
                           "and net(torch.ones(1, 2)).shape == (1, 3)", "message": "mirror"}
    report = grade(code, value, module)
    assert report.passed, [c.message for c in report.checks]


def test_a_runner_that_dies_mid_check_fails_every_check_left(grade):
    code = "import os\ndef f(x):\n    os._exit(0)\n"
    first = {"id": "a", "kind": "tensor", "setup": "x = torch.ones(2)", "value": "f(x)", "close_to": "x"}
    second = {"id": "b", "kind": "expr", "predicate": "f(1) == 1", "message": "m"}
    checks = by_id(grade(code, first, second))
    assert checks["a"].status == "error"
    assert checks["a"].message.startswith("your code's process ended or stopped answering while this check ran")
    assert checks["b"].status == "error"
