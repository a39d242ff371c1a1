"""A yes/no question; dismisses with True or False (Escape means no)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from tutor.app.widgets.keybutton import KeyButton
from tutor.core.i18n import label, t


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [Binding("escape", "dismiss(False)", label("confirm.no")),
                Binding("y", "dismiss(True)", label("confirm.yes"), show=False)]

    def __init__(self, question: str):
        super().__init__(classes="modal")
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.question, classes="question")
            with Horizontal(classes="buttons"):
                yield KeyButton(t("confirm.yes"), id="yes", variant="warning")
                yield KeyButton(t("confirm.no"), id="no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#no").focus()

    @on(KeyButton.Pressed)
    def _answer(self, event: KeyButton.Pressed) -> None:
        self.dismiss(event.button.id == "yes")
