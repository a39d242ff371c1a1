"""Engine tests run learner code for real: one warm sandbox for the whole session."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from tutor.grading.exercise import check_exercise
from tutor.core.models import Exercise
from tutor.core.validation import validate

FIXTURE_PACK = Path(__file__).parent / "fixtures" / "engine-pack"


def _warm(mode: str):
    from tutor.sandbox import Limits, Sandbox

    box = Sandbox(Limits(wall_time=20.0, cpu_time=60.0), workers=2 if mode == "spawn" else 1, mode=mode).start()
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


#: Modules whose tests run in both sandbox modes: the trust boundary (hostile code, forged
#: reports and verdicts, through `check` and `grade`) must hold in each, and what a fresh
#: interpreter could change (inputs drawn at random, seeds and the random state; time and memory
#: measured in the runner) must behave the same. The rest of the check engine runs in fork mode,
#: Linux's default: the engine's code is the same in both modes, and a spawn-mode run costs a
#: spare (two interpreters importing torch, 3.5-4.9 s of CPU). Every module in both modes does not
#: fit the ~20 min budget on 2 cores (docs/performance.md, "Both modes in CI");
#: ``TORCH_TUTOR_TEST_SPAWN_ALL=1`` runs them all so.
BOTH_MODES = ("test_hostile", "test_forgery", "test_fresh_inputs", "test_measured")


def pytest_generate_tests(metafunc):
    """``sandbox`` is fork, or fork and spawn for ``BOTH_MODES``; ``TORCH_TUTOR_TEST_MODES``
    narrows the matrix."""
    if "sandbox" in metafunc.fixturenames:
        modes = os.environ.get("TORCH_TUTOR_TEST_MODES", "fork,spawn").split(",")
        every = os.environ.get("TORCH_TUTOR_TEST_SPAWN_ALL") == "1"
        if not every and metafunc.module.__name__.rsplit(".", 1)[-1] not in BOTH_MODES:
            modes = [m for m in modes if m == "fork"] or ["fork"]
        metafunc.parametrize("sandbox", modes, indirect=True)


@pytest.fixture
def sandbox(request):
    return request.getfixturevalue(f"{getattr(request, 'param', 'fork')}_sandbox")


def make_exercise(*checks: dict, timeout: float | None = None) -> Exercise:
    """An exercise around the given checks (descriptions default to the id)."""
    full = [{"description": c["id"], **c} for c in checks]
    return validate(Exercise, {
        "id": "fixture", "kind": "exercise", "body": "test", "starter": "", "solution": "",
        "contract": [{"name": "f", "signature": "f()", "description": "d"}],
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
