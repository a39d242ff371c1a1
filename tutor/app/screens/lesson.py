"""The lesson view: one step at a time, where the learner is, and the keys that act on the step."""

from __future__ import annotations

import time
from functools import partial
from typing import Iterable

from textual import events
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from tutor.app.commands import ScreenCommands
from tutor.app.state import tutor_app
from tutor.app.place import Place, Texts
from tutor.app.screens.drawing import Draws
from tutor.app.screens.step_keys import QUESTION_FOCUS, busy_key
from tutor.app.widgets.keybutton import key_label
from tutor.app.widgets.keyfooter import KeyFooter
from tutor.app.widgets.status import StatusBar
from tutor.app.widgets.topbar import TopBar
from tutor.app.widgets.steps import StepView, make_step, shown_step
from tutor.words.i18n import label, t

#: The actions a step may answer, forwarded to its ``do_<name>``; order = palette order.
STEP_ACTIONS = ("run", "check", "hint", "solution", "reset")


#: Where the learner acts first: the editor, the answer box, the choices, else a button.
FIRST_FOCUS = "#editor, #prediction, #answer, #choices, KeyButton"


class LessonCommands(ScreenCommands):
    """The lesson screen's commands in the palette: the step's actions, next and previous."""

    def commands(self) -> Iterable[SystemCommand]:
        screen = self.screen
        return screen.step_commands() if isinstance(screen, LessonScreen) else ()


