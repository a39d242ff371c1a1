"""Spawn mode's runner template (issue 32): runners forked from an interpreter that imported torch
and never ran an op, one thread at every fork; each started with exec where that cannot hold."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.sandbox.conftest import TEST_LIMITS, wait_for_idle
from tutor.sandbox import Sandbox
from tutor.child.worker.template import thread_count

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the template forks")

#: What the run's process and its parent were started as (isolation none: no namespaces, so the
#: runner's parent is whatever started it).
ROLES = ("import os\n"
         "def role(pid):\n"
         "    words = open(f'/proc/{pid}/cmdline', 'rb').read().decode(errors='replace')\n"
         "    return next((r for r in ('runner', 'judge') if f'\"role\": \"{r}\"' in words), 'other')\n"
         "print(role(os.getpid()), role(os.getppid()))\n")


@pytest.fixture(scope="module")
def forked():
    with Sandbox(TEST_LIMITS, isolation="none", mode="spawn", workers=1, preload=[]) as box:
        box.wait_ready(300)
        yield box


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_runners_are_forked_from_the_template_by_default(forked):
    """The interpreter the tutor started stays behind as the template and forks the judge and
    every runner: a forked runner's command line is the one the template was started with (a
    spare's judge's), and so is its parent's. The judge's parent is the template too."""
    assert forked.worker_info["runners"] == "forked"
    for _ in range(2):
        result = forked.run(ROLES)
        assert (result.status, result.stdout) == ("ok", "judge judge\n"), (result.message, result.stderr)
    judge = forked.worker_info["pid"]
    assert _role(_parent(judge)) == "judge"  # the interpreter the tutor started, now the template


def test_a_forked_runner_is_as_fresh_as_one_started_with_exec(forked):
    planted = forked.run("import builtins, sys, torch\nbuiltins.left = 1\nsys.modules['planted'] = sys\n"
                         "torch.set_default_dtype(torch.float64)\ntorch.manual_seed(5)\nprint('set')")
    assert (planted.status, planted.stdout) == ("ok", "set\n"), (planted.message, planted.stderr)
    looked = forked.run("import builtins, sys, torch\n"
                        "print(hasattr(builtins, 'left'), 'planted' in sys.modules, torch.get_default_dtype())")
    assert (looked.status, looked.stdout) == ("ok", "False False torch.float32\n"), (looked.message, looked.stderr)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_spawn_runners_fresh_starts_each_runner_with_exec():
    with Sandbox(TEST_LIMITS, isolation="none", mode="spawn", workers=1, preload=[], spawn_runners="fresh") as box:
        box.wait_ready(300)
        assert box.worker_info["runners"] == "fresh"
        result = box.run(ROLES)
    assert (result.status, result.stdout) == ("ok", "runner judge\n"), (result.message, result.stderr)


def test_an_unknown_spawn_runners_is_refused():
    with pytest.raises(ValueError, match="spawn_runners must be one of forked, fresh"):
        Sandbox(TEST_LIMITS, mode="spawn", spawn_runners="cloned")


@pytest.mark.skipif(thread_count() is None, reason="no way to count threads here")
def test_a_template_with_a_second_thread_refuses_to_fork_and_runners_start_with_exec():
    """A preload that starts a thread leaves the template two threads: on macOS a child forked
    then may crash in the Objective-C runtime, so the template refuses and says why, and every
    run still comes back, from runners started with exec."""
    with Sandbox(TEST_LIMITS, isolation="none", mode="spawn", workers=1,
                 preload=["tests.sandbox.threaded_preload"]) as box:
        box.wait_ready(300)
        info = box.worker_info
        results = [box.run(f"print({i} + 1)") for i in range(2)]
        info_after = _latest_ready(box)
    assert [(r.status, r.stdout) for r in results] == [("ok", "1\n"), ("ok", "2\n")], \
        [(r.message, r.stderr) for r in results]
    for said in (info, info_after):
        assert said["runners"] == "fresh", said
        assert "has 2 threads" in said["runners_why"], said


def test_thread_count_counts_threads_python_did_not_start_too():
    """Torch's OpenMP pool is invisible to ``threading``: the guard asks the kernel. Imports leave
    one thread (what the template relies on); one parallel op starts the pool."""
    if thread_count() is None:
        pytest.skip("no way to count threads here")
    code = ("import threading, torch\nfrom tutor.child.worker.template import thread_count\n"
            "print(thread_count())\ntorch.set_num_threads(2)\n"
            "torch.ones(4000, 4000).add_(1).sum()\nprint(thread_count(), threading.active_count())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    before, after = done.stdout.splitlines()
    assert before == "1"
    counted, pythons = map(int, after.split())
    assert pythons == 1 and counted >= 2, done.stdout


def _latest_ready(box: Sandbox) -> dict:
    """What the judge says now it is ready again (``worker_info`` is its first ready message)."""
    wait_for_idle(box)
    return [worker.ready for worker in list(box._spares.all) if worker.ready][-1]


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[1])


def _role(pid: int) -> str:
    with open(f"/proc/{pid}/cmdline", "rb") as handle:
        words = handle.read().decode(errors="replace")
    return next((role for role in ("judge", "runner") if f'"role": "{role}"' in words), "other")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the template by /proc")
def test_a_template_that_dies_mid_run_takes_its_judge_along_and_the_next_runs_come_from_a_new_spare():
    """Nothing of a run can reach its template (another uid, or another PID namespace), but a
    template can still die (memory, a crash). Its judge dies with it (the judge is its child), so
    the run is a sandbox failure, never passed, and the tutor starts another spare."""
    with Sandbox(TEST_LIMITS, isolation="none", mode="spawn", workers=1, preload=[]) as box:
        box.wait_ready(300)
        judge = box.worker_info["pid"]
        template = _parent(judge)
        assert _role(template) == "judge"  # the interpreter the tutor started, for the judge
        outcome: list = []
        running = threading.Thread(target=lambda: outcome.append(
            box.run("import time\nprint('started', flush=True)\ntime.sleep(3)\nprint('lived')")))
        running.start()
        time.sleep(1.0)
        os.kill(template, signal.SIGKILL)
        running.join(60)
        after = [box.run(f"print({i})") for i in range(2)]
        info = _latest_ready(box)
    assert outcome and outcome[0].status == "sandbox-failure" and "lived" not in outcome[0].stdout, outcome
    assert [(r.status, r.stdout) for r in after] == [("ok", "0\n"), ("ok", "1\n")], [(r.message, r.stderr) for r in after]
    assert info["pid"] != judge and info["runners"] == "forked", info


#: The attacks of test_hostile.py that reach how a run is kept, reaped and swept, which differ
#: between a forked runner (the template reaps it, and adopts what it leaves behind) and one
#: started with exec (the judge's own child). The full suite runs on forked runners under
#: bubblewrap (test_hostile.py); these run on runners started with exec under bubblewrap, and on
#: forked runners at isolation none, where no PID namespace ends what a run leaves behind and the
#: template's own sweep must.
KEEPING_ATTACKS = ["test_infinite_python_loop_times_out", "test_a_double_fork_daemon_does_not_outlive_the_run",
                   "test_forged_reports_are_ignored", "test_fork_bomb_is_contained", "test_memory_bomb_is_stopped",
                   "test_a_daemon_that_keeps_printing_is_gone_by_the_verdict_and_misses_the_next_run",
                   "test_cancel_stops_a_run_that_ignores_sigterm_and_sigint", "test_segfault_through_ctypes",
                   "test_exit_before_the_probe_is_a_sandbox_failure_with_output"]
#: On runners started with exec (a torch import each, ~2 s of CPU), the first three: a run stopped
#: for time, one that leaves a process behind, one that forges its report. What else differs is
#: the keeping code fork mode's keeper shares (``keeper.keep`` on its own child), which the whole
#: hostile suite runs in fork mode.
FRESH_ATTACKS = KEEPING_ATTACKS[:3]


def _spare(isolation: str, runners: str):
    with Sandbox(TEST_LIMITS, isolation=isolation, mode="spawn", workers=2, preload=["tutor.sandbox.echo_probe"],
                 spawn_runners=runners) as box:
        box.wait_ready(300)
        assert box.worker_info["runners"] == runners
        yield box


@pytest.fixture(scope="module")
def fresh_under_bwrap():
    from tests.sandbox.conftest import _bwrap_reason

    if _bwrap_reason():
        pytest.skip(f"bubblewrap does not work here: {_bwrap_reason()}")
    yield from _spare("bwrap", "fresh")


@pytest.fixture(scope="module")
def forked_at_none():
    yield from _spare("none", "forked")


def _attack(name: str, box: Sandbox, recovered, leftovers) -> None:
    """test_hostile.py's attack ``name`` (every case of a parametrized one) on ``box``."""
    import inspect

    from tests.sandbox import test_hostile as hostile

    test = getattr(hostile, name)
    given = {"sandbox": box, "recovered": recovered, "leftovers": leftovers}
    wanted = {key: given[key] for key in inspect.signature(test).parameters if key in given}
    cases: list[dict] = [{}]
    for mark in getattr(test, "pytestmark", []):
        if mark.name == "parametrize":
            names = [n.strip() for n in mark.args[0].split(",")]
            cases = [dict(zip(names, values if len(names) > 1 else (values,))) for values in mark.args[1]]
    for case in cases:
        test(**wanted, **case)


