"""The learner's Textual app. Importing this package is cheap: Textual loads in ``run_app``."""

from __future__ import annotations

import argparse
import gc


def run_app(args: argparse.Namespace, target: str | None = None) -> int:
    """Open the app (``target`` is ``PACK`` or ``PACK/LESSON``); returns the exit code.

    The cyclic garbage collector is paused from here until the first screen is drawn (the app
    turns it back on then): start-up creates the objects that live as long as the app (modules,
    classes, styles, the first widgets), and collecting while they are made found nothing to free
    but took a sixth of the time to the first screen.
    """
    gc.disable()
    try:
        from tutor.app.launch import launch

        return launch(args, target)
    finally:
        gc.enable()
