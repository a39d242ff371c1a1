"""From the user's settings to a Sandbox: the one place that maps one onto the other.

The sandbox takes ``Limits`` and plain arguments, never settings (it sits below core's
configuration); every caller that has settings (the app's engine, the commands, grading) builds
its sandbox here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from tutor.settings.config import Settings
from tutor.sandbox.limits import LIMIT_NAMES, Limits

if TYPE_CHECKING:
    from tutor.sandbox.isolation import IsolationInfo
    from tutor.sandbox.pool import Purpose, Sandbox


def limits_from(settings: Settings) -> Limits:
    """The limits the settings give (the names are shared: ``LIMIT_NAMES``)."""
    return Limits(**{name: getattr(settings, name) for name in LIMIT_NAMES})


def sandbox_for(settings: Settings, *, workers: int | None = None, purpose: "Purpose" = "interactive",
                hide: Sequence[str] = (), runs: int | None = None,
                chosen: "IsolationInfo | None" = None) -> "Sandbox":
    """A Sandbox (not started) with the settings' limits, workers, interpreter, isolation, mode and
    spawn mode's runners;
    ``runs``: how many runs the caller will ask for, where it knows (``Sandbox``);
    ``chosen``: the isolation the caller just chose for these settings (``Sandbox``)."""
    from tutor.sandbox.pool import Sandbox

    return Sandbox(limits_from(settings), workers=workers or settings.workers, python=settings.python,
                   isolation=settings.isolation, mode=settings.sandbox_mode, purpose=purpose,
                   hide=tuple(hide), runs=runs, spawn_runners=settings.spawn_runners, chosen=chosen)
