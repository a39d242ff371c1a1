"""Every use of Textual's private surface, in one place, each behind a version guard.

The app needs a few things Textual does not offer publicly; each is here with why, and each
applies only to the Textual versions it was tested with (``TESTED``, the same range
``pyproject.toml`` pins). Outside that range, or when the private name is gone, the app falls
back to Textual's own behaviour: slower or less tidy, never broken.
``tests/app/test_textual_compat.py`` fails when an installed Textual changes any of these.

The version is read from the package's ``dist-info`` folder name beside it, not through
``importlib.metadata`` (``textual.__version__`` uses that): scanning every distribution's
metadata cost a noticeable share of start-up (see docs/architecture.md, "Start-up").
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from textual.binding import Binding
    from textual.content import Content
    from textual.widget import Widget
    from textual.widgets import TextArea
    from textual.widgets._toggle_button import ToggleButton

#: Textual versions these workarounds were tested with: at least the first, below the second.
TESTED = ((8, 2, 8), (8, 3))


@functools.cache
def textual_version() -> tuple[int, ...] | None:
    """The installed Textual's version as numbers (None when it cannot be read cheaply)."""
    import textual

    site = Path(textual.__file__).resolve().parent.parent
    for entry in site.glob("textual-*.dist-info"):
        match = re.fullmatch(r"textual-(\d+(?:\.\d+)*)\.dist-info", entry.name)
        if match:
            return tuple(int(part) for part in match.group(1).split("."))
    try:  # an unusual layout (an egg, a source tree): the slow way, once
        from importlib.metadata import version

        text = version("textual")
    except Exception:
        return None
    numbers = re.match(r"\d+(?:\.\d+)*", text)
    return tuple(int(part) for part in numbers.group().split(".")) if numbers else None


def in_range(version: tuple[int, ...] | None) -> bool:
    """True when ``version`` is in ``TESTED`` (None, an unknown version, is not)."""
    return version is not None and TESTED[0] <= version < TESTED[1]


def tested() -> bool:
    """True when the installed Textual is one the workarounds were tested with."""
    return in_range(textual_version())


# --------------------------------------------------------------------------- highlight queries


def share_highlight_queries() -> bool:
    """Compile each tree-sitter highlight query once per process; True when it now does.

    Textual compiles the Python highlight query (about 50 ms on these machines) every time a
    document is set, which happens twice for every new TextArea, so every step with an editor
    paid ~0.1 s. The compiled query depends only on the language and the query text. Private:
    ``textual.document._syntax_aware_document.SyntaxAwareDocument.prepare_query``.
    """
    if not tested():
        return False
    try:
        from textual.document._syntax_aware_document import SyntaxAwareDocument
    except ImportError:  # no tree-sitter: plain text, nothing to compile
        return False
    original = getattr(SyntaxAwareDocument, "prepare_query", None)
    if original is None:
        return False
    if getattr(original, "_shared", False):
        return True
    compiled: dict[tuple[Any, str], Any] = {}

    def prepare_query(self: Any, query: str) -> Any:
        key = (self.language, query)
        if key not in compiled:
            compiled[key] = original(self, query)
        return compiled[key]

    prepare_query._shared = True  # type: ignore[attr-defined]  # marks our wrapper: applied once
    SyntaxAwareDocument.prepare_query = prepare_query  # type: ignore[method-assign]  # the workaround
    return True


# --------------------------------------------------------------------------- keys in order


def own_bindings(widget: Widget, key: str) -> list[Binding]:
    """The bindings ``widget`` itself declares for ``key`` (not its ancestors'); [] outside the
    tested range. Private: ``DOMNode._bindings`` (a public ``BindingsMap``)."""
    if not tested():
        return []
    bindings = getattr(widget, "_bindings", None)
    found = getattr(bindings, "key_to_bindings", None)
    return list(found.get(key, ())) if isinstance(found, dict) else []


def restart_blink(area: TextArea) -> None:
    """Show the cursor at once after a key, as TextArea's own key handler does. Private:
    ``TextArea._restart_blink``."""
    restart: Callable[[], None] | None = getattr(area, "_restart_blink", None) if tested() else None
    if restart is not None:
        restart()


#: The private hook a TextArea types characters in; a subclass that must act on a key before
#: the text changes overrides it (``TextBox`` and ``CodeEditor`` do). Textual calls
#: ``_on_key`` before ``on_key`` for the same event.
KEY_HOOK = "_on_key"


def key_hook_present() -> bool:
    """True when TextArea still types characters in ``KEY_HOOK`` (the overrides rely on it)."""
    from textual.widgets import TextArea

    return KEY_HOOK in vars(TextArea)


# --------------------------------------------------------------------------- keys of one read


#: A read of the terminal that starts this soon after the last one ended continues it: the data
#: was already waiting (a paste longer than one read). Typed keys, even a test's back-to-back
#: tmux commands, come milliseconds apart.
CONTINUED_READ_S = 0.001


