"""The code editor: Python highlighting, and every edit kept as a draft in the progress store."""

from __future__ import annotations

import dataclasses
import re

from typing import Any, ClassVar

from textual import events
from textual.binding import Binding
from textual.color import Color
from textual.timer import Timer
from textual.widgets import TextArea

from tutor.app import textual_compat
from tutor.app.state import tutor_app
from tutor.words.i18n import label, t
from tutor.words.safe_text import neutralize

#: Seconds of quiet typing before a draft is written: a keystroke is never lost for longer.
DEBOUNCE = 0.4

#: Spaces per indentation level (PEP 8).
INDENT = 4

#: The longest code line, in terminal cells, that the code editor shows whole at 80x24 with the
#: cursor after its last character (no sideways scroll), in its tightest layout: the lesson page
#: scrolls (its scrollbar), the code is longer than the editor (the editor's own scrollbar), and
#: the line numbers have two digits. A pack's code lines should fit it (the pack tests check);
#: tests/app/test_app_editor.py measures it on the real layout, so it cannot go stale.
EDITOR_COLUMNS_AT_80 = 64

#: Keys read from the terminal in one read share one time (``textual_compat.stamp_reads``): a
#: paste that a terminal or multiplexer without bracketed paste types for us (tmux's paste-buffer
#: without -p). Inside one, Enter adds no indentation (the pasted lines carry their own) and the
#: whole burst undoes as one step. Keys typed one by one, even a test's back-to-back tmux
#: commands, come in reads of their own.

#: Lines after which Python's next line is one level less indented.
_BLOCK_ENDERS = ("return", "pass", "raise", "break", "continue")
#: A line whose first word is one of them (``return(x)`` too; ``return_value = 1`` is not one).
_ENDS_BLOCK = re.compile(r"(?:%s)(?![\w.])" % "|".join(_BLOCK_ENDERS))


#: TextArea's own (English) descriptions of the keys F1 lists, as the tutor's table words.
_TEXTAREA_WORDS = {"undo": "editor.undo", "redo": "editor.redo", "cut": "editor.cut", "copy": "editor.copy",
                   "paste": "editor.paste", "delete_line": "editor.delete_line"}


def _editor_bindings() -> list[Binding]:
    """TextArea's keys, minus those the tutor owns (F6/F7), with the editing keys people expect:
    ctrl+a selects all (Home still goes to the line's start), ctrl+home/ctrl+end go to the start
    and end of the code. Listed in F1 through their descriptions."""
    keep: list[Binding] = []
    for binding in TextArea.BINDINGS:
        if not isinstance(binding, Binding) or binding.key in ("f6", "f7"):
            continue
        if "ctrl+a" in binding.key.split(","):
            binding = Binding("home", binding.action, binding.description, show=False)
        elif binding.key in ("pageup", "pagedown"):  # a page of the lesson when the code fits
            binding = Binding(binding.key, binding.action, label("key.page_down" if binding.key == "pagedown"
                                                               else "key.page_up"),
                              show=binding.key == "pagedown", key_display="PgDn" if binding.key == "pagedown" else None)
        elif binding.action in _TEXTAREA_WORDS:  # listed in F1: in the tutor's words, any language
            binding = dataclasses.replace(binding, description=label(_TEXTAREA_WORDS[binding.action]))
        keep.append(binding)
    keep += [
        Binding("ctrl+a", "select_all", label("editor.select_all"), show=False),
        Binding("ctrl+home", "document_start", label("editor.document_start"), show=False),
        Binding("ctrl+end", "document_end", label("editor.document_end"), show=False),
        Binding("ctrl+shift+home", "document_start(True)", label("editor.select_to_start"), show=False),
        Binding("ctrl+shift+end", "document_end(True)", label("editor.select_to_end"), show=False),
    ]
    return keep


# Compile each highlight query once per process, not twice per editor (see textual_compat).
textual_compat.share_highlight_queries()


def _inert(text: str) -> str:
    """Line endings as newlines; any other control character as its visible picture (ESC: ␛)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return neutralize(text)


def _luminance(color: Color) -> float:
    """WCAG's relative luminance of ``color``."""
    def linear(channel: int) -> float:
        value = channel / 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(color.r) + 0.7152 * linear(color.g) + 0.0722 * linear(color.b)


