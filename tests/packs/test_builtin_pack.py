"""The built-in pack loads, and what it shows the learner is what the installed torch does.

Examples and predict-quizzes run with the installed interpreter outside the sandbox (the point
here is the pack's truth, not isolation): ``snippet_runner.py`` imports torch once and forks a
child per snippet, in two parallel batches, once per session.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest

from tutor.pack.models import Example, Exercise, PredictQuiz

FIXED_CONTRACTS = {
    "shape-mismatch": {"project"}, "numpy-dtype": {"predict"}, "unregistered-submodule": {"Net"},
    "accumulate-graph": {"log_losses"}, "forgot-eval": {"evaluate"}, "view-inplace": {"shifted_first_row"},
    "no-grad-or-inference": {"validate", "serve"}, "autocast-bf16": {"run_mixed"},
    "profiler-hotspot": {"top_ops"}, "fair-benchmark": {"bench"},
}
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
RUNNER = Path(__file__).with_name("snippet_runner.py")


def _run(code: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                          env=ENV, stdin=subprocess.DEVNULL)


def _needs_cuda(step) -> bool:
    return bool(step.requires and step.requires.cuda)


@pytest.fixture(scope="session")
def cuda_available() -> bool:
    probe = _run("import torch; print(torch.cuda.is_available())", 120)
    return probe.stdout.strip() == "True"


@pytest.fixture(scope="session")
def runs(pack, cuda_available):
    """(lesson id, step id) -> list of completed runs: one per example, two per predict quiz."""
    jobs = []
    for lesson in pack.lessons:
        for step in lesson.steps:
            if _needs_cuda(step) and not cuda_available:
                continue
            if isinstance(step, Example):
                jobs.append(((lesson.id, step.id), step.code, step.timeout or 120))
            elif isinstance(step, PredictQuiz):
                jobs += [((lesson.id, step.id), step.code, step.timeout or 60)] * 2
    batches = [jobs[0::2], jobs[1::2]]
    with ThreadPoolExecutor(max_workers=2) as pool:
        outputs = list(pool.map(_run_batch, batches))
    results: dict = {}
    for batch, output in zip(batches, outputs):
        for (key, _, _), done in zip(batch, output):
            results.setdefault(key, []).append(done)
    return results


def _run_batch(batch) -> list:
    payload = json.dumps([{"code": code, "timeout": timeout} for _, code, timeout in batch])
    budget = sum(timeout for _, _, timeout in batch) + 120
    done = subprocess.run([sys.executable, str(RUNNER)], input=payload, capture_output=True, text=True,
                          timeout=budget, env=ENV)
    assert done.returncode == 0, done.stderr[-2000:]
    return [SimpleNamespace(**item) for item in json.loads(done.stdout)]


def _steps(pack, kind):
    return [(lesson.id, step) for lesson in pack.lessons for step in lesson.steps if isinstance(step, kind)]


def _last_error(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip() and not line.startswith("USDT")]
    return lines[-1] if lines else ""


def test_pack_loads_with_every_lesson(pack):
    assert pack.id == "debugging-and-speed"
    assert len(pack.lessons) == 9
    kinds = {type(step).__name__ for lesson in pack.lessons for step in lesson.steps}
    assert {"Prose", "Example", "FreeQuiz", "ChoiceQuiz", "PredictQuiz", "Exercise"} <= kinds


def test_the_ten_exercises_are_present(pack):
    exercises = {exercise.id: exercise for _, exercise in pack.exercises()}
    assert set(FIXED_CONTRACTS) <= set(exercises)
    for exercise_id, names in FIXED_CONTRACTS.items():
        assert {item.name for item in exercises[exercise_id].contract} == names, exercise_id
        assert len(exercises[exercise_id].hints) >= 3, exercise_id


@pytest.mark.parametrize("exercise_id", sorted(FIXED_CONTRACTS))
def test_solution_defines_the_contract(pack, exercise_id):
    _, exercise = pack.find_exercise(exercise_id)
    tree = ast.parse(exercise.solution)
    defined = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    missing = {item.name for item in exercise.contract} - defined
    assert not missing, f"{exercise_id}: the solution does not define {missing}"


def test_self_test_has_enough_questions(pack):
    lesson = pack.lesson("self-test")
    styles = [getattr(step, "style", None) for step in lesson.steps]
    assert styles.count("free") >= 5
    assert styles.count("choice") + styles.count("predict") >= 10


NUMBER_WORDS = {word: value for value, word in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty twenty-one twenty-two twenty-three twenty-four twenty-five".split())}


def test_self_test_summary_counts_its_questions(pack):
    """The table of contents promises a number of questions; it is the number of quiz steps."""
    lesson = pack.lesson("self-test")
    summary = lesson.summary if isinstance(lesson.summary, str) else lesson.summary["en"]
    stated = re.search(r"\b(\d+|[a-z]+(?:-[a-z]+)?) questions\b", summary, re.IGNORECASE)
    quizzes = sum(step.kind == "quiz" for step in lesson.steps)
    if stated is None:  # no number promised, nothing to keep in step
        return
    word = stated.group(1).lower()
    number = int(word) if word.isdigit() else NUMBER_WORDS.get(word)
    assert number is not None, f"cannot read the number in {summary!r}"
    assert number == quizzes, f"the summary says {number} questions, the lesson has {quizzes}"


def test_cuda_variants_exist_and_are_marked(pack):
    labs = pack.lesson("labs")
    assert sum(_needs_cuda(step) for step in labs.steps) >= 3


def test_every_example_matches_its_expectation(pack, runs, cuda_available):
    problems = []
    for lesson_id, step in _steps(pack, Example):
        if _needs_cuda(step) and not cuda_available:
            continue
        done = runs[(lesson_id, step.id)][0]
        expect = step.expect
        where = f"{lesson_id}/{step.id}"
        if expect.output is not None and re.search(expect.output, done.stdout) is None:
            problems.append(f"{where}: output {done.stdout!r} does not match /{expect.output}/")
        if expect.raises is not None:
            last = _last_error(done.stderr)
            kind, _, message = last.partition(": ")
            if done.returncode == 0 or kind.rsplit(".", 1)[-1] != expect.raises.type:
                problems.append(f"{where}: expected {expect.raises.type}, got {last!r}")
            elif expect.raises.match and re.search(expect.raises.match, message) is None:
                problems.append(f"{where}: message {message!r} does not match /{expect.raises.match}/")
        elif done.returncode != 0:
            problems.append(f"{where}: raised {_last_error(done.stderr)!r}")
    assert not problems, "\n".join(problems)


def test_predict_quizzes_are_deterministic(pack, runs):
    problems = []
    for lesson_id, step in _steps(pack, PredictQuiz):
        first, second = runs[(lesson_id, step.id)]
        where = f"{lesson_id}/{step.id}"
        if first.returncode != 0:
            problems.append(f"{where}: raised {_last_error(first.stderr)!r}")
        elif not first.stdout.strip():
            problems.append(f"{where}: prints nothing")
        elif first.stdout != second.stdout:
            problems.append(f"{where}: printed {first.stdout!r} then {second.stdout!r}")
    assert not problems, "\n".join(problems)


def test_starters_do_not_define_a_passing_copy_of_the_solution(pack):
    for _, exercise in pack.exercises():
        assert exercise.starter.strip() != exercise.solution.strip(), exercise.id
        assert isinstance(exercise, Exercise)
