"""What only the profiler needs (``torch._dynamo``: 1.2-1.8 s of CPU to import) is not loaded
before a fork-mode worker says ready (worker/serve.py): a `check` or `grade` whose runs never
profile never pays for it, a run that needs it finds it loaded before it starts (never charged
for it), and an interactive worker left waiting for a learner loads it while they read.
Spawn mode's spares do the same (test_spawn.py)."""

from __future__ import annotations

import dataclasses
import time

import pytest

from tests.sandbox.conftest import TEST_LIMITS, wait_for_idle
from tutor.sandbox import Sandbox
from tutor.child.worker.startup import IDLE_WARM_S

#: A learner's line that says whether the profiler's machinery is loaded, without naming it (a
#: run that names it asks for it first).
HAS_DYNAMO = "import sys\nprint(any(m.startswith('torch._dyn' + 'amo') for m in sys.modules))\n"
PROFILES = ("import sys, torch\nloaded = any(m.startswith('torch._dyn' + 'amo') for m in sys.modules)\n"
            "with torch.profiler.profile() as prof:\n    torch.nn.functional.relu(torch.ones(4))\n"
            "prof.key_averages()\nprint(loaded)\n")


def _box(purpose: str, expect: bool | None = None) -> Sandbox:
    box = Sandbox(TEST_LIMITS, isolation="none", mode="fork", workers=1, preload=[], purpose=purpose)
    box.expect(expect)
    box.start()
    assert box.wait_ready(300)
    return box


def test_a_batch_worker_never_loads_it_for_runs_that_do_not_profile():
    with _box("batch") as box:
        assert "torch._dynamo" not in box.worker_info["preloaded"], box.worker_info
        time.sleep(2 * IDLE_WARM_S)  # a batch worker that waits is waiting for the run before
        first, second = box.run(HAS_DYNAMO), box.run(HAS_DYNAMO)
    for result in (first, second):
        assert (result.status, result.stdout) == ("ok", "False\n"), (result.message, result.stderr)


@pytest.mark.parametrize("code, printed", [
    (PROFILES, "True\n"),
    # An optimizer's first step imports it too (torch 2.13).
    ("import torch\nweight = torch.nn.Parameter(torch.ones(3))\n"
     "optimizer = torch.optim.SGD([weight], lr=0.5)\nweight.sum().backward()\n"
     "optimizer.step()\nprint(weight.tolist())\n", "[0.5, 0.5, 0.5]\n"),
], ids=["profiler", "optimizer"])
def test_a_run_that_needs_it_finds_it_loaded_and_is_not_charged_for_it(code, printed):
    with _box("batch") as box:
        result = box.run(code)
        after = box.run(HAS_DYNAMO)  # loaded once, in the worker: every later run has it
    assert (result.status, result.stdout) == ("ok", printed), (result.message, result.stderr)
    # Importing torch._dynamo alone takes more than a second of CPU; the run itself, milliseconds.
    assert result.cpu_time < 1.0, result.cpu_time
    assert (after.status, after.stdout) == ("ok", "True\n"), (after.message, after.stderr)


def test_an_interactive_worker_left_waiting_loads_it_while_the_learner_reads():
    with _box("interactive") as box:
        time.sleep(2 * IDLE_WARM_S)
        wait_for_idle(box)
        result = box.run(HAS_DYNAMO)
    assert (result.status, result.stdout) == ("ok", "True\n"), (result.message, result.stderr)


def test_an_interactive_worker_told_no_run_profiles_waits_without_it_until_told_one_may():
    """The app says, step by step, whether runs there may profile (``Sandbox.expect``): a worker
    left waiting on a step whose code names nothing that loads it stays without it, and loads it
    as soon as the learner reaches a step that may, while they read."""
    with _box("interactive", expect=False) as box:
        time.sleep(2 * IDLE_WARM_S)
        wait_for_idle(box)
        without = box.run(HAS_DYNAMO)
        time.sleep(2 * IDLE_WARM_S)
        still = box.run(HAS_DYNAMO)
        box.expect(True)
        time.sleep(2 * IDLE_WARM_S)
        wait_for_idle(box)
        loaded = box.run(HAS_DYNAMO)
    for result, printed in ((without, "False\n"), (still, "False\n"), (loaded, "True\n")):
        assert (result.status, result.stdout) == ("ok", printed), (result.message, result.stderr)


def test_loading_it_longer_than_the_grace_is_not_a_dead_worker(monkeypatch):
    """The tutor gives a run its wall time plus a grace before it calls the worker dead; the
    worker says `started` once the load is done, and the wait counts from there."""
    from tutor.sandbox import process

    monkeypatch.setattr(process, "_GRACE_S", 0.05)
    with _box("batch") as box:
        limits = dataclasses.replace(TEST_LIMITS, wall_time=0.5)
        result = box.run("x = 6 * 7  # no profile here, but the word asks for it\nprint(x)", limits)
    assert (result.status, result.stdout) == ("ok", "42\n"), (result.status, result.message)
