"""The code editor knows Python and keeps what the learner does in view (issue 14)."""

from __future__ import annotations

import pytest

from textual import events

from app_support import burst, key_event, screen_text, settle, wait_for_text
from tutor.app.widgets.editor import AnswerBox, CodeEditor, FramedBox

SMALL = (80, 24)


async def _editor(pilot, app) -> CodeEditor:
    await settle(pilot)
    editor = app.screen.query_one(CodeEditor)
    editor.focus()
    await settle(pilot)
    return editor


async def test_enter_keeps_indentation_and_indents_after_a_colon(make_app):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        editor = await _editor(pilot, app)
        editor.replace_all("")
        await pilot.press(*"def f(x):", "enter", *"with x:", "enter", *"y = 1", "enter", *"return y", "enter",
                          *"z")
        await settle(pilot)
        assert editor.text == "def f(x):\n    with x:\n        y = 1\n        return y\n    z"


async def test_backspace_in_leading_spaces_removes_one_level(make_app):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        editor = await _editor(pilot, app)
        editor.replace_all("")
        await pilot.press(*"if x:", "enter", *"if y:", "enter", "backspace", *"a", "enter", "backspace")
        await settle(pilot)
        assert editor.text == "if x:\n    if y:\n    a\n"
        await pilot.press("b", "left", "backspace")  # not in leading whitespace only: one character
        await settle(pilot)
        assert editor.text == "if x:\n    if y:\n    ab"


async def test_select_all_and_document_start_and_end(make_app):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        editor = await _editor(pilot, app)
        await pilot.press("ctrl+end")
        last = editor.document.line_count - 1
        assert editor.selection.end == (last, len(editor.document.get_line(last)))
        await pilot.press("ctrl+home")
        assert editor.selection.end == (0, 0)
        await pilot.press("ctrl+a")
        assert editor.selected_text == editor.text
        await pilot.press(*"x = 1")
        await settle(pilot)
        assert editor.text == "x = 1"


async def test_editing_keys_are_listed_in_help(make_app):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=(100, 40)) as pilot:
        await _editor(pilot, app)
        await pilot.press("f1")
        text = await wait_for_text(pilot, app, "PageUp/PageDown")
        assert "PageUp/PageDown" in text and "scroll the lesson" in text and "Shift+Tab" in text
        app.screen.query_one("VerticalScroll").scroll_end(animate=False)
        text = await wait_for_text(pilot, app, "Select all the code")
        assert "Select all the code" in text and "^a " in text
        assert "^end " in text and "Go to the end of the code" in text


async def test_a_long_line_scrolled_sideways_gives_the_line_starts_back(make_app):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        editor = await _editor(pilot, app)
        editor.replace_all("import torch\n\ndef double(x):\n    return x\n")
        await pilot.press("ctrl+end", *("# " + "y" * 120))
        await settle(pilot)
        assert editor.scroll_x > 0  # the cursor is past the editor's width
        await pilot.press("home")
        await settle(pilot)
        assert editor.scroll_x == 0
        assert "import torch" in screen_text(app)


async def test_typing_in_an_editor_pushed_off_screen_brings_it_back(make_app):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        editor = await _editor(pilot, app)
        scroll = app.screen.query_one("#step-scroll")
        scroll.scroll_end(animate=False)
        await settle(pilot)
        await pilot.press("ctrl+home", *"# here ")
        await settle(pilot, 3)
        assert "# here" in screen_text(app)


async def test_page_down_in_an_editor_whose_code_fits_scrolls_the_lesson(make_app):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=(80, 16)) as pilot:
        await _editor(pilot, app)
        scroll = app.screen.query_one("#step-scroll")
        scroll.scroll_home(animate=False)
        await settle(pilot)
        assert scroll.max_scroll_y > 0 and scroll.scroll_y == 0
        await pilot.press("pagedown")
        await settle(pilot)
        assert scroll.scroll_y > 0
        await pilot.press("pageup")
        await settle(pilot)
        assert scroll.scroll_y == 0


async def test_the_page_key_is_in_the_footer_where_there_is_room(make_app):
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        while app.screen.place.step.id != "shape-error":  # an example: editor focused, two actions
            await pilot.press("f4")
            await settle(pilot)
        assert isinstance(app.focused, CodeEditor)
        footer = screen_text(app).splitlines()[-1]
        assert "PgDn Page" in footer and "f5 Run" in footer


