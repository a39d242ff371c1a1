"""`tensor` checks: passing code passes, and each wrong property gets a specific sentence."""

from tests.checks.conftest import by_id

PROJECT = {"id": "proj", "kind": "tensor", "value": "project(x, w)",
           "setup": "x = torch.randn(b, 8); w = torch.randn(8, 2)", "cases": [{"b": 4}, {"b": 1}],
           "shape": ["b", 2], "dtype": "float32", "close_to": "x @ w", "grad_fn": "none"}


def test_right_code_passes_every_case(grade):
    report = grade("def project(x, w):\n    return x @ w\n", PROJECT)
    assert report.passed, report.checks[0].message
    assert report.message == "the one check passed"


def test_wrong_shape_names_shapes_and_inputs(grade):
    report = grade("def project(x, w):\n    return x\n", PROJECT)
    check = report.checks[0]
    assert check.status == "failed"
    assert check.message.startswith("shape: expected (4, 2), got (4, 8)")
    assert "b=4" in check.message and "x of shape (4, 8)" in check.message
    assert (check.expected, check.got) == ("(4, 2)", "(4, 8)")


def test_hard_coded_answer_fails_on_another_case(grade):
    # right for the first case only: the second case (b=1) catches it
    code = "import torch\ndef project(x, w):\n    return (x @ w) if x.shape[0] == 4 else torch.zeros(1, 2)\n"
    check = grade(code, PROJECT).checks[0]
    assert check.status == "failed" and "b=1" in check.message and "wrong value" in check.message


def test_values_report_first_wrong_element(grade):
    check = grade("def project(x, w):\n    return x @ w + 1\n", PROJECT).checks[0]
    assert check.status == "failed"
    assert check.message.startswith("wrong value at [0, 0]: expected ")
    assert "8 of 8 elements differ" in check.message


def test_grad_fn_sentence(grade):
    spec = {"id": "g", "kind": "tensor", "value": "f(x)", "setup": "x = torch.ones(2, requires_grad=True)",
            "grad_fn": "none"}
    check = grade("def f(x):\n    return x + 1\n", spec).checks[0]
    assert check.message.startswith("expected grad_fn None, got AddBackward0")
    assert grade("def f(x):\n    return (x + 1).detach()\n", spec).passed


def test_dtype_device_requires_grad_leaf(grade):
    spec = {"id": "p", "kind": "tensor", "value": "f()", "dtype": "float64", "device": "cpu",
            "requires_grad": True, "is_leaf": True, "contiguous": True, "layout": "strided"}
    assert grade("import torch\ndef f():\n    return torch.zeros(3, dtype=torch.float64, requires_grad=True)\n",
                 spec).passed
    check = grade("import torch\ndef f():\n    return torch.zeros(3)\n", spec).checks[0]
    assert check.message.startswith("expected dtype float64, got float32")
    check = grade("import torch\ndef f():\n    return torch.zeros(3, dtype=torch.float64)\n", spec).checks[0]
    assert check.message.startswith("expected requires_grad True, got False")


def test_contiguous_and_storage(grade):
    view = {"id": "v", "kind": "tensor", "value": "f(x)", "setup": "x = torch.randn(3, 4)",
            "shares_storage_with": "x"}
    copy = {"id": "c", "kind": "tensor", "value": "f(x)", "setup": "x = torch.randn(3, 4)", "independent_of": "x",
            "contiguous": True}
    report = grade("def f(x):\n    return x.t()\n", view, copy)
    checks = by_id(report)
    assert checks["v"].status == "passed"
    assert checks["c"].message.startswith("expected a contiguous tensor")
    checks = by_id(grade("def f(x):\n    return x.clone()\n", view, copy))
    assert checks["v"].message.startswith("expected a view sharing memory with `x`, got a copy")
    assert checks["c"].status == "passed"


