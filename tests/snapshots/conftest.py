"""Snapshot fixtures: the app on the mini pack, no sandbox, a fresh data dir, fixed size."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "app"))

from app_support import MINI, make_settings  # noqa: E402
from tutor.app.app import TutorApp  # noqa: E402
from tutor.app.engine import Engine  # noqa: E402
from tutor.pack.discovery import FoundPack  # noqa: E402
from tutor.pack.loader import load_pack  # noqa: E402
from tutor.record.progress import ProgressStore  # noqa: E402


class StillEngine(Engine):
    """A sandbox that is never there, with a fixed status line, so pictures do not flicker."""

    def start(self) -> None:
        self._error = "snapshot"


@pytest.fixture
def snapshot_app(tmp_path):
    stores = []

    def build(start_lesson: str | None = None, *, folder=MINI, **flags) -> TutorApp:
        """The app on ``folder``'s pack (the mini one unless a test names another)."""
        settings = make_settings(tmp_path, **flags)
        store = ProgressStore.open(tmp_path)
        store.preferences.set("shuffle-seed", "snapshot")  # choices in one fixed (shuffled) order
        stores.append(store)
        pack = load_pack(folder)
        return TutorApp(found=[FoundPack(folder, "--pack", pack)], store=store,
                        engine=StillEngine(settings), settings=settings, start_pack=pack.id,
                        start_lesson=start_lesson)

    yield build
    for store in stores:
        store.close()
