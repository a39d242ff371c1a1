"""The layer contracts (`lint-imports`) and the type check (`mypy`) over the whole of tutor/,
with the project's configuration in pyproject.toml, so both run with the README's test command.

mypy keeps its cache under pytest's cache folder (.pytest_cache/, never the source tree): 35 s
the first time on a loaded two-core machine, 3 s after. lint-imports takes under a second.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))


def _lint_imports(cwd: Path, extra_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = None
    if extra_path is not None:  # analyse the copy, not the installed package
        import os

        env = {**os.environ, "PYTHONPATH": str(extra_path)}
    return subprocess.run([LINT_IMPORTS, "--no-cache", "--no-logo", str(cwd / "pyproject.toml")], cwd=cwd,
                          capture_output=True, text=True, timeout=120, env=env)


def test_every_layer_contract_is_kept():
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout


@pytest.mark.slow  # a cold mypy: 14-60 s
def test_mypy_finds_no_errors(request: pytest.FixtureRequest, tmp_path: Path):
    cache_provider = getattr(request.config, "cache", None)  # None under -p no:cacheprovider
    cache = cache_provider.mkdir("mypy") if cache_provider is not None else tmp_path
    command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(cache)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


@pytest.mark.parametrize(("module", "statement", "forbidden"), [
    ("tutor/pack/text.py", "import tutor.sandbox.pool", "tutor.sandbox"),
    ("tutor/settings/config.py", "from tutor.grading import exercise", "tutor.grading"),
    ("tutor/settings/paths.py", "import torch", "torch"),
    ("tutor/child/checks/render.py", "from tutor.pack import models", "tutor.pack"),
    ("tutor/sandbox/wire.py", "import yaml", "yaml"),  # reached by the child through wire
    ("tutor/sandbox/limits.py", "from tutor.app import launch", "tutor.app"),
    ("tutor/app/place.py", "import torch.nn", "torch"),
    ("tutor/record/progress/answers.py", "from tutor.record import spaced_review as review", "tutor.record.spaced_review"),  # issue 31
    ("tutor/record/progress/storage.py", "from tutor.record.progress import drafts", "tutor.record.progress.drafts"),
    ("tutor/pack/quizzes/choice.py", "from tutor.record.progress import ProgressStore", "tutor.record"),  # issue 53
    ("tutor/words/i18n.py", "from tutor.settings import paths", "tutor.settings"),
    ("tutor/settings/config.py", "from tutor.pack import models", "tutor.pack"),
    ("tutor/sandbox/pool.py", "from tutor.child.worker import loop", "tutor.child"),
])
def test_a_forbidden_import_breaks_a_contract(tmp_path, module, statement, forbidden):
    """The contracts bite: one added import (inside a function: still counted) is reported."""
    copy = tmp_path / "tree"
    shutil.copytree(ROOT / "tutor", copy / "tutor", ignore=shutil.ignore_patterns("__pycache__", "_bundled"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    target = copy / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n\ndef _sneaky():\n    {statement}\n",
                      encoding="utf-8")
    result = _lint_imports(copy, extra_path=copy)
    assert result.returncode != 0
    said = " ".join(result.stdout.split())  # import-linter wraps long lines
    assert f"is not allowed to import {forbidden}" in said
    assert module.removesuffix(".py").replace("/", ".") in said


def test_an_import_circle_inside_the_worker_breaks_a_contract(tmp_path):
    """The worker's modules import one way (the judge loop over its transports over the keeper
    and the start-up helpers): a transport reaching back for the loop is a circle, reported."""
    copy = tmp_path / "tree"
    shutil.copytree(ROOT / "tutor", copy / "tutor", ignore=shutil.ignore_patterns("__pycache__", "_bundled"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    target = copy / "tutor/child/worker/pipes.py"
    target.write_text(target.read_text(encoding="utf-8")
                      + "\n\ndef _sneaky():\n    from tutor.child.worker import spawn\n", encoding="utf-8")
    result = _lint_imports(copy, extra_path=copy)
    assert result.returncode != 0
    assert "No cycles are allowed in tutor.child.worker" in result.stdout

