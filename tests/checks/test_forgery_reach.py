"""Forged verdicts that change no code of the checker's (issue 50): the learner's function reaches
the runner's live records and edits them. Each one is an exercise's unfixed starter; on the code
before issue 50 each passed (the checks it aims at: every one), through the engine, `check` and
`grade`, in both sandbox modes. None may pass now.

- **Walking the stack.** The learner's function follows ``sys._getframe()`` up to the frame of the
  runner's ``Server.call`` and edits what it finds there: a forward hook's records of the modes a
  forward ran under, the server's received objects and tensors (the refresh and the write-back read
  them), the storages it reports.
- **A profile function.** ``sys.setprofile``, installed by the learner's function as it returns,
  sees the return of the runner's measuring functions and of ``Server.answer`` and edits their
  results in place; a flag the learner's function sets (cleared when a measurement starts) tells
  the canaries, which call the judge's functions, from the real questions.
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
from pathlib import Path

import pytest

from tests.checks.conftest import by_id, make_exercise
from tutor.pack.loader import load_pack
from tutor.grading.exercise import check_exercise

pytestmark = [pytest.mark.both_modes, pytest.mark.slow]

PACK = Path(__file__).resolve().parents[2] / "lessons" / "debugging-and-speed"

#: Up the stack to the frame of the runner's Server.call: its locals (the server, the watcher).
FIND_CALL = textwrap.dedent("""\
    import sys as _sys

    def _call_frame():
        frame = _sys._getframe(1)
        while frame is not None:
            seen = frame.f_locals
            if "watcher" in seen and type(seen.get("self")).__name__ == "Server":
                return seen
            frame = frame.f_back
        return None
""")

#: no-grad-or-inference, unfixed: the records say grad off (validate) and inference on (serve).
NO_GRAD = FIND_CALL + textwrap.dedent("""\
    import torch

    def _forge(**modes):
        found = _call_frame()
        if found is not None and found["watcher"] is not None:
            for record in found["watcher"].seen:
                record.update(modes)

    def validate(model, x):
        out = model(x).detach()
        _forge(grad_enabled=False, inference_mode=False)
        return out

    def serve(model, x):
        with torch.no_grad():
            out = model(x)
        _forge(grad_enabled=False, inference_mode=True)
        with torch.inference_mode():
            return out.clone()
""")

#: autocast-bf16, unfixed: the records say autocast bfloat16 (the starter fails autocast-during
#: honestly); the cast of the caller's model is hidden from the write-back (received objects,
#: tensors and storages dropped) and from a refresh (a float32 copy left where it reads the model).
AUTOCAST = FIND_CALL + textwrap.dedent("""\
    import copy
    import torch

    def run_mixed(model, x):
        found = _call_frame()
        untouched = copy.deepcopy(model)
        out = model.to(torch.bfloat16)(x.to(torch.bfloat16))
        if found is not None:
            server, watcher = found["self"], found["watcher"]
            if watcher is not None:
                for record in watcher.seen:
                    record["autocast"] = "bfloat16"
            for key, obj in list(server.received_objects.items()):
                if obj is model:
                    del server.received_objects[key]
            server.received_tensors.clear()
            server.received_storages.clear()
            for index, obj in enumerate(server.objects):
                if obj is model:
                    server.objects[index] = untouched
        return out
""")

#: view-inplace, unfixed: the argument's storage is dropped from what the server reports.
VIEW_INPLACE = FIND_CALL + textwrap.dedent("""\
    import torch

    def shifted_first_row(t, k):
        row = t[0]
        row += k
        found = _call_frame()
        if found is not None:
            found["self"].received_storages.clear()
            found["self"].received_tensors.clear()
        return row
