"""`raises`, `output` and `expr` checks."""

RAISES = {"id": "r", "kind": "raises", "call": "check(torch.ones(4, 8), torch.ones(16, 2))", "type": "ValueError",
          "match": r"\(4, 8\)"}


def test_raises(grade):
    good = "def check(a, b):\n    raise ValueError(f'bad shapes {tuple(a.shape)} {tuple(b.shape)}')\n"
    assert grade(good, RAISES).passed
    check = grade("def check(a, b):\n    return a @ b\n", RAISES).checks[0]
    assert check.status == "failed"
    assert check.message.startswith("expected ValueError, got RuntimeError: mat1 and mat2 shapes")
    check = grade("def check(a, b):\n    pass\n", RAISES).checks[0]
    assert check.message.startswith("expected ValueError to be raised, but the code ran without an error")
    check = grade("def check(a, b):\n    raise ValueError('nope')\n", RAISES).checks[0]
    assert check.message.startswith("raised ValueError as expected, but its message does not match")


def test_raises_accepts_a_subclass(grade):
    spec = {**RAISES, "type": "Exception", "match": None}
    assert grade("def check(a, b):\n    raise KeyError('x')\n", spec).passed


def test_output(grade):
    spec = {"id": "o", "kind": "output", "call": "show(torch.ones(2, 3))", "match": r"shape \(2, 3\)"}
    assert grade("def show(x):\n    print('shape', tuple(x.shape))\n", spec).passed
    check = grade("def show(x):\n    print(x.shape)\n", spec).checks[0]
    assert check.message.startswith("expected output matching /shape \\(2, 3\\)/, got 'torch.Size([2, 3])'")
    assert grade("def show(x):\n    pass\n", spec).checks[0].message.endswith("but nothing was printed")


def test_expr_message_and_truthiness(grade):
    spec = {"id": "e", "kind": "expr", "predicate": "f(3) == 9", "message": {"en": "f must square", "fr": "carré"}}
    assert grade("def f(x):\n    return x * x\n", spec).passed
    check = grade("def f(x):\n    return x + x\n", spec).checks[0]
    assert (check.status, check.message) == ("failed", "f must square")


def test_expr_refuses_lying_truth(grade):
    spec = {"id": "e", "kind": "expr", "predicate": "f()", "message": "must be true"}
    code = "class Yes:\n    def __bool__(self):\n        return True\ndef f():\n    return Yes()\n"
    check = grade(code, spec).checks[0]
    assert check.status == "failed" and "not a truth value" in check.message


def test_expr_message_says_what_it_saw(grade):
    """`{{ expression }}` in a message is the value the check saw (issue 28: "how many? which?")."""
    spec = {"id": "e", "kind": "expr", "setup": "calls = []\nrun(calls.append)",
            "predicate": "len(calls) == 3",
            "message": "fn ran {{len(calls)}} time(s), expected {{1 + 2}}; names: {{names()}}; {{'a' * 100}}"}
    code = "def run(fn):\n    fn(1)\ndef names():\n    return ['aten::mm', 'waiting']\n"
    check = grade(code, spec).checks[0]
    assert check.message == ("fn ran 1 time(s), expected 3; names: 'aten::mm', 'waiting'; " + "a" * 59 + "…")
    # the learner's code raising while the message is filled in leaves a "?", not a crash
    spec["message"] = "fn ran {{len(calls)}} time(s); {{boom()}}"
    check = grade(code + "def boom():\n    raise RuntimeError('no')\n", spec).checks[0]
    assert (check.status, check.message) == ("failed", "fn ran 1 time(s); ?")
