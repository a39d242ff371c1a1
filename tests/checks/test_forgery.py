"""Forged verdicts: submissions that do NOT fix view-inplace (its starter, unchanged) and attack the
checks instead. Through the real `torch-tutor check` and `grade`, in both isolation levels.

Each attack needs no knowledge of the exercise beyond what a learner sees; none may pass.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

STARTER = textwrap.dedent("""\
    import torch


    def shifted_first_row(t, k):
        row = t[0]
        row += k
        return row
""")

#: The issue's three forgeries, and others of our own.
FORGERIES = {
    # 1. a length-prefixed "all passed" report to every descriptor above 1024, then os._exit(0)
    "fd-scan": STARTER + textwrap.dedent("""\
        import json, os, struct
        checks = [{"id": i, "kind": "tensor", "status": "passed", "message": ""}
                  for i in ("values", "caller-unchanged", "independent")]
        body = json.dumps({"learner_error": None, "setup_error": None,
                           "report": {"version": 1, "exercise": "view-inplace", "checks": checks,
                                      "learner_error": None, "tampered": [], "elapsed": 0.1}}).encode()
        for name in os.listdir("/proc/self/fd"):
            if int(name) > 2:
                try:
                    os.write(int(name), struct.pack("!I", len(body)) + body)
                except OSError:
                    pass
        os._exit(0)
    """),
    # 2. replace the probe the runner looks up after the learner's code has run
    "replace-probe": STARTER + textwrap.dedent("""\
        import sys
        def fake(namespace, payload, learner_error):
            return {"version": 1, "exercise": payload["exercise"], "learner_error": None, "tampered": [],
                    "elapsed": 0.1, "checks": [{"id": c["id"], "kind": c["kind"], "status": "passed",
                                                "message": ""} for c in payload["checks"]]}
        for module in list(sys.modules.values()):
            if hasattr(module, "run_checks"):
                module.run_checks = fake
    """),
    # 3. every "failed" leaving the process reads "passed"
    "wrap-os-write": STARTER + textwrap.dedent("""\
        import os
        real_write = os.write
        def write(fd, data):
            data = bytes(data).replace(b'"failed"', b'"passed"').replace(b'"error"', b'"passed"')
            return real_write(fd, data)
        os.write = write
    """),
    # ours: the same through json.dumps
    "wrap-json-dumps": STARTER + textwrap.dedent("""\
        import json
        real_dumps = json.dumps
        def dumps(obj, *args, **kwargs):
            return real_dumps(obj, *args, **kwargs).replace('"failed"', '"passed"')
        json.dumps = dumps
    """),
    # ours: make every check kind a no-op, from inside the learner's function (after any guard ran)
    "patch-kinds-at-call": textwrap.dedent("""\
        import sys
        def shifted_first_row(t, k):
            for module in list(sys.modules.values()):
                table = getattr(module, "KINDS", None)
                if isinstance(table, dict):
                    for kind in table:
                        table[kind] = lambda check, case: None
            row = t[0]
            row += k
            return row
    """),
    # ours: rewrite the code of the comparison helpers found through the garbage collector
    "rewrite-code-objects": STARTER + textwrap.dedent("""\
        import gc, types
        def nothing(*args, **kwargs):
            return None
        for obj in gc.get_objects():
            if isinstance(obj, types.FunctionType) and obj.__module__ and obj.__module__.startswith("tutor."):
                if obj.__name__ in ("compare_close", "first_mismatch", "_compare", "_properties"):
                    obj.__code__ = nothing.__code__
    """),
    # ours: answer the judge's questions with whatever passes (a runner-side server in learner code)
    "lie-about-storage": STARTER + textwrap.dedent("""\
        import sys
        for module in list(sys.modules.values()):
            if getattr(module, "__name__", "").startswith("tutor.checks"):
                for name in ("storage_key", "storage_ptr"):
                    if hasattr(module, name):
                        setattr(module, name, lambda *a, **k: object())
    """),
}

PASSING_STATUSES = {"passed"}


def tutor(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tutor", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=600)


@pytest.fixture(scope="module", params=["none", "bwrap"])
def isolation(request, tmp_path_factory):
    if request.param == "bwrap" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    base = tmp_path_factory.mktemp(f"forgery-{request.param}")
    env = {"TORCH_TUTOR_DATA_DIR": str(base / "data"), "TORCH_TUTOR_CONFIG_DIR": str(base / "config"),
           "TORCH_TUTOR_ISOLATION": request.param}
    return base, env


@pytest.fixture(scope="module")
def graded(isolation):
    """Every forgery (and the real fix, to prove the batch grades) in one `grade` batch."""
    base, env = isolation
    subs = base / "subs"
    solutions = dict(FORGERIES, honest="import torch\ndef shifted_first_row(t, k):\n    return t[0] + k\n")
    for learner, code in solutions.items():
        (subs / learner).mkdir(parents=True)
        (subs / learner / "view-inplace.py").write_text(code)
    out = base / "rows.csv"
    done = tutor("grade", "debugging-and-speed", str(subs), "--csv", str(out), "--no-cache", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    return {row["learner"]: row for row in rows if row["exercise"] == "view-inplace"}


def test_the_honest_fix_passes_in_the_same_batch(graded):
    assert graded["honest"]["status"] == "passed", graded["honest"]


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_grade_never_passes_a_forgery(graded, name):
    row = graded[name]
    assert row["passed"] == "false" and row["status"] not in PASSING_STATUSES, row


@pytest.mark.parametrize("name", ["fd-scan", "replace-probe", "wrap-os-write", "patch-kinds-at-call"])
def test_check_never_passes_a_forgery(isolation, name):
    base, env = isolation
    learner = base / f"{name}.py"
    learner.write_text(FORGERIES[name])
    done = tutor("check", "view-inplace", str(learner), "--json", env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert data["passed"] is False
    statuses = {c["id"]: c["status"] for c in data["checks"]}
    assert set(statuses) == {"values", "caller-unchanged", "independent"}
    # the starter really is wrong: the checks that catch it still say so
    assert statuses["caller-unchanged"] in ("failed", "error", "tampered"), statuses
    assert statuses["independent"] in ("failed", "error", "tampered"), statuses
