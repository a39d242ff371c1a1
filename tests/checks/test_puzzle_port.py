"""A port of one-line tensor puzzles (issue 34), graded through the real sandbox: the pack in
examples/tensor-puzzles states every rule of such a set without a generator script (form checks,
a prelude, a profile's `only`), and a rule-breaking answer is `failed` with a message naming the rule."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.checks.conftest import make_exercise
from tutor.pack.loader import load_pack
from tutor.grading.exercise import check_exercise

PACK = Path(__file__).resolve().parents[2] / "examples" / "tensor-puzzles"


@pytest.fixture(scope="module")
def puzzles():
    pack = load_pack(PACK)
    return {exercise.id: exercise for _, exercise in pack.exercises()}


def grade(sandbox, exercise, code: str):
    report = check_exercise(sandbox, exercise, textwrap.dedent(code))
    return report, {c.id: c for c in report.checks}


def test_the_reference_solutions_pass_with_the_prelude(sandbox, puzzles):
    for name, exercise in puzzles.items():
        uses = [(used, puzzles[used].solution) for used in exercise.uses]  # (validate does the same)
        for code in [exercise.solution, *exercise.solutions]:
            report = check_exercise(sandbox, exercise, textwrap.dedent(code), uses=uses)
            assert report.passed, (name, [(c.id, c.status, c.message) for c in report.checks])


def test_a_three_line_answer_is_failed_by_the_rule_it_breaks(sandbox, puzzles):
    report, checks = grade(sandbox, puzzles["checkerboard"], """\
        def checkerboard(n):
            rows = arange(n)[:, None]
            cols = arange(n)[None, :]
            return (rows + cols) % 2
        """)
    assert checks["values"].passed and checks["operators"].passed  # right, and only allowed operators
    rules = checks["rules"]
    assert rules.status == "failed" and not report.passed
    assert rules.message.startswith('line 3: 3 lines breaks the rule "at most 1 line(s) of code"'), rules.message
    assert rules.lineno == 3


def test_a_short_loop_and_a_denied_method_are_named(sandbox, puzzles):
    _, checks = grade(sandbox, puzzles["checkerboard"], """\
        def checkerboard(n):
            return (arange(n).unsqueeze(1) + arange(n)) % 2
        """)
    assert checks["values"].passed and checks["operators"].passed  # unsqueeze is what a[:, None] runs too
    assert checks["rules"].status == "failed"
    assert '`.unsqueeze` breaks the rule "no `.unsqueeze`"' in checks["rules"].message

    _, checks = grade(sandbox, puzzles["interleave"], """\
        def interleave(a, b):
            out = a.new_empty(2 * len(a)); out[0::2], out[1::2] = a, b; return out
        """)
    assert checks["rules"].status == "failed"
    assert '"at most 1 line(s) of code"' not in checks["rules"].message  # one line, but three statements
    assert '3 statements breaks the rule "at most 1 statement(s)"' in checks["rules"].message
    _, checks = grade(sandbox, puzzles["checkerboard"], """\
        def checkerboard(n):
            return where(sum(arange(n)[:, None] for _ in range(1)) + arange(n) > -1, 1, 0) * 0
        """)
    assert '"no comprehensions"' in checks["rules"].message


def test_an_operator_outside_the_allow_list_is_named_by_the_profile(sandbox, puzzles):
    report, checks = grade(sandbox, puzzles["checkerboard"], """\
        def checkerboard(n):
            return (arange(n)[:, None] + arange(n)).fmod(2)
        """)
    assert checks["rules"].passed and checks["values"].passed  # the form allows .fmod; the set does not
    operators = checks["operators"]
    assert operators.status == "failed" and not report.passed
    assert "your code calls aten::fmod directly (1 call(s) per call of the workload)" in operators.message
    assert 'the rule "only" allows only aten::arange' in operators.message


def test_the_checks_use_the_prelude_not_the_learners_redefinition(sandbox, puzzles):
    """The learner's code can rebind a prelude name (here the reference the checks compare with):
    the checks run the pack's prelude themselves and never see it."""
    report, checks = grade(sandbox, puzzles["checkerboard"], """\
        def spec_checkerboard(n):
            return arange(n)[:, None] * arange(n) * 0
        def checkerboard(n):
            return arange(n)[:, None] * arange(n) * 0
        """)
    assert checks["values"].status == "failed", checks["values"].message
    assert not report.passed


def test_after_a_form_check_waits_for_its_verdict(sandbox):
    exercise = make_exercise(
        {"id": "short", "kind": "form", "max_lines": 1},
        {"id": "value", "kind": "tensor", "value": "f()", "close_to": "torch.ones(2)", "after": ["short"]},
    )
    report = check_exercise(sandbox, exercise, "import torch\ndef f():\n    return torch.ones(2)\n")
    by_id = {c.id: c for c in report.checks}
    assert by_id["short"].status == "failed" and by_id["value"].status == "skipped"
    assert "needs" in by_id["value"].message
    report = check_exercise(sandbox, exercise, "import torch; f = lambda: torch.ones(2)\n")
    assert report.passed, [(c.id, c.status, c.message) for c in report.checks]


def test_a_form_verdict_stands_when_the_code_does_not_import(sandbox):
    exercise = make_exercise({"id": "loops", "kind": "form", "loops": False},
                             {"id": "value", "kind": "tensor", "value": "f()", "close_to": "torch.ones(2)"})
    report = check_exercise(sandbox, exercise, "import no_such_module\nfor i in range(2):\n    pass\n")
    by_id = {c.id: c for c in report.checks}
    assert report.cause and by_id["value"].status == "skipped"
    assert by_id["loops"].status == "failed" and "line 2: a `for` loop" in by_id["loops"].message
