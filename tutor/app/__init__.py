"""The learner's Textual app. Importing this package is cheap: Textual loads in ``run_app``."""

from __future__ import annotations

import argparse


def run_app(args: argparse.Namespace, target: str | None = None) -> int:
    """Open the app (``target`` is ``PACK`` or ``PACK/LESSON``); returns the exit code."""
    from tutor.app.launch import launch

    return launch(args, target)
