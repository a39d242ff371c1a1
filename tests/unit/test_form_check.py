"""The `form` check kind (issue 34.1): rules about how code is written, read from its syntax tree.

These run the judging itself (tutor.pack.form) and the pack format; tests/checks/test_form_graded.py
grades through the real sandbox."""

from __future__ import annotations

import textwrap

import pytest

from tutor.pack import form
from tutor.pack.check_models import FormCheck
from tutor.pack.spec import as_data
from tutor.pack.validation import validate


def judge(code: str, **rules) -> form.Verdict:
    check = as_data(validate(FormCheck, {"id": "form", "kind": "form", "description": "d", **rules}))
    return form.judge(check, textwrap.dedent(code))


ONE_LINE = """\
def cumsum(a):
    return (a[None, :] * (arange(len(a))[:, None] >= arange(len(a))[None, :])).sum(1)
"""


def test_a_one_line_answer_passes_every_rule():
    verdict = judge(ONE_LINE, function="cumsum", max_lines=1, max_line_length=90, loops=False,
                    comprehensions=False, names_deny=["torch"], attributes_deny=["view", "squeeze*"])
    assert verdict.status == "passed", verdict.message


def test_three_lines_break_max_lines_and_the_message_names_rule_and_line():
    verdict = judge("""\
        def cumsum(a):
            n = len(a)
            m = arange(n)[:, None] >= arange(n)
            return (a * m).sum(1)
        """, function="cumsum", max_lines=1)
    assert verdict.status == "failed"
    assert 'breaks the rule "at most 1 line(s) of code"' in verdict.message
    assert verdict.message.startswith("line 3: 3 lines") and verdict.lineno == 3


def test_blank_lines_comments_and_a_docstring_do_not_count_as_lines():
    verdict = judge('''\
        def cumsum(a):
            """The running sum."""

            # one line, as the puzzle asks
            return a
        ''', function="cumsum", max_lines=1)
    assert verdict.status == "passed", verdict.message


def test_a_two_iteration_loop_is_a_loop_however_short():
    verdict = judge("""\
        def f(a):
            for i in range(2):
                a = a + i
            return a
        """, loops=False)
    assert verdict.status == "failed"
    assert 'line 2: a `for` loop breaks the rule "no for/while loops" (`for i in range(2):`)' in verdict.message
    while_loop = judge("def f(a):\n    while False:\n        pass\n    return a\n", loops=False)
    assert "a `while` loop" in while_loop.message


def test_a_loop_word_in_a_string_or_comment_is_not_a_loop():
    verdict = judge('def f(a):\n    # for each row\n    return "for x in a while y"\n', loops=False,
                    comprehensions=False)
    assert verdict.status == "passed", verdict.message


@pytest.mark.parametrize("code, kind", [
    ("def f(a):\n    return sum([x for x in a])\n", "list"),
    ("def f(a):\n    return sum(x for x in a)\n", "generator"),
    ("def f(a):\n    return {x: 1 for x in a}\n", "dict"),
    ("def f(a):\n    return {x for x in a}\n", "set"),
])
def test_every_comprehension_kind_is_caught(code, kind):
    verdict = judge(code, comprehensions=False)
    assert verdict.status == "failed" and f"a {kind} comprehension" in verdict.message
    assert '"no comprehensions"' in verdict.message


def test_torch_allow_list_names_what_broke_it_through_aliases_and_imports():
    verdict = judge("""\
        import torch as t
        from torch import cumsum as c
        def f(a):
            return t.where(a > 0, a, 0) + c(a, 0) + t.arange(3)
        """, torch_allow=["arange", "where"])
    assert verdict.status == "failed"
    assert "line 2: `torch.cumsum`" in verdict.message  # the import itself
    assert "line 4: `torch.cumsum`" in verdict.message and "`torch.where`" not in verdict.message
    assert "`torch.arange`" not in verdict.message
    assert 'rule "only torch.arange, torch.where from torch"' in verdict.message