""")

#: A profile function that edits what the runner's measuring functions and Server.answer return,
#: while ``_mine`` says a real question is being measured.
PROFILER = textwrap.dedent("""\
    import sys as _sys
    _mine = []

    def _edit(frame, event, arg):
        name = frame.f_code.co_name
        if not frame.f_code.co_filename.endswith("server.py"):
            return
        if event == "call" and name in ("_time_calls", "profile_calls", "call"):
            _mine.clear()
        if event != "return" or not _mine:
            return
        if name == "_time_calls" and isinstance(arg, dict):
            arg["fast"][:] = [t / 100 for t in arg["fast"]]
        elif name == "profile_calls" and isinstance(arg, list):
            for run in arg:
                top = max((row[0] for row in run.values()), default=1.0)
                run["aten::bmm"] = [top * 10, top * 10, 1, 1]
        elif name == "answer" and isinstance(arg, tuple) and isinstance(arg[0], dict):
            answer = arg[0]
            if "held" in answer:
                answer["held"] = 1024
            for container in ((answer.get("writeback") or {}).get("containers") or {}).values():
                items = container.get("items") if isinstance(container, dict) else None
                if isinstance(items, list) and items:
                    items.extend([items[-1]] * 3)

    def _install():
        _mine.append(1)
        _sys.setprofile(_edit)
""")

#: The instructor-style batched product (issue 17's), the starter's loop: a value, a ratio, a profile.
BATCHED = PROFILER + textwrap.dedent("""\
    import torch

    def batched(a, b):
        try:
            return torch.stack([a[i] @ b[i] for i in range(a.shape[0])])
        finally:
            _install()
""")
BATCHED_CHECKS = [
    {"id": "values", "kind": "tensor", "setup": "a = torch.randn(64, 8, 8)\nb = torch.randn(64, 8, 8)",
     "value": "batched(a, b)", "close_to": "torch.bmm(a, b)", "atol": 1e-4},
    {"id": "fast", "kind": "timing",
     "setup": "a = torch.randn(64, 8, 8)\nb = torch.randn(64, 8, 8)\n"
              "def loop():\n    return torch.stack([a[i] @ b[i] for i in range(a.shape[0])])",
     "fast": "lambda: batched(a, b)", "slow": "loop", "ratio": {"min": 5}, "warmup": 1, "repeat": 7},
    {"id": "one-product", "kind": "profile", "setup": "a = torch.randn(64, 8, 8)\nb = torch.randn(64, 8, 8)",
     "workload": "lambda: batched(a, b)", "top1_in": ["aten::bmm"], "warmup": 1, "repeat": 3},
]

#: accumulate-graph, a wrong fix that keeps every graph in a list of its own: `held` says 1 KiB.
ACCUMULATE = PROFILER + textwrap.dedent("""\
    import torch.nn.functional as F

    _KEPT = []

    def log_losses(model, batches):
        logged = []
        for x, y in batches:
            loss = F.mse_loss(model(x), y)
            _KEPT.append(loss)
            logged.append(loss.item())
        _install()
        return logged
