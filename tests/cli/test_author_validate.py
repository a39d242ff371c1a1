"""`validate` catches the author's own mistakes before a learner meets them (issue 17.3), measures
margins with --repeat (17.1), and the scaffold validates clean after being copied (17.8)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).parents[1] / "checks" / "fixtures"


def validate(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    return subprocess.run([sys.executable, "-m", "tutor", "validate", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=600)


def test_author_mistakes_are_the_checks_with_their_lines():
    out = validate(str(FIXTURES / "author-mistakes"))
    text = out.stdout
    assert out.returncode == 1
    lesson = "author-mistakes/mistakes.yaml"
    # a NameError in a check's own setup: the check is broken, at the setup's line, with the line in it
    assert (f"{lesson}:21:16: exercise 'scale': check 'broken-setup' is broken: its setup fails on the "
            "reference solution (line 2 of its setup): NameError: name 'undefined_helper' is not defined") in text
    assert "the solution fails check 'broken-setup'" not in text
    assert "the solution fails check 'not-declared'" not in text
    # ... and not counted against the starter either
    assert "starter (" in text and "fails values, operators\n" in text
    # names the contract does not declare, found without running anything
    assert (f"{lesson}:36:16: exercise 'scale': check 'not-declared' uses `scale_rows`, which the contract "
            "does not declare (did you mean 'scale'?)") in text
    # operator names asked of torch in the worker, with a suggestion
    assert (f"{lesson}:45:19: exercise 'scale': check 'operators' names operator 'aten:mul', which this torch "
            "does not have; did you mean 'aten::mul'") in text


def test_no_run_reports_names_without_running_and_still_loads():
    out = validate("--no-run", str(FIXTURES / "author-mistakes"))  # issue 27: found without running anything
    assert out.returncode == 1 and "(author-mistakes v0.1.0, 1 lesson)" in out.stdout  # not "1 lessons"


def test_repeat_reports_each_runs_numbers_and_the_lowest_margin():
    # A real timing check measured three times: how thin its margin is depends on the machine, so
    # the warning is asserted against the margin this run printed (thresholds: the next test).
    out = validate("--repeat", "3", str(FIXTURES / "marginal"))
    text = out.stdout
    assert "3 runs compared" in text
    assert "       speed: " in text and ", needs at least 1.3x (" in text  # each run's numbers, pass or fail
    margin = [line for line in text.splitlines() if line.strip().startswith("margin: speed/once solution")]
    changed = [line for line in text.splitlines() if "verdict changed" in line]
    assert margin or changed, text
    if margin:
        assert "needs at least 1.3x: margin " in margin[0] and "(lowest of 3 runs)" in margin[0]
        value = float(margin[0].split(": margin ")[1].split()[0])
        assert ("warning: under the safety factor 1.5" in margin[0]) == (value < 1.5), margin[0]


def _run(role: str, margin: float, status: str = "passed") -> "StepRun":
    from tutor.grading.validate import StepRun

    measured = {"speed": {"status": status, "measured": f"{margin * 1.3:.2f}x", "needs": "at least 1.3x",
                          "margin": margin}}
    return StepRun("speed", "once", role, True, "", 0.0, measured=measured)


def test_a_margin_just_under_the_safety_factor_is_never_shown_as_the_factor_itself():
    """1.496 is under 1.5: shown rounded down (1.49) beside the warning, not as 1.50 (a margin
    shown is never more than it is); exactly 1.5 is not under it."""
    from tutor.grading.validate import repeat_summary

    (line,), _ = repeat_summary([[_run("solution", 1.496)]], 1.5)
    assert "margin 1.49" in line and "warning: under the safety factor 1.5" in line, line
    (line,), _ = repeat_summary([[_run("solution", 1.5)]], 1.5)
    assert "margin 1.50" in line and "warning" not in line, line


def test_a_starter_that_measured_nothing_has_an_unbounded_margin_not_a_crash():
    """A starter that fails its bound by measuring 0 has threshold/measured = infinity: the
    summary says so (rounding a margin down must not raise OverflowError on it)."""
    from tutor.grading.validate import repeat_summary

    (line,), _ = repeat_summary([[_run("starter", 0.0, status="failed")]], 1.5)
    assert "(must fail it): margin inf" in line and "warning" not in line, line


def test_a_margin_under_the_safety_factor_is_a_warning_with_the_lowest_round():
    from tutor.grading.validate import repeat_summary

    lines, changed = repeat_summary([[_run("solution", 1.4)], [_run("solution", 1.1)], [_run("solution", 2.0)]], 1.5)
    assert not changed
    (line,) = lines
    assert "needs at least 1.3x: margin 1.10 (lowest of 3 runs)" in line
    assert "warning: under the safety factor 1.5" in line
    lines, _ = repeat_summary([[_run("solution", 1.6)], [_run("solution", 1.7)]], 1.5)
    assert lines and "warning" not in lines[0]
    # a starter must miss the bound by the factor too; a changed status is a changed verdict
    lines, changed = repeat_summary([[_run("starter", 0.9, "failed")], [_run("starter", 1.2, "passed")]], 1.5)
    assert changed and any("verdict changed: speed/once starter, check 'speed': failed 1x, passed 1x" in x
                           for x in lines)
    assert any("(must fail it): margin 1.11" in x and "warning" in x for x in lines)


def test_repeat_with_a_lower_safety_factor_has_no_warning_for_a_wide_margin():
    out = validate("--repeat", "2", "--safety", "0.01", "--json", str(FIXTURES / "marginal"))
    (entry,) = json.loads(out.stdout)
    assert entry["repeat"]["runs"] == 2
    assert not any("under the safety factor" in line for line in entry["repeat"]["lines"])
    solution = next(run for run in entry["runs"] if run["role"] == "solution")
    assert solution["measured"]["speed"]["needs"] == "at least 1.3x"
    assert solution["measured"]["speed"]["margin"] > 0


def test_the_scaffold_validates_clean_from_another_folder_after_being_copied(tmp_path):
    made = tmp_path / "made"
    subprocess.run([sys.executable, "-m", "tutor", "new", str(made)], check=True, capture_output=True)
    shared = tmp_path / "elsewhere" / "course"
    shutil.copytree(made, shared)
    shutil.rmtree(made)
    first = (shared / "pack.yaml").read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=./pack.schema.json"
    assert (shared / "pack.schema.json").is_file()  # the relative $schema still finds it
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    out = validate(str(shared), cwd=cwd)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "all as expected" in out.stdout


def test_a_number_where_a_mapping_belongs_shows_the_mapping(tmp_path):
    pack = tmp_path / "pack"
    shutil.copytree(FIXTURES / "marginal", pack)
    text = (pack / "pack.yaml").read_text()
    (pack / "pack.yaml").write_text(text.replace("ratio: {min: 1.3}", "ratio: 20"))
    out = validate("--no-run", str(pack))
    assert out.returncode == 1
    assert "checks[0].ratio: expected a mapping such as {min: ..., max: ...}, got a number" in out.stdout
    assert "instance of Ratio" not in out.stdout


def _exercise(checks: list[dict], contract: list[dict]):
    from tutor.pack.models import Exercise
    from tutor.pack.validation import validate as build

    return build(Exercise, {"id": "ex", "kind": "exercise", "body": "b", "starter": "", "solution": "",
                            "contract": contract, "hints": ["a", "b"],
                            "checks": [{"description": c["id"], **c} for c in checks]})


def test_contract_names_are_read_from_every_piece_of_a_check():
    from tutor.grading.validate import contract_problems

    contract = [{"name": "f", "signature": "f(x)", "description": "d"},
                {"name": "helper", "signature": "helper()", "description": "d", "optional": True}]
    fine = _exercise([
        {"id": "a", "kind": "tensor", "cases": [{"n": 2}], "setup": "import math\nx = torch.ones(n)\n"
         "def ref(t):\n    return t * math.pi", "value": "f(x)", "close_to": "ref(x)", "shape": ["n"]},
        {"id": "b", "kind": "timing", "fast": "lambda: f(x)", "slow": "lambda: [f(x) for _ in range(3)]",
         "setup": "x = torch.ones(2)", "ratio": {"min": 2}},
        {"id": "c", "kind": "expr", "predicate": "helper() is None and abs(-1) == 1 and np.pi > 3", "message": "m"},
        {"id": "d", "kind": "profile", "compare": {"call": "rank(workload, k)", "workloads": ["lambda: f(1)"]}},
    ], contract)
    problems = contract_problems(fine)
    assert [message for _, message in problems] == [
        "exercise 'ex': check 'd' uses `rank`, which the contract does not declare: add it to `contract` "
        "(optional: true if learners need not define it), or define it in the check's setup or cases"]
    assert problems[0][0] == ("checks", 3, "compare", "call")
    shadowed = _exercise([{"id": "a", "kind": "tensor", "value": "ff(1)"}], contract[:1])
    (path, message), = contract_problems(shadowed)
    assert path == ("checks", 0, "value") and "uses `ff`" in message and "(did you mean 'f'?)" in message


def test_a_chinese_comment_line_out_of_place_is_located(tmp_path):
    """Issue 52, item 18: a `#zh:` line not right after the English comment it translates is a
    warning at its own file:line:col; the pack still loads and its code still runs."""
    pack = tmp_path / "mini"
    shutil.copytree(Path(__file__).parents[1] / "app" / "packs" / "mini", pack)
    lesson = pack / "exercises.yaml"
    text = lesson.read_text(encoding="utf-8").replace(
        "      def double(x):\n          return x * 2\n",
        "      def double(x):\n          return x * 2  # twice\n          #zh: 两倍\n", 1)
    lesson.write_text(text, encoding="utf-8")
    line = text.split("\n").index("          #zh: 两倍") + 1
    out = validate("--no-run", str(pack))
    assert out.returncode == 0, out.stdout + out.stderr
    assert (f"{lesson}:{line}:11: warning: step 'double' solution: a #zh: line must come right after "
            "the English comment line it translates") in out.stdout