async def test_tab_on_arrival_does_not_break_line_1_and_says_the_editor_has_focus(make_app):
    """A learner pressed Tab to "get into" the editor (it has focus on arrival), indented line 1
    and got "IndentationError at line 1"."""
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        editor = app.screen.query_one(CodeEditor)
        assert app.focused is editor and editor.selection.end == (0, 0)
        starter = editor.text
        await pilot.press("tab")
        await settle(pilot)
        assert editor.text == starter
        compile(editor.text, "<starter>", "exec")  # still valid Python
        assert any("already in the editor" in n.message for n in app._notifications)
        await pilot.press(*"# ")  # typing goes in at once
        await settle(pilot)
        assert editor.text == "# " + starter


async def test_tab_still_indents_everywhere_python_allows_it(make_app):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        editor = await _editor(pilot, app)
        editor.replace_all("# note\nif x:\ny = 1\n")
        editor.move_cursor((0, 0))
        await pilot.press("tab")  # a comment before the first statement: harmless
        editor.move_cursor((2, 0))
        await pilot.press("tab")  # inside the block
        editor.move_cursor((1, 2))
        await pilot.press("tab")  # in the middle of the first statement, not before it
        await settle(pilot)
        assert editor.text == "    # note\nif   x:\n    y = 1\n"
        editor.replace_all("")
        await pilot.press("tab")  # an empty editor
        await settle(pilot)
        assert editor.text == "    "
        assert not any("already in the editor" in n.message for n in app._notifications)


# ------------------------------------------------------------------ is the editor focused? (issue 13 review)

FOCUSED = "editing: keys type into your code · Esc leaves"
BLURRED = "not editing: keys drive the lesson · Tab or click here to type"
ANSWERING = "editing: keys type into your answer · Esc leaves"


def _frame(app, kind: type[FramedBox] = CodeEditor) -> str:
    """The top frame line of the editor (or answer box) as the terminal shows it."""
    box = app.screen.query_one(kind)
    return screen_text(app).splitlines()[box.region.y]


async def _shows(pilot, app, focused: bool) -> None:
    await settle(pilot, 3)
    frame = _frame(app)
    assert (FOCUSED in frame, BLURRED in frame) == (focused, not focused), frame
    assert app.screen.query_one(CodeEditor).has_focus is focused


async def test_the_editor_frame_says_whether_keys_go_into_it(make_app):
    """Found by a new-user review: the editor has focus on arrival and nothing said so; a learner
    pressed Tab to "get into" it. At 80x24 its frame says so, and the reverse once focus leaves."""
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        editor = app.screen.query_one(CodeEditor)
        starter = editor.text
        await _shows(pilot, app, True)  # on arrival, before any key
        await pilot.press("escape")  # out to the lesson's page
        await _shows(pilot, app, False)
        assert app.focused is app.screen.query_one("#step-scroll")
        await pilot.press("x")  # keys no longer type into the code
        await settle(pilot)
        assert editor.text == starter
        await pilot.press("tab")  # and straight back
        await _shows(pilot, app, True)
        await pilot.press("x")
        await settle(pilot)
        assert editor.text == "x" + starter
        await pilot.click("#task")  # clicking the prose
        await _shows(pilot, app, False)
        await pilot.click(CodeEditor)
        await _shows(pilot, app, True)
        await pilot.press("f9")  # Reset asks first: the question has the keys, the editor says so
        await wait_for_text(pilot, app, "Yes")
        assert editor.border_title == BLURRED  # (it keeps its focus for when the dialog closes)
        await pilot.press("escape")
        await settle(pilot, 3)
        await _shows(pilot, app, True)  # back in the editor, and it says so



async def _goto(pilot, app, step_id: str) -> None:
    while app.screen.place.step.id != step_id:
        await pilot.press("f4")
        await settle(pilot)