@pytest.mark.parametrize("attack", FRESH_ATTACKS)
def test_runners_started_with_exec_stand_the_attacks_on_how_a_run_is_kept(attack, fresh_under_bwrap, recovered,
                                                                          leftovers):
    _attack(attack, fresh_under_bwrap, recovered, leftovers)


@pytest.mark.parametrize("attack", KEEPING_ATTACKS)
def test_forked_runners_without_namespaces_stand_the_attacks_on_how_a_run_is_kept(attack, forked_at_none, recovered,
                                                                                  leftovers):
    """At isolation none no PID namespace ends what a run leaves behind: the template, which
    adopts it, must kill it before it says the run ended."""
    _attack(attack, forked_at_none, recovered, leftovers)


def test_the_spawn_runners_setting_reaches_the_sandbox_and_a_wrong_one_is_named(tmp_path):
    from tutor.settings.config import ConfigError, load_settings
    from tutor.grading.sandboxes import sandbox_for

    assert load_settings(environ={}, config_file=tmp_path / "none.toml").spawn_runners == "forked"
    settings = load_settings(environ={"TORCH_TUTOR_SPAWN_RUNNERS": "fresh"}, config_file=tmp_path / "none.toml")
    box = sandbox_for(settings)
    assert box.spawn_runners == "fresh"
    box.close()
    (tmp_path / "bad.toml").write_text('spawn_runners = "cloned"\n')
    with pytest.raises(ConfigError, match="spawn_runners") as raised:
        load_settings(environ={}, config_file=tmp_path / "bad.toml")
    assert "forked" in str(raised.value) and "fresh" in str(raised.value)
