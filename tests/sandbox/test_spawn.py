"""Spawn mode: interpreters started ahead (issue 13), a judge that serves several runs, each in a runner
of its own (issue 32), and how the mode is chosen."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from tests.sandbox.conftest import TEST_LIMITS, _bwrap_reason, wait_for_idle
from tutor.sandbox import Sandbox
from tutor.sandbox.pool import resolve_mode
from tutor.child.worker.startup import IDLE_WARM_S


@pytest.fixture(scope="module")
def spawned():
    with Sandbox(TEST_LIMITS, isolation="none", mode="spawn", workers=1, preload=[]) as box:
        box.wait_ready(300)
        yield box


def test_each_run_gets_a_fresh_interpreter(spawned, recovered):
    first = spawned.run("import builtins, sys\nbuiltins.left_behind = 1\nsys.modules['planted'] = sys\nprint('set')")
    assert first.status == "ok" and first.stdout == "set\n"
    second = spawned.run("import builtins, sys\nprint(hasattr(builtins, 'left_behind'), 'planted' in sys.modules)")
    assert second.status == "ok", (second.message, second.stderr)
    assert second.stdout == "False False\n"
    recovered(spawned)


def test_back_to_back_runs_all_come_back(spawned):
    results = [spawned.run(f"print({i} * 2)") for i in range(3)]
    assert [(r.status, r.stdout) for r in results] == [("ok", f"{i * 2}\n") for i in range(3)]


def test_the_spare_kept_warm_has_run_the_profiler_already(spawned):
    """The first profiled op of a fresh interpreter costs about a second; a spare pays it ahead."""
    code = ("import time, torch\nstarted = time.perf_counter()\n"
            "with torch.profiler.profile() as prof:\n    torch.nn.functional.relu(torch.ones(4))\n"
            "prof.key_averages()\nprint(f'{time.perf_counter() - started:.3f}')\n")
    wait_for_idle(spawned)
    result = spawned.run(code)
    assert result.status == "ok", (result.message, result.stderr)
    # Cold, this takes ~1 s here; warm, a few milliseconds (a loaded machine gets headroom).
    assert float(result.stdout) < 0.5, result.stdout


#: A learner's line that says whether the profiler's machinery (torch._dynamo, which its first use
#: imports) is loaded, without naming it: a run that names it asks for the warm-up (below).
HAS_DYNAMO = "import sys\nprint(any(m.startswith('torch._dyn' + 'amo') for m in sys.modules))\n"


def test_a_fresh_runner_taken_at_once_skips_the_profiler_warm_up_and_one_left_waiting_has_it():
    """The profiler's first use costs a runner started with exec 1.3-2.4 s of CPU (it imports
    torch._dynamo): a spare taken as soon as it is ready (back-to-back runs, a grade batch) leaves
    it out, and a spare left waiting for a learner pays it while they read (docs/performance.md)."""
    with Sandbox(TEST_LIMITS, isolation="none", mode="spawn", workers=1, preload=[], spawn_runners="fresh") as box:
        box.wait_ready(300)
        box.run("pass")  # the next spare starts now
        wait_for_idle(box)
        at_once = box.run(HAS_DYNAMO)
        assert (at_once.status, at_once.stdout) == ("ok", "False\n"), (at_once.message, at_once.stderr)
        wait_for_idle(box)
        time.sleep(2 * IDLE_WARM_S)  # the judge has asked its runner to warm up; the run waits for it
        waited = box.run(HAS_DYNAMO)
    assert (waited.status, waited.stdout) == ("ok", "True\n"), (waited.message, waited.stderr)


def test_a_forked_runner_has_the_profiler_machinery_once_a_spare_waited_for_it_once():
    """Forked runners inherit what their template loaded: it loads torch._dynamo once, the first
    time a spare waits for a learner (or a run needs it), and every runner forked after that has
    it at no cost of its own, taken at once or not."""
    with Sandbox(TEST_LIMITS, isolation="none", mode="spawn", workers=1, preload=[]) as box:
        box.wait_ready(300)
        at_once = box.run(HAS_DYNAMO)
        wait_for_idle(box)
        time.sleep(2 * IDLE_WARM_S)  # the judge warms its runner and has the template load it
        waited = box.run(HAS_DYNAMO)
        later = [box.run(HAS_DYNAMO) for _ in range(2)]  # back to back: spares taken at once
    assert (at_once.status, at_once.stdout) == ("ok", "False\n"), (at_once.message, at_once.stderr)
    for result in (waited, *later):
        assert (result.status, result.stdout) == ("ok", "True\n"), (result.message, result.stderr)
        assert result.cpu_time < 1.0, result.cpu_time  # the import (1.2 s of CPU and more) was the template's


THREAD_CAPS = ("import json, os, torch\nfrom torch.profiler import profile\n"
               "with profile() as prof:\n    torch.ones(4).sum()\nfound = []\n"
               "for tid in os.listdir('/proc/self/task'):\n"
               "    status = dict(l.split(':', 1) for l in open(f'/proc/self/task/{tid}/status') if ':' in l)\n"
               "    found.append([status[k].strip() for k in ('CapEff', 'CapPrm', 'NoNewPrivs')])\n"
               "print(json.dumps(found))\n")


@pytest.mark.parametrize("runners", ["forked", "fresh"])
def test_a_runner_that_warmed_up_while_waiting_has_no_thread_with_a_capability(runners):
    """A spawn-mode runner warms up before its request, while it still holds the capabilities of
    the run's user namespace (it mounts the private /tmp once the request names the scratch
    folder). Capabilities belong to each thread: the profiler's first use starts one (Kineto's
    configuration loader), which ran in the warm-up and kept them all, so a run could have
    used that thread to unmount its private /tmp. The warm-up now takes the profiler's first
    session only after the runner gave up every capability: every thread of the run holds
    nothing."""
    if _bwrap_reason():
        pytest.skip(f"bubblewrap does not work here: {_bwrap_reason()}")
    import json

    with Sandbox(TEST_LIMITS, isolation="bwrap", mode="spawn", workers=1, preload=[], spawn_runners=runners) as box:
        box.wait_ready(300)
        box.run("pass")  # the next spare starts now
        wait_for_idle(box)
        time.sleep(2 * IDLE_WARM_S)  # the judge has asked its runner to warm up
        result = box.run(THREAD_CAPS)
    assert result.status == "ok", (result.status, result.message, result.stderr[-2000:])
    threads = json.loads(result.stdout)
    assert len(threads) >= 2, threads  # the profiler's thread is there to be read
    assert all(int(eff, 16) == 0 and int(prm, 16) == 0 and nnp == "1" for eff, prm, nnp in threads), threads


def test_spares_told_no_run_profiles_stay_without_the_warm_up_until_told_one_may():
    """The app says, step by step, whether runs there may profile (``Sandbox.expect``): then a
    spare left waiting does not pay its runner's warm-up (1.3-2.4 s of CPU, every run), and a
    spare already waiting warms up as soon as the learner reaches a step that may profile."""
    box = Sandbox(TEST_LIMITS, isolation="none", mode="spawn", workers=1, preload=[])
    box.expect(False)
    with box:
        box.wait_ready(300)
        time.sleep(2 * IDLE_WARM_S)
        without = box.run(HAS_DYNAMO)
        wait_for_idle(box)  # the judge's next runner, told nothing new
        time.sleep(2 * IDLE_WARM_S)
        box.expect(True)  # to a judge that waits with no deadline: it looks again
        time.sleep(2 * IDLE_WARM_S)
        loaded = box.run(HAS_DYNAMO)
    for result, printed in ((without, "False\n"), (loaded, "True\n")):
        assert (result.status, result.stdout) == ("ok", printed), (result.message, result.stderr)


def test_what_a_runner_prints_while_it_warms_up_late_goes_nowhere():
    """A spare's runner warms up after it marked the end of its start-up output (the pipe
    transport drops only what came before the mark): whatever the warm-up prints must not reach
    the run, and the runner's own streams must work again afterwards."""
    code = ("import sys\nfrom tutor.child.worker import startup\n"
            "startup.SPARE_DEFERS = ('tests.sandbox.noisy_preload',)\n"
            "print('before', flush=True)\nstartup.warm_up()\n"
            "print('tests.sandbox.noisy_preload' in sys.modules and 'after')\nprint('stderr too', file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "before\nafter\n" and "NOISE" not in done.stderr and "stderr too" in done.stderr


def test_a_batch_never_warms_a_waiting_spare():
    """``grade`` and ``validate`` take spares back to back: one that waits there is waiting for
    the run before it, not for a learner, and warming it would only cost CPU."""
    with Sandbox(TEST_LIMITS, isolation="none", mode="spawn", workers=1, preload=[], purpose="batch") as box:
        box.wait_ready(300)
        time.sleep(2 * IDLE_WARM_S)
        result = box.run(HAS_DYNAMO)
    assert (result.status, result.stdout) == ("ok", "False\n"), (result.message, result.stderr)


@pytest.mark.parametrize("code, printed", [
    # The profiler's first use imports torch._dynamo.
    ("import sys, torch\nloaded = 'torch._dynamo' in sys.modules\n"
     "with torch.profiler.profile() as prof:\n    torch.nn.functional.relu(torch.ones(4))\n"
     "prof.key_averages()\nprint(loaded)\n", "True\n"),
    # So does an optimizer's first step (torch 2.13); at isolation none as root on a machine whose
    # interpreter the runs cannot read, that import would fail in the run.
    ("import torch\nweight = torch.nn.Parameter(torch.ones(3))\n"
     "optimizer = torch.optim.SGD([weight], lr=0.5)\nweight.sum().backward()\n"
     "optimizer.step()\nprint(weight.tolist())\n", "[0.5, 0.5, 0.5]\n"),
    # And a module's first forward on the meta device (issue 26: a reference solution's
    # forward-on-meta check spent 1.1 s of CPU importing 822 modules, and timed out on a busy machine).
    ("import torch\nnet = torch.nn.Linear(4, 2).to('meta')\nprint(net(torch.ones(3, 4, device='meta')).shape)\n",
     "torch.Size([3, 2])\n"),
], ids=["profiler", "optimizer", "meta"])
def test_a_run_that_needs_dynamo_on_a_spare_taken_at_once_is_not_charged_for_the_warm_up(spawned, code, printed):
    """Its spare warms up before the run starts: the run's CPU time and limits are its own."""
    spawned.run("pass")  # the next spare starts now
    wait_for_idle(spawned)
    result = spawned.run(code)
    assert (result.status, result.stdout) == ("ok", printed), (result.message, result.stderr)
    # Importing torch._dynamo alone takes more than a second of CPU; the run itself, milliseconds.
    assert result.cpu_time < 1.0, result.cpu_time


def test_a_warm_up_longer_than_the_grace_is_not_a_dead_worker(spawned, monkeypatch):
    """The tutor gives a run its wall time plus a grace before it calls the worker dead; a spare
    taken at once warms its runner up first (seconds of CPU importing torch._dynamo), and on a
    busy 2-core machine that warm-up outlasted the grace: the run came back `sandbox-failure`
    ("the worker stopped answering"). The wait for a verdict starts when the run does. Here the
    grace is cut to what a busy machine leaves of it, so the warm-up always outlasts it."""
    import dataclasses

    from tutor.sandbox import process

    monkeypatch.setattr(process, "_GRACE_S", 0.05)
    spawned.run("pass")  # the next spare starts now
    wait_for_idle(spawned)
    limits = dataclasses.replace(TEST_LIMITS, wall_time=0.5)
    result = spawned.run("x = 6 * 7  # no profile here, but the word asks for the warm-up\nprint(x)", limits)
    assert (result.status, result.stdout) == ("ok", "42\n"), (result.status, result.message)


def test_a_cancel_reaches_a_run_still_waiting_for_its_spare(spawned):
    spawned.run("pass")  # the next spare is warming up now
    box: dict = {}
    waiting = threading.Thread(target=lambda: box.update(result=spawned.run("import time\ntime.sleep(60)")))
    started = time.monotonic()
    waiting.start()
    time.sleep(0.05)
    spawned.cancel()
    waiting.join(120)
    result = box["result"]
    assert result.status == "killed", (result.status, result.message)
    assert result.message == "Stopped: the run was cancelled."
    # Stopped as soon as it started, not at its wall time (4 s) after the spare came.
    assert time.monotonic() - started < 60


def test_the_verdict_comes_from_the_judge_not_the_runner(spawned):
    """A run that kills its parent (the judge, were it reachable) gets a failure, never a pass."""
    result = spawned.run("import os, signal\ntry:\n    os.kill(os.getppid(), signal.SIGKILL)\nexcept OSError:\n    pass\n")
    assert result.status in ("ok", "killed", "sandbox-failure")
    after = spawned.run("print('fine')")
    assert after.status == "ok" and after.stdout == "fine\n"


@pytest.mark.parametrize("platform, purpose, expected", [
    ("linux", "interactive", "fork"), ("linux", "batch", "fork"),
    ("darwin", "interactive", "spawn"), ("darwin", "batch", "spawn"), ("win32", "interactive", "spawn"),
])
def test_auto_is_fork_on_linux_and_spawn_elsewhere(monkeypatch, platform, purpose, expected):
    monkeypatch.setattr(sys, "platform", platform)
    assert resolve_mode("auto", purpose) == expected
    assert resolve_mode("spawn", purpose) == "spawn" and resolve_mode("fork", purpose) == "fork"


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="auto, fork or spawn"):
        Sandbox(mode="threads")


