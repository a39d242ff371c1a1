"""The table of contents: every pack and lesson with progress, a filter, and Resume."""

from __future__ import annotations

from typing import Iterable

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Vertical
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from tutor.app.commands import ScreenCommands
from tutor.app.state import tutor_app
from tutor.app.widgets.keybutton import KeyButton, with_key
from tutor.app.place import Place, Texts
from tutor.app.widgets.keyfooter import KeyFooter
from tutor.app.widgets.status import StatusBar
from tutor.core.i18n import t
from tutor.core.textclean import neutralize

_STATE_STYLE = {"done": "green", "progress": "yellow", "new": "dim"}


class HomeCommands(ScreenCommands):
    """The contents screen's commands in the palette: resume, filter."""

    def commands(self) -> Iterable[SystemCommand]:
        screen = self.screen
        return screen.own_commands() if isinstance(screen, HomeScreen) else ()


class HomeScreen(Screen[None]):
    COMMANDS = {HomeCommands}
    AUTO_FOCUS = "#toc"  # the contents table, before anything else is focused and restyled
    BINDINGS = [
        Binding("ctrl+r", "resume", t("key.resume"), priority=True),
        Binding("ctrl+f", "focus_filter", t("key.filter"), priority=True),
    ]

    def compose(self) -> ComposeResult:
        yield Static(f"{t('app.title')} — {t('home.title')}", classes="topbar")
        with Vertical(id="home"):
            for entry in tutor_app(self).found:
                if entry.pack is None:
                    yield Static(Text(neutralize(t("home.broken", path=entry.path, count=len(entry.problems or []))),
                                      style="yellow"), classes="broken")
            if not tutor_app(self).packs:
                yield Static(t("home.nopacks"))
            yield KeyButton("", id="resume", variant="primary")
            yield KeyButton("", id="review-due")
            yield Input(placeholder=t("home.filter"), id="filter")
            yield DataTable(id="toc", cursor_type="row", zebra_stripes=True)
        yield StatusBar()
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#toc", DataTable)
        table.add_column(t("home.col.lesson"), key="lesson")
        table.add_column(t("home.col.state"), key="state")
        table.add_column(t("home.col.checks"), key="checks")
        table.add_column(t("home.col.quiz"), key="quiz")
        self.refresh_contents()
        table.focus()
        self.watch(tutor_app(self), "language", self._language_changed, init=False)

    def on_screen_resume(self) -> None:
        self.refresh_contents()

    def _language_changed(self) -> None:
        self.refresh_contents()

    # ------------------------------------------------------------------ contents

    def _resume_target(self) -> Place | None:
        app = tutor_app(self)
        pack = app.pack(app.start_pack) or (app.packs[0] if app.packs else None)
        if pack is None:
            return None
        return app.resume_place(pack) or Place(pack, 0, 0)

    def refresh_contents(self) -> None:
        app = tutor_app(self)
        needle = self.query_one("#filter", Input).value.strip().lower()
        table = self.query_one("#toc", DataTable)
        selected = table.cursor_row
        table.clear()
        for pack in app.packs:
            texts = Texts(pack, app.language)
            summary = {s.lesson: s for s in app.store.summarize(pack).lessons}
            rows = []
            for number, lesson in enumerate(pack.lessons, 1):
                title = texts(lesson.title)
                haystack = " ".join([lesson.id, title, texts(lesson.summary)]).lower()
                if needle and needle not in haystack:
                    continue
                s = summary[lesson.id]
                checks = f"{s.exercises_solved}/{s.exercises}" if s.exercises else "–"
                quiz = f"{s.quiz_correct}/{s.quizzes}" if s.quizzes else "–"
                # "done" means done: every step seen, every exercise solved, every quiz answered
                shown = "progress" if s.state == "done" and s.quiz_answered < s.quizzes else s.state
                state = Text(t(f"home.state.{shown}"), style=_STATE_STYLE[shown])
                rows.append(([f"  {number}. {title}", state, checks, quiz], f"{pack.id}/{lesson.id}"))
            if rows:
                table.add_row(Text(texts(pack.title) + f"  v{pack.version}", style="bold"), "", "", "",
                              key=f"{pack.id}/")
                for cells, key in rows:
                    table.add_row(*cells, key=key)
        if table.row_count:
            table.move_cursor(row=min(selected, table.row_count - 1))
        target = self._resume_target()
        button = self.query_one("#resume", KeyButton)
        button.display = target is not None
        if target is not None:
            texts = Texts(target.pack, app.language)
            step_name = texts(target.step.title) or t("home.step_number", n=target.step_index + 1)
            where = f"{texts(target.lesson.title)} › {step_name}"
            started = app.store.position(target.pack.id) is not None
            button.label = with_key(t("home.resume" if started else "home.start", where=where), self, "resume",
                                    gap="  ")
            button.refresh(layout=True)
        self._refresh_review()

    @on(Input.Changed, "#filter")
    def _filter(self) -> None:
        self.refresh_contents()

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        """Enter in the filter opens the first lesson that matches (the one highlighted)."""
        table = self.query_one("#toc", DataTable)
        for row in range(table.row_count):
            key = str(table.coordinate_to_cell_key(Coordinate(row, 0)).row_key.value)
            if not key.endswith("/"):
                self._open_key(key)
                return
        table.focus()

    def on_key(self, event: events.Key) -> None:
        """Typing on the contents goes to the filter: no ctrl+f needed first."""
        filter_box = self.query_one("#filter", Input)
        if event.is_printable and event.character and self.focused is not filter_box \
                and event.character not in (" ",):
            event.stop()
            event.prevent_default()
            filter_box.focus()
            filter_box.insert_text_at_cursor(event.character)

    @on(DataTable.RowSelected, "#toc")
    def _open(self, event: DataTable.RowSelected) -> None:
        self._open_key(str(event.row_key.value))

    def _open_key(self, key: str) -> None:
        pack_id, _, lesson_id = key.partition("/")
        app = tutor_app(self)
        pack = app.pack(pack_id)
        if pack is None:
            return
        place = app.resume_place(pack, lesson_id or None) or Place(pack, 0, 0)
        app.open_place(place)

    @on(KeyButton.Pressed, "#resume")
    def action_resume(self) -> None:
        target = self._resume_target()
        if target is not None:
            tutor_app(self).open_place(target)

    def own_commands(self) -> Iterable[SystemCommand]:
        """This screen's own actions for the command palette (shown before anything is typed)."""
        yield SystemCommand(t("cmd.resume"), t("cmd.resume.help"), self.action_resume)
        yield SystemCommand(t("key.filter"), t("cmd.filter.help"), self.action_focus_filter)

    @on(KeyButton.Pressed, "#review-due")
    def _review(self) -> None:
        tutor_app(self).action_review()

    def _refresh_review(self) -> None:
        """The review button: shown while cards are due (F10 opens the queue from anywhere)."""
        app = tutor_app(self)
        store = app.store
        due, new = store.due_counts([p.id for p in app.packs], store.clock(),
                                    app.settings.new_cards_per_day)
        button = self.query_one("#review-due", KeyButton)
        button.display = bool(due + new)
        if due + new:
            button.label = with_key(t("home.review", due=due, new=new), self, "review", gap="  ")
            button.refresh(layout=True)

    def action_focus_filter(self) -> None:
        self.query_one("#filter").focus()
