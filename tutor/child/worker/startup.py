"""What every interpreter of the child side loads, and says, as it starts: a fork-mode worker
(``serve.py``) and both interpreters of a spawn-mode spare (``spawn.py``). A leaf: it imports
nothing of the worker but ``linux``, so every module of the worker may import it.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Callable

from tutor.child.worker import linux

if TYPE_CHECKING:
    from typing import Any

#: How long a spare's judge waits for its runner to import torch and warm up.
RUNNER_START_S = 300.0

#: Modules the profiler and the checks reach for: loading them per run costs about a second.
#: ``torch._dynamo`` is what the profiler's first use imports (~800 modules, 1.2-1.8 s of CPU):
#: paid here, before forking, not in every learner's run.
BASE_PRELOAD = ("torch", "torch.nn", "torch.nn.functional", "torch.profiler", "numpy")
OPTIONAL_PRELOAD = ("torch._dynamo", "tutor.child.checks.server", "tutor.child.checks.remote", "tutor.child.worker.judging")

#: What a spawn-mode judge started alone does not load before it says ready: it runs no learner
#: code, so the runner's server is not its business. (A judge forked from the runner template
#: has whatever the template loaded for its runners, shared, not copied.)
JUDGE_LEAVES_OUT = ("tutor.child.checks.server",)
#: What neither interpreter of a spawn-mode spare loads before it says ready: the profiler's
#: machinery (``torch.profiler.profile``'s first use imports ``torch._dynamo``, 1.2-2.4 s of CPU).
#: A spare that waits ``IDLE_WARM_S`` for its request (a learner reading the exercise) loads it
#: then in its runner (and its template, for the runners after); a spare taken at once
#: (back-to-back runs, a ``grade`` batch) loads it only where its run needs it
#: (``judging.needs_dynamo``), before the run starts, so the run is never charged for it. The
#: judge never loads it: its checks profile with ``refs.profile``, which does not import it.
SPARE_DEFERS = ("torch._dynamo",)
IDLE_WARM_S = 1.0


def preload(extra: list[str], leave_out: tuple[str, ...] = ()) -> tuple[list[str], dict[str, str]]:
    import importlib

    loaded: list[str] = []
    failed: dict[str, str] = {}
    for name in BASE_PRELOAD:
        importlib.import_module(name)
        loaded.append(name)
    _import_optional([n for n in [*OPTIONAL_PRELOAD, *extra] if n not in leave_out], loaded, failed)
    return loaded, failed


def _import_optional(names: list[str], loaded: list[str], failed: dict[str, str]) -> None:
    import importlib

    for name in names:
        try:
            importlib.import_module(name)
            loaded.append(name)
        except Exception as exc:  # optional: a missing probe module is not fatal
            failed[name] = f"{type(exc).__name__}: {exc}"


def spare_preload(extra: list[str], leave_out: tuple[str, ...] = ()) -> tuple[list[str], dict[str, str]]:
    """What an interpreter of a spawn-mode spare loads before it says ready (see ``SPARE_DEFERS``)."""
    return preload(extra, leave_out + SPARE_DEFERS)


def judge_preload(extra: list[str]) -> tuple[list[str], dict[str, str]]:
    return spare_preload(extra, JUDGE_LEAVES_OUT)


def load_deferred() -> None:
    """What an interpreter loads later (``SPARE_DEFERS``): a spawn-mode spare's, a fork-mode worker.
    A module that fails here fails again where it is needed, and says why there. Then the check
    engine's snapshot of torch is taken again (``tutor.child.checks.guard``, where it is loaded): no
    learner code has run here, and what these imports rebind (``torch.manual_seed``) is torch's."""
    _import_optional(list(SPARE_DEFERS), [], {})
    guard = sys.modules.get("tutor.child.checks.guard")
    if guard is not None:
        guard.snapshot()


def ready_message(loaded: list[str], failed: dict[str, str], warmup_s: float, mode: str) -> dict[str, Any]:
    """What a worker (fork mode) or a spare (spawn mode) says once it is warm."""
    import torch

    return {"op": "ready", "pid": os.getpid(), "torch": torch.__version__, "mode": mode,
            "python": sys.version.split()[0], "executable": sys.executable,
            "preloaded": loaded, "preload_failures": failed, "warmup_s": warmup_s,
            "rss_mb": linux.rss_mb(), "os_helpers": linux.AVAILABLE,
            "unenforced": linux.unenforced_limits()}


def warm_up() -> None:
    """What the runner defers (``SPARE_DEFERS``), loaded before its request. Its output is not the
    run's: it goes to /dev/null. A module that fails here fails again in the run that uses it, and
    says why there. No op runs here (``warm_profiler`` says when one may)."""
    _to_devnull(load_deferred)


def warm_profiler() -> None:
    """The profiler's first session in this process, over a two-element op, before the request:
    the run's own first profile then finds Kineto set up and the pages it writes copied already
    (the Linear + profiler snippet, fork mode, spaced: 22-23 -> 14-16 ms here). Its output goes to
    /dev/null; a failure is left for the run's own profile to meet and say.

    Only in a runner that gave up every capability ahead of its request (``runner._prepare``, with
    the run's namespaces): capabilities belong to each thread, the session starts Kineto's, and a
    thread started while the runner still held the capabilities of the run's user namespace kept
    them beside the learner's code (tests/sandbox/test_spawn.py reads every thread's)."""
    def profile() -> None:
        import torch

        with torch.profiler.profile() as session:
            torch.ones(2).add_(1)
        session.key_averages()

    _to_devnull(profile)


def _to_devnull(work: Callable[[], None]) -> None:
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    try:
        work()
    except Exception:  # noqa: BLE001 - see the callers
        pass
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        for fd, target in zip(saved, (1, 2)):
            os.dup2(fd, target)
            os.close(fd)