def test_the_setting_reaches_the_sandbox(tmp_path):
    from tutor.settings.config import load_settings
    from tutor.grading.sandboxes import sandbox_for

    settings = load_settings(environ={"TORCH_TUTOR_SANDBOX_MODE": "spawn"}, config_file=tmp_path / "none.toml")
    assert settings.sandbox_mode == "spawn"
    box = sandbox_for(settings)
    assert (box.mode, box.requested_mode) == ("spawn", "spawn")
    box.close()
    (tmp_path / "config.toml").write_text('sandbox_mode = "fork"\n')
    assert load_settings(environ={}, config_file=tmp_path / "config.toml").sandbox_mode == "fork"
    from tutor.settings.config import ConfigError

    (tmp_path / "bad.toml").write_text('sandbox_mode = "thread"\n')
    with pytest.raises(ConfigError, match="sandbox_mode"):
        load_settings(environ={}, config_file=tmp_path / "bad.toml")


def test_a_judge_taken_at_once_leaves_dynamo_out_and_one_left_waiting_loads_it():
    """A spare's judge runs no learner code and needs torch._dynamo only for a profile in the judge:
    it says ready without it (1.2-1.8 s of CPU per spare taken at once, as back-to-back runs take
    them) and loads it once it has waited for its request (docs/performance.md)."""
    code = ("import sys\nfrom tutor.child.worker import startup\nstartup.judge_preload([])\n"
            "print(sorted(m for m in ('torch._dynamo', 'tutor.child.checks.server', 'tutor.child.checks.remote', 'torch.profiler')"
            " if m in sys.modules))\nstartup.load_deferred()\nprint('torch._dynamo' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["['torch.profiler', 'tutor.child.checks.remote']", "True"]


def test_a_judge_profiles_its_checks_without_loading_dynamo():
    """The judge's checks profile (a check's own workload, the head start beside the learner's run)
    with ``refs.profile``: the same events as ``torch.profiler.profile`` without its first use's
    import of ``torch._dynamo`` (1.4 s of CPU, ~105 MB that a judge left waiting held on its own,
    docs/performance.md). The wrapper itself still imports it, so the test can fail."""
    code = ("import sys, torch\nfrom tutor.child.worker import judging, startup\nstartup.judge_preload([])\n"
            "from tutor.child.checks import refs\n"
            "judging._warm_up({'payload': {'checks': [{'kind': 'profile'}]}})\n"
            "with refs.profile(activities=[refs.ProfilerActivity.CPU]) as prof:\n    torch.ones(3).sum()\n"
            "print('aten::sum' in [e.key for e in prof.key_averages()], 'torch._dynamo' in sys.modules)\n"
            "with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):\n    pass\n"
            "print('torch._dynamo' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stdout.splitlines() if not line.startswith("USDT")] == ["True False", "True"]


def _judges(box: Sandbox) -> set[int]:
    return {worker.name for worker in list(box._spares.all) if worker.ready}


def test_a_batchs_judges_serve_more_runs_than_a_learners():
    """A new spare imports torch (~1.5 s of CPU). A learner's judge is replaced every
    ``JUDGE_RUNS`` runs, off their path; in a batch's stream the next spare was not ready when a
    judge ended, and every 32 runs the stream stalled ~1.5 s (mean 58 ms a run against a median
    of 14). A batch's judges serve ``BATCH_JUDGE_RUNS``."""
    from tutor.sandbox import process

    assert process.BATCH_JUDGE_RUNS >= 8 * process.JUDGE_RUNS
    served = {}
    for purpose in ("interactive", "batch"):
        with Sandbox(TEST_LIMITS, isolation="none", mode="spawn", workers=1, preload=[], purpose=purpose) as box:
            box.wait_ready(300)
            served[purpose] = {worker.judge_runs for worker in list(box._spares.all)}
    assert served == {"interactive": {process.JUDGE_RUNS}, "batch": {process.BATCH_JUDGE_RUNS}}, served


@pytest.mark.parametrize("isolation", ["none", "bwrap"])
def test_a_judge_serves_run_after_run_each_in_a_runner_of_its_own_then_a_new_judge_comes(monkeypatch, isolation):
    """The judge never runs learner code, so it serves several runs (``process.JUDGE_RUNS``), each
    in a fresh runner interpreter: one torch import per run instead of two. Its last run ends it
    and a new judge takes over, with nothing lost between."""
    from tutor.sandbox import process

    monkeypatch.setattr(process, "BATCH_JUDGE_RUNS", 3)  # a batch's judges (interactive: JUDGE_RUNS)
    if isolation == "bwrap" and _bwrap_reason():
        pytest.skip(f"bubblewrap does not work here: {_bwrap_reason()}")
    with Sandbox(TEST_LIMITS, isolation=isolation, mode="spawn", workers=1, preload=[], purpose="batch") as box:
        box.wait_ready(300)
        seen = []
        for i in range(5):
            wait_for_idle(box)
            seen.append(_judges(box))
            result = box.run(f"import builtins, sys\nprint(hasattr(builtins, 'mine'), 'planted' in sys.modules)\n"
                             f"builtins.mine = {i}\nsys.modules['planted'] = sys")
            assert (result.status, result.stdout) == ("ok", "False False\n"), (result.message, result.stderr)
        # Runs 1-3 had one judge; runs 4-5 another.
        assert seen[0] == seen[1] == seen[2] and seen[3] == seen[4] and seen[2] != seen[3], seen


def _processes(box: Sandbox) -> set:
    return {worker._proc for worker in list(box._spares.all) if worker._proc is not None}


def test_a_sandbox_told_its_runs_starts_no_interpreter_that_no_run_takes():
    """A command that knows how many runs it makes (``tutor check``: one) says so (``runs``): no
    more judges start than there are runs, and the judge of the last run exits after it instead
    of starting a runner (a torch import, ~1.3 s of CPU) that nothing would take. A run beyond
    the count still runs, in a spare started for it."""
    with Sandbox(TEST_LIMITS, isolation="none", mode="spawn", workers=4, preload=[], purpose="batch",
                 runs=3) as box:
        box.wait_ready(300)
        assert box._spares.counter == 3, "one judge per run at most"
        seen = _processes(box)
        results = []
        threads = [threading.Thread(target=lambda i=i: results.append(box.run(f"print({i} * 2)"))) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seen |= _processes(box)
        results.append(box.run("print(4)"))
        seen |= _processes(box)
        assert sorted((r.status, r.stdout) for r in results) == [("ok", "0\n"), ("ok", "2\n"), ("ok", "4\n")]
        deadline = time.monotonic() + 60
        while any(proc.poll() is None for proc in seen) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(proc.poll() is not None for proc in seen), "a judge stayed, with a runner that no run takes"
        assert [proc.returncode for proc in seen] == [0, 0, 0], "each judge ends by itself, not killed"
        assert box.idle_count() == 0 and box._spares.counter == 3
        beyond = box.run("import builtins\nprint(hasattr(builtins, 'mine'))\nbuiltins.mine = 1")
        assert (beyond.status, beyond.stdout) == ("ok", "False\n"), (beyond.message, beyond.stderr)


def test_a_sandbox_not_told_its_runs_keeps_a_spare_after_each():
    """The app cannot know when the learner runs next: its spare is started again after each run."""
    with Sandbox(TEST_LIMITS, isolation="none", mode="spawn", workers=1, preload=[], purpose="batch") as box:
        box.wait_ready(300)
        assert box.run("print(1)").stdout == "1\n"
        wait_for_idle(box)
        assert box.idle_count() == 1 and any(proc.poll() is None for proc in _processes(box))


#: A sort, checked with a canary before or after the check's own call (tests/checks/test_fresh_inputs.py).
SORTED = {"id": "sorted", "kind": "tensor", "setup": "x = torch.randn(r, 5)", "cases": [{"r": 3}, {"r": 4}],
          "value": "f(x)", "close_to": "x.sort(dim=1, descending=True).values"}
HONEST_SORT = "def f(x):\n    return x.sort(dim=1, descending=True).values\n"
#: Wrong, and its answers carry autograd facts (a grad_fn) back to the judge; it leaves grad
#: mode off and autocast on behind it, which the judge adopts as if the check's code ran beside it.
GRAPH_SORT = ("import torch\ndef f(x):\n    y = (x.requires_grad_() * 2).sort(dim=1, descending=True).values\n"
              "    torch.set_grad_enabled(False)\n    torch.set_autocast_enabled('cpu', True)\n    return y\n")
MATMUL = {"id": "mm", "kind": "tensor", "setup": "a = torch.randn(16, 16); b = torch.randn(16, 16)",
          "value": "f(a, b)", "close_to": "a @ b", "rtol": 1e-6, "atol": 1e-6, "dtype": "float32",
          "requires_grad": False}
HONEST_MATMUL = "def f(a, b):\n    return a @ b\n"


def test_a_judge_that_judged_checks_judges_the_next_runs_checks_afresh(monkeypatch):
    """A judge serves checked runs too. What one run's checks left in the judge must not reach
    the next: facts about the last run's tensors (kept by id, and ids are reused once a tensor is
    freed: honest code came back `tampered` from the canary, 4 runs of 4, before
    ``Session.forget``), and modes adopted from the learner's calls."""
    from tests.checks.conftest import make_exercise
    from tutor.grading.exercise import check_exercise
    from tutor.sandbox import process

    monkeypatch.setattr(process, "BATCH_JUDGE_RUNS", 8)
    with Sandbox(TEST_LIMITS, isolation="none", mode="spawn", workers=1, preload=["tutor.child.checks.probe"],
                 purpose="batch") as box:
        box.wait_ready(300)
        judges = []

        def statuses(code: str, check: dict) -> list[tuple[str, str]]:
            wait_for_idle(box)
            judges.append(_judges(box))
            return [(c.status, c.message) for c in check_exercise(box, make_exercise(check), code).checks]

        assert statuses(GRAPH_SORT, SORTED)[0][0] == "failed"
        for _ in range(3):
            assert statuses(HONEST_SORT, SORTED) == [("passed", "")]
        assert statuses(GRAPH_SORT, SORTED)[0][0] == "failed"
        assert statuses(HONEST_MATMUL, MATMUL) == [("passed", "")]
    assert len({frozenset(j) for j in judges}) == 1, judges  # one judge served every run


def test_between_runs_a_judge_puts_back_the_torch_state_it_started_with():
    """What a pack's setup code may switch in the judge (threads, determinism, anomaly mode, the
    default dtype) or a learner's call may leave adopted there (grad mode, autocast) is put back
    before the judge's next run."""
    import torch

    from tutor.child.worker.spawn import reset_between_runs, torch_state

    start = torch_state()
    try:
        torch.set_grad_enabled(False)
        torch.set_default_dtype(torch.float64)
        torch.set_autocast_enabled("cpu", True)
        torch.set_autocast_dtype("cpu", torch.float16)
        torch.set_num_threads(max(1, start["threads"] + 1))
        torch.use_deterministic_algorithms(True)
        torch.autograd.set_detect_anomaly(True)
        assert torch_state() != start
        reset_between_runs(start)
        assert torch_state() == start
    finally:
        reset_between_runs(start)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="runs get uids of their own as root")
def test_consecutive_runs_of_one_judge_never_share_a_uid():
    """As root at isolation none each run becomes a uid of its own, whose scratch folder is that
    uid's alone. A judge serves run after run: had the uid come from its pid, the next learner's run
    would be the same uid as the last one's, whose scratch folder the tutor removes only after
    the result (an attack reading it by its predictable name)."""
    with Sandbox(TEST_LIMITS, isolation="none", mode="spawn", workers=1, preload=[], purpose="batch") as box:
        box.wait_ready(300)
        uids = [box.run("import os\nprint(os.getuid())").stdout.strip() for _ in range(3)]
    assert len(set(uids)) == 3 and "0" not in uids, uids
