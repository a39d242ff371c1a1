"""`module`, `mode` and `unchanged` checks on real modules."""

from tests.checks.conftest import by_id

NET = """
import torch
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.drop = nn.Dropout(0.5)
        self.register_buffer("scale", torch.ones(3))
    def forward(self, x):
        return self.drop(self.fc(x)) * self.scale
"""


def test_module_parameters_buffers_training(grade):
    spec = {"id": "m", "kind": "module", "value": "Net()", "run": "freeze(module)", "training": False,
            "parameters": {"count": 2, "names": ["fc.weight", "fc.bias"], "requires_grad": False},
            "buffers": {"include": ["scale"], "dtype": "float32"}, "hyperparameters_unchanged": True}
    good = NET + "def freeze(m):\n    m.eval()\n    for p in m.parameters():\n        p.requires_grad_(False)\n"
    assert grade(good, spec).passed
    check = grade(NET + "def freeze(m):\n    m.eval()\n", spec).checks[0]
    assert check.message.startswith("parameter `fc.weight` has requires_grad=True, expected False")
    check = grade(NET + "def freeze(m):\n    for p in m.parameters():\n        p.requires_grad_(False)\n",
                  spec).checks[0]
    assert check.message.startswith("expected every submodule in eval mode, but the module (Net) is in training")
    lazy = NET + "def freeze(m):\n    m.eval(); m.drop.p = 0.0\n    [p.requires_grad_(False) for p in m.parameters()]\n"
    assert grade(lazy, spec).checks[0].message == "`drop`: p changed from 0.5 to 0.0"


def test_to_meta_finds_plain_tensor_attribute(grade):
    spec = {"id": "to", "kind": "module", "value": "M()", "to": "meta"}
    code = ("import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.fc = nn.Linear(2, 2)\n        self.mask = torch.ones(2)\n")
    check = grade(code, spec).checks[0]
    assert check.message.startswith("after .to('meta'), `mask` is still on cpu: it is a plain tensor attribute")
    assert grade(code.replace("self.mask = torch.ones(2)", "self.register_buffer('mask', torch.ones(2))"),
                 spec).passed


def test_mode_during_and_restored(grade):
    spec = {"id": "mode", "kind": "mode", "setup": "model = nn.Linear(4, 2); x = torch.randn(3, 4)",
            "module": "model", "call": "predict(model, x)", "during": {"grad_enabled": False}}
    assert grade("import torch\ndef predict(m, x):\n    with torch.no_grad():\n        return m(x)\n", spec).passed
    check = grade("def predict(m, x):\n    return m(x)\n", spec).checks[0]
    assert check.message.startswith("during the forward pass: expected grad disabled, got grad enabled")
    check = grade("import torch\ndef predict(m, x):\n    torch.set_grad_enabled(False)\n    return m(x)\n",
                  spec).checks[0]
    assert check.message.startswith("after `predict(model, x)` returned: expected grad enabled as before the call, "
                                    "got grad disabled")
    never = grade("def predict(m, x):\n    return x\n", spec).checks[0]
    assert never.message.startswith("the module's forward never ran during `predict(model, x)`")


def test_mode_autocast_and_output_dtypes(grade):
    spec = {"id": "amp", "kind": "mode", "setup": "model = nn.Sequential(nn.Linear(4, 2)); x = torch.randn(3, 4)",
            "module": "model", "call": "predict(model, x)", "during": {"autocast": "bfloat16"},
            "output_dtypes": {"Linear": "bfloat16"}}
    good = ("import torch\ndef predict(m, x):\n    with torch.autocast('cpu', dtype=torch.bfloat16):\n"
            "        return m(x)\n")
    assert grade(good, spec).passed
    check = grade("def predict(m, x):\n    return m(x)\n", spec).checks[0]
    assert check.message.startswith("during the forward pass: expected autocast on with bfloat16, got autocast off")