def _readable_on(background: Color) -> Color:
    """Black or white, whichever contrasts more with ``background`` (WCAG's ratio:
    Textual's own choice, by brightness, gives white on a mid blue at under 4:1)."""
    lum = _luminance(background)
    on_black = (lum + 0.05) / 0.05
    on_white = 1.05 / (lum + 0.05)
    return Color(0, 0, 0) if on_black >= on_white else Color(255, 255, 255)


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

    def on_resize(self) -> None:
        """Draw again once TextArea's own resize handler (which runs after this one) has wrapped
        the text for the new width. It forgets the lines it drew, but asks for no redraw unless
        the number of wrapped lines changed: a scrollbar appearing beside an answer left its first
        line as drawn for the old width, one word shown twice ("at eighty" / "eighty columns")."""
        self.refresh()

    async def _on_key(self, event: events.Key) -> None:  # TextArea's key hook: textual_compat.KEY_HOOK
        bindings = textual_compat.own_bindings(self, event.key)
        if bindings and not self.read_only:
            event.stop()
            event.prevent_default()
            textual_compat.restart_blink(self)
            await self.run_action(bindings[0].action)
            return
        await super()._on_key(event)


class FramedBox(TextBox):
    """A TextBox whose frame says, at a glance and in any theme, whether keys go into it: its
    title says it in words (``TITLES``, see show_focus), and the frame turns the accent colour
    while it has focus. Esc leaves it for the lesson's page (whose arrows and PageUp/PageDown
    scroll it; Tab, the next focus from there, comes straight back) where the screen has no
    other use for Esc. The code editor and a quiz's answer box are ones."""

    #: The i18n keys of the title: while keys go into it, then while they do not.
    TITLES: ClassVar[tuple[str, str]] = ("editor.title.focused", "editor.title.blurred")

    DEFAULT_CSS = """
    FramedBox { border-title-align: left; }
    FramedBox:focus { border: tall $accent; border-title-style: bold; }
    """

    def on_focus(self) -> None:
        self.show_focus(True)  # (has_focus is set by a handler that runs after this one)

    def on_blur(self) -> None:
        self.show_focus(False)

    def on_mount(self) -> None:
        self.show_focus()
        self.app.screen_change_signal.subscribe(self, lambda screen: self.show_focus())

    def show_focus(self, focused: bool | None = None) -> None:
        """Title the frame with whether keys go into it, in colours that read on what is under
        them in any theme. The background is the widget's own (the code editor's is its editor
        theme's, monokai or github_light, not the app theme's), so the title's colours are worked
        out against it: focused, the accent as a background with the text that contrasts with it;
        not focused, a muted grey that contrasts with the background. Shown again whenever the
        screen on top changes (a dialog opens or closes) and the theme changes
        (TutorApp.watch_theme)."""
        styles = self.styles
        focused_words, blurred_words = self.TITLES
        # Under a dialog the box keeps its focus for later, but the keys go to the dialog.
        if (self.has_focus if focused is None else focused) and self.screen.is_active:
            # A screen whose Esc does something else first (the review's goes back) says so.
            leaves = getattr(self.screen, "ESCAPE_LEAVES_EDITOR", True)
            self.border_title = t(focused_words) + (t("editor.title.escape") if leaves else "")
            accent = Color.parse(self.app.get_css_variables()["accent"])
            styles.border_title_background = accent
            styles.border_title_color = _readable_on(accent)
        else:
            self.border_title = t(blurred_words)
            styles.border_title_background = Color(0, 0, 0, 0)
            styles.border_title_color = _readable_on(styles.background).with_alpha(0.7)

    async def _on_key(self, event: events.Key) -> None:  # TextArea's key hook: textual_compat.KEY_HOOK
        if event.key == "escape":  # (Esc reaches the box only when the screen has no use for it)
            # Out to the lesson's page. (TextArea's own Esc, in the code editor, went on to the
            # Run button; in an answer box it did nothing, and nothing said where the keys went.)
            scroll = self._scroll_parent()
            if scroll is not None and scroll.focusable:
                event.stop()
                event.prevent_default()
                scroll.focus()
                return
        await super()._on_key(event)

    def _scroll_parent(self) -> Any:
        from textual.containers import ScrollableContainer

        for node in self.ancestors:
            if isinstance(node, ScrollableContainer):
                return node
        return None


class AnswerBox(FramedBox):
    """Where a quiz's answer is typed (a prediction, a free answer): framed like the code editor,
    its title saying whether keys type into the answer."""

    TITLES = ("answer.title.focused", "editor.title.blurred")


