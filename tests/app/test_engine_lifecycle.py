"""Quitting never waits on the sandbox: closing the engine at any moment of its warm-up stops
the warm-up there (the worker never gets to say it is ready) and leaves no process behind; a
warm worker leaves on its own when asked."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from app_support import make_settings
from tutor.app.engine import Engine


def _start_then_close(tmp_path, delay: float | None) -> Engine:
    engine = Engine(make_settings(tmp_path))
    starter = threading.Thread(target=engine.start)
    starter.start()
    if delay is None:
        starter.join()
        assert engine._sandbox is not None and engine._sandbox.wait_ready(300)
    else:
        time.sleep(delay)
    engine.close()
    starter.join(30)
    assert not starter.is_alive()
    return engine


@pytest.mark.parametrize("delay", [0.0, 0.05, 0.3], ids=["at-once", "50ms", "300ms"])
def test_closing_during_warm_up_stops_it_there(tmp_path, delay):
    """Torch takes seconds to import in a worker; close() must not wait for that (it did: a
    worker still importing was given a second to answer, and a close() racing start() waited
    for the whole warm-up)."""
    engine = _start_then_close(tmp_path, delay)
    sandbox = engine._sandbox
    if sandbox is not None:
        assert sandbox._ready.wait(30), "the warm-up thread did not finish"
        assert not sandbox.worker_info, "close() waited for the worker to finish warming up"
        assert not any(worker.alive() for worker in sandbox._spares.all)
    engine.start()
    assert engine._sandbox is sandbox, "a closed engine starts nothing new"


def test_a_warm_worker_leaves_on_its_own(tmp_path):
    engine = _start_then_close(tmp_path, None)
    workers = list(engine._sandbox._spares.all)
    assert workers and not any(worker.alive() for worker in workers)
    assert all(worker._proc.returncode == 0 for worker in workers), "asked to exit, not killed"


def _sandbox_processes() -> set[int]:
    """This process's descendants that are sandbox processes (bubblewrap, workers, spares, runs)."""
    import os

    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as handle:
                text = handle.read()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        if fields[0] != "Z":
            parents[int(name)] = int(fields[1])
    found = set()
    for pid in parents:
        ancestor = parents.get(pid)
        while ancestor is not None and ancestor != os.getpid():
            ancestor = parents.get(ancestor)
        if ancestor is None:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                command = handle.read()
        except OSError:
            continue
        if b"tutor.child.worker" in command or command.startswith(b"/usr/bin/bwrap"):
            found.add(pid)
    return found


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("mode", ["fork", "spawn"])
def test_kill_now_ends_every_sandbox_process_and_starts_none_after(tmp_path, mode):
    """What the app does when it is ended from outside (tutor/app/leaving.py): no lock, no
    polite exit, every worker's or spare's process group at once, and no replacement after."""
    import os

    before = _sandbox_processes()
    engine = Engine(make_settings(tmp_path, sandbox_mode=mode))
    engine.start()
    sandbox = engine._sandbox
    assert sandbox is not None and sandbox.wait_ready(300)
    started = _sandbox_processes() - before
    assert started
    engine.kill_now()
    assert sandbox.run("print(1)").status == "sandbox-failure"  # its worker is gone; none replaces it
    deadline = time.monotonic() + 30
    while _sandbox_processes() - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _sandbox_processes() - before
    engine.start()
    assert engine._sandbox is sandbox, "an engine ended from outside starts nothing new"
    scratch = sandbox._scratch_root
    engine.close()  # still cleans up
    assert scratch is not None and not os.path.exists(scratch)


def test_a_step_says_whether_its_runs_may_profile():
    """What the app tells the sandbox of each step (``Engine.expect``): runs on the profiler
    lesson's exercise may load the profiler's machinery, the view exercise's and a prose page's
    will not, and nothing is known with no step."""
    from tutor.app.engine import may_profile
    from tutor.pack.loader import load_pack
    from tutor.pack.models import Exercise, Prose

    pack = load_pack(Path(__file__).resolve().parents[2] / "lessons" / "debugging-and-speed")
    steps = {(lesson.id, step.id): step for lesson in pack.lessons for step in lesson.steps}
    hotspot, view = steps[("profiler", "profiler-hotspot")], steps[("three-traps", "view-inplace")]
    assert isinstance(hotspot, Exercise) and isinstance(view, Exercise)
    assert may_profile(hotspot) is True and may_profile(view) is False
    prose = next(step for step in steps.values() if isinstance(step, Prose))
    assert may_profile(prose) is False and may_profile(None) is None


async def test_each_step_shown_tells_the_sandbox_whether_its_runs_may_profile(tmp_path, make_app, sandbox,
                                                                              monkeypatch):
    """A spare waiting for a Run warms up for the profiler only where the step's code or checks
    may need it (spawn mode pays that in every spare: 1.2-2.4 s of CPU per Run)."""
    from app_support import MINI, SIZE, settle
    from tutor.pack.loader import load_pack

    told: list = []
    monkeypatch.setattr(sandbox, "expect", told.append)
    folder = tmp_path / "pack"
    folder.mkdir()
    for source in MINI.iterdir():
        text = source.read_text()  # the example's code, profiled
        (folder / source.name).write_text(text.replace("      a @ b\n", "      with torch.profiler.profile():\n"
                                                                         "          a @ b\n"))
    app = make_app(start_lesson="basics", sandbox=sandbox, pack=load_pack(folder), data_dir=tmp_path / "data")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.screen.place.step.id == "intro"
        await pilot.press("f4")
        await settle(pilot)
        assert app.screen.place.step.id == "shape-error"
        await pilot.press("f4")
        await settle(pilot)
    assert told[:3] == [False, True, False], told  # prose, the example that profiles, a choice quiz
