"""Running a course, round 3 (issue 51): the rules an author writes mean what they say. YAML merge
keys are plain data, a form rule judges the helpers its function reaches, `scoring:
all-or-nothing` is part of the format, and `grade` leaves a learner's tools' clutter alone."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tutor.pack import form
from tutor.pack.check_models import FormCheck
from tutor.pack.loader import PackError, load_pack
from tutor.pack.spec import as_data
from tutor.pack.validation import validate

LESSON_WITH_MERGES = """\
id: basics
title: Basics
steps:
  - id: add
    kind: exercise
    body: Add one.
    contract:
      - {name: add, signature: add(t), description: t plus one}
    starter: "def add(t):\\n    return t\\n"
    solution: "def add(t):\\n    return t + 1\\n"
    checks:
      - &values
        id: small
        kind: tensor
        description: t plus one, small
        setup: "t = torch.arange(3.0)"
        value: add(t)
        close_to: t + 1
      - <<: *values
        id: large
        description: t plus one, large
        setup: "t = torch.arange(300.0)"
      - <<: [*values, {atol: 0.5, id: never-used}]
        id: loose
        description: t plus one, loosely
    hints: [one, two]
"""


def test_merge_keys_are_plain_data_whose_own_keys_win(make_pack):
    pack = load_pack(make_pack(files={"lesson.yaml": LESSON_WITH_MERGES}))
    checks = pack.exercises()[0][1].checks
    assert [c.id for c in checks] == ["small", "large", "loose"]
    assert checks[1].setup == "t = torch.arange(300.0)" and checks[1].value == "add(t)"
    assert checks[1].close_to == "t + 1" and checks[1].description == "t plus one, large"
    # a list of mappings: the first that has a key gives it; the mapping's own keys beat all of them
    assert checks[2].atol == 0.5 and checks[2].setup == "t = torch.arange(3.0)" and checks[2].id == "loose"
    # a merged key's problem is located where its value is written (under the anchor)
    broken = LESSON_WITH_MERGES.replace("        value: add(t)\n", "        value: 3\n")
    with pytest.raises(PackError) as caught:
        load_pack(make_pack(files={"lesson.yaml": broken}))
    problems = caught.value.problems
    assert [p.line for p in problems] == [17, 17, 17], problems  # each of the three checks, at line 17


@pytest.mark.parametrize("merge", ["<<: !!python/object/apply:os.system ['touch {marker}']",
                                   "<<: {a: !!python/name:os.system x}", "<<: 5", "<<: [*anchor, oops]"])
def test_a_merge_key_never_carries_a_tag_or_anything_but_mappings(make_pack, tmp_path, merge):
    marker = tmp_path / "pwned"
    lesson = (f"x: &anchor {{id: x}}\nid: x\ntitle: T\nsteps: [{{id: a, kind: prose, body: b}}]\n"
              f"summary:\n  {merge.replace('{marker}', str(marker))}\n")
    with pytest.raises(PackError) as caught:
        load_pack(make_pack(files={"lesson.yaml": lesson}))
    messages = " ".join(p.message for p in caught.value.problems)
    assert "is not allowed" in messages or "a merge key (<<) takes a mapping" in messages, messages
    assert not marker.exists()


def test_a_merge_key_that_merges_into_itself_is_bounded(make_pack):
    lesson = "id: x\ntitle: T\nsteps: [{id: a, kind: prose, body: b}]\nsummary: &s\n  <<: *s\n"
    with pytest.raises(PackError):  # PyYAML refuses the recursive alias or the node budget does
        load_pack(make_pack(files={"lesson.yaml": lesson}))


# --------------------------------------------------------------------------- form rules reach helpers


def judge(code: str, **rules) -> form.Verdict:
    check = as_data(validate(FormCheck, {"id": "form", "kind": "form", "description": "d", **rules}))
    return form.judge(check, textwrap.dedent(code))


HELPER_WITH_AUTOGRAD = """\
import torch

def slope(f, x):
    y = x.detach().requires_grad_()
    return torch.autograd.grad(f(y).sum(), y)[0]

def dx(x):
    return slope(lambda t: t * t, x)

