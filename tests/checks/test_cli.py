"""`torch-tutor check` and the running half of `torch-tutor validate`, as a user runs them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from xml.etree import ElementTree

from tests.checks.conftest import FIXTURE_PACK


def tutor(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tutor", *args], capture_output=True, text=True, input=stdin,
                          timeout=300)


def test_check_json_for_a_failing_file(tmp_path):
    learner = tmp_path / "mine.py"
    learner.write_text("def mse(pred, target):\n    return ((pred - target) ** 2).mean()\n")
    done = tutor("check", "metric", str(learner), "--pack", str(FIXTURE_PACK), "--json")
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert data["exercise"] == "engine/metric" and data["passed"] is False
    checks = {c["id"]: c for c in data["checks"]}
    assert checks["number"]["status"] == "failed"
    assert checks["number"]["message"].startswith("expected a plain Python number")
    assert checks["inputs-unchanged"]["status"] == "passed"
    assert data["run"]["status"] == "ok"


def test_check_text_for_a_passing_file_from_stdin():
    done = tutor("check", "engine/validate-shapes", "-", "--pack", str(FIXTURE_PACK), stdin=textwrap.dedent("""
        def matmul_checked(a, b):
            if a.shape[-1] != b.shape[0]:
                raise ValueError(f"cannot multiply {tuple(a.shape)} by {tuple(b.shape)}")
            print(f"multiplying {tuple(a.shape)} by {tuple(b.shape)}")
            return a @ b
    """))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "engine/validate-shapes: all 3 checks passed" in done.stdout
    assert "PASS  raises: a ValueError names both shapes" in done.stdout


def test_check_usage_errors(tmp_path):
    learner = tmp_path / "mine.py"
    learner.write_text("")
    unknown = tutor("check", "no-such-exercise", str(learner), "--pack", str(FIXTURE_PACK))
    assert unknown.returncode == 2 and "no exercise 'no-such-exercise'" in unknown.stderr
    missing = tutor("check", "metric", str(tmp_path / "absent.py"), "--pack", str(FIXTURE_PACK))
    assert missing.returncode == 2 and "no such file" in missing.stderr


def _small_pack(root, solution: str):
    shutil.copytree(FIXTURE_PACK, root)
    lesson = textwrap.dedent(f"""\
        id: engine
        title: Small
        steps:
          - id: wrong-example
            kind: example
            code: "print(1)"
            expect:
              output: "2"
          - id: double
            kind: exercise
            body: Double it.
            contract:
              - {{name: double, signature: "double(x)", description: "2 * x"}}
            starter: |
              def double(x):
                  return x
            solution: |
        {{solution}}
            checks:
              - id: doubles
                kind: tensor
                description: doubles
                setup: "x = torch.ones(3)"
                value: double(x)
                close_to: x * 2
            hints: ["a", "b"]
    """).replace("{solution}", textwrap.indent(solution, " " * 6).lstrip("\n"))
    (root / "engine.yaml").write_text(lesson)
    return root


def test_validate_runs_and_locates_broken_promises(tmp_path):
    pack = _small_pack(tmp_path / "pack", "def double(x):\n    return x + 2")
    junit = tmp_path / "results.xml"
    done = tutor("validate", str(pack), "--json", "--junit", str(junit))
    assert done.returncode == 1, done.stderr
    [entry] = json.loads(done.stdout)
    assert entry["ok"] is False
    messages = {p["message"]: p for p in entry["problems"]}
    solution = next(p for m, p in messages.items() if "the solution fails check 'doubles'" in m)
    assert solution["file"].endswith("engine.yaml") and solution["line"] == 21
    example = next(p for m, p in messages.items() if m.startswith("example 'wrong-example'"))
    assert example["line"] == 8 and "expected output matching /2/, got '1'" in example["message"]
    roles = {(r["step"], r["role"]): r["ok"] for r in entry["runs"]}
    assert roles == {("wrong-example", "example"): False, ("double", "starter"): True, ("double", "solution"): False}
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert suite.get("tests") == "3" and suite.get("failures") == "2"


def test_validate_no_run_and_a_good_pack(tmp_path):
    pack = _small_pack(tmp_path / "pack", "def double(x):\n    return x * 2")
    assert tutor("validate", str(pack), "--no-run").returncode == 0
    text = (pack / "engine.yaml").read_text().replace('output: "2"', 'output: "1"')
    (pack / "engine.yaml").write_text(text)
    done = tutor("validate", str(pack))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok   engine/double solution" in done.stdout