def test_torch_allow_and_deny_take_dotted_names_and_patterns():
    code = "import torch\ndef f(a):\n    return torch.nn.functional.relu(a) + torch.linalg.norm(a)\n"
    assert "torch.linalg.norm" in judge(code, torch_allow=["nn.functional.*"]).message
    assert "`torch.nn.functional.relu` breaks" not in judge(code, torch_allow=["nn.functional.*"]).message
    assert "`torch.nn.functional.relu` breaks" in judge(code, torch_allow=["linalg.norm"]).message
    denied = judge(code, torch_deny=["linalg.*"])
    assert denied.status == "failed" and 'rule "no torch.linalg.norm"' in denied.message
    assert judge(code, torch_allow=[]).expected == "nothing from torch"


def test_denied_names_and_methods():
    verdict = judge("def f(a):\n    return a.view(-1).unsqueeze(0) + torch.ones(1) + sum(a)\n",
                    attributes_deny=["view", "unsqueeze*"], names_deny=["torch", "sum"])
    assert verdict.status == "failed"
    for what in ("`.view`", "`.unsqueeze`", "`torch`"):  # in the order written
        assert f"{what} breaks the rule \"no {what}\"" in verdict.message, (what, verdict.message)
    assert verdict.message.index("`.view`") < verdict.message.index("`.unsqueeze`") < verdict.message.index("`torch`")
    assert verdict.message.endswith("; and 1 more")  # four breaches, three shown (`sum` is the fourth)


def test_max_line_length_and_statements():
    long = "def f(a):\n    return a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a\n"
    verdict = judge(long, max_line_length=80)
    assert verdict.status == "failed" and "line 2: 88 characters" in verdict.message
    assert judge("def f(a):\n    b = a; c = b; return c\n", function="f", max_statements=1).got == "3 statements"


def test_an_undefined_function_and_unparsable_code():
    missing = judge("def g(a):\n    return a\n", function="f", loops=False)
    assert missing.status == "failed" and "does not define a function `f`" in missing.message
    assert judge("def f(:\n", loops=False).status == "skipped"


@pytest.mark.parametrize("data, message", [
    ({}, "a form check needs a rule"),
    ({"loops": False, "cases": [{"n": 1}, {"n": 2}]}, "takes no cases, setup or seed"),
    ({"loops": False, "setup": "x = 1"}, "takes no cases, setup or seed"),
    ({"max_lines": 0}, "greater than or equal to 1"),
    ({"loops": False, "function": "not a name"}, "pattern"),
])
def test_bad_form_checks_are_refused_at_load(data, message):
    from tutor.pack.validation import ValidationError

    with pytest.raises(ValidationError) as caught:
        validate(FormCheck, {"id": "form", "kind": "form", "description": "d", **data})
    assert message in str(caught.value)


@pytest.mark.parametrize("code", ["x = " + "-" * 200_000 + "1\n", "x = 1\x00\n", "(" * 300 + ")" * 300 + "\n"],
                         ids=["deep", "nul", "parens"])
def test_hostile_source_gets_a_verdict_never_a_crash(code):
    verdict = form.judge({"loops": False}, code)
    assert verdict.status in ("failed", "skipped")


def test_a_long_file_is_judged_and_one_past_the_cap_fails_without_being_parsed():
    code = "def f(a):\n" + "    a = a + 1\n" * 2_000 + "    return a\n"
    verdict = judge(code, function="f", max_lines=1, loops=False, names_deny=["torch"], attributes_deny=["view"])
    assert verdict.status == "failed" and verdict.got == "2001 lines"
    huge = "x = 1\n" * (form.MAX_SOURCE // 6 + 1)
    capped = form.judge({"loops": False}, huge)
    assert capped.status == "failed" and "rules about its form are judged on at most 256 KiB" in capped.message
