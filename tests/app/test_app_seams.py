"""The seams between the UI and what runs code: the engine's states as the learner reads them,
failures of the sandbox recognised by their type, the typed way from a widget to the app, and
launching from settings and a target (no argparse inside the app)."""

from __future__ import annotations

import time

import pytest
from textual.app import App
from textual.widgets import Static

from app_support import MINI, make_settings, screen_text, settle
from tutor.app.engine import Engine, EngineUnavailable
from tutor.app.state import tutor_app
from tutor.app.widgets.steps.base import StepView
from tutor.words import i18n
from tutor.words.i18n import t


def _broken_interpreter(tmp_path):
    """An interpreter setting that runs but is no Python with torch: warm-up fails."""
    fake = tmp_path / "fake-python"
    fake.write_text("#!/bin/sh\necho 'no torch here' >&2\nexit 3\n")
    fake.chmod(0o755)
    return make_settings(tmp_path, python=str(fake))


def _wait_for(engine: Engine, value: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if engine.state is not None and engine.state.value == value:
            return
        time.sleep(0.05)
    raise AssertionError(f"the sandbox never became {value!r} (it is {engine.state})")


def test_a_sandbox_that_cannot_warm_up_says_why_in_the_status_bar_and_on_run(tmp_path):
    from tutor.sandbox import SandboxState

    engine = Engine(_broken_interpreter(tmp_path))
    assert engine.state is None and engine.status_text() == t("status.sandbox.warming")
    engine.start()
    try:
        _wait_for(engine, "unavailable")
        assert engine.state is SandboxState.UNAVAILABLE
        reason = engine._sandbox.error
        assert reason and "fake-python" in reason
        assert engine.status_text() == t("status.sandbox.failed", reason=reason)
        assert engine.torch_version() is None and engine.isolation_reason() == ""
        with pytest.raises(EngineUnavailable) as raised:
            engine.run("print(1)")
        assert str(raised.value) == t("sandbox.missing", reason=reason)
    finally:
        engine.close()
    assert engine.state is SandboxState.CLOSED
    # Closed, the reason is that, not the warm-up failure from before.
    with pytest.raises(EngineUnavailable) as raised:
        engine.run("print(1)")
    assert str(raised.value) == t("sandbox.missing", reason="closed")
    assert engine.status_text() == "sandbox: closed"


async def _step_view(make_app, pilot, app) -> StepView:
    await settle(pilot)
    return app.screen.query_one(StepView)


async def test_a_sandbox_failure_is_recognised_by_its_type_subclasses_too(make_app):
    """The step's thread turns SandboxUnavailable (and any subclass of it) into the learner's
    sentence; it used to compare the class's *name*, which a subclass does not share."""
    from tutor.sandbox import SandboxUnavailable

    class NoGpuWorker(SandboxUnavailable):
        pass

    app = make_app(start_lesson="basics")
    async with app.run_test(size=(100, 32)) as pilot:
        view = await _step_view(make_app, pilot, app)
        for exc in (SandboxUnavailable("no torch in the worker"), NoGpuWorker("no torch in the worker")):
            got: list[str | None] = []
            view.run_finished = lambda result, error: got.append(error)  # type: ignore[method-assign]

            def fail(exc: Exception = exc):
                raise exc

            view.start_run(fail)
            await app.workers.wait_for_complete()
            await settle(pilot)
            assert got == [t("sandbox.missing", reason="no torch in the worker")], type(exc).__name__
            assert not view.running


async def test_any_other_engine_failure_is_named_and_the_step_stays_usable(make_app):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=(100, 32)) as pilot:
        view = await _step_view(make_app, pilot, app)
        got: list[tuple[object, str | None]] = []
        view.check_finished = lambda report, error: got.append((report, error))  # type: ignore[method-assign]

        def fail():
            raise OSError("disk full")

        view.start_check(fail)
        await app.workers.wait_for_complete()
        await settle(pilot)
        assert got == [(None, "OSError: disk full")]
        assert not view.running


async def test_the_app_accessor_refuses_a_widget_of_another_app():
    class Other(App[None]):
        def compose(self):
            yield Static("x", id="x")

    app = Other()
    async with app.run_test():
        with pytest.raises(TypeError, match="Static runs inside Other, not the tutor's app"):
            tutor_app(app.query_one("#x"))


async def test_the_app_accessor_gives_the_tutors_state(make_app):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=(100, 32)) as pilot:
        view = await _step_view(make_app, pilot, app)
        assert tutor_app(view) is app and view.store is app.store and view.engine is app.engine


def test_launch_refuses_a_target_that_is_not_there_without_argparse(tmp_path):
    from tutor.app.launch import LaunchError, Target, launch

    settings = make_settings(tmp_path)
    with pytest.raises(LaunchError, match="no pack 'nope'"):
        launch(settings, Target(target="nope"))
    with pytest.raises(LaunchError, match="pack 'mini' has no lesson 'missing' \\(it has: basics"):
        launch(settings, Target(packs=(str(MINI),), target="mini/missing"))


