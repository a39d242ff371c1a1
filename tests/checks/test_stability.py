"""Verdicts do not flake: a cheap version of bench/stability.py (which runs 30x per exercise)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.checks.conftest import FIXTURE_PACK
from tutor.core.loader import load_pack

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import stability  # noqa: E402


@pytest.mark.slow
def test_fixture_verdicts_are_stable_with_a_busy_core(sandbox):
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        seen = stability.verdicts(sandbox, load_pack(FIXTURE_PACK), runs=3, log=lambda _line: None)
    finally:
        spinner.kill()
        spinner.wait()
    assert stability.problems(seen) == []
    assert len(seen) == 2 * len(load_pack(FIXTURE_PACK).exercises())
