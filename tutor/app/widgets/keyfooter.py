"""The key bar at the bottom: the screen's active bindings in one line of text.

Why not Textual's Footer: it rebuilds a widget per key every time the bindings change (each
focus change, each step shown), about 45 ms a time here, and while it rebuilds no frame is
drawn, so opening a lesson waited on two rebuilds before anything appeared. This bar redraws
its one line instead. It also fits itself to the terminal: when every key with its name does
not fit (80 columns), the entries close up (one space between them, not two), then the least
used keys are left out first (palette, paging, Quit, Help: F1 lists every key), then Previous and
Contents, the step's own actions last; every key shown keeps its name. At 80 columns an exercise
keeps f2 Contents and f3 Previous beside its five actions. A click on a key presses it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.widget import Widget

from tutor.words.i18n import relabel, t

#: Whose keys go first when the line does not fit, in order; a key always keeps its name (a bare
#: "f2" read as cut off), so a key that cannot have its name is not shown at all (F1 lists every
#: key). The step's own actions (Run, Check...) stay longest; Next, Quit and Help right before them.
_DEGRADE = (
    "command_palette", "page", "quit", "help", "prev", "home", "focus_filter", "resume", "next",
)
_PAGE_ACTIONS = ("page", "cursor_page_down")


class _Entry(NamedTuple):
    key: str  # the key to press (for clicks)
    shown: str  # how the key is shown, e.g. f5 or ^q
    name: str
    action: str
    enabled: bool


class KeyFooter(Widget):
    """One line of ``key name`` pairs for the focused screen's bindings."""

    DEFAULT_CSS = """
    KeyFooter {
        dock: bottom;
        height: 1;
        background: $footer-background;
        color: $footer-foreground;
    }
    KeyFooter > .keyfooter--key { color: $footer-key-foreground; text-style: bold; }
    KeyFooter > .keyfooter--name { color: $footer-description-foreground; }
    KeyFooter > .keyfooter--disabled { color: $text-disabled; }
    """

    COMPONENT_CLASSES = {"keyfooter--key", "keyfooter--name", "keyfooter--disabled"}

    def __init__(self, *, id: str | None = None):
        super().__init__(id=id)
        self._spans: list[tuple[int, int, str]] = []  # (start, end, key) of each drawn entry

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Any) -> None:
        self.refresh()

    def entries(self) -> list[_Entry]:
        """The keys to show, in the order Textual's Footer would show them, palette last."""
        out: list[_Entry] = []
        seen: set[str] = set()
        palette = None
        for key, (_node, binding, enabled, _tooltip) in self.screen.active_bindings.items():
            if key == self.app.COMMAND_PALETTE_BINDING and self.app.ENABLE_COMMAND_PALETTE:
                palette = _Entry(key, self.app.get_key_display(binding), t("key.palette.short"),
                                 "command_palette", enabled)
                continue
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            out.append(_Entry(key, self.app.get_key_display(binding), relabel(binding.description), binding.action,
                              enabled))
        if palette is not None:
            out.append(palette)
        return out

    @staticmethod
    def _action_name(action: str) -> str:
        return action.split("(", 1)[0].rsplit(".", 1)[-1]

    def layout_entries(self, width: int) -> list[_Entry]:
        """The entries shown, left out (see ``_DEGRADE``) until the line fits."""
        return self.fit_entries(width)[0]

    def fit_entries(self, width: int) -> tuple[list[_Entry], bool]:
        """The entries shown, and whether they are closed up (one space between entries): the
        first of these that fits, keys left out in ``_DEGRADE``'s order: spaced, then closed up."""
        entries = self.entries()
        kept = [True] * len(entries)

        def length(gap: int) -> int:
            # by cells, not characters: a CJK name (帮助) is two cells a character
            return sum(cell_len(e.shown) + (cell_len(e.name) + 1 if e.name else 0) + gap
                       for e, keep in zip(entries, kept) if keep)

        def fits() -> bool | None:
            """False: spaced; True: closed up; None: neither fits."""
            return False if length(2) <= width else True if length(1) + 1 <= width else None

        for action in _DEGRADE:
            if fits() is not None:
                break
            for index, entry in enumerate(entries):
                name = self._action_name(entry.action)
                if name == action or (action == "page" and name in _PAGE_ACTIONS):
                    kept[index] = False
        for index in reversed(range(len(entries))):  # narrower still: the step's last actions
            if fits() is not None:
                break
            kept[index] = False
        return [entry for entry, keep in zip(entries, kept) if keep], bool(fits())

    def render(self) -> Text:
        key_style = self.get_component_rich_style("keyfooter--key", partial=True)
        name_style = self.get_component_rich_style("keyfooter--name", partial=True)
        disabled_style = self.get_component_rich_style("keyfooter--disabled", partial=True)
        line = Text(no_wrap=True, overflow="ellipsis", end="")
        self._spans = []
        entries, closed = self.fit_entries(self.size.width)
        for entry in entries:
            start = line.cell_len  # clicks come in cells (a CJK name is two a character)
            line.append(" ")
            line.append(entry.shown, key_style if entry.enabled else disabled_style)
            if entry.name:
                line.append(" " + entry.name, name_style if entry.enabled else disabled_style)
            if not closed:
                line.append(" ")
            self._spans.append((start, line.cell_len, entry.key))
        return line

    def on_click(self, event: events.Click) -> None:
        for start, end, key in self._spans:
            if start <= event.x < end:
                event.stop()
                self.app.simulate_key(key)
                return
