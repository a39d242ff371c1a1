"""A home folder under /tmp (containers often set HOME=/tmp) keeps bubblewrap's isolation.

Regression: the home was covered with a tmpfs of its own *inside* the private /tmp, and the
`--remount-ro` of that cover failed ("Can't remount readonly on /newroot/tmp/...: Invalid
argument"), so the tutor fell back to limits only: network reachable, no home hidden.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.sandbox.conftest import _bwrap_reason

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import json, os, subprocess, sys, tempfile
from tutor.sandbox import backends, isolation as iso
from tutor.sandbox.backends import bwrap
info = backends.choose("auto", sys.executable)
seen = None
if info.level == "bwrap":
    scratch = tempfile.mkdtemp(prefix="torch-tutor-probe-")  # as a sandbox's scratch root
    cmd = bwrap.bwrap_command(iso.inspect_interpreter(sys.executable), scratch, bwrap=info.bwrap) + [
        sys.executable, "-c", "import os, sys; print(os.path.exists(sys.argv[1]))", sys.argv[1]]
    done = subprocess.run(cmd, capture_output=True, text=True, env=iso.scrubbed_env())
    seen = done.stdout.strip() or done.stderr.strip()
    os.rmdir(scratch)
print(json.dumps({"level": info.level, "reason": info.reason, "seen": seen}))
"""


@pytest.mark.skipif(bool(_bwrap_reason()), reason="bubblewrap does not work here")
@pytest.mark.parametrize("where", ["below", "is"])
def test_a_home_under_tmp_still_gets_bubblewrap_and_stays_hidden(where):
    root = Path(tempfile.mkdtemp(prefix="tutor-home-", dir="/tmp"))
    try:
        root.chmod(0o755)
        home = root / "home" if where == "below" else root
        home.mkdir(exist_ok=True)
        secret = home / "secret.txt"
        secret.write_text("not for runs")
        env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO)}
        done = subprocess.run([sys.executable, "-c", PROBE, str(secret)], capture_output=True, text=True,
                              env=env, timeout=120, cwd=str(REPO))
        assert done.returncode == 0, done.stderr
        data = json.loads(done.stdout.splitlines()[-1])
        assert data["level"] == "bwrap", data["reason"]
        assert data["seen"] == "False", data  # the private /tmp covers the home
    finally:
        shutil.rmtree(root, ignore_errors=True)
