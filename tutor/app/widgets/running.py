"""A spinner with the elapsed time, shown while code runs, so the learner sees it is alive."""

from __future__ import annotations

import time

from textual.timer import Timer
from textual.widgets import Static

from tutor.core.i18n import t

_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class RunningIndicator(Static):
    DEFAULT_CSS = """
    RunningIndicator { height: auto; color: $warning; display: none; }
    RunningIndicator.-running { display: block; }
    """

    def __init__(self, **kwargs):
        super().__init__("", **kwargs)
        self._started = 0.0
        self._frame = 0
        self._timer: Timer | None = None

    def start(self) -> None:
        self._started = time.monotonic()
        self.add_class("-running")
        self._tick()
        self._timer = self.set_interval(0.1, self._tick)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.remove_class("-running")

    def _tick(self) -> None:
        self._frame = (self._frame + 1) % len(_FRAMES)
        elapsed = time.monotonic() - self._started
        self.update(f"{_FRAMES[self._frame]} {t('step.running', elapsed=elapsed)}")
