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


@pytest.mark.parametrize("module", ["tutor.pack.models", "tutor.pack.loader", "tutor.pack.discovery",
                                    "tutor.settings.config", "tutor.cli.main"])
def test_core_imports_neither_torch_nor_textual(module):
    loaded = _modules_after(f"import {module}")
    assert "torch" not in loaded
    assert "textual" not in loaded


def test_cli_list_does_not_import_torch():
    code = ("import sys\nfrom tutor.cli.main import main\nmain(['list'])\n"
            "assert 'torch' not in sys.modules and 'textual' not in sys.modules, 'heavy import'\n")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_cli_check_does_not_import_torch(tmp_path):
    """`check` runs the code in the sandbox: the tutor's own process never loads torch (it did for
    a while, through the seed limit of `--seed`, and every `check` started 2.5 s slower)."""
    from pathlib import Path

    pack = Path(__file__).resolve().parents[1] / "checks" / "fixtures" / "engine-pack"
    mine = tmp_path / "mine.py"
    mine.write_text("def mse(pred, target):\n    return ((pred - target) ** 2).mean().item()\n")
    code = ("import sys\nfrom tutor.cli.main import main\n"
            f"code = main(['--data-dir', {str(tmp_path)!r}, 'check', 'metric', {str(mine)!r}, '--pack', {str(pack)!r},"
            " '--seed', '7'])\n"
            "assert 'torch' not in sys.modules and 'textual' not in sys.modules, 'heavy import'\nsys.exit(code)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("module", ["tutor.child.worker.loop", "tutor.child.checks.server", "tutor.child.checks.kinds"])
def test_the_child_side_imports_none_of_our_dependencies(module):
    """The worker may run under another interpreter (the `python` setting) with torch but none of
    our dependencies: importing the child side loads no pydantic, yaml or textual, nor the tutor's
    settings, pack or record (the real imports, package __init__ files included, which
    import-linter does not follow)."""
    loaded = _modules_after(f"import {module}")
    for name in ("pydantic", "yaml", "textual", "platformdirs", "tutor.settings", "tutor.pack", "tutor.record",
                 "tutor.grading", "tutor.app"):
        assert name not in loaded, f"{module} imports {name}"


@pytest.mark.parametrize("module", ["tutor.pack.loader", "tutor.record.progress", "tutor.record.spaced_review",
                                    "tutor.pack.discovery", "tutor.pack.packcache"])
def test_core_imports_nothing_above_it(module):
    loaded = _modules_after(f"import {module}")
    # the words (tutor/words/: the UI's table and the check engine's sentences) are a leaf below
    # every side, the child side's included: none of it is above the pack or the record
    assert not {name for name in loaded if name.startswith(("tutor.sandbox", "tutor.grading", "tutor.app",
                                                             "tutor.child", "tutor.cli"))}


WORDS_ONLY = {"tutor.words", "tutor.words.engine"}


def test_the_check_engines_words_import_nothing():
    """tutor/words/engine.py, the check engine's sentences, is imported by the UI's table and by
    the child side: it stays a module of plain data that loads nothing with it."""
    loaded = _modules_after("import tutor.words.engine")
    assert {name for name in loaded if name.startswith("tutor.")} == WORDS_ONLY
    assert {name for name in loaded if not name.startswith("tutor")} - _modules_after("pass") <= {"__future__"}
