"""The table of contents: every pack and lesson with progress, a filter, and Resume."""

from __future__ import annotations

from typing import Any, Iterable

from rich.cells import cell_len
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Vertical
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static
from textual.widgets.data_table import RowDoesNotExist

from tutor.app.commands import ScreenCommands
from tutor.app.state import tutor_app
from tutor.app.widgets.keybutton import KeyButton, with_key
from tutor.app.place import Place, Texts
from tutor.app.widgets.keyfooter import KeyFooter
from tutor.app.widgets.status import StatusBar
from tutor.pack.discovery import FoundPack
from tutor.words.i18n import label, t
from tutor.words.safe_text import neutralize

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
        Binding("ctrl+r", "resume", label("key.resume"), priority=True),
        Binding("ctrl+f", "focus_filter", label("key.filter"), priority=True),
        Binding("escape", "clear_filter", label("key.clear_filter"), show=False),
    ]

    def compose(self) -> ComposeResult:
        yield Static(self._title(), classes="topbar")
        with Vertical(id="home"):
            for entry in tutor_app(self).found:
                if entry.pack is None:
                    yield Static(self._broken(entry), classes="broken")
            if not tutor_app(self).packs:
                yield Static(t("home.nopacks"), id="nopacks")
            yield KeyButton("", id="resume", variant="primary")
            yield KeyButton("", id="review-due")
            # not select_on_focus: the key that moved focus here is typed, not selected and replaced
            yield Input(placeholder=t("home.filter"), id="filter", select_on_focus=False)
            yield Static("", id="nomatch", classes="muted")
            yield DataTable(id="toc", cursor_type="row", zebra_stripes=True)
        yield StatusBar()
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#toc", DataTable)
        self._add_columns(table)
        self.refresh_contents()
        self._drawn_at_mount = True  # the first ScreenResume follows at once: nothing to redraw
        table.focus()
        self.watch(self.app, "language", self._language_changed, init=False)

    _drawn_at_mount = False

    def on_screen_resume(self) -> None:
        if self._drawn_at_mount:
            self._drawn_at_mount = False
            return
        self.refresh_contents()

    def _add_columns(self, table: DataTable[Any]) -> None:
        # Every label and cell is a Text: a str is read as Rich markup (a title's "[/y]" raised;
        # and parsing it loaded Rich's emoji table, ~6 ms of every start).
        for key in ("lesson", "state", "checks", "quiz"):
            table.add_column(Text(t(f"home.col.{key}")), key=key)

    def _language_changed(self) -> None:
        """Everything this screen says, again in the language now in use (pack text too)."""
        self.query(".topbar").first(Static).update(self._title())
        broken = [entry for entry in tutor_app(self).found if entry.pack is None]
        for entry, widget in zip(broken, self.query(".broken").results(Static)):
            widget.update(self._broken(entry))
        if not tutor_app(self).packs:
            self.query_one("#nopacks", Static).update(t("home.nopacks"))
        self.query_one("#filter", Input).placeholder = t("home.filter")
        table = self.query_one("#toc", DataTable)
        table.clear(columns=True)
        self._add_columns(table)
        self.refresh_contents()

    @staticmethod
    def _title() -> str:
        return f"{t('app.title')} — {t('home.title')}"

    @staticmethod
    def _broken(entry: FoundPack) -> Text:
        return Text(neutralize(t("home.broken", path=entry.path, count=len(entry.problems or []))), style="yellow")

    # ------------------------------------------------------------------ contents

    def _resume_target(self) -> Place | None:
        app = tutor_app(self)
        pack = app.pack(app.start_pack) or (app.packs[0] if app.packs else None)
        if pack is None:
            return None
        return app.resume_place(pack) or Place(pack, 0, 0)

    def _cursor_key(self) -> str | None:
        """The key of the contents row under the cursor (``pack/lesson``, or ``pack/`` for a
        pack's heading); None when the table is empty."""
        table = self.query_one("#toc", DataTable)
        if not table.row_count:
            return None
        return str(table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value)

    def refresh_contents(self) -> None:
        """Redraw the contents under the filter. While something is typed the cursor goes to
        the best match (see ``_rank``), which Enter opens; otherwise it stays on its lesson."""
        app = tutor_app(self)
        needle = self.query_one("#filter", Input).value.strip().lower()
        table = self.query_one("#toc", DataTable)
        selected, kept = table.cursor_row, self._cursor_key()
        best: tuple[int, str] | None = None  # (rank, key) of the best match, the first of equals
        self._step_hits: dict[str, int] = {}
        table.clear()
        for pack in app.packs:
            texts = Texts(pack, app.language)
            summary = {s.lesson: s for s in app.store.summarize(pack).lessons}
            rows = []
            for number, lesson in enumerate(pack.lessons, 1):
                title = texts(lesson.title)
                rank = _rank(needle, lesson.id, title, texts(lesson.summary), _step_words(lesson, texts) if needle else ())
                if rank is None:
                    continue
                hit = _matching_step(needle, lesson, texts) if needle and rank == 0 else None
                if hit is not None:  # found by a step's title or an exercise's id: Enter opens that step
                    self._step_hits[f"{pack.id}/{lesson.id}"] = hit
                s = summary[lesson.id]
                checks = f"{s.exercises_solved}/{s.exercises}" if s.exercises else "–"
                quiz = f"{s.quiz_correct}/{s.quizzes}" if s.quizzes else "–"
                state = Text(t(f"home.state.{s.state}"), style=_STATE_STYLE[s.state])
                key = f"{pack.id}/{lesson.id}"
                rows.append(([Text(f"  {number}. {title}"), state, Text(checks), Text(quiz)], key))
                if best is None or rank > best[0]:
                    best = (rank, key)
            if rows:
                table.add_row(Text(texts(pack.title) + f"  v{pack.version}", style="bold"), Text(), Text(), Text(),
                              key=f"{pack.id}/")
                for cells, key in rows:
                    table.add_row(*cells, key=key)
        nomatch = self.query_one("#nomatch", Static)
        nomatch.display = bool(needle) and not table.row_count
        if nomatch.display:
            nomatch.update(Text(neutralize(t("home.nomatch", text=self.query_one("#filter", Input).value.strip()))))
        if table.row_count:
            wanted = best[1] if needle and best is not None else kept
            try:
                row = table.get_row_index(wanted) if wanted is not None else min(selected, table.row_count - 1)
            except RowDoesNotExist:  # that lesson is filtered away
                row = min(selected, table.row_count - 1)
            table.move_cursor(row=row, animate=False)
        target = self._resume_target()
        button = self.query_one("#resume", KeyButton)
        button.display = target is not None
        if target is not None:
            texts = Texts(target.pack, app.language)
            from tutor.pack.titles import step_title

            step_name = neutralize(step_title(target.step, app.language, texts.fallback, target.step_index))
            where = f"{texts(target.lesson.title)} › {step_name}"
            started = app.store.positions.get(target.pack.id) is not None
            key = "home.resume" if started else "home.start"
            label = with_key(t(key, where=where), self, "resume", gap="  ")
            # At 80 columns a long lesson and step title ran off the screen, cut mid-word, its key
            # lost: shorten the place instead, marked with an ellipsis.
            room, cut = max(20, self.app.size.width - 4), where
            while cell_len(label) > room and len(cut) > 1:
                cut = cut[:-1]
                label = with_key(t(key, where=cut.rstrip() + "…"), self, "resume", gap="  ")
            button.label = label
            button.refresh(layout=True)
        self._refresh_review()

    @on(Input.Changed, "#filter")
    def _filter(self) -> None:
        self.refresh_contents()

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        """Enter in the filter opens the highlighted lesson, and only a lesson that matched: with
        nothing typed, or nothing matching, it leaves the filter for the list instead."""
        needle = self.query_one("#filter", Input).value.strip()
        key = self._cursor_key()
        if needle and key is not None and not key.endswith("/"):
            self._open_key(key)
            return
        if needle:
            self.notify(t("home.nomatch", text=needle), severity="warning", timeout=4, markup=False)
            return
        self._focus_list()

    def route_key(self, event: events.Key) -> None:
        """Typing on the contents goes to the filter: no ctrl+f needed first. Called by the app
        before it hands ``event`` to the focused widget (``TutorApp.on_event``), so the focus
        moves before the key, and every key typed after it, is handed on: in a burst ("fixing
        code") the keys after the first went to the list, reached this screen after the focus
        had moved and were dropped ("fi" was left). A space moves it only once something is typed."""
        filter_box = self.query_one("#filter", Input)
        if event.is_printable and event.character and self.focused is not filter_box \
                and (event.character != " " or filter_box.value):
            self.set_focus(filter_box)

    def on_key(self, event: events.Key) -> None:
        """Down and Up in the filter move into the list, at the highlighted lesson."""
        filter_box = self.query_one("#filter", Input)
        if self.focused is filter_box and event.key in ("down", "up"):
            event.stop()
            event.prevent_default()
            self._focus_list()

    def _focus_list(self) -> None:
        """Focus the contents, the cursor on a lesson (not on a pack's heading) where one is."""
        table = self.query_one("#toc", DataTable)
        key = self._cursor_key()
        if key is not None and key.endswith("/") and table.cursor_row + 1 < table.row_count:
            table.move_cursor(row=table.cursor_row + 1, animate=False)
        table.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_filter":  # Esc is free for others unless there is a filter to leave
            filter_box = self.query_one("#filter", Input)
            return bool(filter_box.value) or self.focused is filter_box
        return True

    def action_clear_filter(self) -> None:
        """Esc: empty the filter (the whole contents again) and go back to the list."""
        self.clear_filter()
        self._focus_list()

    def clear_filter(self) -> None:
        """Empty the filter now (the contents redraw at once, not on the Changed message)."""
        filter_box = self.query_one("#filter", Input)
        if filter_box.value:
            with filter_box.prevent(Input.Changed):
                filter_box.value = ""
            self.refresh_contents()

    @on(DataTable.RowSelected, "#toc")
    def _open(self, event: DataTable.RowSelected) -> None:
        self._open_key(str(event.row_key.value))

    def _open_key(self, key: str) -> None:
        pack_id, _, lesson_id = key.partition("/")
        app = tutor_app(self)
        pack = app.pack(pack_id)
        if pack is None:
            return
        hit = self._step_hits.get(key) if self.query_one("#filter", Input).value.strip() else None
        found = Place.find(pack, lesson_id) if hit is not None else None
        if found is not None and hit is not None:  # the filter matched one of its steps: open that one
            place = Place(pack, found.lesson_index, hit)
        else:
            place = app.resume_place(pack, lesson_id or None) or Place(pack, 0, 0)
        self.clear_filter()  # the contents come back whole, on this lesson, the list focused
        self.query_one("#toc", DataTable).focus()
        app.open_place(place)

    @on(KeyButton.Pressed, "#resume")
    def action_resume(self) -> None:
        target = self._resume_target()
        if target is not None:
            self.clear_filter()
            tutor_app(self).open_place(target)

    def own_commands(self) -> Iterable[SystemCommand]:
        """This screen's own actions for the command palette (shown before anything is typed)."""
        yield SystemCommand(t("cmd.resume"), t("cmd.resume.help"), self.action_resume)
        yield SystemCommand(t("key.filter"), t("cmd.filter.help"), self.action_focus_filter)

    @on(KeyButton.Pressed, "#review-due")
    def _review(self) -> None:
        self.clear_filter()
        tutor_app(self).action_review()

    def _refresh_review(self) -> None:
        """The review button: shown while cards are due (F10 opens the queue from anywhere)."""
        app = tutor_app(self)
        store = app.store
        due, new = store.cards.due_counts([p.id for p in app.packs], store.cards.clock(),
                                          app.settings.new_cards_per_day)
        button = self.query_one("#review-due", KeyButton)
        button.display = bool(due + new)
        if due + new:
            button.label = with_key(t("home.review", due=due, new=new), self, "review", gap="  ")
            button.refresh(layout=True)

    def action_focus_filter(self) -> None:
        """ctrl+f: the filter has the focus before the next key is handed on (at once, not from
        the app's queue behind the keys typed after ctrl+f)."""
        self.set_focus(self.query_one("#filter", Input))


