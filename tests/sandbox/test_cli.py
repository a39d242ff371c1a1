"""`torch-tutor run` and `doctor` through the real command."""

from __future__ import annotations

import json
import subprocess
import sys


def tutor(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tutor", *args], capture_output=True, text=True,
                          timeout=300, **kwargs)


def test_run_prints_output_and_the_learners_traceback(tmp_path):
    script = tmp_path / "lesson.py"
    script.write_text("print('forward ok')\nx = None\nx.shape\n")
    done = tutor("run", str(script), "--isolation", "none")
    assert done.returncode == 1
    assert done.stdout == "forward ok\n"
    assert f'File "{script}", line 3, in <module>' in done.stderr
    assert "AttributeError: 'NoneType' object has no attribute 'shape'" in done.stderr
    assert "[error]" in done.stderr


def test_run_json_with_timeout_and_memory(tmp_path):
    script = tmp_path / "spin.py"
    script.write_text("while True:\n    pass\n")
    done = tutor("run", str(script), "--json", "--timeout", "1", "--memory", "256", "--isolation", "none")
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["status"] == "timeout"
    assert result["message"] == "Stopped after 1 s — still running; an infinite loop?"


def test_run_rejects_a_missing_file():
    done = tutor("run", "/nonexistent/file.py")
    assert done.returncode == 2 and "cannot read" in done.stderr


def test_doctor_reports_torch_isolation_limits_and_warmup():
    done = tutor("doctor", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    import torch  # the test process may import torch; the tutor's parent side never does

    assert report["torch"] == torch.__version__
    assert report["isolation"]["level"] in ("bwrap", "none") and report["isolation"]["reason"]
    assert report["limits"]["wall_time"] == 10.0 and report["warmup_s"] > 0
    assert report["test_run"]["status"] == "ok"
    # Preloading works whoever the worker runs as (as root under bwrap it is nobody, and its own
    # /tmp must be writable: torch._dynamo failed to preload when it was not).
    assert report["preload_failures"] == {}
    if report["isolation"]["level"] == "bwrap":
        assert report["isolation"]["bwrap_source"] in ("system", "bundled") and report["isolation"]["bwrap"]
    # fork mode is Linux's default; every limit holds on Linux
    assert report["mode"]["mode"] == "fork" and report["mode"]["requested"] == "auto"
    assert report["limits_not_enforced"] == [] and report["os_helpers"] is True


def test_doctor_in_spawn_mode_and_without_the_linux_helpers():
    """As on macOS: spawn mode, and the limits this OS cannot enforce are named."""
    import os

    env = {**os.environ, "TORCH_TUTOR_PORTABLE_CHILD": "1"}
    done = tutor("doctor", "--sandbox-mode", "spawn", "--isolation", "none", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "mode:       spawn — each run gets a single-use interpreter started ahead of time" in done.stdout
    assert "not enforced on this OS: memory_mb, processes" in done.stdout
    assert "spare (judge + runner) RSS" in done.stdout
    # As on macOS (where the template counts its threads with proc_pidinfo), runs are forked.
    assert "  runners: forked from a template that loaded torch and ran nothing" in done.stdout
