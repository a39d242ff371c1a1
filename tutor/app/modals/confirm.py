"""A yes/no question; dismisses with True or False (Escape means no)."""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from tutor.app.widgets.keybutton import KeyButton
from tutor.words.i18n import label, t


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [Binding("escape", "dismiss(False)", label("confirm.no")),
                Binding("y", "dismiss(True)", label("confirm.yes"), show=False),
                Binding("n", "dismiss(False)", label("confirm.no"), show=False),
                Binding("left", "app.focus_previous", show=False),
                Binding("right", "app.focus_next", show=False)]

    def __init__(self, question: str):
        super().__init__(classes="modal")
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.question, classes="question")
            with Horizontal(classes="buttons"):
                yield KeyButton(t("confirm.yes"), id="yes", variant="warning")
                yield KeyButton(t("confirm.no"), id="no", variant="primary")
            yield Static(t("confirm.answer_first"), id="answer-first", classes="muted")

    def on_mount(self) -> None:
        self.query_one("#answer-first").display = False
        self.query_one("#no").focus()

    def on_key(self, event: events.Key) -> None:
        """A key of the screen below (F6 under F9's question) did nothing, silently: the
        question says it waits for its answer."""
        key = event.key.rsplit("+", 1)[-1]
        if key.startswith("f") and key[1:].isdigit():
            event.stop()
            event.prevent_default()
            self.query_one("#answer-first").display = True
            self.app.bell()

    @on(KeyButton.Pressed)
    def _answer(self, event: KeyButton.Pressed) -> None:
        self.dismiss(event.button.id == "yes")