def _step_words(lesson: Any, texts: Texts) -> list[str]:
    """What names the lesson's steps: each step's title (or the words that stand for it) and
    each exercise's id (shown on the exercise, and what `torch-tutor check` takes)."""
    from tutor.pack.models import Exercise
    from tutor.pack.titles import step_title

    words: list[str] = []
    for index, step in enumerate(lesson.steps):
        words.append(step_title(step, texts.language, texts.fallback, index))
        if isinstance(step, Exercise):
            words.append(step.id)
    return words


def _matching_step(needle: str, lesson: Any, texts: Texts) -> int | None:
    """The index of the first step of ``lesson`` whose title or exercise id the filter's
    ``needle`` (lower case) names, as ``_rank`` reads them; None when none does."""
    from tutor.pack.models import Exercise
    from tutor.pack.titles import step_title

    flat = _flat(needle)
    for index, step in enumerate(lesson.steps):
        names = [step_title(step, texts.language, texts.fallback, index)]
        if isinstance(step, Exercise):
            names.append(step.id)
        if any(needle in name.lower() or flat in _flat(name) for name in names):
            return index
    return None


def _rank(needle: str, lesson_id: str, title: str, summary: str, steps: Iterable[str] = ()) -> int | None:
    """How well a lesson matches the filter's ``needle`` (lower case): None when it does not;
    else the title starting with it (3) beats a word of the title or the id starting with it
    (2), which beats it anywhere in the title or id (1), which beats only a step's title, an
    exercise's id (``steps``) or the summary (0). Typing "self" highlights the Self-test lesson,
    not the profiler's "self time" summary; "numpy" and "view-inplace" find the lessons whose
    steps say them."""
    if not needle:
        return 0
    title, lesson_id = title.lower(), lesson_id.lower()
    if title.startswith(needle):
        return 3
    words = title.replace("-", " ").replace("_", " ").split() + lesson_id.split("-")
    if any(word.startswith(needle) for word in words) or lesson_id.startswith(needle):
        return 2
    if needle in title or needle in lesson_id:
        return 1
    flat = _flat(needle)  # `inference mode` finds `inference_mode`, `self test` finds `Self-test`
    if flat in _flat(title) or flat in _flat(lesson_id):
        return 1
    if any(needle in step.lower() or flat in _flat(step) for step in steps):
        return 0
    return 0 if needle in summary.lower() or flat in _flat(summary) else None


def _flat(text: str) -> str:
    """``text`` in lower case with underscores and dashes read as spaces, runs of space as one."""
    return " ".join(text.lower().replace("_", " ").replace("-", " ").split())
