"""Where the docs and the tool disagreed (issue 27, item 8): setup.sh's TORCH_PIP_ARGS="" must clear
the default index as docs/authoring.md says, and the scaffold must not claim that graders cache
results per version (the cache follows each exercise's content)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tutor.pack.scaffold import scaffold
from tutor.grading.autograder import SETUP_SH, TORCH_CPU_INDEX

FAKE_PYTHON = """#!/usr/bin/env bash
# Stands in for an interpreter: answers setup.sh's probes, makes a "venv" of itself, logs pip calls.
if [ "$1" = "-c" ]; then echo 3.11; exit 0; fi
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
  mkdir -p "$3/bin"; cp "$0" "$3/bin/python"; printf '#!/bin/sh\\nexit 0\\n' > "$3/bin/torch-tutor"
  chmod +x "$3/bin/python" "$3/bin/torch-tutor"; exit 0
fi
echo "$*" >> "$(dirname "$0")/../../pip.log"
"""


def _setup(tmp_path: Path, torch_pip_args: str | None) -> list[str]:
    source = tmp_path / "source"
    (source / "wheels").mkdir(parents=True)
    (source / "wheels" / "torch_tutor-1-py3-none-any.whl").write_text("")
    script = source / "setup.sh"
    script.write_text(SETUP_SH.format(pack_id="p", pack_version="1", torch="2.13.0", index=TORCH_CPU_INDEX,
                                      visibility="visible", python="3.11"))
    python = tmp_path / "fake-python"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    root = tmp_path / "root"
    root.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "TORCH_PIP_ARGS"}
    env.update(AUTOGRADER_ROOT=str(root), PYTHON=str(python))
    if torch_pip_args is not None:
        env["TORCH_PIP_ARGS"] = torch_pip_args
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return (root / "pip.log").read_text().splitlines()


@pytest.mark.parametrize("value, index", [(None, True), ("", False),
                                          ("--no-index --find-links /w", False)])
def test_torch_pip_args_replaces_the_index_even_when_empty(tmp_path, value, index):
    torch_line = next(line for line in _setup(tmp_path, value) if "torch==2.13.0" in line)
    assert (f"--index-url {TORCH_CPU_INDEX}" in torch_line) == index, torch_line
    if value:
        assert value in torch_line


def test_the_scaffold_says_what_the_grade_cache_follows(tmp_path):
    scaffold(tmp_path / "p")
    text = (tmp_path / "p" / "pack.yaml").read_text()
    assert "cache results per version" not in text
    assert "the grade cache follows each exercise's content, not this number" in text
    docs = (Path(__file__).parents[2] / "docs" / "authoring.md").read_text()
    assert "The grade cache does not depend on it" in docs
