"""What every step widget shares: its place, text resolution, and running code off the UI thread."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Awaitable, Callable, ClassVar, TypeVar

from textual import on, work
from rich.text import Text as RichText
from textual.containers import Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from tutor.app.engine import Engine, EngineUnavailable
from tutor.app.place import Place, Texts
from tutor.app.state import tutor_app
from tutor.app.widgets.running import RunningIndicator
from tutor.words.i18n import carried, t
from tutor.words.safe_text import neutralize

if TYPE_CHECKING:  # loaded with the engine's first run, not at start-up
    from tutor.record.progress import ProgressStore
    from tutor.grading.exercise import ExampleOutcome, ExerciseReport
    from tutor.sandbox.result import RunResult

#: How long the running line stays for a run's outcome to mount (``StepView._over``): ~10 ms
#: quiet; past it the line goes and the keys come back whether or not the outcome is there.
MOUNT_WAIT_S = 2.0

_R = TypeVar("_R")
_S = TypeVar("_S")


def shown_step(scroll: Widget | None) -> StepView | None:
    """The step view a screen shows: among the children of ``scroll``, the container it mounts
    its step in (None before it is composed, or between two steps). Looked for there alone: the
    key footer asks once per binding each time it draws (``check_action``), and a query of the
    whole screen walks every line of the step and its reports (cProfile of three Checks: half the
    app's own function calls; no wall-time change measurable, docs/performance.md)."""
    if scroll is None:
        return None
    return next((child for child in scroll.children if isinstance(child, StepView)), None)


def reveal(widget: Widget, *extra: Widget) -> None:
    """Bring what a key produced into view once it is laid out: all of it when it fits (moving the
    page as little as possible), else its start. ``extra`` widgets (an explanation below) come
    along when they fit too."""

    def scroll() -> None:
        if not widget.is_mounted:
            return
        container = next((node for node in widget.ancestors if isinstance(node, Widget) and node.is_scrollable
                          and node.allow_vertical_scroll), None)
        visible = [w for w in (widget, *extra) if w.is_mounted and w.display and w.outer_size.height]
        height = visible[-1].region.bottom - widget.region.y if visible else widget.outer_size.height
        if container is not None and height > container.scrollable_content_region.height:
            widget.scroll_visible(animate=False, top=True)
            return
        # The span fits: showing its last part (moving down as little as possible) shows all of it.
        # One scroll only: a second, queued behind it, would measure from the old position.
        (visible[-1] if visible else widget).scroll_visible(animate=False)

    widget.call_after_refresh(scroll)


class StepView(Vertical):
    """Base of the step widgets.

    ``ACTIONS`` names the lesson-screen actions (run, check, hint, solution, reset) this step
    answers; the screen shows only those keys in the footer and forwards them as ``do_<name>``.
    """

    ACTIONS: ClassVar[frozenset[str]] = frozenset()

    @dataclass
    class RunFinished(Message):
        """Run is over: ``result`` is the sandbox's, or ``error`` says why there is none."""

        result: RunResult | None
        error: str | None

    @dataclass
    class ExampleFinished(Message):
        """An example ran: ``outcome`` says whether it did what the step expects, or ``error`` why not."""

        outcome: ExampleOutcome | None
        error: str | None

    @dataclass
    class CheckFinished(Message):
        """Check is over: ``report`` is grading's, or ``error`` says why there is none."""

        report: ExerciseReport | None
        error: str | None

    def __init__(self, place: Place, texts: Texts, *, key: tuple[str, str, str] | None = None):
        """``key``: where the step's progress, drafts and answers are kept (default: the
        place's own; the review screen passes a scratch key)."""
        super().__init__(classes="step")
        self.place = place
        self._progress_key = key
        self.text = texts
        self.running = False
        self._toasts: set[str] = set()  # what this step's toasts say (``toast``)

    def on_mount(self) -> None:
        # The sandbox warms up for what runs here may need (``Engine.expect``); a subclass's own
        # on_mount runs too (Textual calls each class's handler along the MRO).
        self.engine.expect(self.place.step)

    @property
    def store(self) -> ProgressStore:
        return tutor_app(self).store

    @property
    def engine(self) -> Engine:
        return tutor_app(self).engine

    @property
    def key(self) -> tuple[str, str, str]:
        return self._progress_key or self.place.key

    def step_as(self, kind: type[_S]) -> _S:
        """The place's step as the one kind this view shows (``make_step`` chose the view by it)."""
        step = self.place.step
        if not isinstance(step, kind):
            raise TypeError(f"{type(self).__name__} shows a {kind.__name__}, not a {type(step).__name__}")
        return step

    def toast(self, message: str, **kwargs: Any) -> None:
        """A toast of this step's: taken off the screen when the step's next run starts."""
        self._toasts.add(message)
        self.app.notify(message, **kwargs)

    def supports(self, action: str) -> bool:
        return action in self.ACTIONS

    def act(self, action: str) -> None:
        """Do ``action`` (a screen's key: run, check, hint, solution, reset) when this step
        answers it and nothing of its runs, once the focused widget has taken the keys typed
        before it.

        The screen's keys are priority bindings, which Textual answers at once, while the keys
        typed before them wait in the focused widget's own queue: on a busy machine, code typed
        and F5 pressed at once ran the code as it was before the typing. The action then waits
        in that queue behind them; with nothing waiting there it runs at once, as before (so a
        key that follows it goes where the action leaves the focus)."""
        if not self.supports(action) or self.running:
            return
        focused = self.app.focused
        if focused is not None and focused is not self and self in focused.ancestors \
                and focused.message_queue_size > 0:
            focused.call_later(self._act_now, action)
        else:
            self._act_now(action)

    def _act_now(self, action: str) -> None:
        if not self.is_attached or self.running:
            return
        {"run": self.do_run, "check": self.do_check, "hint": self.do_hint, "solution": self.do_solution,
         "reset": self.do_reset}[action]()

    # A step overrides those in its ACTIONS; the others are never called.

    def do_run(self) -> None:
        """Run the step's code."""

    def do_check(self) -> None:
        """Check the learner's code."""

    def do_hint(self) -> None:
        """Show the next hint."""

    def do_solution(self) -> None:
        """Show the solution."""

    def do_reset(self) -> None:
        """Put the step's code back as it was."""

    # ------------------------------------------------------------------ background runs

    def start_run(self, call: Callable[[], RunResult]) -> None:
        """Run ``call`` (the engine's ``run``) in a thread; :meth:`run_finished` gets its result."""
        self._start(call, self.RunFinished)

    def start_example(self, call: Callable[[], ExampleOutcome]) -> None:
        """Run ``call`` (the engine's ``run_example``) in a thread; :meth:`example_finished` gets it."""
        self._start(call, self.ExampleFinished)

    def start_check(self, call: Callable[[], ExerciseReport]) -> None:
        """Run ``call`` (the engine's ``check``) in a thread; :meth:`check_finished` gets its report."""
        self._start(call, self.CheckFinished)

    def _start(self, call: Callable[[], _R], done: Callable[[_R | None, str | None], Message]) -> None:
        if self.running:
            return
        self.running = True
        self.mark_stale("output.stale.running")
        # A toast of this step's (the solution's gate, no more hints) must not sit on top of the
        # next outcome ("Solved!"): what a run shows replaces it.
        from tutor.app import textual_compat

        textual_compat.drop_notifications(self.app, self._toasts)
        self._toasts.clear()
        for indicator in self.query(RunningIndicator):
            indicator.start()
            reveal(indicator)
        self._refresh_keys()
        # In this context (the app's language): a worker thread starts with none of its own.
        self._job(carried(partial(self._run_job, call, done)))

    def mark_stale(self, reason: str) -> None:
        """Say on every outcome shown (its frame's title) that it is an earlier one, and dim it:
        a new run started (``reason`` "output.stale.running") or the code changed since
        ("output.stale.edited"). A Run's box had kept "Finished without an error" for the 10 s
        the next run took. The outcome that replaces it is not stale."""
        for widget in self.query(".output.-shown, CheckReport"):
            widget.add_class("-stale")
            widget.border_title = t(reason)

    def on_text_area_changed(self, event: Message) -> None:
        """The step's code changed: what was shown is an earlier code's outcome."""
        from tutor.app.widgets.editor import CodeEditor

        if isinstance(getattr(event, "text_area", None), CodeEditor) and not self.running:
            self.mark_stale("output.stale.edited")

    @work(thread=True, exclusive=True, group="step-run", exit_on_error=False)
    def _job(self, job: Callable[[], None]) -> None:
        job()

    def _run_job(self, call: Callable[[], _R], done: Callable[[_R | None, str | None], Message]) -> None:
        result: _R | None = None
        error: str | None = None
        try:
            result = call()
        except EngineUnavailable as exc:
            error = str(exc)
        except Exception as exc:  # the UI must survive any failure of the engine
            # Loaded by now: the call that raised went through the sandbox.
            from tutor.sandbox.pool import SandboxUnavailable

            if isinstance(exc, SandboxUnavailable):
                error = t("sandbox.missing", reason=str(exc))
            else:
                error = f"{type(exc).__name__}: {exc}"
        self.post_message(done(result, error))

    async def _over(self, message: Message, show: Callable[[], Awaitable[object] | None]) -> None:
        """The job is over: ``show`` its outcome and, once what that mounts (its awaitable) is
        mounted, stop the indicators and offer the keys again. In that order, so that no frame
        has the running line gone and the outcome not yet there: a new report's mounting takes a
        few message rounds, and the screen was drawn in between (a lesson screen's layout and
        drawing take 10-30 ms each; the report came ~50 ms after the running line left)."""
        message.stop()
        try:
            mounted = show()
            if mounted is not None:
                # Bounded: an outcome that never mounts (its step left) must not keep the line.
                await asyncio.wait([asyncio.ensure_future(mounted)], timeout=MOUNT_WAIT_S)
        finally:  # whatever showing did, the step is no longer running: its keys work again
            self.running = False
            for indicator in self.query(RunningIndicator):
                indicator.stop()
            self._refresh_keys()

    @on(RunFinished)
    async def _run_finished(self, message: RunFinished) -> None:
        await self._over(message, lambda: self.run_finished(message.result, message.error))

    @on(ExampleFinished)
    async def _example_finished(self, message: ExampleFinished) -> None:
        await self._over(message, lambda: self.example_finished(message.outcome, message.error))

    @on(CheckFinished)
    async def _check_finished(self, message: CheckFinished) -> None:
        await self._over(message, lambda: self.check_finished(message.report, message.error))

    def run_finished(self, result: RunResult | None, error: str | None) -> Awaitable[object] | None:
        """Show a Run's result (``error``: why there is none); overridden by steps that run code.
        What it mounts, if anything: awaited before the screen is drawn again."""
        return None

    def example_finished(self, outcome: ExampleOutcome | None, error: str | None) -> Awaitable[object] | None:
        """Show an example's outcome (``error``: why there is none); what it mounts, as above."""
        return None

    def check_finished(self, report: ExerciseReport | None, error: str | None) -> Awaitable[object] | None:
        """Show a Check's report (``error``: why there is none); what it mounts, as above."""
        return None

    def shown_output(self, error: str | None) -> Static | None:
        """The step's #output box, made visible; None when it now shows ``error`` instead."""
        output = self.query_one("#output", Static)
        output.add_class("-shown")
        output.remove_class("-stale")
        output.border_title = None
        if error is not None:
            output.update(RichText(neutralize(error), style="bold red"))
            return None
        return output

    def stop(self) -> None:
        if self.running:
            self.engine.cancel()

    def _refresh_keys(self) -> None:
        if self.is_attached:
            self.screen.refresh_bindings()
