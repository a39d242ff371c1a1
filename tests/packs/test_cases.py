"""Every plausible wrong fix is caught by the check it names; every alternative right fix passes.

The cases live in ``cases/<exercise-id>/``: ``wrong_*.py`` starts with ``# fails: <check-id>[, ...]``
and each named check must not pass (failed or error); an optional second line ``# passes: ...``
names checks that must pass for it, or ``# quiet: ...`` checks that must pass or be skipped (so
their hints, about other mistakes, are not shown);
``right_*.py`` must pass every check. They
go through the real check engine and sandbox, one warm worker for the whole module, because a
check that only works on the starter's data is exactly what these cases are meant to expose.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.packs.conftest import CASES_DIR, PACK_DIR

grading = pytest.importorskip("tutor.grading.exercise", reason="the check engine is not installed")

FAILS = re.compile(r"^#\s*fails:\s*(?P<ids>[a-z0-9_-]+(\s*,\s*[a-z0-9_-]+)*)\s*$")
PASSES = re.compile(r"^#\s*(?P<how>passes|quiet):\s*(?P<ids>[a-z0-9_-]+(\s*,\s*[a-z0-9_-]+)*)\s*$")
EXERCISES = ("shape-mismatch", "numpy-dtype", "unregistered-submodule", "accumulate-graph", "forgot-eval",
             "view-inplace", "no-grad-or-inference", "autocast-bf16", "profiler-hotspot", "fair-benchmark")


def _case_files() -> list[Path]:
    return sorted(CASES_DIR.glob("*/*.py"))


def expected_failures(path: Path) -> list[str]:
    """The check ids a wrong case names on its first line."""
    first = path.read_text(encoding="utf-8").splitlines()[0]
    match = FAILS.match(first)
    if match is None:
        raise AssertionError(f"{path}: the first line must be '# fails: <check-id>[, <check-id>]'")
    return [part.strip() for part in match["ids"].split(",")]


def expected_passes(path: Path) -> list[str]:
    """The check ids a wrong case names on its second line as passing or quiet (none if no such line)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    match = PASSES.match(lines[1]) if len(lines) > 1 else None
    return [part.strip() for part in match["ids"].split(",")] if match else []


def quiet_allowed(path: Path) -> tuple[str, ...]:
    lines = path.read_text(encoding="utf-8").splitlines()
    match = PASSES.match(lines[1]) if len(lines) > 1 else None
    return ("passed", "skipped") if match and match["how"] == "quiet" else ("passed",)


@pytest.fixture(scope="module")
def sandbox():
    from tutor.sandbox import Limits, Sandbox

    box = Sandbox(Limits(wall_time=120.0, cpu_time=240.0, memory_mb=4096), workers=1).start()
    assert box.wait_ready(300), "the sandbox did not warm up"
    yield box
    box.close()


def test_every_exercise_has_wrong_and_right_cases(pack):
    ids = {exercise.id for _, exercise in pack.exercises()}
    assert set(EXERCISES) <= ids
    for exercise_id in EXERCISES:
        folder = CASES_DIR / exercise_id
        assert list(folder.glob("wrong_*.py")), f"no wrong fix recorded for {exercise_id}"
        assert list(folder.glob("right_*.py")), f"no alternative right fix recorded for {exercise_id}"
    stray = {p.name for p in CASES_DIR.iterdir() if p.is_dir()} - ids
    assert not stray, f"case folders for exercises the pack does not have: {stray}"


def test_wrong_cases_name_real_checks(pack):
    for path in CASES_DIR.glob("*/wrong_*.py"):
        _, exercise = pack.find_exercise(path.parent.name)
        known = {check.id for check in exercise.checks}
        unknown = (set(expected_failures(path)) | set(expected_passes(path))) - known
        assert not unknown, f"{path.name} names checks {exercise.id} does not have: {unknown}"


@pytest.mark.parametrize("path", _case_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_case(pack, sandbox, path: Path):
    found = pack.find_exercise(path.parent.name)
    assert found is not None, f"no exercise {path.parent.name} in {PACK_DIR}"
    _, exercise = found
    report = grading.check_exercise(sandbox, exercise, path.read_text(encoding="utf-8"))
    status = {check.id: check for check in report.checks}
    summary = "; ".join(f"{c.id}: {c.status} {c.message}" for c in report.checks) or report.message
    if path.name.startswith("right_"):
        assert report.passed, f"{path.name} is a right fix but did not pass: {summary}"
    else:
        for check_id in expected_failures(path):
            assert check_id in status, f"{check_id} did not run for {path.name}: {summary}"
            assert status[check_id].status in ("failed", "error"), (
                f"{path.name} should be caught by {check_id}, which {status[check_id].status}: {summary}")
        for check_id in expected_passes(path):
            assert check_id in status, f"{check_id} did not run for {path.name}: {summary}"
            assert status[check_id].status in quiet_allowed(path), (
                f"{path.name} should not fail {check_id} (its hint is about another mistake), which "
                f"{status[check_id].status}: {summary}")
        assert not report.passed
