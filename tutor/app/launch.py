"""From command-line arguments to a running app: settings, packs, progress store, sandbox."""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path
from typing import Callable

from tutor.cli.common import UsageError, settings_from_args
from tutor.core.discovery import FoundPack, discover
from tutor.core.i18n import set_language
from tutor.core.progress import ProgressStore


def resolve_target(target: str | None, args: argparse.Namespace) -> tuple[list[str], str | None, str | None]:
    """Split ``PACK[/LESSON]`` into extra pack folders to load, a pack id (or folder), a lesson id.

    PACK is a pack id or a folder; a folder path may itself contain slashes, so the longest
    existing prefix wins.
    """
    extra = list(getattr(args, "pack", []) or [])
    if target is None:
        return extra, (str(Path(extra[-1]).resolve()) if extra else None), None
    candidate = Path(target)
    if candidate.exists():
        folder = candidate.parent if candidate.is_file() else candidate
        return extra + [str(folder)], str(folder.resolve()), None
    head, _, lesson = target.rpartition("/")
    if head and Path(head).exists():
        folder = Path(head)
        folder = folder.parent if folder.is_file() else folder
        return extra + [str(folder)], str(folder.resolve()), lesson or None
    if head:
        return extra, head, lesson or None
    return extra, target, None


def pick_pack(found: list[FoundPack], wanted: str | None, store: ProgressStore) -> tuple[str | None, bool]:
    """The id of the pack to open and whether the learner named it (so a wrong name is an error)."""
    packs = [f for f in found if f.pack is not None]
    if wanted is not None:
        for entry in packs:
            if entry.pack.id == wanted or str(entry.path.resolve()) == wanted:
                return entry.pack.id, True
        return None, True
    last = store.last_pack()
    if last and any(f.pack.id == last for f in packs):
        return last, False
    builtin = [f for f in packs if f.origin == "built-in"]
    chosen = (builtin or packs or [None])[0]
    return (chosen.pack.id if chosen else None), False


def launch(args: argparse.Namespace, target: str | None = None) -> int:
    settings = settings_from_args(args)
    set_language(settings.language)
    extra, wanted, lesson = resolve_target(target, args)
    found = discover(extra, settings.data_path, cache=True)
    store = ProgressStore.open(settings.data_path)
    pack_id, named = pick_pack(found, wanted, store)
    if pack_id is None and named:
        store.close()
        raise UsageError(f"no pack {wanted!r} (see `torch-tutor list`)")
    if lesson is not None:
        pack = next(f.pack for f in found if f.pack is not None and f.pack.id == pack_id)
        if pack.lesson(lesson) is None:
            store.close()
            ids = ", ".join(item.id for item in pack.lessons)
            raise UsageError(f"pack {pack_id!r} has no lesson {lesson!r} (it has: {ids})")

    from tutor.app.app import TutorApp
    from tutor.app.engine import Engine

    # Modules, classes and the packs live as long as the process: keep them out of every later
    # collection (run_app paused the collector while they were made).
    gc.freeze()

    engine = Engine(settings)
    app = TutorApp(found=found, store=store, engine=engine, settings=settings,
                   start_pack=pack_id, start_lesson=lesson)
    app.start_review = getattr(args, "open_review", None)  # `torch-tutor review`
    store.claim()  # a second app on the same data folder is told so (store.notice)
    restore = _flush_on_signals(app)
    try:
        app.run()
    finally:
        restore()
        engine.close()
        store.close()
    if store.notice:  # said in the app too; repeated here so it survives the screen clearing
        print(store.notice, file=sys.stderr)
    return app.return_code or 0


def _flush_on_signals(app) -> "Callable[[], None]":
    """SIGTERM and SIGHUP (the terminal closed) write every pending draft before the app goes:
    the last keystrokes are still inside the draft debounce. Returns what puts the old
    handlers back."""
    import signal

    def handler(signum, frame) -> None:
        try:
            app.flush_drafts()
            app.store.retry_unsaved()
        except Exception:  # leaving is what matters now
            pass
        app.exit(return_code=128 + signum)

    previous = {}
    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None:
            try:
                previous[number] = signal.signal(number, handler)
            except (ValueError, OSError):  # not the main thread
                pass

    def restore() -> None:
        for number, old in previous.items():
            signal.signal(number, old)

    return restore
