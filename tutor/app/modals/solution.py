"""The reference solution, highlighted; "Put it in the editor" dismisses with True."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from tutor.app.widgets.keybutton import KeyButton
from tutor.app.widgets.editor import TextBox
from tutor.words.i18n import label, t


class SolutionScreen(ModalScreen[bool]):
    BINDINGS = [Binding("escape", "dismiss(False)", label("solution.close"))]

    def __init__(self, code: str):
        super().__init__(classes="modal")
        self.code = code

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Static(t("solution.title"), classes="title")
            # Code is never wrapped (a wrapped comment's tail read as code): it scrolls sideways.
            yield TextBox(self.code.rstrip("\n"), language="python", read_only=True, soft_wrap=False,
                          show_line_numbers=True, id="solution-code",
                          theme="monokai" if self.app.current_theme.dark else "github_light")
            with Horizontal(classes="buttons"):
                yield KeyButton(t("solution.use"), id="use", variant="warning")
                yield KeyButton(t("solution.close"), id="close", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#close").focus()

    @on(KeyButton.Pressed)
    def _answer(self, event: KeyButton.Pressed) -> None:
        self.dismiss(event.button.id == "use")
