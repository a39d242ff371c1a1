"""A learner's module-level names never reach a check's own code (issue 26, part 1).

A check's code (its setup, predicates, expressions, reference workloads) sees the pack's names,
the contract's names taken from the submission, and the real builtins; nothing else of the
learner's module. Honest code that names a variable ``list`` is judged right, and a submission
that defines ``range``, ``len``, ``getattr`` or ``all`` cannot make the pack's own code call it.
Through the real sandbox, in both modes, on the built-in pack's exercises as the issue found them.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.checks.conftest import by_id, make_exercise
from tutor.pack.loader import load_pack
from tutor.grading.exercise import check_exercise

#: The trust boundary: in fork and in spawn mode (tests/checks/conftest.py, sandbox_modes).
pytestmark = pytest.mark.both_modes

BUILTIN_PACK = Path(__file__).resolve().parents[2] / "lessons" / "debugging-and-speed"
THREADS_PACK = Path(__file__).parent / "fixtures" / "threads"


def _exercise(pack_dir: Path, exercise_id: str):
    return next(step for _lesson, step in load_pack(pack_dir).exercises() if step.id == exercise_id)


def test_an_honest_fix_that_names_a_variable_list_passes(sandbox):
    """The issue's beginner: `list = ["my", "layers"]` at the top of a correct fix got `ERROR
    layers-registered-any-depth: TypeError: 'list' object is not callable`."""
    exercise = _exercise(BUILTIN_PACK, "unregistered-submodule")
    code = 'list = ["my", "layers"]\nlen = 3\n' + exercise.solution
    report = check_exercise(sandbox, exercise, code)
    assert {c.id: c.status for c in report.checks} == {c.id: "passed" for c in exercise.checks}, \
        [c.message for c in report.checks if not c.passed]


SUBVERT_SETUP = textwrap.dedent("""\

    import builtins

    def getattr(obj, name, default=None):   # the no-graph predicate's getattr(v, "grad_fn", None)
        return None

    def range(n):                            # memory-flat's make_batches(n): never more than 4
        return list(builtins.range(n if n < 8 else 4))
""")


def test_the_accumulate_graph_starter_cannot_pass_by_redefining_builtins(sandbox):
    """The unchanged starter with a getattr and a range of its own passed 4/4 before."""
    exercise = _exercise(BUILTIN_PACK, "accumulate-graph")
    report = check_exercise(sandbox, exercise, exercise.starter + SUBVERT_SETUP)
    statuses = {c.id: c.status for c in report.checks}
    assert statuses["no-graph"] == "failed", statuses
    assert statuses["memory-flat"] == "failed", statuses
    assert not report.passed


BENCH_ONCE = textwrap.dedent("""\

    import builtins
    _asked = [0]
    _real_bench = bench

    def bench(fn, *args, warmup=3, repeat=20):
        _asked[0] = warmup + repeat
        return _real_bench(fn, *args, warmup=warmup, repeat=repeat)

    def len(items):                          # the predicate's len(calls) == warmup + repeat
        return _asked[0]
""")


def test_fair_benchmark_calling_fn_once_cannot_pass_by_redefining_len(sandbox):
    exercise = _exercise(BUILTIN_PACK, "fair-benchmark")
    report = check_exercise(sandbox, exercise, exercise.starter + BENCH_ONCE)
    checks = by_id(report)
    assert checks["call-count"].status == "failed", checks["call-count"].message
    assert checks["default-counts"].status == "failed", checks["default-counts"].message


SLOW_REFERENCE = textwrap.dedent("""\
    import builtins
    import torch

    def batched(a, b):                       # the starter's loop of products, nothing batched
        return torch.stack([a[i] @ b[i] for i in builtins.range(a.shape[0])])

    def range(n):                            # the check's reference loop, 30 times over
        return [i % n for i in builtins.range(n * 30)]
""")


def test_a_loop_cannot_pass_a_timing_check_by_slowing_the_reference_with_its_own_range(sandbox):
    """A loop against the check's loop of the same products is not 5x faster; it 'was', at
    55.8x, when the check's reference loop ran the learner's ``range``."""
    exercise = _exercise(THREADS_PACK, "bmm")
    report = check_exercise(sandbox, exercise, SLOW_REFERENCE)
    checks = by_id(report)
    assert checks["values"].status == "passed", checks["values"].message
    assert checks["fast"].status == "failed", checks["fast"].message


def test_a_check_still_reads_the_contracts_names(sandbox):
    """The contract's names do come from the submission, even one that shadows a builtin."""
    check = {"id": "sum-of", "kind": "expr", "predicate": "sum([1, 2]) == 'mine' and f() == 3",
             "message": "m"}
    exercise = make_exercise(check, contract=["f", "sum"])
    code = "def f():\n    return 3\ndef sum(items):\n    return 'mine'\n"
    report = check_exercise(sandbox, exercise, code)
    assert report.checks[0].status == "passed", report.checks[0].message
