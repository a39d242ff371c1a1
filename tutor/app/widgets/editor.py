"""The code editor: Python highlighting, and every edit kept as a draft in the progress store."""

from __future__ import annotations

from typing import Any

from textual import events
from textual.binding import Binding
from textual.timer import Timer
from textual.widgets import TextArea

from tutor.core.textclean import neutralize

#: Seconds of quiet typing before a draft is written: a keystroke is never lost for longer.
DEBOUNCE = 0.4


def _share_highlight_queries() -> None:
    """Compile each tree-sitter highlight query once per process.

    Textual compiles the Python highlight query (about 50 ms on these machines) every time a
    document is set, which happens twice for every new TextArea, so every step with an editor
    paid ~0.1 s. The compiled query depends only on the language and the query text.
    """
    try:
        from textual.document._syntax_aware_document import SyntaxAwareDocument
    except ImportError:  # no tree-sitter: plain text, nothing to compile
        return
    original = SyntaxAwareDocument.prepare_query
    if getattr(original, "_shared", False):
        return
    compiled: dict[tuple[Any, str], Any] = {}

    def prepare_query(self: Any, query: str) -> Any:
        key = (self.language, query)
        if key not in compiled:
            compiled[key] = original(self, query)
        return compiled[key]

    prepare_query._shared = True  # type: ignore[attr-defined]
    SyntaxAwareDocument.prepare_query = prepare_query  # type: ignore[method-assign]


_share_highlight_queries()


def _inert(text: str) -> str:
    """Line endings as newlines; any other control character as its visible picture (ESC: ␛)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return neutralize(text)


class TextBox(TextArea):
    """A TextArea whose keys are applied in the order they were pressed.

    Textual runs a widget's key bindings (cursor keys, undo...) only once the key has bubbled up
    to the app, one message hop per ancestor, while typed characters go in at the first hop.
    Keys arriving in a burst while the app is busy (start-up, a fast typist over ssh) then came
    out of order: text typed after Down landed above it. Running the widget's own bindings when
    the key reaches it keeps the order.
    """

    def __init__(self, text: str = "", **kwargs: Any):
        super().__init__(_inert(text), **kwargs)

    def edit(self, edit: Any) -> Any:
        """Every insertion (typing, paste, undo) goes in with its control characters inert:
        a raw ESC typed or pasted must never reach the terminal when the line is drawn."""
        if edit.text:
            edit.text = _inert(edit.text)
        return super().edit(edit)

    def load_text(self, text: str) -> None:
        super().load_text(_inert(text))

    async def _on_key(self, event: events.Key) -> None:
        bindings = getattr(getattr(self, "_bindings", None), "key_to_bindings", {}).get(event.key)
        if bindings and not self.read_only:
            event.stop()
            event.prevent_default()
            self._restart_blink()
            await self.run_action(bindings[0].action)
            return
        await super()._on_key(event)


class CodeEditor(TextBox, inherit_bindings=False):
    """A TextArea that saves itself.

    Args:
        code: the text to start with (the saved draft, or the step's own code).
        original: the step's own code; a draft equal to it is removed rather than stored.
        key: (pack, lesson, step) under which drafts are saved; None keeps nothing.
    """

    # F6/F7 (select line/all in TextArea) belong to Check and Hint: a focused editor must not
    # take the tutor's keys, nor push them to the front of the footer.
    BINDINGS = [b for b in TextArea.BINDINGS if not (isinstance(b, Binding) and b.key in ("f6", "f7"))]

    DEFAULT_CSS = """
    CodeEditor { height: auto; min-height: 5; max-height: 24; }
    """

    def __init__(self, code: str, *, original: str, key: tuple[str, str, str] | None, id: str | None = None,
                 dark: bool = True):
        # Plain text until mounted, then Python (see on_mount); on the app's first screen, only
        # once that screen is drawn.
        super().__init__(code, language=None, theme="monokai" if dark else "github_light",
                         soft_wrap=False, tab_behavior="indent", show_line_numbers=True, id=id)
        self.original = original
        self.key = key
        self._timer: Timer | None = None
        self._dirty = False

    def on_mount(self) -> None:
        if getattr(self.app, "started", True):
            self.highlight()
        # else the app calls highlight() once its first frame is drawn: compiling the highlight
        # query (~50 ms, once per process) must not hold back the first screen.

    def highlight(self) -> None:
        """Colour the code as Python (once; the text and the cursor are unchanged)."""
        if self.language == "python":
            return
        selection = self.selection
        self.language = "python"
        self.selection = selection

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area is not self or self.key is None:
            return
        self._dirty = True
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE, self.flush)

    def replace_all(self, code: str) -> None:
        """Load new code (reset, solution) and save it at once."""
        self.load_text(code)
        self._dirty = True
        self.flush()

    def flush(self) -> None:
        """Write the draft now if it changed since the last write."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if not self._dirty or self.key is None:
            return
        self._dirty = False
        store = self.app.store  # type: ignore[attr-defined]
        if self.text == self.original:
            store.clear_draft(*self.key)
        else:
            store.save_draft(*self.key, self.text)

    def on_unmount(self) -> None:
        self.flush()
