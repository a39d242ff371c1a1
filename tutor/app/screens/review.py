"""The review queue: the items due, one at a time, in the lesson's own step views; a summary and
a chart at the end.

Each item is shown by the same step widget as in its lesson, with one difference: its answers,
hints and code are kept under a scratch key (``review:<last review>:<lesson>``), so an exercise
starts from its starter, a review left unfinished resumes, and the lesson's draft is never
touched. The screen subscribes to the progress store's typed messages (``store.events``:
``QuizAnswered``, ``CheckRecorded``, ``SolutionShown``) for what the learner did under that key
and turns it into a rating (see tutor.record.spaced_review).
Nothing here is imported on the app's first screen: the app loads it on the first F10.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from tutor.app.state import tutor_app
from tutor.app.place import Place, Texts
from tutor.app.screens.drawing import Draws
from tutor.app.screens.step_keys import QUESTION_FOCUS, busy_key
from tutor.app.screens.review_chart import forecast_chart, retention_chart
from tutor.app.widgets.keyfooter import KeyFooter
from tutor.app.widgets.status import StatusBar
from tutor.app.widgets.steps import StepView, shown_step, view_class
from tutor.record import spaced_review as review
from tutor.words.i18n import label, t
from tutor.record.progress import CheckRecorded, QuizAnswered, Recorded, SolutionShown, day_start
from tutor.words.safe_text import neutralize
from tutor.pack.titles import step_title
from tutor.sandbox.textclean import clean_output

if TYPE_CHECKING:
    from tutor.pack.models import Pack
    from tutor.record.progress import ProgressStore

def scratch_view(place: Place, texts: Texts, key: tuple[str, str, str]) -> StepView:
    """The lesson's step widget for ``place``, keeping everything under the scratch ``key``."""
    return view_class(type(place.step))(place, texts, key=key)


def later_today(store: ProgressStore, packs: list[Pack], now: float) -> int:
    """Learned cards that come due after ``now`` but before the local day ends."""
    end = day_start(now) + 86400
    return sum(1 for card in store.cards.all([p.id for p in packs])
               if card["last_review"] is not None and now < float(card["due"]) < end)


def due_now(store: ProgressStore, packs: list[Pack], new_per_day: int, language: str | None) -> list[review.Due]:
    """What the review queue holds now (``new_per_day`` new cards a day, in ``language``)."""
    return review.queue(store, packs, store.cards.clock(), new_per_day, language)


