"""Entry point of the ``torch-tutor`` command."""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from typing import Any, Callable, Iterable, NoReturn, TextIO

from tutor import __version__
from tutor.errors import TutorError

#: Every module with a ``register(subparsers)`` function, in the order their commands are listed
#: (tests/cli/test_command_modules.py keeps the list whole).
COMMAND_MODULES = (
    "tutor.cli.packs",
    "tutor.cli.settings",
    "tutor.cli.checking",
    "tutor.cli.quiz",
    "tutor.cli.author",
    "tutor.cli.grading",
    "tutor.cli.autograder",
    "tutor.cli.app",
    "tutor.cli.review",
    "tutor.cli.sandbox",
    "tutor.cli.serve",
)

EXIT_CODES = """exit codes:
  0  success
  1  problems found (invalid pack, failed checks, failed run)
  2  usage error (bad arguments, unknown pack, bad config)"""


def _helped(text: str | None) -> str | None:
    """A help text in the tutor's language while a command line is parsed (``--help``): the
    table's ``help.*`` entry whose English it is; as it is otherwise (and where the table has no
    such entry: the instructors' commands keep their English). ``{folder}`` in it is the data
    folder's default on this machine."""
    if not text:
        return text
    said = text
    if _SPEAKING is not None:
        _SPEAKING.speak()
        from tutor.words.i18n import TABLE, t

        key = _SPEAKING.help_keys.get(text)
        if key is None:
            _SPEAKING.help_keys.update({english: name for name, english in TABLE["en"].items()
                                        if name.startswith("help.")})
            key = _SPEAKING.help_keys.get(text)
        said = t(key) if key is not None else text
    if "{folder}" in said:
        from pathlib import Path

        from tutor.settings.paths import default_data_dir

        folder, home = str(default_data_dir()), str(Path.home())
        said = said.replace("{folder}", "~" + folder[len(home):] if folder.startswith(home + "/") else folder)
    return said


def _cells(text: str) -> int:
    from tutor.cli.common import cells

    return cells(text)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's help, each option's and command's help text through :func:`_helped`; Chinese
    wraps between characters, by cell width (a CJK character is two cells), and its headings
    end in a full-width colon. Text without wide characters is formatted as argparse does."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        return _helped(action.help)

    def add_usage(self, usage: str | None, actions: Iterable[argparse.Action], groups: Iterable[Any],
                  prefix: str | None = None) -> None:
        """argparse's ``prefix`` ("usage: "), in the tutor's language."""
        super().add_usage(usage, actions, groups, _argparse_said("usage: ") if prefix is None else prefix)

    def _split_lines(self, text: str, width: int) -> list[str]:
        if _cells(text) == len(text):
            return super()._split_lines(text, width)
        from tutor.app.cjk_wrap import divide_line  # CJK: between characters, on kinsoku rules

        text = " ".join(text.split())
        cuts = [0, *divide_line(text, max(1, width)), len(text)]
        return [piece for a, b in zip(cuts, cuts[1:]) if (piece := text[a:b].strip())]

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        """A description or epilog: its own line breaks kept (the exit codes' list), and a line
        wider than the terminal broken between words, going on under its own indentation."""
        lines = []
        for line in text.splitlines():
            lead = len(line) - len(line.lstrip())
            if _cells(indent + line) <= width:
                lines.append(indent + line)
                continue
            for piece in self._split_lines(line, width - len(indent) - lead):
                lines.append(indent + " " * lead + piece)
        return "\n".join(lines)

    def format_help(self) -> str:
        return re.sub(r"^(\s*\S.*[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]):$", r"\1：", super().format_help(), flags=re.M)


