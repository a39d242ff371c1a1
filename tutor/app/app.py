"""The Textual application: holds the packs, the progress store and the engine; routes screens."""

from __future__ import annotations

import gc
from functools import partial
from typing import Any, Iterable

from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.reactive import var
from textual.screen import Screen

from tutor.app.engine import Engine
from tutor.app.place import Place
from tutor.settings.config import Settings, language_of
from tutor.pack.discovery import FoundPack
from tutor.words.i18n import carried, label, languages as ui_languages, own_language, set_language as set_ui_language, t
from tutor.pack.models import Pack
from tutor.record.progress import ProgressStore, Recorded

from tutor.app import cjk_wrap

cjk_wrap.install()  # Chinese wraps between characters, by cell width (see there)

from tutor.app import textual_compat  # noqa: E402

textual_compat.stamp_reads()  # a paste's keys share its read's time (the editor tells a paste by it)

THEMES = {"dark": "textual-dark", "light": "textual-light"}

#: The longest keys are held for a new step's focus (``TutorApp.hold_keys``): a step that never
#: focuses anything must not keep them; past it they go where the focus is.
HOLD_LIMIT_S = 2.0

#: Language codes the palette can name; others show as their code.
LANGUAGE_NAMES = {"en": "English", "zh": "中文", "fr": "Français", "de": "Deutsch", "es": "Español",
                  "ja": "日本語", "ko": "한국어", "pt": "Português", "ru": "Русский"}


