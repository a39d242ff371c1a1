"""Forged verdicts: submissions that do NOT fix view-inplace (its starter, unchanged) and attack the
checks instead. Through the real `torch-tutor check` and `grade`, in both isolation levels.

Each attack needs no knowledge of the exercise beyond what a learner sees; none may pass.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

#: What a check says once the runner's seal saw the checker's code replaced (tutor.child.checks.seal).
SEAL_BROKEN = "tampering detected: the checker's own code in your code's process was replaced"

#: The trust boundary: in fork and in spawn mode (tests/checks/conftest.py, sandbox_modes).
pytestmark = pytest.mark.both_modes

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
    # ours, knowing the judge/runner design: the runner's answers lie about what only it can see
    # (the caller's tensor "unchanged", the result "not sharing memory"); the values are right
    "lie-about-effects": STARTER + textwrap.dedent("""\
        import sys
        server = sys.modules.get("tutor.child.checks.server")
        if server is not None:
            real_key = server.Server.storage_key
            def storage_key(self, tensor, blobs, storages):
                known, self.received_storages = self.received_storages, {}
                try:
                    return real_key(self, tensor, blobs, storages)
                finally:
                    self.received_storages = known
            server.Server.storage_key = storage_key
            server.Server.writeback = lambda self, out: {}
    """),
    # ours: lie about effects only when the call's tensors are the ones the published setups draw
    # under the pack's seed (the canaries' tensors are not): the canaries never see a lie
    "lie-about-known-inputs": STARTER + textwrap.dedent("""\
        import sys, torch
        server = sys.modules.get("tutor.child.checks.server")
        if server is not None:
            known = set()
            for r, c, transposed in ((3, 4, False), (5, 2, False), (4, 3, True)):
                torch.manual_seed(0)
                known.add((torch.randn(c, r) if transposed else torch.randn(r, c)).numpy().tobytes())
            real_call, real_key, real_writeback = server.HANDLERS["call"], server.Server.storage_key, server.Server.writeback
            def hidden_key(self, tensor, blobs, storages):
                known_storages, self.received_storages = self.received_storages, {}
                try:
                    return real_key(self, tensor, blobs, storages)
                finally:
                    self.received_storages = known_storages
            def call(self, request, blobs, out):
                if not any(bytes(blob) in known for blob in blobs):
                    return real_call(self, request, blobs, out)
                server.Server.storage_key = hidden_key
                server.Server.writeback = lambda self, out: {}
                try:
                    return real_call(self, request, blobs, out)
                finally:
                    server.Server.storage_key, server.Server.writeback = real_key, real_writeback
            server.HANDLERS["call"] = call  # how the runner dispatches a call
    """),
    # ours: lie about effects only in requests that seed the runner (a case's first call), which
    # a canary asked after the real question never did
    "lie-when-seeded": STARTER + textwrap.dedent("""\
        import sys
        server = sys.modules.get("tutor.child.checks.server")
        if server is not None:
            real_call, real_key, real_writeback = server.HANDLERS["call"], server.Server.storage_key, server.Server.writeback
            def hidden_key(self, tensor, blobs, storages):
                known_storages, self.received_storages = self.received_storages, {}
                try:
                    return real_key(self, tensor, blobs, storages)
                finally:
                    self.received_storages = known_storages
            def call(self, request, blobs, out):
                if "seed" not in request:
                    return real_call(self, request, blobs, out)
                server.Server.storage_key = hidden_key
                server.Server.writeback = lambda self, out: {}
                try:
                    return real_call(self, request, blobs, out)
                finally:
                    server.Server.storage_key, server.Server.writeback = real_key, real_writeback
            server.HANDLERS["call"] = call  # how the runner dispatches a call
    """),
    # issue 26: lie about effects only while the learner's own function runs (a canary calls a
    # function of the judge's, so it never sees a lie): the runner's seal sees the class changed
    "lie-while-mine-runs": STARTER + textwrap.dedent("""\
        import sys
        server = sys.modules.get("tutor.child.checks.server")
        if server is not None:
            _mine, _inside = shifted_first_row, []
            def shifted_first_row(t, k):
                _inside.append(1)
                return _mine(t, k)
            real_key, real_writeback = server.Server.storage_key, server.Server.writeback
            def storage_key(self, tensor, blobs, storages):
                if not _inside:
                    return real_key(self, tensor, blobs, storages)
                known_storages, self.received_storages = self.received_storages, {}
                try:
                    return real_key(self, tensor, blobs, storages)
                finally:
                    self.received_storages = known_storages
            def writeback(self, out):
                if not _inside:
                    return real_writeback(self, out)
                _inside.clear()
                return {"storages": {}, "tensors": {}, "modules": {}, "containers": {}}
            server.Server.storage_key, server.Server.writeback = storage_key, writeback
    """),
}

PASSING_STATUSES = {"passed"}
PACK = Path(__file__).resolve().parents[2] / "lessons" / "debugging-and-speed"


def tutor(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tutor", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=600)


@pytest.fixture(scope="module", params=["none", "bwrap", "bwrap-spawn"])
def isolation(request, tmp_path_factory):
    level, _, mode = request.param.partition("-")  # the sandbox's two modes under bubblewrap
    if level == "bwrap" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    base = tmp_path_factory.mktemp(f"forgery-{request.param}")
    env = {"TORCH_TUTOR_DATA_DIR": str(base / "data"), "TORCH_TUTOR_CONFIG_DIR": str(base / "config"),
           "TORCH_TUTOR_ISOLATION": level, "TORCH_TUTOR_SANDBOX_MODE": mode or "fork"}
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
    unisolated = ["--unisolated"] if env["TORCH_TUTOR_ISOLATION"] == "none" else []
    done = tutor("grade", "debugging-and-speed", str(subs), "--csv", str(out), "--no-cache", *unisolated, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    return {row["learner"]: row for row in rows if row["exercise"] == "view-inplace"}


def test_the_honest_fix_passes_in_the_same_batch(graded):
    assert graded["honest"]["status"] == "passed", graded["honest"]


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_grade_never_passes_a_forgery(graded, name):
    row = graded[name]
    assert row["passed"] == "false" and row["status"] not in PASSING_STATUSES, row


def test_a_runner_that_lies_about_effects_is_caught_as_tampering(graded):
    """Without the canaries this one passes: its values are right and its lies are consistent."""
    row = graded["lie-about-effects"]
    assert row["passed"] == "false", row
    assert "tampering detected" in row["message"] or row["status"] == "tampered", row


#: What `torch-tutor check` runs for a learner (its Check in the app), forged.
CHECKED = ["fd-scan", "replace-probe", "wrap-os-write", "patch-kinds-at-call", "lie-about-effects",
           "lie-about-known-inputs", "lie-when-seeded", "lie-while-mine-runs"]


@pytest.fixture(scope="module")
def checked(isolation):
    """Each forgery through what `torch-tutor check` does once it has read the file: the settings'
    sandbox for the learner's Check (started once per setup, as the app keeps one) and
    ``check_exercise`` with the built-in exercise, as JSON. The command itself, end to end, is
    ``test_the_check_command_never_passes_a_forgery``."""
    from tutor.settings.config import load_settings
    from tutor.pack.loader import load_pack
    from tutor.grading.exercise import check_exercise
    from tutor.grading.sandboxes import sandbox_for

    base, env = isolation
    settings = load_settings(environ={**os.environ, **env}, config_file=base / "config" / "config.toml")
    pack = load_pack(PACK)
    _, exercise = pack.find_exercise("view-inplace")
    reports = {}
    with sandbox_for(settings) as sandbox:
        sandbox.start()
        for name in CHECKED:
            reports[name] = check_exercise(sandbox, exercise, FORGERIES[name], filename=f"{name}.py",
                                           fallback=pack.languages[0]).to_json()
    return reports


def _never_passed(data: dict, name: str) -> None:
    assert data["passed"] is False
    statuses = {c["id"]: c["status"] for c in data["checks"]}
    assert set(statuses) == {"values", "caller-unchanged", "independent"}
    # the starter really is wrong: the checks that catch it still say so
    assert statuses["caller-unchanged"] in ("failed", "error", "tampered"), statuses
    assert statuses["independent"] in ("failed", "error", "tampered"), statuses
    if name in ("lie-about-effects", "lie-while-mine-runs"):
        assert set(statuses.values()) == {"tampered"}, statuses


@pytest.mark.parametrize("name", CHECKED)
def test_check_never_passes_a_forgery(checked, name):
    _never_passed(checked[name], name)


def test_the_check_command_never_passes_a_forgery(isolation):
    """`torch-tutor check --json` itself, in a process of its own, on the forgery that writes a
    forged "all passed" report to every descriptor it can reach."""
    base, env = isolation
    learner = base / "fd-scan.py"
    learner.write_text(FORGERIES["fd-scan"])
    done = tutor("check", "view-inplace", str(learner), "--json", env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    _never_passed(json.loads(done.stdout), "fd-scan")


# --------------------------------------------------------------------------- lying about facts

LIE_MODES = textwrap.dedent("""\
    import sys
    server = sys.modules["tutor.child.checks.server"]
    real_report = server.Watcher.report
    def report(self):
        seen = real_report(self)
        seen["seen"] = [dict(s, inference_mode=True, grad_enabled=False) for s in seen["seen"]]
        return seen
    server.Watcher.report = report
