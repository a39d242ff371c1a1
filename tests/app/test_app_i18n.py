"""The UI's own strings: one table, English complete, Chinese complete, other languages falling
back to English; and no learner-visible English sentence built outside the table."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest

from tutor.words import i18n

TUTOR = Path(i18n.__file__).parents[1]
APP = TUTOR / "app"


def test_every_key_the_app_uses_exists_in_english():
    used = set()
    for path in APP.rglob("*.py"):
        used |= set(re.findall(r"""\b(?:t|label)\(\s*f?["']([a-z_.0-9]+)["']""", path.read_text()))
    used = {key for key in used if not key.endswith(".")}
    missing = sorted(used - set(i18n.TABLE["en"]))
    assert not missing, f"keys used but not in the English table: {missing}"


def _fields(template: str) -> list[tuple[str, str | None, str | None]]:
    """The format fields of a template: (name, conversion, format spec), sorted."""
    return sorted((name, conversion, spec) for _text, name, spec, conversion in string.Formatter().parse(template)
                  if name is not None)


def test_every_english_key_has_chinese():
    missing = sorted(set(i18n.TABLE["en"]) - set(i18n.TABLE["zh"]))
    assert not missing, f"English keys without a zh entry: {missing}"


def test_no_chinese_key_that_english_lacks():
    extra = sorted(set(i18n.TABLE["zh"]) - set(i18n.TABLE["en"]))
    assert not extra, f"zh keys English does not have (a typo, or a key removed from English): {extra}"


@pytest.mark.parametrize("code", [code for code in i18n.TABLE if code != "en"])
def test_translations_keep_the_format_fields(code):
    differ = {key: (_fields(i18n.TABLE["en"][key]), _fields(text)) for key, text in i18n.TABLE[code].items()
              if key in i18n.TABLE["en"] and _fields(i18n.TABLE["en"][key]) != _fields(text)}
    assert not differ, f"{code}: keys whose format fields differ from English (en, {code}): {differ}"


@pytest.mark.parametrize("code", [code for code in i18n.TABLE if code != "en"])
def test_argparse_translations_keep_its_placeholders(code):
    """argparse fills its sentences with %-formatting after asking for them (tutor/cli/main.py):
    a translation must keep each placeholder, or a usage error would raise instead of printing."""
    placeholder = re.compile(r"%(?:\([a-z_]+\))?[srd%]")
    differ = {key: text for key, text in i18n.TABLE[code].items() if key.startswith("argparse.")
              and sorted(placeholder.findall(text)) != sorted(placeholder.findall(i18n.TABLE["en"][key]))}
    assert not differ, f"{code}: argparse sentences whose %-placeholders differ from English: {differ}"


def test_chinese_is_chinese_and_keeps_key_names():
    """A zh entry that is English text copied over would pass the parity test: each one with a
    word of English must hold Chinese too (names that stay as they are excepted), and the key
    names (F4, Esc, Tab, ctrl+f) the English names are still there for the learner to press."""
    same_everywhere = {"app.title", "isolation.bwrap"}  # names: the tool's, and bubblewrap's program
    for key, text in i18n.TABLE["zh"].items():
        words = re.sub(r"\{[^}]*\}", "", i18n.TABLE["en"][key])  # the English without its fields
        if key in same_everywhere or not re.search(r"[A-Za-z]{2,}", words):
            continue
        assert re.search(r"[\u4e00-\u9fff]", text), f"zh {key!r} has no Chinese: {text!r}"
        for name in re.findall(r"\b(?:F\d+|Esc|Tab|Enter|Backspace|ctrl\+\w|Ctrl\+P)\b", i18n.TABLE["en"][key]):
            assert name in text, f"zh {key!r} lost the key name {name!r}: {text!r}"


def test_missing_translation_falls_back_to_english_and_formats(monkeypatch):
    monkeypatch.setitem(i18n.TABLE["en"], "test.only", "{n} of English")
    assert i18n.set_language("zh-CN") == "zh"
    assert i18n.t("key.help") == "帮助"
    assert i18n.t("exercise.failed", passed=1, total=3) == "1/3 项检查通过。"
    assert i18n.t("test.only", n=2) == "2 of English"


def test_unknown_language_uses_english_and_unknown_key_is_an_error():
    assert i18n.set_language("xx") == "en"
    with pytest.raises(KeyError):
        i18n.t("no.such.key")


def test_a_label_made_in_one_language_shows_in_the_one_in_use():
    made = i18n.label("key.help")  # as a binding's description is made, at import
    assert made == "Help"
    i18n.set_language("zh")
    assert i18n.relabel(made) == "帮助"
    assert i18n.relabel("plain text") == "plain text"


@pytest.mark.parametrize("environ, expected", [
    ({"LANG": "zh_CN.UTF-8"}, "zh"),
    ({"LANG": "zh_TW.UTF-8"}, "zh"),
    ({"LANG": "en_US.UTF-8"}, "en"),
    ({"LANG": "C.UTF-8"}, None),
    ({}, None),
    ({"LANG": "fr_FR.UTF-8"}, None),
    # gettext's order: LANGUAGE (a list), then LC_ALL, LC_MESSAGES, LANG
    ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_CN.UTF-8"}, "zh"),
    ({"LANG": "zh_CN.UTF-8", "LC_ALL": "en_US.UTF-8"}, "en"),
    ({"LC_ALL": "zh_CN.UTF-8", "LC_MESSAGES": "en_US.UTF-8"}, "zh"),
    ({"LANG": "en_US.UTF-8", "LANGUAGE": "fr:zh_CN:en"}, "zh"),
    ({"LANG": "zh_CN.UTF-8", "LANGUAGE": "en"}, "en"),
    # a C locale switches the LANGUAGE list off, as GNU gettext does
    ({"LANG": "C", "LANGUAGE": "zh_CN"}, None),
    ({"LANG": "zh_CN.UTF-8@cjknarrow"}, "zh"),
])
def test_the_system_locale_picks_the_ui_language(environ, expected):
    assert i18n.locale_language(environ) == expected


# ---------------------------------------------------------------- English built outside the table

#: Calls whose string arguments reach the screen, and which of their arguments do.
_SHOWN_CALLS = {"notify", "Static", "Label", "Button", "KeyButton", "Binding", "SystemCommand", "Text",
                "append", "update", "ConfirmScreen", "of", "assemble", "Markdown", "Option", "Checkbox",
                "RadioButton", "Input", "add_column", "add_row", "TopBar", "show", "Content", "Rule",
                "EngineUnavailable", "_Entry"}
#: Keyword arguments that are never shown (ids, classes, styles...).
_NOT_SHOWN = {"id", "classes", "style", "severity", "variant", "key_display", "markup", "name", "justify",
              "overflow", "end", "key", "header_style", "action", "language", "theme"}
#: (file under tutor/app, literal) pairs that must stay as they are, each with the reason.
_ALLOWED = {
    ("markdown_render.py", "center"), ("markdown_render.py", "right"), ("markdown_render.py", "left"),  # table alignments, not text
    ("widgets/steps/quiz_predict.py", "```python\n"),  # a code fence for the learner's own output
}


def _strings(node: ast.AST):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node
    elif isinstance(node, ast.JoinedStr):
        for part in node.values:
            yield from _strings(part)
    elif isinstance(node, ast.BinOp):
        yield from _strings(node.left)
        yield from _strings(node.right)
    elif isinstance(node, ast.IfExp):
        yield from _strings(node.body)
        yield from _strings(node.orelse)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            yield from _strings(value)
    elif isinstance(node, (ast.Tuple, ast.List)):
        for value in node.elts:
            yield from _strings(value)


def _called(func: ast.AST) -> str | None:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def english_outside_the_table(root: Path) -> list[str]:
    """String literals with an English word passed where the screen shows them, file:line."""
    found = []
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call) or _called(node.func) not in _SHOWN_CALLS:
                continue
            name = _called(node.func)
            shown = list(node.args)
            if name in ("Binding", "_Entry"):
                shown = shown[2:3]  # key, action / how the key is shown, then the description
            elif name in ("append", "Text", "of", "update", "Static", "Label", "show"):
                shown = shown[:1] if name != "show" else shown
            shown += [kw.value for kw in node.keywords if kw.arg not in _NOT_SHOWN]
            for argument in shown:
                for literal in _strings(argument):
                    if re.search(r"[A-Za-z]{2,}", literal.value) and (where, literal.value) not in _ALLOWED:
                        found.append(f"{where}:{literal.lineno}: {name}({literal.value!r})")
    return found


def test_no_english_shown_from_outside_the_table():
    found = english_outside_the_table(APP)
    assert not found, "learner-visible English built outside tutor/words/i18n.py:\n" + "\n".join(found)


def test_the_scan_finds_english_where_it_is_shown(tmp_path):
    """The scan above can fail: each way a literal reaches the screen is caught."""
    (tmp_path / "widget.py").write_text(
        "self.notify('Saved your work')\n"
        "Binding('f2', 'home', 'Contents')\n"
        "Static(f'{n} checks passed', classes='x')\n"
        "Text('Run ' + name, style='bold')\n"
        "SystemCommand(t('cmd.help'), 'Show every key', cb)\n"
        "Static('', id='review-top', classes='topbar')\n"  # not shown: an id and classes
        "Binding('f2', 'home', t('key.home'))\n"
    )
    found = english_outside_the_table(tmp_path)
    assert [line.split(":", 2)[1] for line in found] == ["1", "2", "3", "4", "5"], found


# ---------------------------------------------------------------- the commands and the check engine
#
# The learner-facing commands print and raise their sentences; the check engine (the sandbox's
# child, which cannot import the table) raises Failed and makes results with a said of
# tutor/words/engine.py. A string literal with an English word in any of those places is a
# sentence built outside the table.

#: The learner-facing commands (check, run, doctor, open, progress, quiz, reset, review, serve; the
#: usage errors of every command) and, in grading.py, handin: file -> the functions scanned (None: all).
_COMMANDS = {"cli/checking.py": None, "cli/sandbox.py": None, "cli/app.py": None, "cli/review.py": None,
             "cli/common.py": None, "cli/main.py": None, "cli/serve.py": None, "cli/quiz.py": None,
             "cli/grading.py": {"cmd_handin", "handin_summary"}}
#: call -> which positional arguments it shows (None: all); keyword arguments are shown unless listed below.
_SAYING = {"print": None, "write": None, "input": None, "UsageError": None, "fail_usage": None,
           "Failed": 1, "Tampered": None, "_result": slice(2, 3)}
#: Keyword arguments a learner does not read as a sentence of ours: where output goes, and a check's
#: ``expected``/``got`` (values as the check saw them; see docs/architecture.md), its data and traceback.
_NOT_SAID = {"file", "flush", "end", "sep", "expected", "got", "data", "detail"}


def _more_strings(node: ast.AST):
    yield from _strings(node)
    if isinstance(node, ast.JoinedStr):  # f"{'a sentence' if x else ''}"
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                yield from _strings(part.value)


def english_said_outside_the_table(root: Path, files: dict[str, set[str] | None]) -> list[str]:
    """String literals with an English word that a command prints or raises, or a check reports."""
    found = []
    for name, functions in files.items():
        path = root / name
        tree = ast.parse(path.read_text(), str(path))
        scopes = [tree] if functions is None else [node for node in ast.walk(tree)
                                                   if isinstance(node, ast.FunctionDef) and node.name in functions]
        for scope in scopes:
            for node in ast.walk(scope):
                if not isinstance(node, ast.Call) or _called(node.func) not in _SAYING:
                    continue
                called = _called(node.func)
                which = _SAYING[called]
                shown = list(node.args) if which is None else list(node.args[:which] if isinstance(which, int)
                                                                    else node.args[which])
                shown += [kw.value for kw in node.keywords if kw.arg not in _NOT_SAID]
                for argument in shown:
                    for literal in _more_strings(argument):
                        if re.search(r"[A-Za-z]{2,}", literal.value):
                            found.append(f"{name}:{literal.lineno}: {called}({literal.value!r})")
    return found


def _engine_files() -> dict[str, set[str] | None]:
    files = {path.relative_to(TUTOR).as_posix(): None for path in sorted((TUTOR / "child" / "checks").rglob("*.py"))}
    assert len(files) > 10, "the check engine's files moved: the scan would read none"
    return files


def test_no_english_said_by_the_commands_or_the_checks_outside_the_table():
    found = english_said_outside_the_table(TUTOR, {**_COMMANDS, **_engine_files()})
    assert not found, "learner-visible English built outside the table:\n" + "\n".join(found)


def test_the_scan_finds_english_the_commands_and_checks_say(tmp_path):
    """The scan above can fail: each way a command or a check says a literal is caught."""
    (tmp_path / "command.py").write_text(
        "print('Nothing changed.')\n"
        "raise UsageError(f'--at {value!r} is out of range')\n"
        "sys.stderr.write(f\"{'interrupted' if x else ''}\\n\")\n"
        "answer = input('Forget it? [y/N] ')\n"
        "raise Failed(f'expected a tensor, got {got}', expected='a tensor')\n"
        "return _result(check, 'error', 'not run: the time ran out', internal=True)\n"
        "raise Tampered(f'a call the checker knows to succeed raised {name}')\n"
        "print(t('cli.reset.unchanged'), file=sys.stderr)\n"  # through the table: not found
        "raise Failed(words.say('checks.shape', expected=a, got=b), expected='(4, 8)')\n"
        "return _result(check, 'passed', summary)\n"
    )
    (tmp_path / "grading.py").write_text(
        "def cmd_grade():\n    print('Graded the class')\n"  # an instructor's command: not scanned
        "def cmd_handin():\n    raise UsageError('--learner must not be empty')\n")
    found = english_said_outside_the_table(tmp_path, {"command.py": None, "grading.py": {"cmd_handin"}})
    lines = sorted({tuple(line.split(":", 2)[:2]) for line in found})
    assert lines == [("command.py", str(n)) for n in range(1, 8)] + [("grading.py", "4")], found