def stamp_reads() -> bool:
    """Give every key parsed from one read of the terminal (or from reads that follow each other
    with no wait: ``CONTINUED_READ_S``) one time, its first key's; True when it now does.

    A terminal without bracketed paste (tmux's paste-buffer without -p) types a paste: its keys
    come in one read. Textual stamps each key as it parses it, and on a loaded machine the input
    thread can be held up in the middle of a read's keys (the GIL, a busy core): the keys of one
    paste were then tens of ms apart, like typing, and the editor auto-indented some of them. So
    keys with the very same time came in one burst (``CodeEditor``); keys of separate reads keep
    their own times. Private: ``XTermParser.feed`` (the linux and the web driver parse every read
    with it), a message's ``time``.
    """
    if not tested():
        return False
    try:
        from textual._xterm_parser import XTermParser
    except ImportError:
        return False
    original = getattr(XTermParser, "feed", None)
    if original is None:
        return False
    if getattr(original, "_stamped", False):
        return True
    import time

    from textual import events

    def feed(self: Any, data: str) -> Any:
        last = getattr(self, "_tutor_read", None)  # (stamp, when the last read's keys were parsed)
        stamp = last[0] if last is not None and time.monotonic() - last[1] < CONTINUED_READ_S else None
        for message in original(self, data):
            if isinstance(message, events.Key):
                if stamp is None:
                    stamp = message.time
                else:
                    message.time = stamp
            yield message
        self._tutor_read = (stamp, time.monotonic()) if stamp is not None else None

    feed._stamped = True  # type: ignore[attr-defined]  # marks our wrapper: applied once
    XTermParser.feed = feed  # type: ignore[method-assign]  # the workaround
    return True


# --------------------------------------------------------------------------- a paste as one undo step


def undo_mark(area: TextArea) -> tuple[object, int] | None:
    """Where ``area``'s undo history stands: its latest batch (the object) and that batch's
    length; None outside the tested range. Private: ``EditHistory._undo_stack``."""
    stack = getattr(getattr(area, "history", None), "_undo_stack", None) if tested() else None
    if stack is None:
        return None
    top = stack[-1] if stack else None
    return top, len(top) if top is not None else 0


def join_undo(area: TextArea, mark: tuple[object, int] | None) -> None:
    """Make every edit since ``mark`` (``undo_mark``) one undo step, and let the next edit start
    a step of its own. Nothing happens when the history no longer holds the mark's batch (it was
    undone, or dropped for length) or outside the tested range."""
    history = getattr(area, "history", None)
    stack = getattr(history, "_undo_stack", None) if tested() else None
    if stack is None or mark is None:
        return
    top, size = mark
    batches = list(stack)
    if top is None:
        start = 0
        edits: list[Any] = []
    else:
        index = next((i for i, batch in enumerate(batches) if batch is top), None)
        if index is None:
            return
        edits = batches[index][size:]
        del batches[index][size:]
        start = index + 1
        if not batches[index]:
            del batches[index]
            start -= 1
    for batch in batches[start:]:
        edits.extend(batch)
    if not edits:
        return
    stack.clear()
    stack.extend([*batches[:start], edits])
    checkpoint = getattr(history, "checkpoint", None)
    if checkpoint is not None:
        checkpoint()


# --------------------------------------------------------------------------- toasts


def drop_notifications(app: Any, messages: set[str]) -> None:
    """Take the toasts that say one of ``messages`` off the screen now (others stay: a warning
    about the progress file must not go with a step's "still the starter code"). Private:
    ``App._notifications``, ``App._unnotify``; outside the tested range, nothing."""
    notifications = getattr(app, "_notifications", None) if tested() else None
    unnotify = getattr(app, "_unnotify", None)
    if notifications is None or unnotify is None or not messages:
        return
    for notification in [n for n in notifications if str(getattr(n, "message", "")) in messages]:
        unnotify(notification)


# --------------------------------------------------------------------------- toggle buttons


def toggle_glyph(button: ToggleButton) -> Content:
    """The ``▐●▌`` part of a radio button or checkbox, styled as Textual draws it. Private:
    ``ToggleButton._button``; outside the tested range, the same glyph unstyled."""
    from textual.content import Content

    if tested():
        glyph = getattr(button, "_button", None)
        if isinstance(glyph, Content):
            return glyph
    return Content(button.BUTTON_LEFT + button.BUTTON_INNER + button.BUTTON_RIGHT)


# --------------------------------------------------------------------------- a terminal that has gone


class _GuardedOutput:
    """The terminal stream Textual's writer thread writes to, made to never raise: once a write
    or flush fails (the terminal has gone: EIO, EPIPE), it says so once and drops the rest.
    Without it the writer thread died on the first failed write, its queue filled, and the app's
    next write (its own shutdown's) waited for ever."""

    def __init__(self, stream: Any, on_error: Callable[[BaseException], None]):
        self._stream = stream
        self._on_error = on_error
        self.gone = False

    def _failed(self, error: BaseException) -> None:
        if not self.gone:
            self.gone = True
            self._on_error(error)

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return int(self._stream.write(text))
            except (OSError, ValueError) as error:  # ValueError: the stream was closed
                self._failed(error)
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._stream.flush()
            except (OSError, ValueError) as error:
                self._failed(error)

    def __getattr__(self, name: str) -> Any:  # fileno, isatty, encoding, ...
        return getattr(self._stream, name)


def guard_output(driver_class: type[Any], on_error: Callable[[BaseException], None]) -> type[Any]:
    """A driver class like ``driver_class`` whose writes to the terminal never raise; the first
    that fails calls ``on_error`` (from Textual's writer thread). Private: the driver's ``_file``,
    the stream its writer thread writes to. Outside the tested range, or for a driver without
    it, ``driver_class`` itself."""
    if not tested():
        return driver_class

    class Guarded(driver_class):  # type: ignore[misc]  # a class made at run time
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            stream = getattr(self, "_file", None)
            if stream is not None and hasattr(stream, "write"):
                self._file = _GuardedOutput(stream, on_error)

    Guarded.__name__ = Guarded.__qualname__ = f"Guarded{driver_class.__name__}"
    return Guarded