class Parser(argparse.ArgumentParser):
    """argparse with our epilog on every command and usage errors on exit code 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        kwargs.setdefault("epilog", EXIT_CODES)
        super().__init__(*args, **kwargs)

    def format_help(self) -> str:
        """The help in the tutor's language: the description, the epilog and the groups' titles
        (argparse names its own groups when the parser is made, before the language is known)."""
        saved = self.description, self.epilog, [(group, group.title) for group in self._action_groups]
        self.description, self.epilog = _helped(self.description), _helped(self.epilog)
        for group in self._action_groups:
            group.title = _helped(group.title)
        try:
            return super().format_help()
        finally:
            self.description, self.epilog = saved[0], saved[1]
            for group, title in saved[2]:
                group.title = title

    def error(self, message: str) -> NoReturn:
        """A usage error, in the tutor's language: argparse's sentence in ``message`` is found by
        its English (:data:`ARGPARSE_WORDS`) and said again from the table, fields as they came."""
        self.print_usage(sys.stderr)
        self.exit(2, _argparse_said("%(prog)s: error: %(message)s\n") % {"prog": self.prog,
                                                                          "message": _argparse_said(message)})


SANDBOX_MODES = ("auto", "fork", "spawn")
SANDBOX_MODE_HELP = "how the sandbox starts each run (the sandbox_mode setting)"
DATA_DIR_HELP = "where progress and drafts are kept (the data_dir setting; default: {folder})"
LANGUAGE_HELP = "the language the tutor speaks: en, zh... (the language setting; default: the system locale)"


#: argparse's sentences a usage error shows, by their English text (its gettext msgids): argparse
#: makes each message in English; ``Parser.error`` finds which sentence it is and says it again
#: from the table (``HelpFormatter.add_usage`` the usage's prefix).
ARGPARSE_WORDS = {
    "usage: ": "argparse.usage",
    "%(prog)s: error: %(message)s\n": "argparse.error",
    "the following arguments are required: %s": "argparse.required",
    "invalid choice: %(value)r (choose from %(choices)s)": "argparse.invalid_choice",
    "unrecognized arguments: %s": "argparse.unrecognized",
    "argument %(argument_name)s: %(message)s": "argparse.argument",
    "expected one argument": "argparse.expected_one",
    "expected at most one argument": "argparse.expected_at_most_one",
    "expected at least one argument": "argparse.expected_at_least_one",
    "expected %s argument": "argparse.expected_n",
    "expected %s arguments": "argparse.expected_n",  # the plural's two forms (i18n.PLURALS)
    "invalid %(type)s value: %(value)r": "argparse.invalid_value",
    "ambiguous option: %(option)s could match %(matches)s": "argparse.ambiguous",
    "one of the arguments %s is required": "argparse.one_required",
    "not allowed with argument %s": "argparse.not_allowed_with",
    "ignored explicit argument %r": "argparse.ignored_explicit",
    "can't open '%(filename)s': %(error)s": "argparse.cannot_open",
}
_FIELD = re.compile(r"%(?:\((\w+)\))?[sr]")


def _argparse_pattern(english: str) -> re.Pattern[str]:
    """A regex matching the sentence ``english`` as argparse formats it: a field for each ``%``."""
    parts, last, index = [], 0, 0
    for field in _FIELD.finditer(english):
        parts.append(re.escape(english[last:field.start()]))
        parts.append(f"(?P<{field.group(1) or f'_{index}'}>.*?)")
        last, index = field.end(), index + 1
    parts.append(re.escape(english[last:]))
    return re.compile("".join(parts), re.S)


_ARGPARSE_PATTERNS: dict[str, re.Pattern[str]] = {}


def _argparse_said(message: str) -> str:
    """``message``, one of argparse's sentences formatted in English, in the tutor's language:
    the table's template with the same fields (a field that is itself one of its sentences, the
    ``message`` of "argument X: ...", said the same way); as it is where no sentence matches."""
    if _SPEAKING is not None:
        _SPEAKING.speak()
    from tutor.words.i18n import PLURALS, language, t

    if language() == "en":
        return message
    if not _ARGPARSE_PATTERNS:
        _ARGPARSE_PATTERNS.update({english: _argparse_pattern(english) for english in ARGPARSE_WORDS})
    for english, key in ARGPARSE_WORDS.items():
        found = _ARGPARSE_PATTERNS[english].fullmatch(message)
        if found is None:
            continue
        fields = {name: _argparse_said(value) if name == "message" else value
                  for name, value in found.groupdict().items()}
        if key in PLURALS:  # "expected %s arguments": the form for that number, in the language
            return _positional(t(key, n=int(fields["_0"]) if fields["_0"].isdigit() else 2)) % fields
        return _positional(t(key)) % fields
    return message


def _positional(template: str) -> str:
    """``template`` with its fields named (``%s`` -> ``%(_0)s``) and each said as the text it
    came as (``%r`` -> ``%s``: the text is argparse's repr already)."""
    count = iter(range(len(template)))
    return _FIELD.sub(lambda field: f"%({field.group(1) or f'_{next(count)}'})s", template)


class _ArgparseWords:
    """The language of the command line being parsed: found on the first sentence that needs
    it (a usage error or --help), so parsing a good command line costs nothing more."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.ready = False
        self.help_keys: dict[str, str] = {}  # English help text -> its key in the table (``help.*``)

    def speak(self) -> None:
        if self.ready:
            return
        self.ready = True
        from tutor.words import i18n

        flag = None
        for index, arg in enumerate(self.argv):
            if arg == "--language" and index + 1 < len(self.argv):
                flag = self.argv[index + 1]
            elif arg.startswith("--language="):
                flag = arg.partition("=")[2]
        try:
            from tutor.settings.config import load_settings

            i18n.set_language(load_settings({"language": flag}).language)
        except Exception:  # noqa: BLE001 - a bad flag or config: the command reports it; the usage error in English
            i18n.set_language(flag)


#: The command line being parsed (by :func:`_parse`), whose language ``--help`` speaks.
_SPEAKING: _ArgparseWords | None = None


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """``parser.parse_args(argv)`` with argparse's sentences and ``--help`` in the tutor's language."""
    global _SPEAKING
    _SPEAKING = _ArgparseWords(argv)
    try:
        return parser.parse_args(argv)
    finally:
        _SPEAKING = None


def build_parser(commands: bool = True) -> argparse.ArgumentParser:
    """The whole command line; ``commands=False`` leaves out the subcommands (see ``main``)."""
    parser = Parser(
        prog="torch-tutor",
        description="An interactive terminal tutor for debugging and speeding up PyTorch code.\n"
        "With no command, opens the tutor on the built-in pack.",
    )
    parser.add_argument("--version", action="version", version=f"torch-tutor {__version__}")
    parser.add_argument("--pack", action="append", default=[], metavar="DIR",
                        help="also load the pack in DIR (repeatable)")
    parser.add_argument("--data-dir", metavar="DIR", help=DATA_DIR_HELP)
    parser.add_argument("--sandbox-mode", choices=SANDBOX_MODES, help=SANDBOX_MODE_HELP)
    parser.add_argument("--language", metavar="CODE", help=LANGUAGE_HELP)
    if commands:
        subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
        for name in COMMAND_MODULES:
            importlib.import_module(name).register(subparsers)
        for sub in subparsers.choices.values():
            _late_global_options(sub)
    return parser


def _late_global_options(sub: argparse.ArgumentParser) -> None:
    """Accept the global options after the subcommand too (`torch-tutor progress --data-dir D`).

    They land in their own attributes and ``main`` merges them, so ``--pack`` given on both sides
    adds up. A command with an option of the same name (check's own ``--pack``) keeps its own."""
    taken = set(sub._option_string_actions)
    group = sub.add_argument_group("global options (also accepted before the command)")
    if "--data-dir" not in taken:
        group.add_argument("--data-dir", dest="late_data_dir", metavar="DIR", default=None,
                           help=DATA_DIR_HELP)
    if "--sandbox-mode" not in taken:
        group.add_argument("--sandbox-mode", dest="late_sandbox_mode", choices=SANDBOX_MODES, default=None,
                           help=SANDBOX_MODE_HELP)
    if "--language" not in taken:
        group.add_argument("--language", dest="late_language", metavar="CODE", default=None, help=LANGUAGE_HELP)
    if "--pack" not in taken:
        group.add_argument("--pack", dest="late_pack", action="append", metavar="DIR", default=None,
                           help="also load the pack in DIR (repeatable)")


def _merge_late_options(args: argparse.Namespace) -> None:
    late_dir = getattr(args, "late_data_dir", None)
    if late_dir is not None:
        args.data_dir = late_dir
    if getattr(args, "late_sandbox_mode", None) is not None:
        args.sandbox_mode = args.late_sandbox_mode
    if getattr(args, "late_language", None) is not None:
        args.language = args.late_language
    late_packs = getattr(args, "late_pack", None)
    if late_packs:
        args.pack = [*getattr(args, "pack", []), *late_packs]


def _opens_the_app(argv: list[str]) -> bool:
    """True when ``argv`` holds only the top-level options, so the app opens: building the
    parsers of every subcommand (importing their modules) would only delay the first screen."""
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg in ("--pack", "--data-dir", "--sandbox-mode", "--language") and index + 1 < len(argv):
            index += 2
        elif arg.startswith(("--pack=", "--data-dir=", "--sandbox-mode=", "--language=")):
            index += 1
        else:
            return False
    return True


#: Commands that draw on the terminal themselves (the app) or neutralise their own output
#: (grade keeps a progress line that it redraws with an escape sequence of its own).
_OWN_TERMINAL = ("open", "grade")


class _InertWriter:
    """A text stream whose every write has its control characters made visible and inert.

    Commands print pack text, file and folder names, exception messages and check messages: none
    of them came from the tutor, and any could carry an escape sequence that sets the terminal's
    title or writes its clipboard. Wrapping the stream neutralises all of them in one place."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        from tutor.words.safe_text import neutralize

        return self._stream.write(neutralize(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _inert_output(command: str | None) -> Callable[[], None]:
    """Wrap stdout and stderr for ``command``; returns a function that puts them back."""
    if command is None or command in _OWN_TERMINAL:
        return lambda: None
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _InertWriter(out), _InertWriter(err)

    def restore() -> None:
        sys.stdout, sys.stderr = out, err

    return restore


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv`` says. The language it speaks is its own (``i18n.speaking``):
    a command run in process (as the tests run them) leaves its caller's as it was."""
    from tutor.words.i18n import speaking

    with speaking():
        return _main(sys.argv[1:] if argv is None else list(argv))


def _main(argv: list[str]) -> int:
    parser = build_parser(commands=not _opens_the_app(argv))
    err = sys.stderr
    sys.stderr = _InertWriter(err)  # a usage error quotes the arguments back
    try:
        args = _parse(parser, argv)
    finally:
        sys.stderr = err
    _merge_late_options(args)
    handler = getattr(args, "func", None)
    if handler is None:
        from tutor.cli.packs import open_app

        handler = open_app
    restore = _inert_output(getattr(args, "command", None))
    try:
        return int(handler(args) or 0)
    except TutorError as exc:  # the one place a failure the user can act on becomes its line
        from tutor.cli.common import fail_usage

        return fail_usage(str(exc))
    except KeyboardInterrupt:
        from tutor.words.i18n import t

        print(t("cli.interrupted"), file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `torch-tutor list | head`
        return 0
    finally:
        restore()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
