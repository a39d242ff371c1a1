"""`validate` as an author meets it (issue 27 item 4, 6 and 8; issue 26's timeout flag): mistakes in
checks found without running anything (`--no-run`, `--watch --no-run`), one verdict per pack at
the end, a skipped check never listed among the failed, a reference check that runs out of time
flagged as a budget problem, and margins for `calls` bounds and time budgets under `--repeat`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tutor.pack.scaffold import scaffold

FIXTURES = Path(__file__).parents[1] / "checks" / "fixtures"
REPO = Path(__file__).parents[2]


def validate(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "tutor", "validate", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=900)


MISTAKES = "author-mistakes/mistakes.yaml"
NOT_DECLARED = (f"{MISTAKES}:36:16: exercise 'scale': check 'not-declared' uses `scale_rows`, which the contract "
                "does not declare (did you mean 'scale'?)")
MISSPELT = (f"{MISTAKES}:45:19: exercise 'scale': check 'operators' names operator 'aten:mul', which this torch "
            "does not have; did you mean 'aten::mul'")


def test_no_run_finds_an_undeclared_name_and_a_misspelt_operator():
    out = validate("--no-run", str(FIXTURES / "author-mistakes"))
    assert out.returncode == 1, out.stdout + out.stderr
    assert NOT_DECLARED in out.stdout and MISSPELT in out.stdout
    lines = out.stdout.strip().splitlines()
    assert lines[-1].endswith(": 3 problem(s) found without running it (author-mistakes v0.1.0, 1 lesson)")
    assert ": ok (" not in out.stdout
    assert "starter" not in out.stdout and "solution" not in out.stdout  # nothing ran
    data = json.loads(validate("--no-run", "--json", str(FIXTURES / "author-mistakes")).stdout)
    assert data[0]["ok"] is False and len(data[0]["problems"]) == 3


def test_watch_no_run_reports_them_too():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "tutor", "validate", "--watch", "--no-run",
                             str(FIXTURES / "author-mistakes")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    try:
        seen = []
        deadline = time.monotonic() + 300
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            seen.append(line)
            if "found without running it" in line or ": ok (" in line:
                break
        text = "".join(seen)
        assert NOT_DECLARED in text and MISSPELT in text and "3 problem(s) found without running it" in text
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_a_full_run_gives_one_verdict_at_the_end():
    out = validate(str(FIXTURES / "author-mistakes"))
    assert out.returncode == 1
    verdicts = [line for line in out.stdout.splitlines() if line.startswith(str(FIXTURES / "author-mistakes") + ":")]
    assert len(verdicts) == 1 and verdicts[0] == out.stdout.strip().splitlines()[-1], out.stdout
    assert "problem(s) when running it" in verdicts[0] and ": ok (" not in out.stdout
    assert "problem(s) when running it" not in out.stderr


def test_a_skipped_check_is_not_listed_among_the_failed(tmp_path):
    pack = tmp_path / "pack"
    scaffold(pack)
    lesson = pack / "01-first-lesson.yaml"
    lesson.write_text(lesson.read_text().replace("        independent_of: x\n",
                                                 "        independent_of: x\n        after: [caller-unchanged]\n"))
    out = validate(str(pack))
    assert out.returncode == 0, out.stdout + out.stderr
    starter = next(line for line in out.stdout.splitlines() if "add-to-copy starter" in line)
    assert "fails caller-unchanged; skipped new-memory" in starter, starter


def _slow_pack(folder: Path) -> Path:
    """The scaffold's exercise with a reference solution slower than its `values` check's time
    limit (it spins: a check's budget is CPU time, so a sleep would not count), and a profile check that bounds the calls of aten::add."""
    scaffold(folder)
    lesson = folder / "01-first-lesson.yaml"
    text = lesson.read_text()
    text = text.replace("    solution: |\n      def bumped(t):\n          return t + 1\n",
                        "    solution: |\n      import time\n      def bumped(t):\n"
                        "          start = time.process_time()\n"
                        "          while time.process_time() - start < 0.5:  # CPU time: what a budget counts\n"
                        "              pass\n"
                        "          return t + 1\n")
    text = text.replace("        close_to: x + 1\n", "        close_to: x + 1\n        time_limit: 0.4\n")
    text = text.replace("        independent_of: x\n", "        independent_of: x\n"
                        "      - id: few-adds\n        kind: profile\n        description: one add per call\n"
                        "        setup: y = torch.randn(8)\n        workload: \"lambda: y + 1\"\n"
                        "        calls:\n          - {ops: [aten::add], at_most: 2}\n")
    lesson.write_text(text)
    return folder


def test_a_reference_check_that_runs_out_of_time_is_flagged_and_repeat_shows_margins(tmp_path):
    pack = _slow_pack(tmp_path / "pack")
    out = validate(str(pack))
    assert out.returncode == 1
    assert "TIME first-lesson/add-to-copy solution" in out.stdout
    assert ("exercise 'add-to-copy': TIMEOUT: check 'values' ran out of time on the reference solution" in out.stdout
            and "not a wrong answer" in out.stdout)
    assert "the solution fails check 'values'" not in out.stdout
    assert "1 of them TIMEOUT on a reference solution" in out.stdout.strip().splitlines()[-1]
    data = json.loads(validate("--repeat", "2", "--json", str(pack)).stdout)[0]
    solution = next(run for run in data["runs"] if run["role"] == "solution")
    assert solution["timeouts"] == ["values"] and data["timeouts"] == ["first-lesson/add-to-copy: values"]
    assert solution["budgets"]["values"]["status"] == "timeout" and solution["budgets"]["values"]["budget"] == 0.4
    calls = solution["measured"]["few-adds calls aten::add"]
    assert calls == {"status": "passed", "measured": "1 calls", "needs": "at most 2 calls", "margin": 2.0}
    lines = data["repeat"]["lines"]
    assert any(line.startswith("time budget: first-lesson/add-to-copy solution, check 'values': ")
               and "TIMEOUT in 2 of 2 runs" in line for line in lines), lines
    assert any("check 'few-adds calls aten::add': 1 calls, needs at most 2 calls: margin 2.00" in line
               for line in lines), lines


def test_a_name_in_an_expr_messages_placeholder_must_be_declared():
    """`{{ names() }}` in an expr check's message is evaluated like the predicate: a name it reads
    that the contract lacks is found without a run, as in the predicate (it showed "?" instead)."""
    from tutor.pack.models import Exercise
    from tutor.pack.validation import validate as check_data
    from tutor.grading.validate import contract_problems

    exercise = check_data(Exercise, {
        "id": "e", "kind": "exercise", "body": "b", "starter": "", "solution": "", "hints": ["h", "i"],
        "contract": [{"name": "f", "signature": "f()", "description": "d"}],
        "checks": [{"id": "c", "kind": "expr", "description": "d", "predicate": "f() == 1",
                    "message": {"en": "f gave {{ f() }}; {{ seen_by(f) }}", "zh": "{{ f() }}"}}]})
    problems = contract_problems(exercise)
    assert [message for _, message in problems if "seen_by" in message], problems
    assert not [message for _, message in problems if "'f'" in message], problems