class LessonScreen(Screen[None]):
    COMMANDS = {LessonCommands}
    # Focus lands there as the screen is composed: focusing anything else first (Textual's
    # default is the first focusable widget, the scroll area) restyles the whole step twice.
    AUTO_FOCUS = FIRST_FOCUS
    BINDINGS = [
        Binding("f2", "home", label("key.home"), priority=True),
        Binding("f3", "prev", label("key.prev"), priority=True),
        Binding("f4", "next", label("key.next"), priority=True),
        Binding("f5", "step('run')", label("key.run"), priority=True),
        Binding("f6", "step('check')", label("key.check"), priority=True),
        Binding("f7", "step('hint')", label("key.hint"), priority=True),
        Binding("f8", "step('solution')", label("key.solution"), priority=True),
        Binding("f9", "step('reset')", label("key.reset"), priority=True),
        Binding("escape", "stop", label("key.stop"), priority=True),
        # Not priority: a long editor pages its own code; one whose code fits pages the lesson.
        Binding("pagedown", "page(1)", label("key.page_down"), key_display="PgDn"),
        Binding("pageup", "page(-1)", label("key.page_up"), show=False, key_display="PgUp"),
    ]

    def __init__(self, place: Place):
        super().__init__()
        self.place = place
        self._entered = time.monotonic()
        #: Steps shown one at a time, never one cancelled halfway (see drawing.py).
        self._draws = Draws(self, "show")
        self._scroll: VerticalScroll | None = None  # "#step-scroll", once composed

    @property
    def texts(self) -> Texts:
        return Texts(self.place.pack, tutor_app(self).language)

    @property
    def step_view(self) -> StepView | None:
        return shown_step(self._scroll)

    def compose(self) -> ComposeResult:
        # The first step is composed with the screen (not mounted after it), so the first frame
        # drawn already holds it: one layout, one styling pass.
        bar = TopBar(id="position", classes="topbar")
        bar.show(*self._position())
        yield bar
        with VerticalScroll(id="step-scroll") as self._scroll:
            yield from self._step_widgets()
        yield StatusBar()
        yield KeyFooter()

    def set_focus(self, widget: Widget | None, scroll_visible: bool = True, from_app_focus: bool = False) -> None:
        """Focus ``widget``; the screen's first focus (Textual's AUTO_FOCUS, as the step is
        composed) on a question's answer does not scroll to it, so a question opens at its top,
        as ``_focus_first`` does for every later step."""
        if self.focused is None and widget is not None and widget.id in QUESTION_FOCUS:
            scroll_visible = False
        super().set_focus(widget, scroll_visible, from_app_focus)

    def on_mount(self) -> None:
        self.watch(self.app, "language", self._language_changed, init=False)
        self._enter(self.place)
        self._focus_first()
        self.refresh_bindings()
        tutor_app(self).release_keys()  # held since the app opened this screen (open_place)

    def _enter(self, place: Place) -> None:
        """Record that the learner is now on ``place``."""
        self.place = place
        self._entered = time.monotonic()
        store = tutor_app(self).store
        store.positions.set(*place.key)
        store.steps.visit(*place.key)

    def _position(self) -> tuple[str, str, str, str, str]:
        """The top bar's parts: lesson, step, where that is in the lesson and the pack, the pack."""
        place, texts = self.place, self.texts
        return (texts(place.lesson.title), texts(place.step.title),
                t("lesson.position.step", step=place.step_index + 1, steps=len(place.lesson.steps)),
                t("lesson.position.lesson", lesson=place.lesson_index + 1, lessons=len(place.pack.lessons)),
                texts(place.pack.title))

    def _step_widgets(self) -> list[Widget]:
        place = self.place
        widgets: list[Widget] = []
        requires = place.step.requires
        if requires is not None and requires.cuda:
            widgets.append(Static(t("lesson.requires.cuda"), classes="notice"))
        version = tutor_app(self).engine.torch_version()
        if version is not None and place.pack.requires.torch:  # known once the sandbox is warm
            from tutor.pack.versions import floor_notice

            outside = floor_notice(version, place.pack.requires.torch)
            if outside is not None:
                widgets.append(Static(outside, classes="notice"))
        widgets.append(make_step(place, self.texts))
        if place.moved(1) is None:
            widgets.append(Static(t("lesson.end.pack"), classes="muted end"))
        elif place.step_index == len(place.lesson.steps) - 1:
            widgets.append(Static(t("lesson.end"), classes="muted end"))
        return widgets

    async def _show(self, place: Place) -> None:
        """Leave the current step (recording the time spent) and show ``place``. Keys typed
        meanwhile wait for the new step's focus (``TutorApp.hold_keys``)."""
        app = tutor_app(self)
        app.hold_keys()
        try:
            await self._replace_step(place)
        finally:
            app.release_keys()

    async def _replace_step(self, place: Place) -> None:
        if self.step_view is not None:
            tutor_app(self).store.steps.visit(*self.place.key, seconds=time.monotonic() - self._entered)
        self._enter(place)
        scroll = self.query_one("#step-scroll", VerticalScroll)
        await scroll.remove_children()
        self.query_one("#position", TopBar).show(*self._position())
        await scroll.mount_all(self._step_widgets())
        scroll.scroll_home(animate=False)
        self._focus_first()
        self.refresh_bindings()

    def _focus_first(self) -> None:
        """Focus where the learner acts first: the editor (scrolled into view), the answer box or
        the choices (not scrolled to: a question opens at its top, the question in view; focusing
        the choices of an answered question scrolled past the question)."""
        found = self.query(FIRST_FOCUS)
        if found:
            first = found.first()
            first.focus(scroll_visible=first.id not in QUESTION_FOCUS)
        else:
            self.query_one("#step-scroll").focus()


    def _language_changed(self) -> None:
        self._draws.request(lambda: self._show(self.place))

    # ------------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """True: shown and enabled; None: shown greyed out; False: hidden (Textual's convention)."""
        view = self.step_view
        if action == "step":
            if view is None or not view.supports(str(parameters[0])):
                return False
            return not view.running  # hidden while running, so Stop has room
        if action == "stop":
            return view is not None and view.running
        if action == "prev":
            return True if self.place.moved(-1) is not None else None
        if action == "next":
            return True if self.place.moved(1) is not None else None
        return True

    def action_step(self, name: str) -> None:
        view = self.step_view
        if view is not None:
            view.act(name)

    def on_key(self, event: events.Key) -> None:
        """A step's key while its code runs (hidden from the footer then, so Stop has room) says
        why nothing happens instead of being silently ignored."""
        busy_key(self, self.step_view, event)

    def action_page(self, direction: int) -> None:
        scroll = self.query_one("#step-scroll", VerticalScroll)
        (scroll.scroll_page_down if direction > 0 else scroll.scroll_page_up)(animate=False)

    def action_stop(self) -> None:
        view = self.step_view
        if view is not None:
            view.stop()

    async def action_next(self) -> None:
        await self._moving(1)

    async def action_prev(self) -> None:
        await self._moving(-1)

    async def _moving(self, step: int) -> None:
        """Move by ``step``; what is typed from the key on is for the step it shows."""
        app = tutor_app(self)
        app.hold_keys()
        try:
            await self._draws.draw(partial(self._move, step))
        finally:
            app.release_keys()

    async def _move(self, step: int) -> None:
        target = self.place.moved(step)  # from the step shown once the draws before it are done
        if target is not None:
            await self._show(target)

    def action_home(self) -> None:
        tutor_app(self).action_home()

    def on_screen_suspend(self) -> None:
        tutor_app(self).flush_drafts()

    def on_unmount(self) -> None:
        try:
            tutor_app(self).store.steps.visit(*self.place.key, seconds=time.monotonic() - self._entered)
        except Exception:  # the store may already be closed at exit
            pass

    def step_commands(self) -> Iterable[SystemCommand]:
        """The step's actions for the command palette (only those this step answers)."""
        view = self.step_view
        for name in STEP_ACTIONS:
            if view is not None and view.supports(name):
                yield SystemCommand(t(f"key.{name}"), t("cmd.action.help", shortcut=key_label(self, f"step('{name}')")),
                                    partial(self.action_step, name))
        for action, label in (("next", "key.next"), ("prev", "key.prev")):
            if self.check_action(action, ()):
                yield SystemCommand(t(label), t("cmd.action.help", shortcut=key_label(self, action)),
                                    getattr(self, f"action_{action}"))