def test_the_command_line_turns_a_launch_error_into_a_usage_error(tmp_path, capsys):
    from tutor.cli.main import main

    code = main(["--data-dir", str(tmp_path), "open", "--pack", str(MINI), "mini/missing"])
    assert code == 2
    assert "pack 'mini' has no lesson 'missing'" in capsys.readouterr().err


async def test_the_contents_redraw_in_a_new_language_while_shown(make_app):
    """Screens follow ``TutorApp.language`` by watching it (it was a duck-typed method before)."""
    app = make_app(start_lesson=None, resume=False)
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        assert "Basics" in screen_text(app) and "基础" not in screen_text(app)
        app.set_language("zh")
        await settle(pilot, 4)
        assert "基础" in screen_text(app)


async def test_step_buttons_and_palette_name_the_keys_the_screen_binds(make_app, mini_pack):
    """Key labels come from the screen's BINDINGS: a screen that moves Run to F12 and Check to
    ctrl+k shows that on the buttons and in the palette, and the keys it does not bind stay."""
    from textual.binding import Binding

    from tutor.app.place import Place
    from tutor.app.screens.lesson import LessonScreen
    from tutor.app.widgets.keybutton import KeyButton

    class Moved(LessonScreen):
        BINDINGS = [Binding("f12", "step('run')", "Run", priority=True),
                    Binding("ctrl+k,f6", "step('check')", "Check", priority=True)]

    app = make_app(start_lesson=None, resume=False)
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        for screen, run, check in ((LessonScreen, "Run F5", "Check F6"), (Moved, "Run F12", "Check ^K")):
            app.push_screen(screen(Place.find(mini_pack, "exercises")))
            await settle(pilot, 3)
            labels = {b.id: b.label for b in app.screen.query(KeyButton)}
            assert labels["run"] == run and labels["check"] == check, labels
            assert labels["hint"] == "Hint F7" and labels["reset"] == "Reset F9", labels
            helps = {c.title: c.help for c in app.screen.step_commands()}
            assert helps["Run"].startswith(run.split()[-1] + " ") and helps["Check"].startswith(check.split()[-1] + " ")
            app.pop_screen()
            await settle(pilot)


async def test_the_running_indicator_spins_and_counts_while_code_runs(make_app):
    import re

    from tutor.app.widgets.running import RunningIndicator

    app = make_app(start_lesson="exercises")
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        indicator = app.screen.query_one(RunningIndicator)
        assert not indicator.display
        indicator.start()
        seen = set()
        for _ in range(8):
            await pilot.pause(0.1)
            line = str(indicator.render()).strip()
            match = re.fullmatch(r"(\S) Running… (\d+\.\d) s \(Esc stops\)", line)
            assert match, line
            seen.add(match.group(1))
        assert indicator.display and len(seen) > 2, seen  # rich's "dots" frames, moving
        assert float(match.group(2)) >= 0.5
        indicator.stop()
        await settle(pilot)
        assert not indicator.display


def test_no_module_of_the_app_imports_the_command_line():
    """The app takes Settings and a Target; only tutor/cli knows argparse (docs/architecture.md)."""
    import ast
    from pathlib import Path

    import tutor.app

    offenders = []
    for path in Path(tutor.app.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offenders += [f"{path.name}: {name}" for name in names if name == "tutor.cli" or
                          name.startswith("tutor.cli.") or name in ("argparse",)]
    assert offenders == []


async def test_the_status_bar_follows_a_warm_sandbox_through_a_run(make_app, sandbox):
    """READY with the isolation level and the worker's torch, BUSY while code runs, READY after."""
    from tutor.app.widgets.editor import CodeEditor
    from tutor.sandbox import SandboxState

    assert sandbox.wait_ready(300)
    app = make_app(start_lesson="exercises", sandbox=sandbox)
    engine = app.engine
    ready = t("status.sandbox.ready") + " · " + t("status.isolation", level=sandbox.isolation.level)
    assert engine.state is SandboxState.READY and engine.status_text() == ready
    i18n.set_language("zh")  # the level's name in the language in use ("none": 无; bwrap is a program's name)
    try:
        level = {"none": "无"}.get(sandbox.isolation.level, sandbox.isolation.level)
        assert engine.status_text() == "沙箱：就绪 · 隔离：" + level, engine.status_text()
    finally:
        i18n.set_language(None)
    assert engine.torch_version() == sandbox.worker_info["torch"] and engine.torch_version()
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot)
        app.screen.query_one(CodeEditor).replace_all("while True:\n    pass\n")
        await pilot.press("f5")
        for _ in range(200):
            await pilot.pause(0.05)
            if engine.state is SandboxState.BUSY:
                break
        assert engine.state is SandboxState.BUSY
        assert engine.status_text().startswith(t("status.sandbox.busy") + " · ")
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await settle(pilot, 3)
        assert engine.state is SandboxState.READY and engine.status_text() == ready
