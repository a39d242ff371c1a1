"""Fresh inputs per run: a submission cannot carry answers for the inputs a check will draw.

A check without ``seed`` draws its inputs from a seed the judge picks afresh for every case of
every run; the runner learns the inputs only when the judge calls the learner's function with
them. A check with ``seed`` keeps the author's fixed inputs (and says so in docs/authoring.md).
"""

from __future__ import annotations

import pytest

from tests.checks.conftest import by_id

#: The trust boundary: in fork and in spawn mode (tests/checks/conftest.py, sandbox_modes).
pytestmark = pytest.mark.both_modes

SORTED = {"id": "sorted", "kind": "tensor", "setup": "x = torch.randn(r, 5)", "cases": [{"r": 3}, {"r": 4}],
          "value": "f(x)", "close_to": "x.sort(dim=1, descending=True).values"}

#: Does not sort: it replays the check's published setup under the seed it expects (0, the old
#: default), keeps the right answers for those inputs, and returns its input unchanged otherwise.
LOOKUP = """
import torch
_ANSWERS = {}
for r in (3, 4):
    torch.manual_seed(0)
    _x = torch.randn(r, 5)
    _ANSWERS[_x.numpy().tobytes()] = _x.sort(dim=1, descending=True).values
def f(x):
    key = x.detach().numpy().tobytes()
    return _ANSWERS[key].clone() if key in _ANSWERS else x.clone()
"""

HONEST = "def f(x):\n    return x.sort(dim=1, descending=True).values\n"


def test_a_table_of_answers_for_predicted_inputs_does_not_pass(grade):
    for _ in range(3):
        check = grade(LOOKUP, SORTED).checks[0]
        assert check.status == "failed", check.message
        # the message still names the inputs the failing case used
        assert check.message.endswith("(for r=3, x of shape (3, 5))"), check.message


def test_the_honest_solution_passes_every_time(grade):
    for _ in range(3):
        assert grade(HONEST, SORTED).passed


def test_an_authors_fixed_seed_keeps_fixed_inputs(grade):
    """The author's choice, documented: fixed inputs are inputs a submission can know."""
    assert grade(LOOKUP, dict(SORTED, seed=0)).passed


def test_each_case_of_each_run_draws_new_inputs(grade):
    code = "def f(x):\n    return x\n"
    check = {"id": "differ", "kind": "tensor", "setup": "x = torch.randn(2)", "cases": [{}, {}],
             "value": "f(x)", "close_to": "x + 1"}
    gots = set()
    for _ in range(3):
        result = grade(code, check).checks[0]
        assert result.status == "failed"
        gots.add(result.got)
    assert len(gots) == 3, gots


def test_the_learners_generators_get_the_cases_seed(grade):
    """Judge and runner are seeded alike: code that draws randomness meets the check's own draw."""
    code = "import torch\ndef draw():\n    return torch.randn(3)\n"
    check = {"id": "same", "kind": "tensor", "setup": "expected = torch.randn(3)", "cases": [{}, {}],
             "value": "draw()", "close_to": "expected"}
    for _ in range(2):
        assert grade(code, check).passed


def test_a_failing_case_reports_its_seed_and_that_seed_reproduces_it(grade):
    code = "def f(x):\n    return x\n"
    check = {"id": "seeded", "kind": "tensor", "setup": "x = torch.randn(4)", "value": "f(x)", "close_to": "x + 1"}
    first = grade(code, check).checks[0]
    assert first.status == "failed" and type(first.seed) is int
    again = grade(code, dict(check, seed=first.seed)).checks[0]
    assert (again.got, again.seed) == (first.got, first.seed)


def test_a_fixed_seed_gives_the_same_inputs_every_run(grade):
    code = "def f(x):\n    return x\n"
    check = {"id": "a", "kind": "tensor", "setup": "x = torch.randn(4)", "value": "f(x)", "close_to": "x + 1",
             "seed": 5}
    runs = [by_id(grade(code, check))["a"].got for _ in range(2)]
    assert runs[0] == runs[1]
