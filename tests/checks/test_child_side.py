"""The probe runs under interpreters that have torch but none of our dependencies."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import tutor.child.checks

CHILD_SIDE = Path(tutor.child.checks.__file__).parent
ALLOWED_THIRD_PARTY = {"torch", "numpy"}


def _run_time_nodes(tree: ast.AST):
    """Every node but those under ``if TYPE_CHECKING:`` (read by the type checker, never run)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            yield from (n for child in node.orelse for n in [child, *_run_time_nodes(child)])
            continue
        yield node
        yield from _run_time_nodes(node)


def test_child_side_imports_only_stdlib_torch_numpy():
    offenders = []
    for path in CHILD_SIDE.rglob("*.py"):
        for node in _run_time_nodes(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            for name in names:
                top = name.split(".")[0]
                if name.startswith(("tutor.child.checks", "tutor.words")) or top in ALLOWED_THIRD_PARTY or top in sys.stdlib_module_names:
                    continue
                offenders.append(f"{path.name}: {name}")
    assert offenders == []


def test_grading_never_imports_torch():
    code = ("import sys\nimport tutor.grading.exercise, tutor.grading.validate, tutor.cli.checking\n"
            "assert 'torch' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)
