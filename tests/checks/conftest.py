"""Engine tests run learner code for real: one warm sandbox for the whole session."""

from __future__ import annotations

import ast
import builtins
import os
import re
import textwrap
from pathlib import Path

import pytest

from tutor.grading.exercise import check_exercise
from tutor.pack.models import Exercise
from tutor.pack.validation import validate

FIXTURE_PACK = Path(__file__).parent / "fixtures" / "engine-pack"


def _warm(mode: str):
    from tutor.sandbox import Limits, Sandbox

    # A batch, as `grade` and `validate` are: the engine's runs come back to back, and a spawn-mode
    # spare waiting for the next one does not warm up meanwhile (tests/sandbox covers the
    # interactive way, which does).
    box = Sandbox(Limits(wall_time=20.0, cpu_time=60.0), workers=2 if mode == "spawn" else 1, mode=mode,
                  purpose="batch").start()
    assert box.wait_ready(300), "the sandbox did not warm up"
    return box


@pytest.fixture(scope="session")
def fork_sandbox():
    box = _warm("fork")
    yield box
    box.close()


@pytest.fixture(scope="session")
def spawn_sandbox():
    box = _warm("spawn")
    yield box
    box.close()


def sandbox_modes(marked_both: bool) -> list[str]:
    """The sandbox modes a test that takes ``sandbox`` runs in (issue 31, docs/performance.md,
    "Which tests run in both modes").

    A test marked ``both_modes`` (the trust boundary: attacks, forged reports, canaries,
    shadowing, limits, statuses of code that ends itself, the judge/runner split, fresh inputs,
    and every kind once end to end: test_kinds_end_to_end.py) runs in fork and in spawn mode. Any
    other (a kind's logic and wording) runs in fork mode, the cheapest real path: what spawn
    mode could change about it is what the marked tests cover.

    ``TORCH_TUTOR_TEST_MODES`` overrides: ``fork`` or ``spawn`` (every test in that mode only: a
    quicker loop, or a port of spawn mode), ``all`` (every test in both modes: the full matrix,
    for a change to how a run starts or reports)."""
    wanted = os.environ.get("TORCH_TUTOR_TEST_MODES", "").strip()
    if wanted == "all":
        return ["fork", "spawn"]
    if wanted:
        return [m for m in wanted.split(",") if m in ("fork", "spawn")] or ["fork"]
    return ["fork", "spawn"] if marked_both else ["fork"]


def pytest_generate_tests(metafunc):
    """``sandbox`` is a sandbox mode, fork or spawn (issue 13), as ``sandbox_modes`` says."""
    if "sandbox" in metafunc.fixturenames:
        marked = metafunc.definition.get_closest_marker("both_modes") is not None
        metafunc.parametrize("sandbox", sandbox_modes(marked), indirect=True)


@pytest.fixture
def sandbox(request):
    return request.getfixturevalue(f"{getattr(request, 'param', 'fork')}_sandbox")


#: The check fields that hold Python (as tutor.grading.validate reads them).
_CODE_FIELDS = {"setup", "value", "close_to", "shares_storage_with", "independent_of", "run", "module", "call",
                "fast", "slow", "workload", "predicate", "compare", "shape", "workloads", "checks"}


def _read_names(value, found: set, code: bool = True) -> None:
    """Every name a check's Python reads (as a pack author's contract would list them)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "message" and isinstance(item, str):  # an expr message's {{ expression }}s
                for expression in re.findall(r"\{\{(.*?)\}\}", item):
                    _read_names(expression.strip(), found)
                continue
            _read_names(item, found, key in _CODE_FIELDS)
    elif not code:
        return
    elif isinstance(value, list):
        for item in value:
            _read_names(item, found)
    elif isinstance(value, str):
        for mode in ("eval", "exec"):
            try:
                tree = ast.parse(textwrap.dedent(value), mode=mode)
            except SyntaxError:
                continue
            found.update(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
            break


def make_exercise(*checks: dict, timeout: float | None = None, contract: list[str] | None = None) -> Exercise:
    """An exercise around the given checks (descriptions default to the id). Its contract lists
    every name the checks read that is not a builtin (a check sees only the contract's names of
    the learner's module), unless ``contract`` names them."""
    full = [{"description": c["id"], **c} for c in checks]
    if contract is None:
        found: set = set()
        _read_names({"checks": full}, found)
        contract = sorted(found - set(dir(builtins)) - {"torch", "nn", "F", "np"}) or ["f"]
    return validate(Exercise, {
        "id": "fixture", "kind": "exercise", "body": "test", "starter": "", "solution": "",
        "contract": [{"name": name, "signature": f"{name}()", "description": "d"} for name in contract],
        "hints": ["one", "two"], "checks": full, "timeout": timeout,
    })


@pytest.fixture
def grade(sandbox):
    """grade(code, *checks) -> ExerciseReport, through the real sandbox."""

    def run(code: str, *checks: dict, timeout: float | None = None):
        return check_exercise(sandbox, make_exercise(*checks, timeout=timeout), textwrap.dedent(code))

    return run


def by_id(report):
    return {c.id: c for c in report.checks}
