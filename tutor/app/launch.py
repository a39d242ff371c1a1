"""From settings and a target to a running app: packs, progress store, sandbox.

The command line (``tutor/cli/app.py``) reads the flags and the configuration into
:class:`~tutor.settings.config.Settings` and a :class:`Target`; nothing here knows about argparse.
"""

from __future__ import annotations

import gc
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from tutor.settings.config import Settings
from tutor.pack.discovery import FoundPack, discover
from tutor.words.i18n import set_language, t
from tutor.record.progress import ProgressStore
from tutor.errors import TutorError

if TYPE_CHECKING:
    from tutor.app.app import TutorApp
    from tutor.app.engine import Engine
    from tutor.app.leaving import Leaving


class LaunchError(TutorError):
    """The target names no pack or lesson that exists; the message says which (a usage error)."""


class NoTerminal(LaunchError):
    """Standard input or the stream Textual draws on (standard error) is not a terminal: the app
    would draw into a pipe or a file and wait for keys that never come (a usage error)."""


def at_a_terminal() -> bool:
    """True when the learner can see the app and type into it: Textual reads keys from standard
    input and draws on standard error (``sys.__stderr__``), whatever standard output is."""
    streams = (sys.__stdin__, sys.__stderr__)
    try:
        return all(stream is not None and stream.isatty() for stream in streams)
    except (ValueError, OSError):  # a closed stream
        return False


@dataclass(frozen=True)
class Target:
    """What to open.

    Attributes:
        packs: extra pack folders to load (``--pack``), beside the discovered ones.
        target: ``PACK`` or ``PACK/LESSON`` (a pack id or folder); None resumes the last pack.
        review: open on the review queue: ``""`` for every pack, else a pack id; None: do not.
    """

    packs: tuple[str, ...] = ()
    target: str | None = None
    review: str | None = None


def resolve_target(target: str | None, packs: tuple[str, ...] = ()) -> tuple[list[str | Path], str | None, str | None]:
    """Split ``PACK[/LESSON]`` into extra pack folders to load, a pack id (or folder), a lesson id.

    PACK is a pack id or a folder; a folder path may itself contain slashes, so the longest
    existing prefix wins.
    """
    extra: list[str | Path] = list(packs)
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
    packs = [(f, f.pack) for f in found if f.pack is not None]
    if wanted is not None:
        for entry, pack in packs:
            if pack.id == wanted or str(entry.path.resolve()) == wanted:
                return pack.id, True
        return None, True
    last = store.positions.last_pack()
    if last and any(pack.id == last for _entry, pack in packs):
        return last, False
    builtin = [pack for entry, pack in packs if entry.origin == "built-in"]
    chosen = (builtin or [pack for _entry, pack in packs])
    return (chosen[0].id if chosen else None), False


def launch(settings: Settings, target: Target) -> int:
    """Run the app on ``target`` until the learner quits; returns the exit code.

    Raises:
        LaunchError: the target names a pack or lesson that is not there.
        NoTerminal: (a LaunchError) there is no terminal to draw on and read keys from; the
            in-process tests (Textual's ``run_test``) never come here.
    """
    set_language(settings.language)
    extra, wanted, lesson = resolve_target(target.target, target.packs)
    found = discover(extra, settings.data_path, cache=True)
    store = ProgressStore.open(settings.data_path, config_dir=settings.config_file.parent)
    pack_id, named = pick_pack(found, wanted, store)
    if pack_id is None and named:
        store.close()
        raise LaunchError(t("cli.serve.no_pack", pack=repr(wanted)))
    if lesson is not None:
        pack = next(f.pack for f in found if f.pack is not None and f.pack.id == pack_id)
        if pack.lesson(lesson) is None:
            store.close()
            ids = ", ".join(item.id for item in pack.lessons)
            raise LaunchError(t("cli.serve.no_lesson", pack=repr(pack_id), lesson=repr(lesson), ids=ids))
    from tutor.app import browser

    served = browser.in_browser()  # `torch-tutor serve`: a browser tab is the terminal
    if not at_a_terminal() and not served:  # after the target: a wrong name is the first thing to fix
        store.close()
        raise NoTerminal(t("app.no_terminal"))
    if served:
        browser.adapt_bindings()

    from tutor.app.app import TutorApp
    from tutor.app.engine import Engine

    # Modules, classes and the packs live as long as the process: keep them out of every later
    # collection (run_app paused the collector while they were made).
    gc.freeze()

    engine = Engine(settings)
    app = TutorApp(found=found, store=store, engine=engine, settings=settings,
                   start_pack=pack_id, start_lesson=lesson)
    app.start_review = target.review  # `torch-tutor review`
    store.claim()  # a second app on the same data folder is told so (store.storage.notice)
    leaving = _leave_when_told(app, engine)
    try:
        app.run()
    finally:
        engine.close()
        store.close()
        leaving.uninstall()
    if store.storage.notice:  # said in the app too; repeated here so it survives the screen clearing
        print(store.storage.notice, file=sys.stderr)
    return app.return_code or 0


def _leave_when_told(app: TutorApp, engine: Engine) -> Leaving:
    """SIGTERM, SIGHUP (the terminal closed), SIGINT, and a terminal that has gone end the app:
    drafts written first, then the sandbox's processes, then the app; a hard deadline behind it
    (``tutor.app.leaving``). Returns what gives the signals back once the app has ended."""
    from tutor.app.leaving import Leaving
    from tutor.app.textual_compat import guard_output

    def ask(code: int) -> None:  # from the watchdog's thread; RuntimeError: the loop is not running
        app.call_from_thread(_leave_now, app, engine, code)

    leaving = Leaving(ask, engine.kill_now, rescue=partial(_rescue_drafts, app)).install()
    app.driver_class = guard_output(app.driver_class, leaving.terminal_gone)
    return leaving


def _rescue_drafts(app: TutorApp) -> None:
    """From the watchdog, just before the deadline, when the app's loop has not answered (busy
    laying out a flood of output, or stuck): the code in every editor, read from this thread,
    written to the progress file. It races the loop, so it comes only at the very end."""
    from tutor.app.widgets.editor import CodeEditor

    for screen in list(app.screen_stack):
        for editor in list(screen.query(CodeEditor)):
            text = editor.text
            if editor.key is not None and text != editor.original:
                app.store.drafts.save(*editor.key, text)


def _leave_now(app: TutorApp, engine: Engine, code: int) -> None:
    """On the app's loop: write every pending draft (the last keystrokes are still inside the
    draft debounce), end the sandbox's processes, exit with ``code``."""
    try:
        app.flush_drafts()
        app.store.drafts.retry()
    except Exception:  # leaving is what matters now
        pass
    engine.kill_now()
    app.exit(return_code=code)