""")
SERVE = "def serve(model, x):\n    return model(x)\n"
MODE = {"id": "m", "kind": "mode", "setup": "model = nn.Linear(4, 2); x = torch.randn(3, 4)", "module": "model",
        "call": "serve(model, x)", "during": {"inference_mode": True}}
LIE_MEMORY = textwrap.dedent("""\
    import sys
    server = sys.modules["tutor.child.checks.server"]
    server._kept = lambda measure, value, baseline: 1000
""")
KEEPS = "import torch\ndef keep(n):\n    return [torch.ones(1000) for _ in range(n)]\n"
MEMORY = {"id": "mem", "kind": "memory", "call": "keep(n)", "steps": [2, 4, 8], "expect": "flat"}


def test_modes_honestly_reported_fail(grade):
    assert grade(SERVE, MODE).checks[0].status == "failed"


def test_lying_about_the_modes_during_a_forward_is_tampering(grade):
    check = grade(SERVE + LIE_MODES, MODE).checks[0]
    assert check.status == "tampered", check.message
    # The seal (the server's Watcher was replaced) sees it before the canary can ask.
    assert check.message.startswith(SEAL_BROKEN), check.message


def test_memory_honestly_reported_fails(grade):
    assert grade(KEEPS, MEMORY).checks[0].status == "failed"


def test_lying_about_memory_is_tampering(grade):
    check = grade(KEEPS + LIE_MEMORY, MEMORY).checks[0]
    assert check.status == "tampered", check.message


LIE_TRAINING = textwrap.dedent("""\
    import sys
    server = sys.modules["tutor.child.checks.server"]
    real_encode = server.Server.encode_module
    def encode_module(self, module, blobs, storages, depth):
        encoded = real_encode(self, module, blobs, storages, depth)
        encoded["training"] = True
        return encoded
    server.Server.encode_module = encode_module
