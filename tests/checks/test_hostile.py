"""Learner code that tries to fool the checks: monkeypatching torch, lying objects."""

import pytest

#: The trust boundary: in fork and in spawn mode (tests/checks/conftest.py, sandbox_modes).
pytestmark = pytest.mark.both_modes

CLOSE = {"id": "close", "kind": "tensor", "value": "f(x)", "setup": "x = torch.ones(2, 2)", "close_to": "x * 2"}
GRAD = {"id": "grad", "kind": "tensor", "value": "f(x)", "setup": "x = torch.ones(2, requires_grad=True)",
        "requires_grad": False, "grad_fn": "none"}


def test_patched_allclose_and_isclose_do_not_pass_wrong_values(grade):
    code = ("import torch\ntorch.allclose = lambda *a, **k: True\ntorch.isclose = lambda a, b, **k: a == a\n"
            "torch.equal = lambda *a: True\ndef f(x):\n    return x * 3\n")
    report = grade(code, CLOSE)
    assert report.checks[0].status == "failed"
    assert report.checks[0].message.startswith("wrong value at [0, 0]: expected 2.0, got 3.0")
    assert {"torch.allclose", "torch.isclose", "torch.equal"} <= set(report.tampered)


def test_reference_expressions_use_the_real_torch(grade):
    # patching torch.mul would also change the reference `x * 2`... unless the guard restores it
    code = "import torch\ntorch.Tensor.__mul__ = lambda a, b: a + 100\ndef f(x):\n    return x + 100\n"
    assert grade(code, CLOSE).checks[0].status == "failed"


def test_redefined_requires_grad_and_grad_fn(grade):
    code = ("import torch\ntorch.Tensor.requires_grad = property(lambda self: False)\n"
            "torch.Tensor.grad_fn = property(lambda self: None)\ndef f(x):\n    return x * 2\n")
    check = grade(code, GRAD).checks[0]
    assert check.status == "failed"
    assert check.message.startswith("expected requires_grad False, got True")


def test_patching_inside_the_function_is_undone_too(grade):
    code = ("import torch, builtins\ndef f(x):\n    builtins.isinstance = lambda *a: True\n"
            "    builtins.len = lambda o: 0\n    torch.isclose = lambda a, b, **k: a == a\n    return x * 3\n")
    report = grade(code, CLOSE)
    assert report.checks[0].status == "failed"
    assert "builtins.isinstance" in report.tampered


def test_lying_eq_object_is_not_a_value(grade):
    code = ("class Liar:\n    def __eq__(self, other):\n        return True\n    __hash__ = None\n"
            "    def __float__(self):\n        return 2.0\ndef f(x):\n    return Liar()\n")
    check = grade(code, CLOSE).checks[0]
    assert check.status == "failed"
    assert check.message.startswith("expected a tensor or a number, got a Liar")


def test_float_subclass_cannot_fake_its_value(grade):
    spec = {"id": "n", "kind": "tensor", "value": "f()", "number": True, "close_to": "2.0"}
    code = ("class Two(float):\n    def __float__(self):\n        return 2.0\n    def __eq__(self, o):\n"
            "        return True\ndef f():\n    return Two(5.0)\n")
    check = grade(code, spec).checks[0]
    assert check.status == "failed" and "expected 2.0, got 5.0" in check.message


def test_tensor_subclass_with_torch_function_is_refused(grade):
    code = ("import torch\nclass Sly(torch.Tensor):\n    @classmethod\n"
            "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
            "        return False\ndef f(x):\n    return (x * 2).as_subclass(Sly)\n")
    check = grade(code, GRAD).checks[0]
    assert check.status == "failed"
    assert check.message.startswith("expected a torch.Tensor, got a Sly (a Tensor subclass)")


def test_forged_report_on_stdout_changes_nothing(grade):
    code = ('print(\'{"checks": [{"id": "close", "status": "passed"}]}\')\n'
            "def f(x):\n    return x * 3\n")
    assert grade(code, CLOSE).checks[0].status == "failed"
