"""What every step widget shares: its place, text resolution, and running code off the UI thread."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar

from textual import on, work
from rich.text import Text as RichText
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static

from tutor.app.engine import EngineUnavailable
from tutor.app.place import Place, Texts
from tutor.app.widgets.running import RunningIndicator
from tutor.core.i18n import t
from tutor.core.textclean import neutralize


def reveal(widget: Any, *extra: Any) -> None:
    """Bring what a key produced into view once it is laid out: all of it when it fits (moving the
    page as little as possible), else its start. ``extra`` widgets (an explanation below) come
    along when they fit too."""

    def scroll() -> None:
        if not widget.is_mounted:
            return
        container = next((node for node in widget.ancestors if getattr(node, "is_scrollable", False)
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
    class Finished(Message):
        """A background run is over: ``result`` is what the call returned, or ``error`` says why not."""

        job: str
        result: Any
        error: str | None

    def __init__(self, place: Place, texts: Texts):
        super().__init__(classes="step")
        self.place = place
        self.text = texts
        self.running = False

    @property
    def store(self) -> Any:
        return self.app.store  # type: ignore[attr-defined]

    @property
    def engine(self) -> Any:
        return self.app.engine  # type: ignore[attr-defined]

    @property
    def key(self) -> tuple[str, str, str]:
        return self.place.key

    def supports(self, action: str) -> bool:
        return action in self.ACTIONS

    # ------------------------------------------------------------------ background runs

    def start_job(self, job: str, call: Callable[[], Any]) -> None:
        """Run ``call`` in a thread; :meth:`job_finished` gets its result on the UI thread."""
        if self.running:
            return
        self.running = True
        for indicator in self.query(RunningIndicator):
            indicator.start()
        self._refresh_keys()
        self._job(job, call)

    @work(thread=True, exclusive=True, group="step-run", exit_on_error=False)
    def _job(self, job: str, call: Callable[[], Any]) -> None:
        try:
            result, error = call(), None
        except EngineUnavailable as exc:
            result, error = None, str(exc)
        except Exception as exc:  # the UI must survive any failure of the engine
            result = None
            if type(exc).__name__ == "SandboxUnavailable":
                error = t("sandbox.missing", reason=str(exc))
            else:
                error = f"{type(exc).__name__}: {exc}"
        self.post_message(self.Finished(job, result, error))

    @on(Finished)
    def _finished(self, message: Finished) -> None:
        message.stop()
        self.running = False
        for indicator in self.query(RunningIndicator):
            indicator.stop()
        self.job_finished(message.job, message.result, message.error)
        self._refresh_keys()

    def job_finished(self, job: str, result: Any, error: str | None) -> None:
        """Show the outcome of ``job``; overridden by steps that run code."""

    def shown_output(self, error: str | None) -> Static | None:
        """The step's #output box, made visible; None when it now shows ``error`` instead."""
        output = self.query_one("#output", Static)
        output.add_class("-shown")
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
