"""The one typed way from a widget or screen to the app's shared state (packs, store, engine).

Textual types ``DOMNode.app`` as a plain ``App``; every screen of ours runs inside the tutor's
app (``tutor.app.app.TutorApp``), and this says so once, checked, instead of at each use.

What a screen or widget may ask of the app is declared here, as :class:`TutorState`, rather than
by importing the app's class: the app opens the screens, so a screen that imported the app would
close an import circle. Textual's own surface (``notify``, ``pop_screen``...) is ``node.app``'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from textual.dom import DOMNode

if TYPE_CHECKING:
    from tutor.app.engine import Engine
    from tutor.app.place import Place
    from tutor.pack.discovery import FoundPack
    from tutor.pack.models import Pack
    from tutor.record.progress import ProgressStore
    from tutor.settings.config import Settings


@runtime_checkable
class TutorState(Protocol):
    """The app's state and the moves a screen asks of it (``TutorApp`` has them all)."""

    found: list[FoundPack]
    store: ProgressStore
    engine: Engine
    settings: Settings
    start_pack: str | None
    language: str | None

    @property
    def packs(self) -> list[Pack]: ...

    def pack(self, pack_id: str | None) -> Pack | None: ...

    def resume_place(self, pack: Pack, lesson_id: str | None = None) -> Place | None: ...

    def open_place(self, place: Place) -> None: ...

    def hold_keys(self) -> None: ...

    def release_keys(self) -> None: ...

    def flush_drafts(self) -> None: ...

    def action_home(self) -> None: ...

    def action_review(self, pack_id: str | None = None) -> None: ...


def tutor_app(node: DOMNode) -> TutorState:
    """The tutor's app that ``node`` runs in (a TypeError names the node if it runs in another app)."""
    app = node.app
    if not isinstance(app, TutorState):
        raise TypeError(f"{type(node).__name__} runs inside {type(app).__name__}, not the tutor's app")
    return app
