"""A spinner with the elapsed time, shown while code runs, so the learner sees it is alive."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from textual.timer import Timer
from textual.widgets import Static

from tutor.words.i18n import t

if TYPE_CHECKING:
    from rich.spinner import Spinner

#: Rich's spinner of that name (its braille "dots"), drawn at its own pace.
SPINNER = "dots"


class RunningIndicator(Static):
    DEFAULT_CSS = """
    RunningIndicator { height: auto; color: $warning; display: none; }
    RunningIndicator.-running { display: block; }
    """

    def __init__(self, **kwargs: Any):
        super().__init__("", **kwargs)
        self._started = 0.0
        self._spinner: Spinner | None = None
        self._timer: Timer | None = None

    def start(self) -> None:
        from rich.spinner import Spinner  # on the first run, not on the first screen

        self._spinner = Spinner(SPINNER)
        self._started = time.monotonic()
        self.add_class("-running")
        self._tick()
        self._timer = self.set_interval(0.1, self._tick)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.remove_class("-running")
        self._mirror(None)

    def _mirror(self, text: str | None) -> None:
        """The running line on the screen's status bar too: in view however the page scrolls
        (a long output above pushed this line off the screen; issue 52)."""
        from tutor.app.widgets.status import StatusBar

        if self.is_attached:
            for bar in self.screen.query(StatusBar):
                bar.show_running(text)

    def _tick(self) -> None:
        if self._spinner is None:
            return
        now = time.monotonic()
        said = t("step.running", elapsed=now - self._started)
        self._spinner.update(text=said)
        frame = self._spinner.render(now)
        self.update(frame)
        self._mirror(frame.plain if hasattr(frame, "plain") else said)
