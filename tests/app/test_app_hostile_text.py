"""A stranger's pack, exception or paste must never write to the learner's terminal (issue 11).

Each attack is the real one: OSC 0 sets the terminal's title, OSC 52 writes its clipboard. What
the app would write to the terminal is rendered and searched for them; the text must still be
there, made visible (ESC as the control picture ␛).
"""

from __future__ import annotations

import dataclasses
import textwrap

from app_support import MINI, SIZE, hostile, screen_text, settle, terminal_bytes
from tutor.app.widgets.editor import CodeEditor
from tutor.cli.main import main

OSC_TITLE = "\x1b]0;pwned\x07"
OSC_CLIP = "\x1b]52;c;cm0gLXJmIH4=\x07"


def test_attack_strings_are_hostile_until_neutralised():
    from tutor.words.safe_text import neutralize

    assert hostile(OSC_TITLE) and hostile(OSC_CLIP)
    assert not hostile(neutralize(OSC_TITLE + OSC_CLIP))
    assert neutralize("a\tb\nc") == "a\tb\nc"
    assert neutralize(OSC_TITLE) == "␛]0;pwned␇"


def _hostile_pack(tmp_path, title: str) -> str:
    pack = tmp_path / "evil"
    pack.mkdir()
    (pack / "pack.yaml").write_text(textwrap.dedent(f"""\
        format_version: 1
        id: evil
        title: "{title}"
        version: 1.0.0
        lessons:
          - id: one
            title: One
            steps:
              - id: p
                kind: prose
                body: "fine"
        """), encoding="utf-8")
    return str(pack)


def test_validate_rejects_control_characters_with_their_place(tmp_path, capsys):
    pack = _hostile_pack(tmp_path, r"Evil\e]0;pwned\a\e]52;c;cm0gLXJmIH4=\a")
    assert main(["validate", "--no-run", pack]) == 1
    out = capsys.readouterr()
    assert "pack.yaml:3:8:" in out.out and "control character U+001B (ESC)" in out.out
    assert not hostile(out.out + out.err)


def test_list_neutralises_a_folder_name(tmp_path, capsys):
    folder = tmp_path / f"x{OSC_TITLE}{OSC_CLIP}"
    folder.mkdir()
    (folder / "pack.yaml").write_text("format_version: 1\n", encoding="utf-8")  # broken: listed by path
    assert main(["--data-dir", str(tmp_path / "data"), "--pack", str(folder), "list"]) == 0
    out = capsys.readouterr()
    assert "broken pack" in out.out and "␛]52;c;" in out.out
    assert not hostile(out.out + out.err)


def test_run_neutralises_an_exception_message(tmp_path, capsys):
    script = tmp_path / "boom.py"
    script.write_text('raise ValueError("x" + chr(27) + "]52;c;cm0gLXJmIH4=" + chr(7) + chr(27) + "]0;pwned" + chr(7))\n',
                      encoding="utf-8")
    assert main(["--data-dir", str(tmp_path / "data"), "run", str(script)]) == 1
    out = capsys.readouterr()
    assert "ValueError" in out.out + out.err and "␛]52;c;" in out.out + out.err
    assert not hostile(out.out + out.err)


async def test_pack_text_reaches_the_screen_inert(make_app, mini_pack):
    """Defence in depth: the loader now refuses such a pack, but a pack object that holds
    control characters anyway (an old cache, a future loader bug) is still drawn inert."""
    lesson = mini_pack.lessons[0]
    prose = dataclasses.replace(lesson.steps[0], title=f"Welcome{OSC_TITLE}",
                                body=f"# Hi{OSC_CLIP}\n\ntext {OSC_TITLE}")
    evil = dataclasses.replace(mini_pack, title=f"Mini{OSC_CLIP}",
                               lessons=[dataclasses.replace(lesson, title=f"Basics{OSC_TITLE}",
                                                            steps=[prose, *lesson.steps[1:]]),
                                        *mini_pack.lessons[1:]])
    app = make_app(start_lesson="basics", resume=True, pack=evil)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "Welcome" in screen_text(app)
        assert not hostile(terminal_bytes(app))
        await pilot.press("f2")  # the contents, with the pack's title
        await settle(pilot, 3)
        assert "Mini" in screen_text(app)
        assert not hostile(terminal_bytes(app))


async def test_exception_message_after_run_is_inert(make_app, sandbox):
    app = make_app(start_lesson="basics", sandbox=sandbox)
    async with app.run_test(size=SIZE) as pilot:
        while app.screen.place.step.id != "shape-error":
            await pilot.press("f4")
            await settle(pilot)
        app.screen.query_one(CodeEditor).replace_all(
            'raise ValueError("x" + chr(27) + "]52;c;cm0gLXJmIH4=" + chr(7))\n')
        await pilot.press("f5")
        await app.workers.wait_for_complete()
        await settle(pilot, 3)
        text = screen_text(app)
        assert "ValueError" in text and "␛]52;c;" in text
        assert not hostile(terminal_bytes(app))


async def test_escape_pasted_in_the_editor_is_inert(make_app):
    app = make_app(start_lesson="exercises")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        editor = app.screen.query_one(CodeEditor)
        editor.focus()
        from textual import events

        editor.post_message(events.Paste(f"# {OSC_TITLE}{OSC_CLIP}\n"))
        await settle(pilot, 3)
        await pilot.press("escape")  # a raw ESC key typed: never text
        await settle(pilot)
        assert "\x1b" not in editor.text and "␛]0;pwned" in editor.text
        assert not hostile(terminal_bytes(app))


def test_json_output_stays_valid_and_inert(tmp_path, capsys):
    import json

    folder = tmp_path / f"x{OSC_TITLE}\u202e\x9b"
    folder.mkdir()
    (folder / "pack.yaml").write_text("format_version: 1\n", encoding="utf-8")
    assert main(["--data-dir", str(tmp_path / "data"), "--pack", str(folder), "list", "--json"]) == 0
    out = capsys.readouterr().out
    assert not hostile(out) and "\u202e" not in out
    rows = json.loads(out)
    assert any(row["path"] == str(folder) for row in rows)  # the real name, once decoded


async def test_a_lesson_title_in_brackets_is_shown_as_written_on_the_contents(make_app, mini_pack):
    """The contents' cells are text, not Rich markup: a title such as "[bold]x[/]" or one with a
    stray "[/y]" (a closing tag Rich refuses) is drawn as written, and the contents still open."""
    lesson = mini_pack.lessons[0]
    odd = dataclasses.replace(mini_pack, lessons=[dataclasses.replace(lesson, title="Masks [red]x[/] and [/y] tags"),
                                                  *mini_pack.lessons[1:]])
    app = make_app(resume=False, pack=odd)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "Masks [red]x[/] and [/y] tags" in screen_text(app)
