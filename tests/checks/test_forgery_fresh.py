"""Forged answers that do not depend on the fresh inputs, and memory kept outside the return
value (issue 26, part 2). Each one is the built-in pack's exercise left unfixed, answering from
what the pack publishes (a reference workload's name, a sleep plan) or hiding what it keeps: none
may pass. Through the real sandbox, in both modes; below, through the `check` command (the
profiler's forgery) and `grade` (all of them).
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.checks.conftest import by_id
from tutor.pack.loader import load_pack
from tutor.grading.exercise import check_exercise

pytestmark = [pytest.mark.both_modes, pytest.mark.slow]

BUILTIN_PACK = Path(__file__).resolve().parents[2] / "lessons" / "debugging-and-speed"


def _exercise(exercise_id: str):
    return next(step for _lesson, step in load_pack(BUILTIN_PACK).exercises() if step.id == exercise_id)


#: profiler-hotspot without profiling: calls fn three times (the call count is checked) and answers
#: from a table keyed by the reference workload's name.
RANKING_BY_NAME = textwrap.dedent("""\
    RANKINGS = {"matmul_heavy": ["aten::mm", "aten::sum"], "copy_heavy": ["aten::copy_", "aten::flip"]}

    def top_ops(fn, k):
        for _ in range(3):
            fn()
        return RANKINGS.get(getattr(fn, "__name__", ""), ["aten::mm", "aten::sum"])[:k]
""")

#: fair-benchmark without timing: calls fn the right number of times and returns the published
#: sleep plan's median, a constant inside the check's window.
CONSTANT_MEDIAN = textwrap.dedent("""\
    def bench(fn, *args, warmup=3, repeat=20):
        for _ in range(warmup + repeat):
            fn(*args)
        return 0.012
""")

#: accumulate-graph's memory-flat with the graphs kept: every loss, graph and all, in a list of the
#: module's; the returned values are plain floats.
STASHED_LOSSES = textwrap.dedent("""\
    import torch.nn.functional as F

    _KEPT = []

    def log_losses(model, batches):
        logged = []
        for x, y in batches:
            loss = F.mse_loss(model(x), y)
            _KEPT.append(loss)
            logged.append(loss.item())
        return logged
""")

FORGERIES = {"profiler-hotspot": (RANKING_BY_NAME, "matches-robust-ranking"),
             "fair-benchmark": (CONSTANT_MEDIAN, "median-of-timed"),
             "accumulate-graph": (STASHED_LOSSES, "memory-flat")}


@pytest.mark.parametrize("exercise_id", sorted(FORGERIES))
def test_a_forgery_of_a_published_fact_does_not_pass(sandbox, exercise_id):
    code, caught_by = FORGERIES[exercise_id]
    exercise = _exercise(exercise_id)
    for _ in range(2):
        report = check_exercise(sandbox, exercise, code)
        checks = by_id(report)
        assert checks[caught_by].status in ("failed", "tampered"), checks[caught_by].message
        assert not report.passed


@pytest.mark.parametrize("exercise_id", sorted(FORGERIES))
def test_the_reference_solution_still_passes(sandbox, exercise_id):
    exercise = _exercise(exercise_id)
    report = check_exercise(sandbox, exercise, exercise.solution)
    assert report.passed, [(c.id, c.status, c.message) for c in report.checks if not c.passed]


# --------------------------------------------------------------------------- through check and grade

@pytest.fixture(scope="module", params=["fork", "spawn"])
def cli_env(request, tmp_path_factory):
    base = tmp_path_factory.mktemp(f"fresh-{request.param}")
    return base, {"TORCH_TUTOR_DATA_DIR": str(base / "data"), "TORCH_TUTOR_CONFIG_DIR": str(base / "config"),
                  "TORCH_TUTOR_ISOLATION": "none", "TORCH_TUTOR_SANDBOX_MODE": request.param}


def _tutor(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tutor", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=900)


def test_check_never_passes_a_forgery_of_a_published_fact(cli_env):
    """The command, end to end, on the forgery that needs the profiler (each forgery is checked
    through the same sandbox path above, twice, in both modes)."""
    base, env = cli_env
    exercise_id = "profiler-hotspot"
    code, caught_by = FORGERIES[exercise_id]
    learner = base / f"{exercise_id}.py"
    learner.write_text(code)
    done = _tutor("check", exercise_id, str(learner), "--json", env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads(done.stdout)
    statuses = {c["id"]: c["status"] for c in data["checks"]}
    assert data["passed"] is False and statuses[caught_by] in ("failed", "tampered"), statuses


def test_grade_never_passes_a_forgery_of_a_published_fact(cli_env):
    base, env = cli_env
    subs = base / "subs" / "forger"
    subs.mkdir(parents=True)
    for exercise_id, (code, _) in FORGERIES.items():
        (subs / f"{exercise_id}.py").write_text(code)
    out = base / "rows.csv"
    done = _tutor("grade", "debugging-and-speed", str(subs.parent), "--csv", str(out), "--no-cache", "--unisolated",
                  env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {row["exercise"]: row for row in csv.DictReader(io.StringIO(out.read_text()))}
    for exercise_id in FORGERIES:
        assert rows[exercise_id]["passed"] == "false" and rows[exercise_id]["status"] != "passed", rows[exercise_id]
