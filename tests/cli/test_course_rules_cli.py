"""What a learner and an author read in the terminal about the rules of issue 51: `check` says an
exercise is all or nothing and marks a form check's line like any other, `validate` warns about
a tolerance at the wrong scale and says what to set, and `autograder --help` says what the
Classroom setup runs."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PUZZLES = Path(__file__).resolve().parents[2] / "examples" / "tensor-puzzles"
CHECKERBOARD = "def checkerboard(n):\n    return (arange(n)[:, None] + arange(n)[None, :]) % 2\n"


def tutor(*args: str, data: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    return subprocess.run([sys.executable, "-m", "tutor", "--data-dir", str(data), *args], capture_output=True,
                          text=True, timeout=300, env=env)


@pytest.fixture
def puzzles(tmp_path: Path) -> Path:
    """The worked example, its checkerboard scored all or nothing."""
    pack = tmp_path / "pack"
    shutil.copytree(PUZZLES, pack)
    lesson = pack / "puzzles.yaml"
    marker = "  - id: checkerboard\n    kind: exercise\n"
    lesson.write_text(lesson.read_text().replace(marker, marker + "    scoring: all-or-nothing\n"))
    return pack


@pytest.mark.parametrize("language, line", [
    ("en", "  all or nothing: this exercise earns its points only when every check passes"),
    ("zh", "  全有或全无：每项检查都通过，这个练习才得分")])
def test_check_says_under_its_summary_that_an_exercise_is_all_or_nothing(tmp_path, puzzles, language, line):
    answer = tmp_path / "checkerboard.py"
    answer.write_text(CHECKERBOARD)
    done = tutor("--language", language, "check", "checkerboard", str(answer), "--pack", str(puzzles),
                 data=tmp_path / "d")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1] == line, done.stdout
    assert all(len(text) <= 80 for text in (line,))
    if language != "en":
        return  # the rest is the same in every language: one `check` each, not three
    (tmp_path / "interleave.py").write_text("def interleave(a, b):\n    return a\n")
    other = tutor("--language", language, "check", "interleave", str(tmp_path / "interleave.py"), "--pack",
                  str(puzzles), data=tmp_path / "d")
    assert line not in other.stdout  # a partial exercise says nothing of it
    as_json = tutor("check", "checkerboard", str(answer), "--pack", str(puzzles), "--json", data=tmp_path / "d")
    assert json.loads(as_json.stdout)["scoring"] == "all-or-nothing"


def test_a_form_checks_verdict_is_marked_when_the_code_does_not_run(tmp_path):
    answer = tmp_path / "checkerboard.py"
    answer.write_text("import not_a_module_at_all\n" + CHECKERBOARD.replace("% 2", "% 2  # " + "x" * 80))
    done = tutor("check", "checkerboard", str(answer), "--pack", str(PUZZLES), data=tmp_path / "d")
    assert done.returncode == 1
    assert "ModuleNotFoundError" in done.stdout
    assert re.search(r"^  FAIL  rules: one line of at most 80 characters", done.stdout, re.M), done.stdout
    assert "  the other 2 checks run once your code does" in done.stdout
    assert "the 3 checks run once your code does" not in done.stdout
    # every line naming a check starts with its status word
    for text in done.stdout.splitlines():
        if re.match(r"^  \S+\s+(rules|values|operators):", text):
            assert text.split()[0] in ("PASS", "FAIL", "ERROR", "SKIP", "TAMPR", "TIME"), text


PACK_YAML = """\
format_version: 1
id: tol
title: Tolerance
version: "0.1.0"
lessons:
  - id: l
    title: L
    steps:
      - id: tiny
        kind: exercise
        body: "Scale x."
        contract:
          - {name: f, signature: f(x), description: x scaled}
        starter: "def f(x):\\n    return x\\n"
        solution: "def f(x):\\n    return x * 4e-6\\n"
        checks:
          - id: values
            kind: tensor
            description: x times 4e-6
            cases: [{n: 3}, {n: 5}]
            setup: "x = torch.rand(n) + 0.5"
            value: f(x)
            close_to: x * 4e-6
          - id: at-scale
            kind: tensor
            description: x times 4e-6, at its own scale
            setup: "x = torch.rand(3) + 0.5"
            value: f(x)
            close_to: x * 4e-6
            atol: 1.0e-10
          - id: vanishes
            kind: tensor
            description: nothing of zero
            setup: "x = torch.zeros(3)"
            value: f(x)
            close_to: x * 0
        hints: ["Multiply.", "By 4e-6.", "x * 4e-6"]
"""


def test_validate_warns_when_the_reference_lies_within_a_few_atol_of_zero(tmp_path):
    pack = tmp_path / "tol"
    pack.mkdir()
    (pack / "pack.yaml").write_text(PACK_YAML)
    done = tutor("validate", str(pack), data=tmp_path / "d")
    assert done.returncode == 0, done.stdout + done.stderr
    warnings = [line for line in done.stdout.splitlines() if "warning:" in line]
    assert len(warnings) == 1, done.stdout
    (warning,) = warnings
    assert warning.startswith(f"{pack / 'pack.yaml'}:17:13: warning: exercise 'tiny': check 'values': every "
                              "reference value is within "), warning
    assert "so an answer near zero passes as well as the right one: set the check's `atol` to about" in warning
    scale = float(re.search(r"the largest is ([0-9.e+-]+)", warning).group(1))
    assert 2e-6 <= scale <= 6e-6
    suggested = float(re.search(r"`atol` to about ([0-9.e+-]+)", warning).group(1))
    assert 1e-9 <= suggested <= 1e-8
    assert "1 warning(s)" in done.stdout.splitlines()[-1]
    as_json = json.loads(tutor("validate", str(pack), "--json", data=tmp_path / "d").stdout)
    assert [w["message"].split(":")[0] for w in as_json[0]["warnings"]] == ["exercise 'tiny'"]


def test_autograder_help_says_what_the_classroom_setup_runs(tmp_path):
    done = tutor("autograder", "--help", data=tmp_path / "d")
    text = " ".join(done.stdout.split())
    assert "run `torch-tutor check` per exercise" not in text
    assert "grades the repository once (`--run . --json`" in text
    assert "one test per check (`--passed EXERCISE --check ID`" in text
