"""The learner's Textual app. Importing this package is cheap: Textual loads in ``run_app``."""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tutor.app.launch import Target
    from tutor.settings.config import Settings


def run_app(settings: Settings, target: Target) -> int:
    """Open the app on ``target`` (see :class:`tutor.app.launch.Target`); returns the exit code.

    Raises ``tutor.app.launch.LaunchError`` when the target names no pack or lesson that exists.

    The cyclic garbage collector is paused from here until the first screen is drawn (the app
    turns it back on then): start-up creates the objects that live as long as the app (modules,
    classes, styles, the first widgets), and collecting while they are made found nothing to free
    but took a sixth of the time to the first screen.
    """
    gc.disable()
    try:
        from tutor.app.launch import launch

        return launch(settings, target)
    finally:
        gc.enable()