class TutorApp(App[None]):
    """One instance per ``torch-tutor`` run; screens reach the shared state through ``self.app``."""

    CSS_PATH = "tutor.tcss"
    TITLE = "torch-tutor"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("f1", "help", label("key.help"), priority=True),
        Binding("ctrl+q", "quit", label("key.quit"), priority=True),
        # The review queue from anywhere (ctrl+t too: some terminals keep F10 for their menu).
        Binding("f10,ctrl+t", "review", label("key.review"), priority=True, show=False),
    ]
    #: `torch-tutor review`: open on the review queue ("" all packs, else a pack id); None: not.
    start_review: str | None = None
    #: The language pack text is shown in; screens watch it and redraw (always: a language
    #: picked again redraws too, as it always did).
    language: var[str | None] = var(None, always_update=True, init=False)

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
        code = language_of(settings, store.preferences.get("language"))
        own_language(code)  # the tutor's own words, the app's own; pack text follows ``language``
        self.set_reactive(TutorApp.language, code)
        self._started = False
        store.events.subscribe(self._recorded)

    def _recorded(self, message: Recorded) -> None:
        """What the store just recorded: the first graded meeting of an item in its lesson
        becomes its review card's first review. The scheduler is loaded only then, never for the
        first screen."""
        from tutor.record import spaced_review as review

        review.first_meeting(self.store, message)

    @property
    def packs(self) -> list[Pack]:
        return [entry.pack for entry in self.found if entry.pack is not None]

    def pack(self, pack_id: str | None) -> Pack | None:
        return next((p for p in self.packs if p.id == pack_id), None)

    # ------------------------------------------------------------------ keys, in order, never lost

    #: Keys that wait for a new step's focus (``hold_keys``); None while keys go straight on.
    _held: list[events.Key] | None = None
    _hold_timer: Any = None

    async def on_event(self, event: events.Event) -> None:
        """Every key from the terminal (or the browser) reaches a widget, in the order typed.

        Textual forwards a key to the widget focused when the app takes the key from its queue,
        and a widget's ``focus()`` takes effect only later, from the same queue. So keys typed in
        a burst after one that moves the focus went to the old focus: on the contents, "fixing
        code" typed at once left "fi" in the filter (the rest bubbled up from the list after the
        focus had moved, and the screen no longer took them for the filter); on a new step they
        went to the page instead of the editor. Here, before Textual forwards a key, the screen
        may move the focus for it at once (``route_key``), and while a new step is being shown
        keys are held and handed on once its focus is set (``hold_keys``)."""
        if isinstance(event, events.Key) and not event.is_forwarded:
            if self._held is not None:
                self._held.append(event)
                return
            route = getattr(self.screen, "route_key", None)
            if route is not None:
                route(event)
        await super().on_event(event)

    def hold_keys(self) -> None:
        """Hold the keys typed from now on until ``release_keys`` (a new step is being shown:
        its focus does not exist yet). Bounded by ``HOLD_LIMIT_S``."""
        if self._held is None:
            self._held = []
            self._hold_timer = self.set_timer(HOLD_LIMIT_S, self._release)

    def release_keys(self) -> None:
        """Hand the held keys on, in order, once a focus asked for before this call is set
        (``Widget.focus`` sets it from the app's queue: this goes in behind it)."""
        if self._held is not None:
            self.call_later(self._release)

    async def _release(self) -> None:
        held, self._held = self._held, None
        if self._hold_timer is not None:
            self._hold_timer.stop()
            self._hold_timer = None
        for event in held or ():
            await self.on_event(event)  # a key among them may start another hold: the rest wait too

    # ------------------------------------------------------------------ start and stop

    def on_mount(self) -> None:
        choice = self._theme_choice()
        self.theme = THEMES.get(choice) or (choice if choice in self.available_themes else "textual-dark")
        self._theme_set = True  # from now on a theme change is the learner's: kept (watch_theme)
        if self.store.storage.notice:
            from tutor.words.safe_text import neutralize

            self.notify(neutralize(self.store.storage.notice), severity="warning", timeout=20, markup=False)
        pack = self.pack(self.start_pack)
        place = None
        if pack is not None and (self.start_lesson or self.resume):
            place = self.resume_place(pack, self.start_lesson)
        if self.start_review is not None:
            self.action_review(self.start_review)
        elif place is not None:
            # Straight to the step: the contents are built when the learner first goes there
            # (action_home), not drawn unseen underneath at start-up.
            self.open_place(place)
        else:
            from tutor.app.screens.home import HomeScreen

            self.push_screen(HomeScreen())

    @property
    def started(self) -> bool:
        """True once the first frame is on screen (see ``on_ready``)."""
        return self._started

    def on_ready(self) -> None:
        """Textual's Ready: the first screen is laid out; its frame goes out on the next refresh
        (Textual holds frames back while the app starts), and then start-up is over."""
        self.call_after_refresh(self._after_first_frame)

    def _after_first_frame(self) -> None:
        self._started = True
        gc.enable()  # paused by run_app for the start-up
        from tutor.app.widgets.editor import CodeEditor

        for editor in self.screen.query(CodeEditor):  # colours held back until now
            editor.highlight()
        # Warm the sandbox only now: its torch worker would otherwise take a core from start-up.
        # Building it may probe bubblewrap, so even that is off the UI thread.
        self.run_worker(carried(self.engine.start), thread=True, group="engine-start", exit_on_error=False)

    def resume_place(self, pack: Pack, lesson_id: str | None = None) -> Place | None:
        """Where to open ``pack``: the named lesson (at the saved step if it is in it), else the
        saved position; None when a plain start has nothing to resume (show the contents)."""
        saved = self.store.positions.get(pack.id)
        if lesson_id is not None:
            if saved and saved[0] == lesson_id:
                return Place.find(pack, *saved)
            return Place.find(pack, lesson_id)
        return Place.find(pack, *saved) if saved else None

    def open_place(self, place: Place) -> None:
        from tutor.app.screens.lesson import LessonScreen

        self.hold_keys()  # released once the lesson's first focus is set (LessonScreen.on_mount)
        self.push_screen(LessonScreen(place))

    def flush_drafts(self) -> None:
        """Write every pending draft now (quitting must not wait for a debounce timer)."""
        from tutor.app.widgets.editor import CodeEditor

        for screen in self.screen_stack:
            for editor in screen.query(CodeEditor):
                editor.flush()

    async def action_quit(self) -> None:
        self.flush_drafts()
        if self.store.drafts.unsaved and not self.store.drafts.retry():
            # The disk refused the drafts: quitting now would lose the learner's text.
            from tutor.app.modals.confirm import ConfirmScreen

            message = t("quit.unsaved", count=len(self.store.drafts.unsaved),
                        reason=self.store.storage.write_error or "?")
            self.push_screen(ConfirmScreen(message), lambda yes: self.exit() if yes else None)
            return
        self.exit()

    def action_review(self, pack_id: str | None = None) -> None:
        """Open the review queue (every pack, or ``pack_id``'s)."""
        from tutor.app.screens.review import ReviewScreen

        if isinstance(self.screen, ReviewScreen):  # F10 there: go on with what came due
            if self.screen.current is None:
                self.screen.poll_due()
                self.screen.action_next()
            return
        self.flush_drafts()
        self.push_screen(ReviewScreen(pack_id or None))

    # ------------------------------------------------------------------ app-wide actions

    def action_help(self) -> None:
        from tutor.app.modals.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    #: Textual's palette commands that are no use here: its key panel (which squeezed the lesson
    #: and that Esc did not close), maximizing a widget, an SVG screenshot.
    HIDDEN_SYSTEM_COMMANDS = frozenset({"Keys", "Maximize", "Minimize", "Screenshot"})

    _theme_set = False

    def watch_theme(self, theme: str) -> None:
        from tutor.app.widgets.editor import CodeEditor, FramedBox

        if self._theme_set:
            # Kept for the next start, whichever way it was picked (the palette's Theme list
            # too); a theme given by flag, variable or config file still wins.
            named = {value: key for key, value in THEMES.items()}
            self.store.preferences.set("theme", named.get(theme, theme))

        dark = self.current_theme.dark
        for screen in self.screen_stack:  # code editors pick their colours when made: repaint them
            for editor in screen.query(CodeEditor):
                editor.theme = "monokai" if dark else "github_light"
            for box in screen.query(FramedBox):  # and every frame's title, once an answer box's
                box.call_after_refresh(box.show_focus)  # background follows the theme's CSS

    def _theme_choice(self) -> str:
        """The theme set by flag, variable or config file; else the one last chosen in the app."""
        if self.settings.sources.get("theme", "default") == "default":
            saved = self.store.preferences.get("theme")
            if saved is not None and (saved in THEMES or saved in self.available_themes):
                return saved
        theme: str = self.settings.theme
        return theme

    def action_toggle_dark(self) -> None:
        self.theme = "textual-dark" if self.current_theme.dark is False else "textual-light"
        # (kept for the next start by watch_theme)

    def action_home(self) -> None:
        from tutor.app.screens.home import HomeScreen

        if not any(isinstance(screen, HomeScreen) for screen in self.screen_stack):
            self.flush_drafts()
            self.switch_screen(HomeScreen())  # a resumed start opened the lesson first
            return
        while len(self.screen_stack) > 1 and not isinstance(self.screen, HomeScreen):
            self.pop_screen()

    def set_language(self, code: str) -> None:
        """Speak ``code``: the tutor's own words and pack text; the open screens redraw in it
        (they watch ``language``), and the choice is kept for the next start (a language given
        by flag, variable or config file still wins there)."""
        set_ui_language(code)
        self.store.preferences.set("language", code)
        self.language = code
        from tutor.app.widgets.status import StatusBar

        for screen in self.screen_stack:  # the key bars: their names are relabelled when drawn
            screen.refresh_bindings()
            for bar in screen.query(StatusBar):  # now, not at its next poll
                bar.refresh_status()

    #: Textual's own palette commands, by their English title: the table's keys for them.
    _TEXTUAL_COMMANDS = {"Theme": "cmd.textual.theme", "Quit": "cmd.textual.quit"}

    def action_command_palette(self) -> None:
        """Textual's palette, its input's placeholder in the tutor's language (Textual's own
        reads "Search for commands…" whatever the language)."""
        from textual.command import CommandPalette

        if self.use_command_palette and not CommandPalette.is_open(self):  # type: ignore[arg-type]
            self.push_screen(CommandPalette(id="--command-palette", placeholder=t("palette.placeholder")))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):
            if command.title in self.HIDDEN_SYSTEM_COMMANDS:
                continue
            key = self._TEXTUAL_COMMANDS.get(command.title)
            if key is None:
                yield command
            else:  # in the tutor's words (a language of its own, not Textual's English)
                yield command._replace(title=t(key), help=t(f"{key}.help"))
        yield SystemCommand(t("cmd.help"), t("cmd.help.help"), self.action_help)
        yield SystemCommand(t("cmd.theme"), t("cmd.theme.help"), self.action_toggle_dark)
        yield SystemCommand(t("cmd.home"), t("cmd.home.help"), self.action_home)
        yield SystemCommand(t("cmd.review"), t("cmd.review.help"), self.action_review)
        languages: list[str] = list(ui_languages())  # the tutor's own, then the packs'
        for pack in self.packs:
            languages += [code for code in pack.languages if code not in languages]
        if len(languages) > 1:
            for code in languages:
                name = LANGUAGE_NAMES.get(code, code)
                yield SystemCommand(t("cmd.language", name=name, code=code), t("cmd.language.help", name=name),
                                    partial(self.set_language, code))