def test_number_accepts_item_and_rejects_tensor(grade):
    spec = {"id": "n", "kind": "tensor", "value": "f(x)", "setup": "x = torch.arange(4.)", "number": True,
            "close_to": "x.sum()"}
    assert grade("def f(x):\n    return x.sum().item()\n", spec).passed
    check = grade("def f(x):\n    return x.sum()\n", spec).checks[0]
    assert check.status == "failed"
    assert check.message.startswith("expected a plain Python number (e.g. from .item()), got tensor of shape ()")
    # where a number is asked for, a 0-dim tensor also compares with a number
    plain = {"id": "z", "kind": "tensor", "value": "f(x)", "setup": "x = torch.arange(4.)", "close_to": "6.0"}
    assert grade("def f(x):\n    return x.sum()\n", plain).passed


def test_each_checks_every_item(grade):
    spec = {"id": "e", "kind": "tensor", "value": "f()", "each": True, "requires_grad": False}
    assert grade("import torch\ndef f():\n    return [torch.zeros(1), torch.ones(1)]\n", spec).passed
    check = grade("import torch\ndef f():\n    return [torch.zeros(1), torch.ones(1, requires_grad=True)]\n",
                  spec).checks[0]
    assert check.message.startswith("item 1: expected requires_grad False, got True")


def test_inference_tensor(grade):
    spec = {"id": "i", "kind": "tensor", "value": "f()", "is_inference": True}
    assert grade("import torch\ndef f():\n    with torch.inference_mode():\n        return torch.ones(2)\n",
                 spec).passed
    check = grade("import torch\ndef f():\n    with torch.no_grad():\n        return torch.ones(2)\n", spec).checks[0]
    assert check.message.startswith("expected an inference tensor")


def test_a_warning_raised_by_a_check_is_not_the_learners_output(grade):
    """float() of a tensor that requires grad warns; the check did that, not the learner."""
    code = ("import torch, warnings\nwarnings.warn('the learner warned')\n"
            "def loss():\n    return (torch.ones(2, requires_grad=True) * 2).sum()\n")
    check = {"id": "num", "kind": "tensor", "value": "float(loss())", "number": True}
    report = grade(code, check)
    assert report.passed, report.checks[0].message
    assert "the learner warned" in report.run.stderr
    assert "requires_grad" not in report.run.stderr


def test_dtype_long_means_int64_at_run_time(grade):
    check = {"id": "d", "kind": "tensor", "value": "f()", "dtype": "long"}
    assert grade("import torch\ndef f():\n    return torch.arange(3)\n", check).passed
    failed = by_id(grade("import torch\ndef f():\n    return torch.arange(3.0)\n", check))["d"]
    assert failed.status == "failed" and failed.expected == "int64"


def test_a_failing_check_that_drew_nothing_names_no_seed(grade):
    literal = {"id": "lit", "kind": "tensor", "value": "f(torch.arange(3.))", "close_to": "torch.arange(3.) * 2"}
    drawn = {"id": "rnd", "kind": "tensor", "setup": "x = torch.randn(3)", "value": "f(x)", "close_to": "x * 2"}
    checks = by_id(grade("def f(x):\n    return x\n", literal, drawn))
    assert checks["lit"].status == "failed" and checks["lit"].seed is None
    assert checks["rnd"].status == "failed" and isinstance(checks["rnd"].seed, int)


def test_broadcast_compares_after_broadcasting_only_when_asked(grade):
    exact = {"id": "exact", "kind": "tensor", "value": "f()", "close_to": "torch.ones(3)"}
    loose = dict(exact, id="loose", broadcast=True)
    checks = by_id(grade("import torch\ndef f():\n    return torch.ones(1, 3)\n", exact, loose))
    assert checks["exact"].status == "failed" and "shape" in checks["exact"].message
    assert checks["loose"].status == "passed"
    wrong = by_id(grade("import torch\ndef f():\n    return torch.ones(2)\n", loose))["loose"]
    assert wrong.status == "failed" and "or a shape that broadcasts with it" in wrong.message
