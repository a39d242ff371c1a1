"""Fixtures for the Pilot tests: a real pack, a real progress store in a temporary data dir.

The sandbox is shared across the session (warming torch is the slow part); each app gets its
own store so tests share nothing they could corrupt for each other.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app_support import MINI, make_settings
from tutor.app.app import TutorApp
from tutor.app.engine import Engine
from tutor.pack.discovery import FoundPack
from tutor.pack.loader import load_pack
from tutor.record.progress import ProgressStore



@pytest.fixture(scope="session")
def mini_pack():
    return load_pack(MINI)


@pytest.fixture(scope="session")
def sandbox():
    """One warm sandbox for the whole session; skipped where this build has none yet."""
    sandbox_module = pytest.importorskip("tutor.sandbox")
    pytest.importorskip("tutor.grading.exercise")
    import tempfile

    settings = make_settings(Path(tempfile.mkdtemp(prefix="tutor-app-")))
    from tutor.grading.sandboxes import sandbox_for

    box = sandbox_for(settings, workers=1)
    box.start()
    yield box
    box.close()


@pytest.fixture
def make_app(tmp_path, mini_pack):
    """Build an app on the mini pack; call again with the same data dir to "restart"."""
    stores: list[ProgressStore] = []

    def build(*, data_dir: Path | None = None, sandbox=None, start_lesson: str | None = None,
              resume: bool = True, pack=None, **flags) -> TutorApp:
        data = data_dir or tmp_path
        settings = make_settings(data, **flags)
        store = ProgressStore.open(data)
        stores.append(store)
        engine = Engine(settings, sandbox=sandbox) if sandbox is not None else _NoSandboxEngine(settings)
        return TutorApp(found=[FoundPack(MINI, "--pack", pack or mini_pack)], store=store, engine=engine,
                        settings=settings, start_pack="mini", start_lesson=start_lesson, resume=resume)

    yield build
    for store in stores:
        store.close()


class _NoSandboxEngine(Engine):
    """For screens that run no code: never builds a sandbox, so those tests stay fast."""

    def start(self) -> None:
        self._error = "not needed by this test"


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Run ``async def`` tests on a fresh event loop (Pilot needs one; no plugin required)."""
    import asyncio
    import inspect

    if inspect.iscoroutinefunction(pyfuncitem.obj):
        names = pyfuncitem._fixtureinfo.argnames
        asyncio.run(pyfuncitem.obj(**{name: pyfuncitem.funcargs[name] for name in names}))
        return True
    return None