@pytest.mark.parametrize("step_id", ["predict-sum", "why-shapes"])
async def test_a_quiz_answer_box_says_whether_keys_go_into_it(make_app, step_id):
    """Found by a new-user review: the code editor's frame said whether it had the keys, a quiz's
    answer box (a prediction, a free answer) said nothing, and Esc did nothing in it. At 80x24 its
    frame says so as the editor's does, and Esc leaves it for the page as the editor's does."""
    app = make_app(start_lesson="basics")
    async with app.run_test(size=SMALL) as pilot:
        await _goto(pilot, app, step_id)
        box = app.screen.query_one(AnswerBox)

        async def shows(focused: bool) -> None:
            await settle(pilot, 3)
            frame = _frame(app, AnswerBox)
            assert (ANSWERING in frame, BLURRED in frame) == (focused, not focused), frame
            assert box.has_focus is focused

        await shows(True)  # on arrival, before any key
        await pilot.press("a")
        await pilot.press("escape")  # out to the lesson's page
        await shows(False)
        assert app.focused is app.screen.query_one("#step-scroll")
        await pilot.press("b")  # keys no longer type into the answer
        await pilot.press("tab")  # and straight back
        await shows(True)
        await pilot.press("c")
        await settle(pilot)
        assert box.text == "ac"
        await pilot.press("tab")  # on to the button: the box says the keys left it
        await shows(False)
        await pilot.click(box)
        await shows(True)
        await pilot.press("ctrl+p")  # under a dialog the keys are the dialog's, and it says so
        await settle(pilot, 3)
        assert box.border_title == BLURRED
        await pilot.press("escape")
        await shows(True)


