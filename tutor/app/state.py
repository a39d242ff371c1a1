"""The one typed way from a widget or screen to the app's shared state (packs, store, engine).

Textual types ``DOMNode.app`` as a plain ``App``; every screen of ours runs inside a
:class:`~tutor.app.app.TutorApp`, and this says so once, checked, instead of at each use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.dom import DOMNode

if TYPE_CHECKING:
    from tutor.app.app import TutorApp


def tutor_app(node: DOMNode) -> TutorApp:
    """The TutorApp that ``node`` runs in (a TypeError names the node if it runs in another app)."""
    from tutor.app.app import TutorApp  # loaded long before any widget asks

    app = node.app
    if not isinstance(app, TutorApp):
        raise TypeError(f"{type(node).__name__} runs inside {type(app).__name__}, not the tutor's app")
    return app