a = torch.randn(4)   # the learner's own try-out: data, not code the rule judges
print(dx(a))
"""


def test_a_helper_using_the_forbidden_autograd_fails_the_rule_on_its_caller():
    verdict = judge(HELPER_WITH_AUTOGRAD, function="dx", torch_deny=["autograd.*"])
    assert verdict.status == "failed"
    assert verdict.message.startswith("line 5 (in `slope`, which `dx` uses): `torch.autograd.grad` breaks "
                                      'the rule "no torch.autograd.grad"'), verdict.message
    assert verdict.lineno == 5


def test_follow_calls_false_narrows_the_rule_to_the_function_itself():
    verdict = judge(HELPER_WITH_AUTOGRAD, function="dx", torch_deny=["autograd.*"], follow_calls=False)
    assert verdict.status == "passed", verdict.message


def test_helpers_of_helpers_lambdas_and_aliases_are_reached_and_lines_count_together():
    code = """\
        import torch
        g = torch.autograd.grad
        square = lambda t: t * t

        def inner(x):
            for _ in range(1):
                pass
            return g(square(x).sum(), x)

        def outer(x):
            return inner(x)

        def dx(x):
            return outer(x)
        """
    verdict = judge(code, function="dx", loops=False, max_lines=1, torch_deny=["autograd.*"])
    assert verdict.status == "failed"
    assert "a `for` loop breaks the rule" in verdict.message and "(in `inner`, which `dx` uses)" in verdict.message
    assert "(in `g`, which `dx` uses): `torch.autograd.grad`" in verdict.message
    assert judge(code, function="dx", max_lines=1, follow_calls=False).status == "passed"


def test_a_local_name_or_a_parameter_is_not_the_module_level_definition():
    code = """\
        import torch

        def helper(x):
            return torch.autograd.grad(x, x)

        def dx(helper, x):
            inner = 2
            return helper(x) * inner

        inner = torch.autograd.grad
        """
    verdict = judge(code, function="dx", torch_deny=["autograd.*"])
    assert verdict.status == "passed", verdict.message
    assert verdict.message == "`dx` keeps to the rules"


def test_a_passing_verdict_names_the_helpers_it_judged():
    code = "def sq(t):\n    return t * t\n\ndef dx(x):\n    return 2 * sq(x) / x\n"
    verdict = judge(code, function="dx", loops=False)
    assert verdict.status == "passed"
    assert verdict.message == "`dx` keeps to the rules, and so does what it uses (`sq`)"


def test_recursion_and_mutual_calls_end():
    code = "def a(n):\n    return b(n - 1) if n else 0\n\ndef b(n):\n    return a(n)\n\ndef dx(n):\n    return a(n)\n"
    verdict = judge(code, function="dx", max_statements=3)
    assert verdict.status == "passed", verdict.message
    assert judge(code, function="dx", max_statements=2).status == "failed"


# --------------------------------------------------------------------------- scoring in the format


def _pack_with_scoring(make_pack, pack_scoring: str | None, exercise_scoring: str | None) -> Path:
    header = "format_version: 1\nid: demo\ntitle: Demo\nversion: 1.0.0\n"
    if pack_scoring is not None:
        header += f"scoring: {pack_scoring}\n"
    lesson = LESSON_WITH_MERGES.replace("    kind: exercise\n", "    kind: exercise\n" + (
        f"    scoring: {exercise_scoring}\n" if exercise_scoring is not None else ""))
    return make_pack(header=header, files={"lesson.yaml": lesson})


@pytest.mark.parametrize("pack_scoring, exercise_scoring, whole", [
    (None, None, False), ("all-or-nothing", None, True), ("all-or-nothing", "partial", False),
    ("partial", "all-or-nothing", True), (None, "all-or-nothing", True)])
def test_scoring_is_the_exercises_else_the_packs(make_pack, pack_scoring, exercise_scoring, whole):
    pack = load_pack(_pack_with_scoring(make_pack, pack_scoring, exercise_scoring))
    assert pack.exercises()[0][1].all_or_nothing is whole


def test_an_unknown_scoring_is_refused_where_it_is_written(make_pack):
    with pytest.raises(PackError) as caught:
        load_pack(_pack_with_scoring(make_pack, "all_or_nothing", None))
    (problem,) = caught.value.problems
    assert "pack.yaml:5:" in str(problem) and "all-or-nothing" in problem.message


def test_the_cached_pack_keeps_its_scoring(make_pack, tmp_path):
    from tutor.pack import packcache

    path = _pack_with_scoring(make_pack, "all-or-nothing", None)
    packcache.load(path, tmp_path / "cache")
    cached = packcache.read(path.absolute(), tmp_path / "cache")
    assert cached is not None and cached.exercises()[0][1].all_or_nothing


# --------------------------------------------------------------------------- what grade leaves alone


CLUTTER = ["__pycache__/bumped.cpython-311.pyc", "bumped.py~", ".bumped.py.swp", "#bumped.py#", ".DS_Store",
           "._bumped.py", "bumped.pyc", ".ipynb_checkpoints/bumped-checkpoint.py"]


def test_grade_ignores_what_a_learners_tools_leave_behind(tmp_path):
    from tutor.pack.scaffold import scaffold
    from tutor.grading.gradebook import collect

    pack_dir = tmp_path / "pack"
    scaffold(pack_dir, title="Clutter")
    pack = load_pack(pack_dir)
    exercise = pack.exercises()[0][1].id
    subs = tmp_path / "subs"
    ann = subs / "ann"
    ann.mkdir(parents=True)
    (ann / f"{exercise}.py").write_text("def bumped(t):\n    return t + 1\n")
    for name in CLUTTER:
        (ann / name).parent.mkdir(parents=True, exist_ok=True)
        (ann / name).write_bytes(b"\x00junk")
    (subs / ".DS_Store").write_bytes(b"\x00")
    (subs / "__pycache__").mkdir()
    (ann / ".notes").write_text("mine")  # any other hidden name: not graded, with a notice
    collection = collect(pack, subs)
    rows = [(s.learner, s.exercise, s.status) for s in collection.submissions]
    assert [r for r in rows if r[2] not in (None,) and r[2] != "missing"] == [], rows
    assert ("ann", exercise, None) in rows
    assert collection.ignored == ["ann/.notes: a hidden name (it starts with '.'), not graded"]


def test_an_earlier_answer_defined_here_is_that_exercises_not_a_helper():
    """`uses: [checkerboard]`: a learner who defines their checkerboard in inverted.py too (as the
    report invites them to) is judged on inverted's one line; checkerboard has its own rules."""
    from tutor.grading.exercise import judge_here

    pack = load_pack(Path(__file__).resolve().parents[2] / "examples" / "tensor-puzzles")
    inverted = pack.find_exercise("inverted")[1]
    code = ("def checkerboard(n):\n    x = arange(n)\n    return (x[:, None] + x[None, :]) % 2\n\n"
            "def inverted(n):\n    return where(checkerboard(n) == 0, 1, 0)\n")
    assert judge_here(inverted, code)["rules"]["status"] == "passed"
    helper = code.replace("checkerboard", "board")
    verdict = judge_here(inverted, helper)["rules"]
    assert verdict["status"] == "failed" and "(in `board`, which `inverted` uses)" in verdict["message"]


def test_the_grade_cache_is_keyed_by_the_form_judge_too():
    """Form checks are judged in the tutor's process (tutor/pack/form.py): a change to how they
    judge (the helpers a rule reaches) must re-grade them, never replay an older verdict."""
    from tutor.grading.gradebook import engine_files

    assert any(path.as_posix().endswith("tutor/pack/form.py") for path in engine_files())


def test_merges_of_merges_are_bounded_like_aliases(make_pack):
    """Each level merges the one before fifty times: the node budget refuses it, quickly."""
    import time

    lines = ["k0: &a0 {id: x}"]
    for level in range(1, 200):
        lines.append(f"k{level}: &a{level} {{<<: [{', '.join([f'*a{level - 1}'] * 50)}], n{level}: {level}}}")
    lines.append("id: x\ntitle: T\nsteps: [{id: a, kind: prose, body: b}]")
    started = time.monotonic()
    with pytest.raises(PackError) as caught:
        load_pack(make_pack(files={"lesson.yaml": "\n".join(lines) + "\n"}))
    assert "more than 300,000 values" in str(caught.value)
    assert time.monotonic() - started < 10
