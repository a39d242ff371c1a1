"""The probe runs under interpreters that have torch but none of our dependencies."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import tutor.checks

CHILD_SIDE = Path(tutor.checks.__file__).parent
ALLOWED_THIRD_PARTY = {"torch", "numpy"}


def test_child_side_imports_only_stdlib_torch_numpy():
    offenders = []
    for path in CHILD_SIDE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            for name in names:
                top = name.split(".")[0]
                if name.startswith("tutor.checks") or top in ALLOWED_THIRD_PARTY or top in sys.stdlib_module_names:
                    continue
                offenders.append(f"{path.name}: {name}")
    assert offenders == []


def test_grading_never_imports_torch():
    code = ("import sys\nimport tutor.grading.exercise, tutor.grading.validate, tutor.cli.checking\n"
            "assert 'torch' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)
