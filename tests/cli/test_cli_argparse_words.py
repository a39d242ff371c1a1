"""argparse's own sentences in the tutor's language, without patching argparse: each message it
makes in English is found by its template (``main.ARGPARSE_WORDS``) and said from the table."""

from __future__ import annotations

import argparse
import gettext
import re

import pytest

from tutor.cli import main as cli_main
from tutor.words import i18n

#: Fields as argparse fills them, for each template (a %r field gets argparse's repr already).
SAMPLE = {"prog": "torch-tutor", "message": "expected one argument", "value": "'walls'",
          "choices": "'auto', 'none'", "argument_name": "--isolation", "type": "float", "option": "--da",
          "matches": "--data-dir, --dark", "filename": "x.yaml", "error": "[Errno 2] No such file"}


def _english(template: str) -> str:
    """``template`` formatted as argparse formats it (a %r field's value is a repr already)."""
    named = re.sub(r"%\((\w+)\)r", r"%(\1)s", template)
    return named % SAMPLE if "%(" in named else named.replace("%r", "%s").replace("%s", "EXERCISE, FILE")


@pytest.mark.parametrize("english", [e for e in cli_main.ARGPARSE_WORDS if e != "usage: "])
def test_each_of_argparses_sentences_is_said_in_chinese_with_its_fields(english):
    message = _english(english)
    with i18n.speaking("zh"):
        said = cli_main._argparse_said(message)
    key = cli_main.ARGPARSE_WORDS[english]
    with i18n.speaking("zh"):  # "expected %s argument(s)" is a plural: its zh form for the number
        template = i18n.t(key, n=2) if key in i18n.PLURALS else i18n.t(key)
    chinese = re.sub(r"%\((\w+)\)r", r"%(\1)s", template)
    fields = dict(SAMPLE, message="需要一个值")  # a sentence inside a sentence is said too
    wanted = chinese % fields if "%(" in chinese else chinese.replace("%r", "%s").replace("%s", "EXERCISE, FILE")
    assert said == wanted, (message, said)
    assert cli_main._argparse_said(message) == message  # English: as argparse made it


def test_a_sentence_argparse_does_not_know_and_a_hostile_field_stay_as_they_came():
    with i18n.speaking("zh"):
        assert cli_main._argparse_said("something argparse 3.99 says") == "something argparse 3.99 says"
        hostile = "unrecognized arguments: %(prog)s {0.__class__} %s"
        assert cli_main._argparse_said(hostile) == "无法识别的参数：%(prog)s {0.__class__} %s"


def test_argparse_itself_is_left_as_it_is(tmp_path, capsys):
    """No private name of argparse is replaced, even while a Chinese usage error is made."""
    seen = []
    real_error = cli_main.Parser.error

    def error(self, message):
        seen.append((argparse._, argparse.ngettext))  # type: ignore[attr-defined]
        real_error(self, message)

    cli_main.Parser.error = error
    try:
        with pytest.raises(SystemExit):
            cli_main.main(["--language", "zh", "--data-dir", str(tmp_path), "progress", "--bogus"])
    finally:
        cli_main.Parser.error = real_error
    assert seen == [(gettext.gettext, gettext.ngettext)]
    assert capsys.readouterr().err.startswith("用法：torch-tutor ")
