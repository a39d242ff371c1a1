"""A yes/no question; dismisses with True or False (Escape means no)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tutor.core.i18n import t


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [Binding("escape", "dismiss(False)", t("confirm.no")),
                Binding("y", "dismiss(True)", t("confirm.yes"), show=False)]

    def __init__(self, question: str):
        super().__init__(classes="modal")
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.question, classes="question")
            with Horizontal(classes="buttons"):
                yield Button(t("confirm.yes"), id="yes", variant="warning", compact=True)
                yield Button(t("confirm.no"), id="no", variant="primary", compact=True)

    def on_mount(self) -> None:
        self.query_one("#no").focus()

    @on(Button.Pressed)
    def _answer(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")
