"""The layer rules of docs/architecture.md, checked in fresh interpreters."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _modules_after(statement: str) -> set[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.splitlines()[-1]))


@pytest.mark.parametrize("module", ["tutor.core.models", "tutor.core.loader", "tutor.core.discovery",
                                    "tutor.core.config", "tutor.cli.main"])
def test_core_imports_neither_torch_nor_textual(module):
    loaded = _modules_after(f"import {module}")
    assert "torch" not in loaded
    assert "textual" not in loaded


def test_cli_list_does_not_import_torch():
    code = ("import sys\nfrom tutor.cli.main import main\nmain(['list'])\n"
            "assert 'torch' not in sys.modules and 'textual' not in sys.modules, 'heavy import'\n")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
