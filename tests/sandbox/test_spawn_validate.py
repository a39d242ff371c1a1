"""The built-in pack validates in spawn mode too: every example, solution and starter of
*Debugging and speed* behaves as the pack says when each run gets its own single-use interpreter.

Each of its runs takes a spare, two interpreters that import torch (docs/performance.md, "Both
modes in CI")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.skipif((os.environ.get("TORCH_TUTOR_TEST_MODES") or "all") not in ("all", "spawn", "fork,spawn", "spawn,fork"),
                    reason="TORCH_TUTOR_TEST_MODES leaves spawn mode out")
def test_the_builtin_pack_validates_in_spawn_mode(tmp_path):
    # Two spares, as docs/performance.md advises for spawn mode: the next run's spare warms up
    # while this one runs.
    env = {**os.environ, "TORCH_TUTOR_SANDBOX_MODE": "spawn", "TORCH_TUTOR_WORKERS": "2",
           "TORCH_TUTOR_DATA_DIR": str(tmp_path / "data"),
           "TORCH_TUTOR_CONFIG_DIR": str(tmp_path / "config")}
    done = subprocess.run([sys.executable, "-m", "tutor", "validate", str(REPO / "lessons" / "debugging-and-speed")],
                          capture_output=True, text=True, env=env, timeout=1200)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