def _contrast(style) -> float:
    """WCAG contrast ratio of a rendered cell's text against its background."""
    def luminance(color) -> float:
        channels = [c / 255 for c in color.get_truecolor()]
        r, g, b = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    light, dark = sorted((luminance(style.color), luminance(style.bgcolor)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@pytest.mark.parametrize("lesson, step_id, kind, focused", [("exercises", None, CodeEditor, FOCUSED),
                                                            ("basics", "predict-sum", AnswerBox, ANSWERING)])
async def test_the_editor_frame_reads_in_every_theme(make_app, lesson, step_id, kind, focused):
    """The code keeps its own colours (monokai or github_light) whatever the app's theme, so a
    title in the theme's colours could vanish on it (a light theme's muted text on monokai); an
    answer box is drawn in the theme's colours. In every theme the palette offers, both titles of
    both read on what is under them, as drawn."""
    app = make_app(start_lesson=lesson)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        if step_id:
            await _goto(pilot, app, step_id)
        editor = app.screen.query_one(kind)
        page = app.screen.query_one("#step-scroll")
        seen = []
        for theme in sorted(app.available_themes):
            app.theme = theme
            await settle(pilot)
            if isinstance(editor, CodeEditor):  # the code's own colours follow the theme's lightness
                assert editor.theme == ("monokai" if app.current_theme.dark else "github_light"), theme
            for focus, words in ((editor, focused), (page, BLURRED)):
                focus.focus()
                await settle(pilot, 3)
                frame = _frame(app, kind)
                assert words in frame, (theme, frame)
                x = frame.index(words) + 2
                style = app.screen.get_style_at(x, editor.region.y)
                assert _contrast(style) >= 4.5, (theme, words, style)
                seen.append((theme, words, style.bgcolor))
        assert len(seen) >= 4 and any(style != seen[0][2] for _, _, style in seen)
        for focus, words in ((editor, focused), (page, BLURRED)):  # the theme switched, focus kept
            focus.focus()
            for theme in ("textual-dark", "textual-light", "solarized-dark", "textual-light"):
                app.theme = theme
                await settle(pilot, 3)
                frame = _frame(app, kind)
                style = app.screen.get_style_at(frame.index(words) + 2, editor.region.y)
                assert _contrast(style) >= 4.5, (theme, words, style)


async def test_help_scrolls_to_its_last_key_with_the_keyboard_at_80x24(make_app):
    """A new learner's F1 at 80x24 stopped at `^c Copy`: the list sat in a box taller than the
    dialog, so PageDown, End and Down never reached paste, undo, redo or select all. The list
    scrolls inside the dialog and has the keys from the start."""
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        await _editor(pilot, app)
        await pilot.press("f1")
        await settle(pilot)
        assert "Select all the code" not in screen_text(app)  # not all of it fits at 24 rows
        await pilot.press("end")
        text = await wait_for_text(pilot, app, "Select all the code")
        assert "Go to the end of the code" in text and "Close" in text
        await pilot.press("home")
        await wait_for_text(pilot, app, "A focused editor takes ordinary keys")
        await pilot.press("escape")
        await settle(pilot)
        assert "Select all the code" not in screen_text(app)


CODE = "import torch\n\ndef double(x):\n    y = x\n    return y\n"


async def _editor_with(pilot, app, code: str = CODE):
    from tutor.app.widgets.editor import CodeEditor

    await settle(pilot)
    editor = app.screen.query_one(CodeEditor)
    editor.replace_all(code)
    editor.focus()
    await settle(pilot)
    return editor


async def test_tab_and_shift_tab_indent_and_dedent_the_selected_lines(make_app):
    """Issue 28: Tab with lines 4-5 selected made them one indented blank line; Shift+Tab left
    the editor. Now they shift by a level, as one undo, the selection kept on the same text."""
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        editor = await _editor_with(pilot, app)
        editor.move_cursor((3, 0))
        await pilot.press("shift+down", "shift+end")  # lines 4 and 5, as the learner did
        await pilot.press("tab")
        await settle(pilot)
        assert editor.text == "import torch\n\ndef double(x):\n        y = x\n        return y\n"
        assert app.focused is editor
        assert editor.selected_text == "        y = x\n        return y"
        await pilot.press("shift+tab", "shift+tab")
        await settle(pilot)
        assert editor.text == "import torch\n\ndef double(x):\ny = x\nreturn y\n"
        assert app.focused is editor  # Shift+Tab with a selection dedents, it does not leave
        await pilot.press("tab")
        await settle(pilot)
        assert editor.text == CODE
        await pilot.press("ctrl+z")  # one undo per key
        await settle(pilot)
        assert editor.text == "import torch\n\ndef double(x):\ny = x\nreturn y\n"


async def test_a_selection_ending_at_a_line_start_leaves_that_line_and_blank_lines_stay_blank(make_app):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        editor = await _editor_with(pilot, app)
        editor.move_cursor((0, 0))
        await pilot.press("shift+down", "shift+down", "shift+down")  # lines 1-3, ends at line 4's start
        await pilot.press("tab")
        await settle(pilot)
        assert editor.text == "    import torch\n\n    def double(x):\n    y = x\n    return y\n"
        await pilot.press("shift+tab")
        await settle(pilot)
        assert editor.text == CODE


async def test_page_down_in_an_editor_longer_than_it_shows_scrolls_the_lesson(make_app):
    """Issue 28: PgDn in a focused editor whose code is longer than the editor paged the code,
    and keeping its cursor in view pulled the lesson back to the editor."""
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        editor = await _editor_with(pilot, app, "\n".join(f"x{i} = {i}" for i in range(60)) + "\n")
        scroll = app.screen.query_one("#step-scroll")
        await settle(pilot, 3)
        assert editor.max_scroll_y > 0  # the code is longer than the editor
        editor.move_cursor((0, 0))
        scroll.scroll_home(animate=False)
        await settle(pilot)
        top = scroll.scroll_y
        await pilot.press("pagedown")
        await settle(pilot, 3)
        assert scroll.scroll_y > top and app.focused is editor
        assert editor.selection.end == (0, 0)  # the cursor stays where it was
        await pilot.press("pagedown")
        await settle(pilot, 3)
        assert scroll.scroll_y == scroll.max_scroll_y  # on past the editor to the lesson's end
        assert "You reached the end of the pack." in screen_text(app)
        await pilot.press("pageup", "pageup", "pageup")
        await settle(pilot, 3)
        assert scroll.scroll_y == 0


async def test_editor_columns_at_80_is_what_the_editor_shows(make_app):
    """EDITOR_COLUMNS_AT_80 (the pack's code lines must fit it) against the real layout: a line
    that long shows whole with the cursor at its end (also beside a longer line: the editor
    scrolls sideways to keep a cell free right of the cursor once it can); two cells more scroll."""
    from tutor.app.widgets.editor import EDITOR_COLUMNS_AT_80

    width = EDITOR_COLUMNS_AT_80
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        lines = [f"{i:02d}" + "x" * (width - 2) for i in range(30)]
        lines[5] = "y" * (width + 2)
        editor = await _editor_with(pilot, app, "\n".join(lines) + "\n")
        await settle(pilot, 3)
        assert editor.max_scroll_y > 0 and app.screen.query_one("#step-scroll").max_scroll_y > 0
        editor.move_cursor((4, width))  # the end of a line exactly that long
        await settle(pilot, 3)
        assert editor.scroll_x == 0
        shown = next(line for line in screen_text(app).splitlines() if "04xxx" in line)
        assert "04" + "x" * (width - 2) in shown
        editor.move_cursor((5, width + 2))  # two cells more: the view moves sideways
        await settle(pilot, 3)
        assert editor.scroll_x > 0


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("gap", [0, 1, 3, 8])
async def test_keys_typed_as_a_new_step_appears_go_to_its_editor_in_order(make_app, language, gap):
    """Issue 52, item 4: keys typed within a frame or two of F4 went to the page (the new step's
    editor had no focus yet) or to the old step. They are held and handed to the new focus."""
    from tutor.app.widgets.editor import CodeEditor

    app = make_app(start_lesson="basics", language=language)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        app.post_message(events.Key("f4", None))  # to the example, whose editor takes the keys
        await burst(app, "# mine\n", gap)
        await settle(pilot, 6)
        editor = app.screen.query_one(CodeEditor)
        assert app.focused is editor
        assert editor.text.startswith("# mine\nimport torch"), editor.text


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_resuming_puts_the_cursor_back_where_it_was(make_app, tmp_path, language):
    """Issue 52, item 4: a resumed exercise had its cursor at line 1, column 0, so typing went
    before `import torch`. The cursor comes back where the learner left it, in the draft."""
    from tutor.app.widgets.editor import CodeEditor

    app = make_app(start_lesson="exercises", language=language)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+end", "up", "end")  # after `return x`
        await pilot.press(*" * 3")
        await settle(pilot)
        assert app.screen.query_one(CodeEditor).selection.end == (3, 16)
        await pilot.press("ctrl+q")
    again = make_app(data_dir=tmp_path, language=language)
    async with again.run_test(size=SMALL) as pilot:
        await settle(pilot)
        editor = again.screen.query_one(CodeEditor)
        assert again.focused is editor and editor.selection.end == (3, 16)
        await pilot.press("backspace", "2")
        await settle(pilot)
        assert editor.text.splitlines()[3] == "    return x * 2"
        assert editor.text.startswith("import torch")


async def test_a_cursor_kept_for_longer_code_stays_inside_the_code_now(make_app, tmp_path):
    """The code was reset (or the kept place is not a place at all): the cursor stays inside."""
    from tutor.app.widgets.editor import CodeEditor
    from tutor.record.progress import ProgressStore

    store = ProgressStore.open(tmp_path)
    store.preferences.set("cursor:mini/exercises/double", "40,99")
    store.close()
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        assert app.screen.query_one(CodeEditor).selection.end == (4, 0)  # the code's last line (empty)
    store = ProgressStore.open(tmp_path)
    store.preferences.set("cursor:mini/exercises/double", "not a place")
    store.close()
    again = make_app(data_dir=tmp_path)
    async with again.run_test(size=SMALL) as pilot:
        await settle(pilot)
        assert again.screen.query_one(CodeEditor).selection.end == (0, 0)  # as if none were kept


def _pasted(text: str) -> list[events.Key]:
    """``text`` as a terminal without bracketed paste types it: one read, so one time for all
    of its keys (``textual_compat.stamp_reads``), a line break as Enter."""
    keys = [key_event(char) for char in text]
    for key in keys:
        key.time = keys[0].time
    return keys


PASTED = "def double(x):\n    if x is None:\n        return 0\n    return x * 2\n\nprint(double(21))\n"


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_a_paste_typed_as_keys_keeps_its_indentation_and_undoes_as_one_step(make_app, language):
    """Issue 52, item 1: each pasted line took the auto-indent of the line before it (a
    staircase), and ctrl+z undid the paste one line at a time. Typed by hand, the same keys
    still indent."""
    from tutor.app.widgets.editor import CodeEditor

    app = make_app(start_lesson="exercises", language=language)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        editor = app.screen.query_one(CodeEditor)
        await pilot.press("ctrl+end")
        await pilot.press(*"# mine")  # typed: its own undo step
        await settle(pilot)
        for key in _pasted(PASTED):
            app.post_message(key)
        await settle(pilot, 4)
        starter = "import torch\n\ndef double(x):\n    return x\n"
        assert editor.text == starter + "# mine" + PASTED
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert editor.text == starter + "# mine"
        await pilot.press("ctrl+y")  # redo brings all of it back at once
        await settle(pilot)
        assert editor.text == starter + "# mine" + PASTED
        editor.replace_all("")
        await pilot.press(*"if x:", "enter", *"y = 1")  # typed: Enter still indents
        await settle(pilot)
        assert editor.text == "if x:\n    y = 1"


def test_keys_of_one_read_share_its_time():
    """The parser's keys from one read carry that read's time; keys of the next read their own."""
    import time

    from textual._xterm_parser import XTermParser

    from tutor.app import textual_compat

    assert textual_compat.stamp_reads()
    parser = XTermParser()
    first = [m for m in parser.feed("ab\rc") if isinstance(m, events.Key)]
    time.sleep(0.02)
    second = [m for m in parser.feed("d") if isinstance(m, events.Key)]
    assert [k.key for k in first] == ["a", "b", "enter", "c"]
    assert len({k.time for k in first}) == 1 and second[0].time - first[0].time >= 0.02


@pytest.mark.parametrize("typed, expected", [
    ("def f(x):\nif x:\nreturn(x)\nz", "def f(x):\n    if x:\n        return(x)\n    z"),
    ("def f(x):\nif x:\nraise ValueError\nz", "def f(x):\n    if x:\n        raise ValueError\n    z"),
    ("for i in x:\nif i:\ncontinue\nbreak\nz", "for i in x:\n    if i:\n        continue\n    break\nz"),
    ("def f(x):\nreturn_value = 1\nz", "def f(x):\n    return_value = 1\n    z"),  # not `return`
    ("try:\npass\nfinally:\npass", "try:\n    pass\nfinally:\n    pass"),
])
async def test_enter_dedents_after_the_words_that_end_a_block_and_only_those(make_app, typed, expected):
    """Issue 52, item 2: Enter after `return ...` dedented while F1 said only "Enter keeps the
    indentation": the rule (one level less after return, pass, raise, break, continue) is now
    the same for `return(x)` as for `return x`, and F1 says it."""
    from tutor.app.widgets.editor import CodeEditor

    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        editor = app.screen.query_one(CodeEditor)
        editor.replace_all("")
        await settle(pilot)
        await pilot.press(*[("enter" if c == "\n" else c) for c in typed])
        await settle(pilot)
        assert editor.text == expected


@pytest.mark.parametrize("language, said", [
    ("en", "one level less after a line starting with return, pass, raise, break or continue"),
    ("zh", "在以 return、pass、raise、break 或 continue 开头的行之后少缩进一级"),
])
async def test_f1_says_when_enter_dedents_and_what_a_paste_does(make_app, language, said):
    app = make_app(start_lesson="exercises", language=language)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await settle(pilot, 3)
        from textual.widgets import Static

        body = "".join(str(w.render()) for w in app.screen.query(Static))
        assert said in body
        assert {"en": "Pasted code keeps its own indentation", "zh": "粘贴的代码保留它自己的缩进"}[language] in body


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_f1s_scrollbar_has_a_track_of_its_own(make_app, language):
    """Issue 52, item 9: F1 showed stray "▁▁", "▇▇" inside the key list: its scrollbar's thumb,
    drawn in partial blocks on a track the colour of the dialog. The track now shows."""
    app = make_app(start_lesson="exercises", language=language)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await settle(pilot, 3)
        scroll = app.screen.query_one("#help-scroll")
        assert scroll.max_scroll_y > 0  # it scrolls at 80x24: the bar is drawn
        dialog = scroll.parent
        styles = scroll.styles
        assert styles.scrollbar_size_vertical == 1
        track = styles.scrollbar_background
        assert track.a > 0 and dialog.background_colors[1].blend(track, track.a) != dialog.background_colors[1]