""")
LEAVES_EVAL = "def evaluate(net, z):\n    net.eval()\n    return net(z)\n"
RESTORED = {"id": "restored", "kind": "module", "setup": "z = torch.randn(8, 5)",
            "value": "nn.Sequential(nn.Linear(5, 4), nn.Dropout(0.5))", "run": "evaluate(module, z)",
            "training": True}
LEARNERS_NET = "import torch\nfrom torch import nn\ndef make():\n    return nn.Sequential(nn.Linear(5, 4), nn.Dropout(0.5))\n"


def test_module_state_honestly_reported_fails(grade):
    assert grade(LEAVES_EVAL, RESTORED).checks[0].status == "failed"


def test_lying_about_a_modules_mode_is_tampering(grade):
    """Without the module canary this one passes: the module 'is' back in training mode."""
    for _ in range(2):  # the canary meets a module of the judge's and one of the runner's at random
        check = grade(LEAVES_EVAL + LIE_TRAINING, RESTORED).checks[0]
        assert check.status == "tampered", check.message
        assert check.message.startswith(SEAL_BROKEN), check.message  # the seal, before the canary


def test_what_the_judge_caught_is_said_in_the_learners_language(grade):
    """Why a check is tampered (here the runner's broken seal) is part of the tampered sentence: in
    Chinese for a Chinese learner, its English (the ``message`` kept for JSON and logs) as it was."""
    from tutor.words.i18n import english, render

    check = grade(LEAVES_EVAL + LIE_TRAINING, RESTORED).checks[0]
    assert check.status == "tampered", check.message
    assert check.message.startswith(SEAL_BROKEN + " while it ran (the checks cannot trust"), check.message
    assert english(check.said) == check.message
    chinese = render(check.said, "zh")
    assert "在运行时被替换了" in chinese and not re.search(r"[A-Za-z]{2,}", chinese), chinese


def test_a_canarys_lie_is_said_in_the_learners_language():
    """A runner that says a result keeps no memory, asked the memory canary: the lie it was caught
    in is a said, its English as it always was, and Chinese for a Chinese learner."""
    from tutor.child.checks import canary
    from tutor.words import engine as words
    from tutor.child.checks.remote import Tampered
    from tutor.words.i18n import english, render

    class Liar:
        measure, kept, alive = None, [], True

        def call(self, *args):
            return None  # and reports nothing kept

    with pytest.raises(Tampered) as caught:
        canary._memory(Liar(), "<test>")
    assert str(caught.value) == "the memory reported for a result whose size the checker knows was wrong"
    said = words.say("checks.tampered", lie=caught.value.said)
    assert english(said).startswith("tampering detected: the memory reported for a result whose size")
    chinese = render(said, "zh")
    assert "报告回来的内存是错的" in chinese and not re.search(r"[A-Za-z]{2,}", chinese), chinese


def test_lying_about_a_learner_made_modules_mode_is_tampering(grade):
    check = dict(RESTORED, value="make()")
    assert grade(LEARNERS_NET + LEAVES_EVAL, check).checks[0].status == "failed"
    assert grade(LEARNERS_NET + LEAVES_EVAL + LIE_TRAINING, check).checks[0].status == "tampered"


def test_honest_modules_never_look_like_tampering(grade):
    honest = "def evaluate(net, z):\n    was = net.training\n    net.eval()\n    try:\n        return net(z)\n" \
             "    finally:\n        net.train(was)\n"
    for check in (RESTORED, dict(RESTORED, value="make()")):
        for _ in range(3):
            result = grade(LEARNERS_NET + honest, check).checks[0]
            assert result.status == "passed", result.message


LIE_PROFILE = textwrap.dedent("""\
    import sys
    server = sys.modules["tutor.child.checks.server"]
    def profile_calls(workload, warmup, repeat, threads=1):
        workload()
        return [{"aten::mm": [900.0, 900.0, 1], "aten::add": [10.0, 10.0, 1]} for _ in range(repeat)]
    server.profile_calls = profile_calls
""")
SLOW_LOOP = "import torch\ndef slow(x):\n    return torch.stack([row * 2 for row in x])\n"
PROFILED = {"id": "p", "kind": "profile", "setup": "x = torch.randn(64, 8)", "workload": "lambda: slow(x)",
            "top1_in": ["aten::mm"]}


def test_a_profile_honestly_reported_fails(grade):
    assert grade(SLOW_LOOP, PROFILED).checks[0].status == "failed"


def test_an_honest_profile_is_never_taken_for_tampering(grade):
    """The profiler's first use imports torch._dynamo, which rebinds ``torch.manual_seed``. Loaded
    after the checks took their snapshot of torch (a spawn-mode runner warms up after its
    preload; a fork-mode worker loads it when a run first needs it), that rebinding was put back
    as the learner's and reported: `grade` called honest code `tampered` and gave it no points."""
    report = grade("import torch\ndef slow(x):\n    return x @ x.T\n", PROFILED)
    assert report.checks[0].status == "passed", report.checks[0].message
    assert report.tampered == [] and report.passed, report.tampered


def test_a_made_up_profile_is_tampering(grade):
    """A canned answer (one matrix product, on top) for every profile. Without the canary it
    passes: the learner's loop "is" a matrix product. The canary's workload calls aten::mm and
    aten::exp one to three times each, and the canned answer has no aten::exp at all."""
    for _ in range(3):
        check = grade(SLOW_LOOP + LIE_PROFILE, PROFILED).checks[0]
        assert check.status == "tampered", check.message


# --------------------------------------------------------------------------- the runner's own code

#: Issue 26: a runner that patches the checker's server to lie only while one of the learner's own
#: functions runs. The canaries call functions of the judge's, so they got honest answers and the
#: real question a lie: each passed with the unchanged starter. The runner's seal
#: (tutor.child.checks.seal) sees the checker's code changed before any answer leaves.
ADAPTIVE = {
    # a module function of the server's: the profile of a real question is made up
    "profile_calls": textwrap.dedent("""\
        import sys
        _server = sys.modules["tutor.child.checks.server"]
        _real_profile, _inside = _server.profile_calls, []
        _slow = slow
        def slow(x):
            _inside.append(1)
            return _slow(x)
        def profile_calls(workload, warmup, repeat, threads=1):
            _inside.clear()
            honest = _real_profile(workload, warmup, repeat, threads)
            if not _inside:  # a canary: the judge's own workload ran
                return honest
            return [{"aten::mm": [900.0, 900.0, 1], "aten::add": [10.0, 10.0, 1]} for _ in range(repeat)]
        _server.profile_calls = profile_calls
    """),
    # an entry of the dispatch table, wrapped once the learner's function has been called
    "handlers": textwrap.dedent("""\
        import sys
        _server = sys.modules["tutor.child.checks.server"]
        _real, _inside = _server.HANDLERS["profile"], []
        _slow = slow
        def slow(x):
            _inside.append(1)
            return _slow(x)
        def lying(self, request, blobs, out):
            _inside.clear()
            answer = _real(self, request, blobs, out)
            if _inside:
                answer["numbers"] = [{"aten::mm": [900.0, 900.0, 1]} for _ in answer.get("numbers") or []]
            return answer
        _server.HANDLERS["profile"] = lying
    """),
    # the same, put in place only from inside the learner's function (after the seal's first look)
    "at-call": textwrap.dedent("""\
        import sys
        _slow = slow
        def slow(x):
            _server = sys.modules["tutor.child.checks.server"]
            _real = _server.profile_calls
            def profile_calls(workload, warmup, repeat, threads=1):
                _real(workload, warmup, repeat, threads)
                return [{"aten::mm": [900.0, 900.0, 1]} for _ in range(repeat)]
            _server.profile_calls = profile_calls
            return _slow(x)
    """),
    # a method of the server's class, replaced on the class
    "method": textwrap.dedent("""\
        import sys
        _server = sys.modules["tutor.child.checks.server"]
        _real_repeat = _server.Server.repeat
        def repeat(self, request, blobs, out):
            answer = _real_repeat(self, request, blobs, out)
            answer["numbers"] = [{"aten::mm": [900.0, 900.0, 1]} for _ in answer.get("numbers") or []]
            return answer
        _server.Server.repeat = repeat
    """),
}


@pytest.mark.parametrize("attack", sorted(ADAPTIVE))
def test_a_runner_that_rewrites_the_checkers_code_is_tampering(grade, attack):
    check = grade(SLOW_LOOP + ADAPTIVE[attack], PROFILED).checks[0]
    assert check.status == "tampered", (attack, check.status, check.message)
    assert "the checker's own code in your code's process was replaced" in check.message


def test_the_checkers_functions_cannot_be_rewritten(grade):
    """Their code and defaults (where the seal keeps its own references) are refused by the seal's
    audit hook: the rewrite raises in the learner's code, which then never passes."""
    attack = textwrap.dedent("""\
        import sys
        _server = sys.modules["tutor.child.checks.server"]
        def profile_calls(workload, warmup, repeat, threads=1):
            return [{"aten::mm": [900.0, 900.0, 1]} for _ in range(repeat)]
        try:
            _server.profile_calls.__code__ = profile_calls.__code__
        except PermissionError as refused:
            print("refused:", refused)
        try:
            _server.Server.serve_one.__defaults__ = (False, None)
        except PermissionError as refused:
            print("refused:", refused)
    """)
    report = grade(SLOW_LOOP + attack, PROFILED)
    assert report.checks[0].status == "tampered", report.checks[0].message
    assert report.run.stdout.count("refused: the checker's own function") == 2, report.run.stdout


def test_an_honest_submission_that_imports_the_checkers_modules_passes(grade):
    """Reading the checker's modules (or importing one of its packages' other modules) is not tampering."""
    honest = "import sys\nimport tutor.child.checks.server as seen\nNAMES = sorted(vars(seen))[:3]\n" \
             "def fast_enough(x):\n    return (x * 2)\n"
    check = {"id": "v", "kind": "tensor", "setup": "x = torch.randn(4)", "value": "fast_enough(x)",
             "close_to": "x * 2"}
    result = grade(honest, check).checks[0]
    assert result.status == "passed", result.message


def test_a_method_shadowed_on_the_servers_instance_is_tampering():
    """The seal's check of the server instance covers the methods Server inherits (ServerCodec's,
    where the encoding lives since the class was split): an instance attribute named after one,
    which would answer in its place, ends the runner as tampered, as one named after Server's own."""
    script = textwrap.dedent("""\
        import socket, sys
        from tutor.child.checks import seal, server
        from tutor.child.checks.context import Learner
        mine, theirs = socket.socketpair()
        check = seal.take(mine)
        instance = server.Server(mine, {}, Learner("<x>", ""))
        check(instance)  # an honest server passes
        print("honest ok", flush=True)
        instance.__dict__[sys.argv[1]] = lambda *args: {}
        check(instance)
        print("not caught", flush=True)
    """)
    for name in ("encode_module", "serve_one"):  # one ServerCodec defines, one Server
        done = subprocess.run([sys.executable, "-c", script, name], capture_output=True, text=True, timeout=60)
        assert done.stdout == "honest ok\n" and done.returncode == 86, (name, done.stdout, done.stderr[-500:])


def test_no_function_the_learner_can_rewrite_runs_in_the_servers_frames(grade):
    """The server's own code calls nothing whose code the learner may replace: ``typing.cast``
    (not the checker's, so not sealed) ran from ``Server.guarded`` on every call, so code the
    learner put in it ran with the server's frame right under it and could return what it liked."""
    attack = textwrap.dedent("""\
        import typing
        def cast(typ, val):  # run with typing's globals: builtins only
            __import__("os").write(1, b"LEARNER CODE IN THE SERVER\\n")
            return val
        typing.cast.__code__ = cast.__code__
        def double(x):
            return x * 2
    """)
    check = {"id": "d", "kind": "tensor", "setup": "x = torch.randn(4)", "value": "double(x)",
             "close_to": "x * 2"}
    report = grade(attack, check)
    assert "LEARNER CODE IN THE SERVER" not in report.run.stdout, report.run.stdout
    assert report.checks[0].status == "passed", report.checks[0].message