class ReviewScreen(Screen[None]):
    """``pack_id``: review only that pack's cards (None: every installed pack).

    ``clock`` gives the time in seconds since the epoch for the ratings (the store's), and
    ``elapsed`` the seconds an item has been on screen (for "quick"); tests replace both.
    """

    DEFAULT_CSS = """
    ReviewScreen #review-scroll { height: 1fr; padding: 0 1; }
    ReviewScreen #verdict { height: auto; padding: 0 1; background: $boost; }
    ReviewScreen #verdict.-empty { display: none; }
    ReviewScreen .summary { margin: 1 0 0 0; }
    /* A free answer is graded with 1-4 here (the verdict line says so): not also the lesson's
       own 1-4 buttons, which would grade the lesson's answer, not the card. */
    ReviewScreen #grade-label, ReviewScreen #grade-buttons { display: none; }
    """
    #: Seconds between looks at the clock while the summary shows: cards that come due while it
    #: is open are offered (F4 or F10), as the status bar counts them.
    POLL_SECONDS = 1.0
    AUTO_FOCUS = "#editor, #prediction, #answer, #choices, KeyButton"
    BINDINGS = [
        Binding("f2", "home", label("key.home"), priority=True),
        Binding("f4", "next", label("review.key.next"), priority=True),
        Binding("f5", "step('run')", label("key.run"), priority=True),
        Binding("f6", "step('check')", label("key.check"), priority=True),
        Binding("f7", "step('hint')", label("key.hint"), priority=True),
        Binding("f8", "step('solution')", label("key.solution"), priority=True),
        Binding("f9", "step('reset')", label("key.reset"), priority=True),
        Binding("escape", "stop", label("key.stop"), priority=True),  # while code runs; else:
        Binding("escape", "back", label("key.back"), priority=True),  # to the screen it was opened over
        Binding("1", "rate(1)", label("review.rate.1"), priority=True),
        Binding("2", "rate(2)", label("review.rate.2"), priority=True),
        Binding("3", "rate(3)", label("review.rate.3"), priority=True),
        Binding("4", "rate(4)", label("review.rate.4"), priority=True),
    ]

    def __init__(self, pack_id: str | None = None, *, elapsed: Callable[[float], float] | None = None):
        super().__init__()
        self.pack_id = pack_id
        self.queue: list[review.Due] = []
        self.index = 0
        self.results: list[tuple[review.Due, int]] = []
        self.rating: int | None = None  # the current item's, once settled
        self._said: Callable[[], Text | str] | None = None  # what the verdict line says (see _verdict)
        self.wrong = 0  # wrong answers to the current item
        self._scroll: VerticalScroll | None = None  # "#review-scroll", once composed
        self.revealed = False  # a free answer's model answer is showing: 1-4 rate it
        self._shown = time.monotonic()
        self._scratch: tuple[str, str, str] | None = None  # the current item's scratch key
        #: Cards that came due while the queue was being reviewed: offered at its end (F4).
        self._more: list[review.Due] = []
        #: Items moved on from without an answer (F4): not graded, still due; not offered again
        #: in this session.
        self._skipped: set[tuple[str, str, str]] = set()
        self._elapsed = elapsed or (lambda since: time.monotonic() - since)
        #: Shows one at a time, never one cancelled halfway (see drawing.py).
        self._draws = Draws(self, "review-show")

    # ------------------------------------------------------------------ state

    @property
    def store(self) -> ProgressStore:
        return tutor_app(self).store

    @property
    def packs(self) -> list[Pack]:
        packs = tutor_app(self).packs
        return [p for p in packs if self.pack_id in (None, "", p.id)]

    @property
    def current(self) -> review.Due | None:
        return self.queue[self.index] if self.index < len(self.queue) else None

    @property
    def step_view(self) -> StepView | None:
        return shown_step(self._scroll)

    # ------------------------------------------------------------------ showing

    def compose(self) -> ComposeResult:
        yield Static("", id="review-top", classes="topbar")
        self._scroll = VerticalScroll(id="review-scroll")
        yield self._scroll
        yield Static("", id="verdict", classes="-empty")
        yield StatusBar()
        yield KeyFooter()

    def on_mount(self) -> None:
        app = tutor_app(self)
        notices = review.sync(self.store, app.packs)
        for notice in notices:
            self.app.notify(clean_output(notice.encode()), severity="warning", timeout=10, markup=False)
        self.queue = review.queue(self.store, self.packs, self.store.cards.clock(),
                                  app.settings.new_cards_per_day, app.language)
        self.store.events.subscribe(self._heard)
        self.watch(self.app, "language", self._language_changed, init=False)
        self._request_show()
        self.set_interval(self.POLL_SECONDS, self.poll_due)

    def _due_now(self) -> list[review.Due]:
        """What the queue would hold now, less the items skipped in this session."""
        app = tutor_app(self)
        found = due_now(self.store, self.packs, app.settings.new_cards_per_day, app.language)
        return [d for d in found if (d.pack, d.lesson, d.step) not in self._skipped]

    def poll_due(self) -> None:
        """While the summary shows: redraw it when cards came due since it was drawn (it said
        "Nothing to review now" while the status bar counted 3 due, and F4/F10 did nothing)."""
        if self.current is not None or not self.is_mounted or not self.is_current or self._draws.busy:
            return
        if len(self._due_now()) != len(self._more):
            self._request_show()

    def on_unmount(self) -> None:
        self.store.events.unsubscribe(self._heard)

    def on_screen_suspend(self) -> None:
        tutor_app(self).flush_drafts()

    def _language_changed(self) -> None:
        """The same item (or summary) again in the language now in use; its answer, rating and
        verdict kept."""
        self._request_show(redraw=True)

    def _request_show(self, redraw: bool = False) -> None:
        """Show the current item (or the summary) once any show under way has finished."""
        self._draws.request(lambda: self._show(redraw))

    async def _show(self, redraw: bool = False) -> None:
        scroll = self.query_one("#review-scroll", VerticalScroll)
        await scroll.remove_children()
        if redraw:
            self._verdict(self._said)
        else:
            self.rating, self.wrong, self.revealed = None, 0, False
            self._verdict(None)
        item = self.current
        if item is None:
            self.query_one("#review-top", Static).update(t("review.title.done" if self.results else "review.title"))
            await scroll.mount_all(self._summary())
            scroll.focus()
        else:
            pack = tutor_app(self).pack(item.pack)
            assert pack is not None  # the queue holds items of the open packs only (review.sync)
            place = Place.find(pack, item.lesson, item.step)
            self._scratch = self.store.cards.scratch_key(*place.key)
            self.store.clear_scratch(*place.key, keep=self._scratch[1])
            earlier = self.store.steps.get(*self._scratch)  # a review left unfinished resumes
            if not redraw:
                self.wrong = 1 if earlier.quiz_correct is False else 0
                self.revealed = item.kind == "free" and earlier.quiz_answer is not None
            language = tutor_app(self).language  # the title in the language now in use
            texts = Texts(pack, language)
            title = f"{texts(place.lesson.title)} › {neutralize(step_title(place.step, language, texts.fallback))}"
            new = "  " + t("review.new") if item.new else ""

            def header(title: str) -> str:
                return t("review.position", n=self.index + 1, total=len(self.queue), title=title,
                         kind=t(f"review.kind.{item.kind}")) + new

            # At 80 columns the line was cut at the screen's edge, after a separator ("… shapes… ·"):
            # the title is shortened instead, so what follows it (the kind, "new") stays whole.
            from rich.cells import cell_len

            room, cut = max(20, self.app.size.width - 2), title
            top = header(title)
            while cell_len(top) > room and len(cut) > 1:
                cut = cut[:-1]
                top = header(cut.rstrip() + "…")
            # Pack text: never markup, never a control sequence for the terminal.
            self.query_one("#review-top", Static).update(Text(clean_output(top.encode())))
            await scroll.mount(scratch_view(place, Texts(pack, tutor_app(self).language),
                                            self._scratch))
            if self.revealed and not redraw:
                self._verdict(lambda: Text(t("review.rate.prompt"), style="bold"))
            scroll.scroll_home(animate=False)
            found = self.query(self.AUTO_FOCUS)
            first = found.first() if found else scroll
            first.focus(scroll_visible=first.id not in QUESTION_FOCUS)  # the question stays in view
            self._shown = time.monotonic()
        self.refresh_bindings()

    def _summary(self) -> list[Static]:
        store, packs, now = self.store, self.packs, self.store.cards.clock()
        widgets = []
        upcoming = review.next_due(store, packs, now)
        counts = review.forecast(store, packs, now)
        nxt = t("review.none") if upcoming is None else review.when(upcoming, now)
        # What came due during the session (a long one, or one left open): the queue was made at
        # its start. Offered, not sprung: the learner decides whether the session goes on.
        self._more = self._due_now()
        later = later_today(store, packs, now)
        if later:  # the chart's "today" column counts them: say so, or the two seem to disagree
            nxt = t("review.later_today", next=nxt, count=later)
        skipped = ("  " + t("review.skipped", count=len(self._skipped))) if self._skipped else ""
        if self.results:
            right = sum(rating > review.AGAIN for _, rating in self.results)
            # With more due now, "next review in 3 min" beside it contradicted it: left out.
            key = "review.summary.more" if self._more else "review.summary"
            widgets.append(Static(Text(t(key, reviewed=len(self.results), right=right, next=nxt) + skipped,
                                       style="bold"), id="summary"))
        elif not self._more:
            widgets.append(Static(t("review.empty", next=nxt) + skipped, id="summary"))
        if self._more:
            key = "review.more" if self.results else "review.due_now"
            widgets.append(Static(Text(t(key, count=len(self._more)), style="bold"), id="more"))
        widgets.append(Static(forecast_chart(counts, now), classes="summary"))
        widgets.append(Static(retention_chart(review.retention(store, packs, now)), classes="summary"))
        return widgets

    def _verdict(self, say: Callable[[], Text | str] | None) -> None:
        """Show what ``say`` makes (made again when the language changes); None: nothing."""
        self._said = say
        text = say() if say is not None else None
        verdict = self.query_one("#verdict", Static)
        verdict.update(text or "")
        verdict.set_class(not text, "-empty")

    # ------------------------------------------------------------------ what the learner did

    def _heard(self, message: Recorded) -> None:
        item = self.current
        if item is None or self.rating is not None:
            return
        if message.key != self._scratch:
            return
        if isinstance(message, QuizAnswered):
            correct = message.correct
            if item.kind == "free":
                if correct is None:
                    self.revealed = True
                    self._verdict(lambda: Text(t("review.rate.prompt"), style="bold"))
                    self.set_focus(None)  # 1-4 rate; the answer box keeps its text
                    self.refresh_bindings()
                else:
                    self._settle(review.GOOD if correct else review.AGAIN)
                return
            if correct:
                seconds = self._elapsed(self._shown)
                self._settle(review.quiz_rating(item.kind, True, self.wrong + 1, seconds))
            else:
                self.wrong += 1
                self._verdict(lambda: Text(t("review.wrong"), style="yellow"))
        elif isinstance(message, SolutionShown):
            self._settle(review.AGAIN)
        elif isinstance(message, CheckRecorded) and message.passed:
            self._settle(review.exercise_rating(message.hints_used, message.solution_seen))
        elif isinstance(message, CheckRecorded):  # a failed check: moving on now counts as Again, and says so
            self.wrong += 1
            self._verdict(lambda: Text(t("review.wrong"), style="yellow"))

    def _settle(self, rating: int, *, gave_up: bool = False) -> None:
        item = self.current
        if item is None or self.rating is not None:
            return
        self.rating = rating
        seconds = self._elapsed(self._shown)
        card = review.review(self.store, (item.pack, item.lesson, item.step), rating,
                             duration_ms=int(max(0.0, seconds) * 1000))
        self.results.append((item, rating))
        due, now = (card["due"] if card else None), self.store.cards.clock()
        key = "review.gaveup" if gave_up else "review.settled"

        def say() -> Text:
            back = review.when(due, now) if due is not None else "?"
            name = t(f"review.rating.{review.RATING_NAMES[rating]}")
            return Text(t(key, rating=name, when=back), style="bold green" if rating > review.AGAIN else "bold")

        self._verdict(say)
        self.refresh_bindings()

    # ------------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        view = self.step_view
        if action == "rate":
            return self.current is not None and self.current.kind == "free" and self.revealed \
                and self.rating is None
        if action == "step":
            if view is None or not view.supports(str(parameters[0])):
                return False
            return not view.running
        if action == "stop":
            return view is not None and view.running
        if action == "back":
            return view is None or not view.running
        if action == "next":
            return self.current is not None or bool(self._more)
        return True

    def action_rate(self, rating: int) -> None:
        if self.check_action("rate", ()):
            self._settle(int(rating))

    def action_next(self) -> None:
        """On to the next item. Leaving one after a wrong answer (or a failed check) rates it
        Again, as the verdict line said; leaving one not tried at all grades nothing: it stays
        due (it silently counted as Again). At the end, on to the cards that came due during the
        session, if any."""
        if self.current is None:
            if self._more:
                self.queue.extend(self._more)
                self._more = []
                self._request_show()
            return
        view = self.step_view
        if view is not None and view.running:
            view.stop()
        if self.rating is None and self.wrong:
            self._settle(review.AGAIN, gave_up=True)
        elif self.rating is None:
            item = self.current
            self._skipped.add((item.pack, item.lesson, item.step))
            self.notify(t("review.skip"), timeout=4)
        tutor_app(self).flush_drafts()
        self.index += 1
        self._request_show()

    def action_step(self, name: str) -> None:
        view = self.step_view
        if view is not None:
            view.act(name)

    def on_key(self, event: events.Key) -> None:
        busy_key(self, self.step_view, event)

    def action_stop(self) -> None:
        view = self.step_view
        if view is not None:
            view.stop()

    def action_home(self) -> None:
        tutor_app(self).action_home()

    def action_back(self) -> None:
        """Esc: out of a card's editor or answer box to the card's page, as in a lesson (it left
        the whole review, the code unchecked); else back to the lesson or contents the review
        was opened over (the contents when it was the first screen, as with `torch-tutor review`)."""
        from tutor.app.widgets.editor import FramedBox

        if isinstance(self.focused, FramedBox) and self._scroll is not None:
            self._scroll.focus()
            return
        app = tutor_app(self)
        app.flush_drafts()
        below = self.app.screen_stack[-2] if len(self.app.screen_stack) > 1 else None
        if below is None or below.id == "_default":  # Textual's blank first screen
            app.action_home()
        else:
            self.app.pop_screen()