""")

#: profiler-hotspot's starter: the written-back `calls` list is padded (several-runs).
def _hotspot_starter() -> str:
    return _exercise("profiler-hotspot").starter


def _exercise(exercise_id: str):
    return next(step for _lesson, step in load_pack(PACK).exercises() if step.id == exercise_id)


def _hotspot() -> str:
    starter = _hotspot_starter().replace("def top_ops(fn, k):", "def _top_ops(fn, k):")
    return PROFILER + starter + "\n\ndef top_ops(fn, k):\n    try:\n        return _top_ops(fn, k)\n" \
                                "    finally:\n        _install()\n"


#: exercise -> (the forgery, the checks it made pass before issue 50)
BUILTIN = {
    "no-grad-or-inference": (NO_GRAD, None),
    "autocast-bf16": (AUTOCAST, ["autocast-during", "autocast-off-after", "close-to-float32"]),
    "view-inplace": (VIEW_INPLACE, None),
    "accumulate-graph": (ACCUMULATE, ["memory-flat"]),
    "profiler-hotspot": (None, ["several-runs"]),
}


def _code(exercise_id: str) -> str:
    code, _ = BUILTIN[exercise_id]
    return code if code is not None else _hotspot()


def _forged(exercise_id: str, statuses: dict) -> bool:
    """Whether the forgery got what it aimed at: every check passed, or the ones it targets."""
    _, aimed = BUILTIN[exercise_id]
    wanted = aimed if aimed is not None else list(statuses)
    return all(statuses[check] == "passed" for check in wanted)


@pytest.mark.parametrize("exercise_id", sorted(BUILTIN))
def test_a_forgery_that_reaches_the_runners_records_never_passes(sandbox, exercise_id):
    exercise = _exercise(exercise_id)
    report = check_exercise(sandbox, exercise, _code(exercise_id))
    statuses = {check.id: check.status for check in report.checks}
    assert not report.passed, statuses
    assert not _forged(exercise_id, statuses), statuses


def test_a_profile_function_that_edits_measurements_never_passes(grade):
    report = grade(BATCHED, *BATCHED_CHECKS, timeout=60)
    checks = by_id(report)
    assert checks["values"].status in ("passed", "error", "tampered"), checks["values"].message
    for check_id in ("fast", "one-product"):
        assert checks[check_id].status != "passed", (check_id, checks[check_id].message)
    assert not report.passed


@pytest.mark.parametrize("exercise_id", ["view-inplace", "no-grad-or-inference"])
def test_the_reference_solution_still_passes(sandbox, exercise_id):
    exercise = _exercise(exercise_id)
    report = check_exercise(sandbox, exercise, exercise.solution)
    assert report.passed, [(c.id, c.status, c.message) for c in report.checks if not c.passed]


# --------------------------------------------------------------------------- through check and grade

def _tutor(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tutor", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=900)


@pytest.fixture(scope="module", params=["none", "bwrap", "bwrap-spawn"])
def setup(request, tmp_path_factory):
    level, _, mode = request.param.partition("-")
    if level == "bwrap" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    base = tmp_path_factory.mktemp(f"reach-{request.param}")
    return base, {"TORCH_TUTOR_DATA_DIR": str(base / "data"), "TORCH_TUTOR_CONFIG_DIR": str(base / "config"),
                  "TORCH_TUTOR_ISOLATION": level, "TORCH_TUTOR_SANDBOX_MODE": mode or "fork"}


def test_grade_never_passes_a_forgery_that_reaches_the_runners_records(setup):
    base, env = setup
    learner = base / "subs" / "forger"
    learner.mkdir(parents=True)
    for exercise_id in BUILTIN:
        (learner / f"{exercise_id}.py").write_text(_code(exercise_id))
    out = base / "rows.csv"
    unisolated = ["--unisolated"] if env["TORCH_TUTOR_ISOLATION"] == "none" else []
    done = _tutor("grade", "debugging-and-speed", str(learner.parent), "--csv", str(out), "--no-cache",
                  *unisolated, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {row["exercise"]: row for row in csv.DictReader(io.StringIO(out.read_text()))}
    for exercise_id in BUILTIN:
        assert rows[exercise_id]["passed"] == "false", rows[exercise_id]


@pytest.mark.parametrize("exercise_id", ["no-grad-or-inference", "accumulate-graph"])
def test_check_never_passes_a_forgery_that_reaches_the_runners_records(setup, exercise_id):
    base, env = setup
    learner = base / f"{exercise_id}.py"
    learner.write_text(_code(exercise_id))
    done = _tutor("check", exercise_id, str(learner), "--json", env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads(done.stdout)
    statuses = {c["id"]: c["status"] for c in data["checks"]}
    assert data["passed"] is False and not _forged(exercise_id, statuses), statuses


# --------------------------------------------------------------------------- the routes around it

SERVE_NO_GRAD = "import torch\ndef serve(model, x):\n    with torch.no_grad():\n        return model(x)\n"
MODE = {"id": "m", "kind": "mode", "setup": "model = nn.Linear(4, 2); x = torch.randn(3, 4)", "module": "model",
        "call": "serve(model, x)", "during": {"inference_mode": True}}

#: Each reaches for the server another way, with serve's forward run under no_grad (it must fail).
ROUTES = {
    # the driver's frame is reachable, and its generator; the generator's frame is not, and resuming
    # it from the learner's code (to end the measurement early) is tampering
    "resume-the-server": textwrap.dedent("""\
        import sys, torch
        def serve(model, x):
            driver = sys._getframe(1)
            for value in list(driver.f_locals.values()):
                if type(value).__name__ == "generator":
                    try:
                        value.gi_frame
                    except PermissionError as refused:
                        print("refused:", refused)
                    with torch.inference_mode():
                        value.send(None)
            with torch.no_grad():
                return model(x)
    """),
    # torch's hook tables: the watcher's hook taken out for the real forward and called by hand
    # under inference mode (its records: one forward "under inference")
    "call-the-hook": textwrap.dedent("""\
        import torch
        def serve(model, x):
            hooks = dict(model._forward_pre_hooks)
            model._forward_pre_hooks.clear()
            with torch.no_grad():
                out = model(x)
            model._forward_pre_hooks.update(hooks)
            with torch.inference_mode():
                for hook in hooks.values():
                    hook(model, (x,))
                return out.clone()
    """),
    # a forward hook of the learner's own, run by torch in the real forward, calls the watcher's
    # hook and its recorder's send under inference mode (the watcher's own hook taken out)
    "hook-of-mine": textwrap.dedent("""\
        import torch
        def serve(model, x):
            ours = dict(model._forward_pre_hooks)
            def mine(module, args):
                with torch.inference_mode():
                    for hook in ours.values():
                        hook(module, args)
                        for cell in hook.__closure__ or ():
                            if getattr(cell.cell_contents, "__name__", "") == "send":
                                cell.cell_contents(("pre", model, None, None))
            model._forward_pre_hooks.clear()
            handle = model.register_forward_pre_hook(mine)
            with torch.no_grad():
                out = model(x)
            handle.remove()
            model._forward_pre_hooks.update(ours)
            return out
    """),
    # learner code run by the server's own code (an exception's __str__, as the server explains it)
    # walks up to the server's frames
    "reentrant-dunder": FIND_CALL + textwrap.dedent("""\
        import torch
        class Sneaky(Exception):
            def __str__(self):
                found = _call_frame()
                if found is not None and found["watcher"] is not None:
                    for record in found["watcher"].seen:
                        record.update(grad_enabled=False, inference_mode=True)
                return "sneaky"
        def serve(model, x):
            with torch.no_grad():
                model(x)
            raise Sneaky()
    """),
    # an audit hook sees the events the server's own code raises, frames among their arguments: the
    # seal's hook refuses a new one (CPython then drops it without a word)
    "audit-hook": textwrap.dedent("""\
        import sys, torch
        def _spy(event, args):
            for arg in args:
                if type(arg).__name__ == "frame":
                    frame = arg
                    while frame is not None:
                        watcher = frame.f_locals.get("watcher")
                        if watcher is not None and hasattr(watcher, "seen"):
                            for record in watcher.seen:
                                record.update(grad_enabled=False, inference_mode=True)
                        frame = frame.f_back
        try:
            sys.addaudithook(_spy)
        except PermissionError as refused:
            print("refused:", refused)
        def serve(model, x):
            with torch.no_grad():
                return model(x)
    """),
}


def test_serve_without_inference_fails_honestly(grade):
    assert grade(SERVE_NO_GRAD, MODE).checks[0].status == "failed"


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_every_route_to_the_servers_records_is_shut(grade, route):
    report = grade(ROUTES[route], MODE)
    check = report.checks[0]
    assert check.status != "passed", (route, check.message)
    if route == "resume-the-server":
        assert check.status == "tampered", check.message
        assert "refused: the checker's own frames are out of your code's reach" in report.run.stdout
    if route == "audit-hook":  # CPython drops a hook another refused, silently (sys.addaudithook)
        assert "refused" not in report.run.stdout and check.status == "failed", check.message
