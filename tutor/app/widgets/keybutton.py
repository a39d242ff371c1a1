"""A one-line button, drawn like Textual's compact Button at a fraction of its start-up cost.

Textual's Button carries styles for every variant and style of button (7 KB of CSS, parsed the
first time one is shown) and renders its label as markup; five of them on an exercise cost a
twelfth of the time to the first screen. The tutor only needs compact buttons with a plain
label, so this is all it takes: click, or Enter/Space when focused, posts ``KeyButton.Pressed``.
"""

from __future__ import annotations

from typing import Literal

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.dom import DOMNode
from textual.message import Message
from textual.widget import Widget

Variant = Literal["default", "primary", "success", "warning", "error"]


def key_label(node: DOMNode, action: str) -> str:
    """How the key for ``action`` reads on a button ("F5"): the first key of the binding in the
    BINDINGS of ``node``'s screen, else of the app; "" when neither binds it. Buttons show what
    the bindings say, so a key moved in BINDINGS moves on the buttons too."""
    declared = [vars(cls).get("BINDINGS", ()) for owner in (node.screen, node.app) for cls in type(owner).__mro__]
    for bindings in declared:  # a subclass's own BINDINGS first, as Textual merges them
        for binding in bindings:
            if isinstance(binding, Binding) and binding.action == action:
                key = binding.key.split(",")[0].strip()
                return node.app.get_key_display(Binding(key, action)).upper()
    return ""


def with_key(text: str, node: DOMNode, action: str, gap: str = " ") -> str:
    """``text`` followed by the key for ``action`` (see :func:`key_label`), when there is one."""
    key = key_label(node, action)
    return f"{text}{gap}{key}" if key else text


class KeyButton(Widget, can_focus=True):
    """A compact button.

    Args:
        label: plain text (no markup).
        variant: colour, as Textual's Button variants.
    """

    DEFAULT_CSS = """
    KeyButton {
        width: auto;
        min-width: 6;
        height: 1;
        padding: 0 1;
        text-align: center;
        text-style: bold;
        color: $button-foreground;
        background: $surface;
        pointer: pointer;

        &:hover { background: $surface-darken-1; }
        &:focus { text-style: $button-focus-text-style; background-tint: $foreground 5%; }
        &:disabled { text-opacity: 0.6; pointer: not-allowed; }
        &.-primary { color: $button-color-foreground; background: $primary;
                     &:hover { background: $primary-darken-2; } }
        &.-success { color: $button-color-foreground; background: $success;
                     &:hover { background: $success-darken-2; } }
        &.-warning { color: $button-color-foreground; background: $warning;
                     &:hover { background: $warning-darken-2; } }
        &.-error { color: $button-color-foreground; background: $error;
                   &:hover { background: $error-darken-1; } }
    }
    """

    BINDINGS = [Binding("enter,space", "press", show=False)]

    class Pressed(Message):
        """The button was clicked, or Enter/Space was pressed on it."""

        def __init__(self, button: "KeyButton"):
            self.button = button
            super().__init__()

        @property
        def control(self) -> "KeyButton":
            return self.button

    def __init__(self, label: str = "", *, variant: Variant = "default", id: str | None = None,
                 classes: str | None = None, disabled: bool = False):
        super().__init__(id=id, classes=classes, disabled=disabled)
        self._label = label
        if variant != "default":
            self.add_class(f"-{variant}")

    @property
    def label(self) -> str:
        return self._label

    @label.setter
    def label(self, value: str) -> None:
        self._label = value
        self.refresh(layout=True)

    def render(self) -> Text:
        return Text(self._label, no_wrap=True, overflow="ellipsis")

    def get_content_width(self, container: object, viewport: object) -> int:
        return Text(self._label).cell_len

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        return 1

    def press(self) -> None:
        if not self.disabled:
            self.post_message(self.Pressed(self))

    def action_press(self) -> None:
        self.press()

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.press()