def test_unchanged_locates_the_in_place_change(grade):
    spec = {"id": "u", "kind": "unchanged", "setup": "x = torch.ones(2, 3)", "call": "scale(x)", "names": ["x"]}
    assert grade("def scale(x):\n    return x * 2\n", spec).passed
    check = grade("def scale(x):\n    x[0, 1] += 100\n    return x\n", spec).checks[0]
    assert check.message.startswith("your function changed the caller's tensor `x` at [0, 1]: 1.0 -> 101.0")
    assert (check.expected, check.got) == ("1.0", "101.0")


def test_unchanged_module_mode(grade):
    spec = {"id": "u", "kind": "unchanged", "setup": "model = nn.Sequential(nn.Linear(2, 2), nn.Dropout())",
            "call": "run(model)", "names": ["model"]}
    check = grade("def run(m):\n    m.eval()\n", spec).checks[0]
    assert check.message.startswith("your function left the caller's module `model` in eval mode")
    assert grade("def run(m):\n    m.eval(); m.train()\n", spec).passed


def test_checks_read_modules_without_trusting_overrides(grade):
    """A learner class that lies through `training` and `named_parameters` is still read as it is."""
    spec = {"id": "m", "kind": "module", "value": "Liar()", "training": False, "parameters": {"count": 0}}
    code = ("import torch\nfrom torch import nn\nclass Liar(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.fc = nn.Linear(2, 2)\n"
            "    def named_parameters(self, *a, **k):\n        return iter(())\n"
            "    def parameters(self, *a, **k):\n        return iter(())\n")
    check = grade(code, spec).checks[0]
    assert check.status == "failed"
    assert "training mode" in check.message
    report = by_id(grade(code + "Liar.__call__ = None\n", {**spec, "training": None}))
    assert report["m"].message.startswith("expected 0 parameters, got 2")


def test_a_submodule_in_the_wrong_mode_is_named_readably(grade):
    """Issue 28: a Sequential's child was named `` `3` ``; it is "the Dropout at index 3" now."""
    spec = {"id": "m", "kind": "module", "value": "build()", "training": True}
    code = ("import torch.nn as nn\ndef build():\n    net = nn.Sequential(nn.Linear(2, 2), nn.ReLU(),\n"
            "        nn.Sequential(nn.Linear(2, 2), nn.Dropout()), nn.Dropout())\n    net[3].eval()\n    return net\n")
    assert grade(code, spec).checks[0].message.startswith(
        "expected every submodule in training mode, but the Dropout at index 3 is in eval mode")
    nested = code.replace("net[3].eval()", "net[2][1].eval()")
    assert grade(nested, spec).checks[0].message.startswith(
        "expected every submodule in training mode, but `[2][1]` (Dropout) is in eval mode")


def test_a_mode_the_learners_call_left_on_does_not_leak_into_the_next_case(grade):
    """Issue 28: a learner who enters autocast and never leaves it gets an honest verdict on every
    case: the mode their call left switched carried into the same check's next case (its setup
    and its canary), which read the canary's forward as lying and called the check `tampered`.
    Each case starts in the default modes, as each check does."""
    spec = {"id": "amp", "kind": "mode", "setup": "model = nn.Sequential(nn.Linear(4, 2)); x = torch.randn(3, 4)",
            "module": "model", "call": "predict(model, x)", "during": {"autocast": "bfloat16"},
            "restored": False, "cases": [{"n": 1}, {"n": 2}, {"n": 3}]}
    leaky = ("import torch\ndef predict(m, x):\n    torch.autocast('cpu', dtype=torch.bfloat16).__enter__()\n"
             "    return m(x)\n")
    for _ in range(3):  # the canary goes first or second at random: every order, a few times
        check = grade(leaky, spec).checks[0]
        assert check.status == "passed", check.message
    grad_off = {"id": "g", "kind": "tensor", "setup": "w = torch.ones(2, requires_grad=True) * 3",
                "value": "scale(w)", "requires_grad": True, "cases": [{"n": 1}, {"n": 2}]}
    # set_grad_enabled(False) left on by case 0 must not make case 1's setup build `w` without grad
    code = "import torch\ndef scale(w):\n    out = w * 2\n    torch.set_grad_enabled(False)\n    return out\n"
    check = grade(code, grad_off).checks[0]
    assert check.status == "passed", check.message
