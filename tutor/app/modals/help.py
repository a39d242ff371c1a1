"""Every key, gathered from the bindings of the screen below, so the list cannot go stale."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from tutor.app.widgets.keybutton import KeyButton
from tutor.words.i18n import label, relabel, t


#: The editor's keys listed in help (its cursor keys need no introduction).
_EDITOR_KEYS = {"select_all", "document_start", "document_end", "cursor_page_down", "cursor_page_up", "undo",
                "redo", "cut", "copy", "paste", "delete_line"}


def key_table(screen: Screen[Any] | None, app: App[Any]) -> Table:
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    seen: set[str] = set()
    nodes: list[DOMNode | str | None] = [screen, app, "palette"]
    editors = list(screen.query("CodeEditor")) if screen is not None else []
    if editors:  # the editing keys, when the step has a code editor
        nodes.append(editors[0])
    for node in nodes:
        if node == "palette":
            table.add_row(app.get_key_display(Binding(app.COMMAND_PALETTE_BINDING, "")), t("key.palette"))
            continue
        if not isinstance(node, DOMNode):
            continue
        for binding in node.BINDINGS:
            if not isinstance(binding, Binding) or not binding.description:
                continue
            description = relabel(binding.description)  # in the language in use now
            if description in seen:
                continue
            if node is not screen and node is not app and binding.action.split("(")[0] not in _EDITOR_KEYS:
                continue
            seen.add(description)
            keys = ", ".join(app.get_key_display(Binding(k, "")) for k in binding.key.split(","))
            table.add_row(keys, description)
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,f1", "dismiss", label("key.close"))]

    def __init__(self, below: Screen[Any] | None = None):
        super().__init__()
        self.below = below

    def compose(self) -> ComposeResult:
        below = self.below
        with Vertical(classes="dialog wide"):
            yield Static(t("help.title"), classes="title")
            # Fits the dialog at any height (tutor.tcss), and has the keys from the start: Up/Down,
            # PageUp/PageDown, Home/End reach every line of the list at 80x24.
            with VerticalScroll(id="help-scroll"):
                yield Static(Text(t("help.body")))
                yield Static(key_table(below, self.app) if below is not None else "", id="keys")
            yield KeyButton(t("key.close"), id="close", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#help-scroll", VerticalScroll).focus()

    def on_button_pressed(self) -> None:
        self.dismiss()