class CodeEditor(FramedBox, inherit_bindings=False):
    """A TextArea that saves itself.

    Args:
        code: the text to start with (the saved draft, or the step's own code).
        original: the step's own code; a draft equal to it is removed rather than stored.
        key: (pack, lesson, step) under which drafts are saved; None keeps nothing.
    """

    # F6/F7 (select line/all in TextArea) belong to Check and Hint: a focused editor must not
    # take the tutor's keys, nor push them to the front of the footer.
    BINDINGS: ClassVar[list[Binding | tuple[str, str] | tuple[str, str, str]]] = [*_editor_bindings()]

    # Whether keys go into the code shows in the frame (FramedBox).
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
        self._cursor_kept: tuple[int, int] | None = None  # the cursor as last written (see keep_cursor)
        self._last_key_at = float("-inf")  # when the last key was read (its event's time)
        self._burst_mark: tuple[object, int] | None = None  # the undo history before a burst's first key

    # ------------------------------------------------------------------ Python-aware editing

    def _in_burst(self, event: events.Key) -> bool:
        """True when ``event`` came in the same read as the key before it (the same time): a
        paste typed by the terminal. The first key of each burst marks the undo history."""
        burst = event.time == self._last_key_at
        self._last_key_at = event.time
        if not burst:
            self._burst_mark = textual_compat.undo_mark(self)
        return burst

    async def _on_key(self, event: events.Key) -> None:  # TextArea's key hook: textual_compat.KEY_HOOK
        burst = self._in_burst(event)
        try:
            await self._key(event, burst)
        finally:
            if burst:  # the burst so far is one undo step
                textual_compat.join_undo(self, self._burst_mark)

    async def _key(self, event: events.Key, burst: bool) -> None:
        if event.key == "enter" and burst and not self.read_only:
            # A pasted line break: the next line brings its own indentation.
            event.stop()
            event.prevent_default()
            start, end = self.selection
            self.replace("\n", start, end, maintain_selection_offset=False)
            return
        if event.key in ("tab", "shift+tab") and not self.read_only and not self.selection.is_empty:
            # With a selection, Tab and Shift+Tab indent and dedent the selected lines, as in every
            # code editor (Tab replaced the selection with spaces; Shift+Tab left the editor).
            event.stop()
            event.prevent_default()
            textual_compat.restart_blink(self)
            self.shift_lines(+1 if event.key == "tab" else -1)
            return
        if event.key == "tab" and not burst and not self.read_only and self._tab_breaks_first_statement():
            # The editor has focus from the moment an exercise opens; a learner pressing Tab to
            # "get into" it indented line 1 and got "IndentationError at line 1". Python refuses
            # an indented first statement, so this Tab can only be that mistake: say so instead.
            event.stop()
            event.prevent_default()
            self.app.notify(t("editor.tab_first_line"))
            return
        if event.key == "enter" and not self.read_only:
            event.stop()
            event.prevent_default()
            textual_compat.restart_blink(self)
            start, end = self.selection
            self.replace("\n" + self._next_indent(min(start, end)), start, end, maintain_selection_offset=False)
            return
        await super()._on_key(event)

    def shift_lines(self, direction: int) -> None:
        """Indent (``direction`` +1) or dedent (-1) by one level every line the selection touches
        (a selection ending at the start of a line leaves that line alone), as one undoable edit;
        the selection still covers the same text. Blank lines are not indented; a dedent takes
        off at most one level (or one tab), as many spaces as the line has."""
        start, end = sorted(self.selection)
        first, last = start[0], end[0]
        if last > first and end[1] == 0:
            last -= 1
        lines = [self.document.get_line(row) for row in range(first, last + 1)]
        changes: list[int] = []  # characters added (negative: removed) at the start of each line
        shifted: list[str] = []
        for line in lines:
            if direction > 0:
                add = INDENT if line.strip() else 0
                shifted.append(" " * add + line)
                changes.append(add)
            else:
                cut = 1 if line.startswith("\t") else min(INDENT, len(line) - len(line.lstrip(" ")))
                shifted.append(line[cut:])
                changes.append(-cut)
        if not any(changes):
            return

        def moved(location: tuple[int, int]) -> tuple[int, int]:
            """Where a selection end goes: with its text (one at a line's start stays there)."""
            row, column = location
            if first <= row <= last and column:
                column = max(0, column + changes[row - first])
            return row, column

        anchor, cursor = self.selection
        self.replace("\n".join(shifted), (first, 0), (last, len(lines[-1])), maintain_selection_offset=False)
        from textual.widgets.text_area import Selection

        self.selection = Selection(moved(anchor), moved(cursor))

    def _tab_breaks_first_statement(self) -> bool:
        """True when Tab would put spaces before the code's first statement (its first line that
        is neither blank nor a comment): the cursor, with nothing selected, is in that line's
        leading spaces. Indenting it is always an IndentationError."""
        selection = self.selection
        if not selection.is_empty:
            return False
        row, column = selection.end
        for index in range(self.document.line_count):
            line = self.document.get_line(index)
            code = line.lstrip(" \t")
            if code and not code.startswith("#"):
                return index == row and column <= len(line) - len(code)
            if index >= row:
                return False
        return False

    def _next_indent(self, location: tuple[int, int]) -> str:
        """The indentation of a new line at ``location``: the line's own, one level more after a
        line ending in ':', one level less after return/pass/raise/break/continue."""
        row, column = location
        before = self.document.get_line(row)[:column]
        indent = before[: len(before) - len(before.lstrip(" \t"))]
        code = before.split("#", 1)[0].rstrip() if "#" in before and "'" not in before and '"' not in before \
            else before.rstrip()
        if code.endswith(":"):
            return indent + " " * INDENT
        if _ENDS_BLOCK.match(code.strip()) and len(indent) >= INDENT:
            return indent[:-INDENT]
        return indent

    def action_delete_left(self) -> None:
        """Backspace in the leading spaces of a line removes one indentation level."""
        selection = self.selection
        if selection.is_empty and not self.read_only:
            row, column = selection.end
            before = self.document.get_line(row)[:column]
            if column > 0 and before.strip(" ") == "" and "\t" not in before:
                target = (column - 1) // INDENT * INDENT
                self.delete((row, target), (row, column), maintain_selection_offset=False)
                return
        super().action_delete_left()

    def action_document_start(self, select: bool = False) -> None:
        self.move_cursor((0, 0), select=select)

    def action_document_end(self, select: bool = False) -> None:
        last = self.document.line_count - 1
        self.move_cursor((last, len(self.document.get_line(last))), select=select)

    def action_cursor_page_down(self) -> None:
        """PageDown: a page of the lesson, whatever the code's length. (Paging a long code moved
        its cursor, and keeping the cursor in view then pulled the lesson back to the editor:
        PgDn never got past it. The arrows, ctrl+home and ctrl+end move in the code.)"""
        self._page_scroll(+1)

    def action_cursor_page_up(self) -> None:
        self._page_scroll(-1)

    def _page_scroll(self, direction: int) -> None:
        scroll = self._scroll_parent()
        if scroll is not None:
            (scroll.scroll_page_down if direction > 0 else scroll.scroll_page_up)(animate=False)

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        if event.text_area is self:
            self.call_after_refresh(self._keep_cursor_in_view)

    def _keep_cursor_in_view(self) -> None:
        """The cursor stays on screen while typing, even when a report pushed the editor away;
        and the view is scrolled sideways only while the cursor needs it, so line starts come
        back as soon as the cursor is left of the editor's width."""
        if not self.is_mounted or not self.has_focus:
            return
        row, column = self.selection.end
        cells = self.get_column_width(row, column)
        if self.scroll_x and cells < self.scrollable_content_region.width - self.gutter_width - 1:
            self.scroll_to(x=0, animate=False, immediate=True)
        scroll = self._scroll_parent()
        if scroll is None:
            return
        y = self.cursor_screen_offset.y
        top, bottom = scroll.content_region.y, scroll.content_region.bottom
        if y < top:
            scroll.scroll_to(y=scroll.scroll_y - (top - y) - 1, animate=False)
        elif y >= bottom:
            scroll.scroll_to(y=scroll.scroll_y + (y - bottom) + 2, animate=False)

    # ------------------------------------------------------------------ drafts

    def on_mount(self) -> None:  # (Textual calls FramedBox.on_mount too: each class's handler runs)
        self._restore_cursor()
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

    def _cursor_name(self) -> str | None:
        """The preference the cursor is kept under (None: this editor keeps nothing)."""
        return None if self.key is None else "cursor:" + "/".join(self.key)

    def _restore_cursor(self) -> None:
        """Put the cursor back where the learner left it in this code (line 1, column 0 put
        what was typed after a resume before ``import torch``), kept to the text it is in now."""
        name = self._cursor_name()
        saved = tutor_app(self).store.preferences.get(name) if name is not None else None
        if not saved:
            return
        try:
            row, column = (int(part) for part in saved.split(","))
        except ValueError:  # not ours: ignored, as if none were kept
            return
        row = max(0, min(row, self.document.line_count - 1))
        column = max(0, min(column, len(self.document.get_line(row))))
        from textual.widgets.text_area import Selection

        self.selection = Selection.cursor((row, column))
        self._cursor_kept = (row, column)

    def keep_cursor(self) -> None:
        """Write where the cursor is, when it moved since the last write (on leaving the step and
        on quitting, with the draft)."""
        name = self._cursor_name()
        cursor = self.selection.end
        if name is None or cursor == self._cursor_kept:
            return
        self._cursor_kept = cursor
        tutor_app(self).store.preferences.set(name, f"{cursor[0]},{cursor[1]}")

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
        self.keep_cursor()
        if not self._dirty or self.key is None:
            return
        self._dirty = False
        store = tutor_app(self).store
        if self.text == self.original:
            store.drafts.clear(*self.key)
        else:
            store.drafts.save(*self.key, self.text)

    def on_unmount(self) -> None:
        self.flush()
