"""The Textual application: holds the packs, the progress store and the engine; routes screens."""

from __future__ import annotations

from functools import partial
from typing import Iterable

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from tutor.app.engine import Engine
from tutor.app.place import Place
from tutor.core.config import Settings
from tutor.core.discovery import FoundPack
from tutor.core.i18n import t
from tutor.core.models import Pack
from tutor.core.progress import ProgressStore

THEMES = {"dark": "textual-dark", "light": "textual-light"}

#: Language codes the palette can name; others show as their code.
LANGUAGE_NAMES = {"en": "English", "zh": "中文", "fr": "Français", "de": "Deutsch", "es": "Español",
                  "ja": "日本語", "ko": "한국어", "pt": "Português", "ru": "Русский"}


class TutorApp(App[None]):
    """One instance per ``torch-tutor`` run; screens reach the shared state through ``self.app``."""

    CSS_PATH = "tutor.tcss"
    TITLE = "torch-tutor"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("f1", "help", t("key.help"), priority=True),
        Binding("ctrl+q", "quit", t("key.quit"), priority=True),
    ]

    def __init__(self, *, found: list[FoundPack], store: ProgressStore, engine: Engine, settings: Settings,
                 start_pack: str | None = None, start_lesson: str | None = None, resume: bool = True):
        super().__init__()
        self.found = found
        self.store = store
        self.engine = engine
        self.settings = settings
        self.start_pack = start_pack
        self.start_lesson = start_lesson
        self.resume = resume
        self.language: str | None = settings.language

    @property
    def packs(self) -> list[Pack]:
        return [entry.pack for entry in self.found if entry.pack is not None]

    def pack(self, pack_id: str | None) -> Pack | None:
        return next((p for p in self.packs if p.id == pack_id), None)

    # ------------------------------------------------------------------ start and stop

    def on_mount(self) -> None:
        self.theme = THEMES.get(self.settings.theme, "textual-dark")
        # Warm the sandbox once the first screen is drawn: its torch worker would otherwise take
        # a core from start-up. Building it may probe bubblewrap, so even that is off the UI thread.
        self.call_after_refresh(lambda: self.run_worker(self.engine.start, thread=True, group="engine-start",
                                                        exit_on_error=False))
        from tutor.app.screens.home import HomeScreen

        self.push_screen(HomeScreen())
        if self.store.notice:
            self.notify(self.store.notice, severity="warning", timeout=20)
        pack = self.pack(self.start_pack)
        if pack is not None and (self.start_lesson or self.resume):
            place = self.resume_place(pack, self.start_lesson)
            if place is not None:
                self.open_place(place)

    def resume_place(self, pack: Pack, lesson_id: str | None = None) -> Place | None:
        """Where to open ``pack``: the named lesson (at the saved step if it is in it), else the
        saved position; None when a plain start has nothing to resume (show the contents)."""
        saved = self.store.position(pack.id)
        if lesson_id is not None:
            if saved and saved[0] == lesson_id:
                return Place.find(pack, *saved)
            return Place.find(pack, lesson_id)
        return Place.find(pack, *saved) if saved else None

    def open_place(self, place: Place) -> None:
        from tutor.app.screens.lesson import LessonScreen

        self.push_screen(LessonScreen(place))

    def flush_drafts(self) -> None:
        """Write every pending draft now (quitting must not wait for a debounce timer)."""
        from tutor.app.widgets.editor import CodeEditor

        for screen in self.screen_stack:
            for editor in screen.query(CodeEditor):
                editor.flush()

    async def action_quit(self) -> None:
        self.flush_drafts()
        self.exit()

    # ------------------------------------------------------------------ app-wide actions

    def action_help(self) -> None:
        from tutor.app.modals.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def action_toggle_dark(self) -> None:
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"

    def action_home(self) -> None:
        from tutor.app.screens.home import HomeScreen

        while len(self.screen_stack) > 1 and not isinstance(self.screen, HomeScreen):
            self.pop_screen()

    def set_language(self, code: str) -> None:
        """Show pack text in ``code``; the open screens redraw in it."""
        self.language = code
        for screen in self.screen_stack:
            refresh = getattr(screen, "language_changed", None)
            if refresh is not None:
                refresh()

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand(t("cmd.help"), t("cmd.help.help"), self.action_help)
        yield SystemCommand(t("cmd.theme"), t("cmd.theme.help"), self.action_toggle_dark)
        yield SystemCommand(t("cmd.home"), t("cmd.home.help"), self.action_home)
        languages: list[str] = []
        for pack in self.packs:
            languages += [code for code in pack.languages if code not in languages]
        if len(languages) > 1:
            for code in languages:
                name = LANGUAGE_NAMES.get(code, code)
                yield SystemCommand(t("cmd.language", name=name), t("cmd.language.help", name=name),
                                    partial(self.set_language, code))
        commands = getattr(screen, "palette_commands", None)
        if commands is not None:
            yield from commands()
