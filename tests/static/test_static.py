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


#: Every import circle between two modules of tutor/ (imports inside functions and under
#: TYPE_CHECKING count), as sorted lists, printed as JSON: grimp's graph, Tarjan's components.
_CIRCLES = """
import json, sys
import grimp

graph = grimp.build_graph("tutor", cache_dir=None)
index, low, stack, on_stack, found = {}, {}, [], set(), []
for root in sorted(graph.modules):
    if root in index:
        continue
    work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
    index[root] = low[root] = len(index)
    stack.append(root)
    on_stack.add(root)
    while work:
        node, children = work[-1]
        child = next(children, None)
        if child is not None:
            if child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[node])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))
print(json.dumps(sorted(found)))
"""


def _import_circles(tree: Path) -> list[list[str]]:
    import json
    import os

    done = subprocess.run([sys.executable, "-c", _CIRCLES], cwd=tree, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(tree)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_no_import_circle_between_two_modules():
    """No module of tutor/ reaches itself through the imports of others: the layers order the
    packages, and inside a package the modules import one way too (issue 53: the app's screens
    and the app, the checks' context and its session, the isolation backends and their registry)."""
    assert _import_circles(ROOT) == []


def test_a_lazy_import_that_closes_a_circle_is_found(tmp_path):
    """A screen that reaches back for the app inside a function closes a circle: reported."""
    copy = tmp_path / "tree"
    shutil.copytree(ROOT / "tutor", copy / "tutor", ignore=shutil.ignore_patterns("__pycache__", "_bundled"))
    target = copy / "tutor/app/state.py"
    target.write_text(target.read_text(encoding="utf-8") + "\n\ndef _sneaky():\n    from tutor.app.app import TutorApp\n",
                      encoding="utf-8")
    circles = _import_circles(copy)
    assert len(circles) == 1
    assert {"tutor.app.app", "tutor.app.state"} <= set(circles[0])
