"""Helpers shared by the subcommands: settings, pack resolution, output."""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, ParamSpec

from tutor.settings.config import ConfigError, Settings, load_settings
from tutor.words.i18n import set_language, t
from tutor.errors import TutorError


class UsageError(TutorError):
    """Bad arguments: reported in one line, exit code 2 (as every ``TutorError`` is)."""


def settings_from_args(args: argparse.Namespace, **flags: Any) -> Settings:
    flags.setdefault("data_dir", getattr(args, "data_dir", None))
    flags.setdefault("sandbox_mode", getattr(args, "sandbox_mode", None))
    flags.setdefault("language", getattr(args, "language", None))
    try:
        settings = load_settings(flags)
    except ConfigError as exc:
        raise UsageError(t("cli.bad_config", error=exc)) from None

    set_language(settings.language)  # the commands speak it too (the app decides again: a saved choice)
    return settings


def fail_usage(message: str) -> int:
    print(t("cli.error", message=message), file=sys.stderr)
    return 2


def speak(args: Any) -> None:
    """Use the language the settings ask for (flag, TORCH_TUTOR_LANGUAGE, config, system locale)
    from the start of a command, so its usage errors speak it too; a bad configuration is left
    for the command to report."""
    if not isinstance(args, argparse.Namespace):
        return
    try:
        set_language(load_settings({"language": getattr(args, "language", None)}).language)
    except ConfigError:  # the config file or a variable is wrong: its error is said in the language
        # the flag, TORCH_TUTOR_LANGUAGE or the locale asks for (no config file, no other variable)
        try:
            environ = {name: value for name, value in os.environ.items()
                       if name == "TORCH_TUTOR_LANGUAGE" or not name.startswith("TORCH_TUTOR_")}
            set_language(load_settings({"language": getattr(args, "language", None)},
                                       config_file=Path(os.devnull) / "none.toml", environ=environ).language)
        except ConfigError:  # the flag or the variable itself: English
            pass


def cells(text: str) -> int:
    """How many terminal cells ``text`` takes (a CJK character is two)."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wrap_cells(text: str, width: int, indent: str = "", first: str | None = None) -> list[str]:
    """``text`` (its whitespace runs made one space) in lines of at most ``width`` cells, broken
    where :func:`fit` breaks (``tutor.app.cjk_wrap.divide_line``: between words, between CJK
    characters on kinsoku rules, a word wider than a line folded). ``first`` starts the first line
    instead of ``indent``."""
    from tutor.app.cjk_wrap import divide_line

    text = " ".join(text.split())
    prefix = indent if first is None else first
    lines: list[str] = []
    while True:
        cuts = divide_line(text, max(1, width - cells(prefix)))
        piece = text[:cuts[0]] if cuts else text
        lines.append((prefix + piece).rstrip())
        text = text[len(piece):].lstrip(" ")
        if not text:
            return lines
        prefix = indent


def print_json(data: Any) -> None:
    """JSON with every character a terminal would act on written as a \\u escape (JSON escapes
    C0 controls itself; DEL, C1 and bidi marks it would leave raw), so it stays valid JSON after
    the commands' output neutraliser and is safe on a terminal."""
    import re

    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    text = re.sub("[\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]", lambda m: f"\\u{ord(m.group()):04x}", text)
    sys.stdout.write(text + "\n")


P = ParamSpec("P")


def guarded(func: Callable[P, int]) -> Callable[P, int]:
    """Turn a ``TutorError`` (a ``UsageError``, a bad pack, roster, port...) into exit 2 with one
    line, for every command handler (the handler's own signature is kept, so a call with the
    wrong arguments is a type error); ``main`` does the same for whatever runs outside one."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> int:
        speak(args[0] if args else None)
        try:
            return func(*args, **kwargs)
        except TutorError as exc:
            return fail_usage(str(exc))

    return wrapper


def resolve_pack_arg(value: str, args: argparse.Namespace) -> Path:
    """A pack given as a folder, a pack.yaml, or the id of a discovered pack."""
    path = Path(value)
    if path.exists():
        return path
    from tutor.pack.discovery import discover

    settings = settings_from_args(args)
    for found in discover(getattr(args, "pack", []), settings.data_path, cache=True):
        if found.pack is not None and found.pack.id == value:
            return found.path
    raise UsageError(t("cli.no_pack_arg", value=repr(value)))


def line_width() -> int | None:
    """The width, in cells, to fit printed lines to: ``COLUMNS`` when set (as argparse and
    ``shutil`` read it), else the terminal's when stdout is one; None for a pipe or a file, where
    each fact stays on one line for ``grep``."""
    import os
    import shutil

    columns = os.environ.get("COLUMNS", "")
    if columns.strip().isdigit() and int(columns) > 0:
        return int(columns)
    try:
        if sys.stdout.isatty():
            return shutil.get_terminal_size().columns
    except (AttributeError, ValueError, OSError):
        pass
    return None


def fit(line: str, width: int | None = None, indent: int | None = None) -> str:
    """``line`` broken to ``width`` cells between words (between characters in CJK text, on its
    rules: see ``tutor.app.cjk_wrap``), never inside a word that fits a line. Later lines start
    under ``indent`` cells; by default under the line's value: after a label ("limits:     ",
    "  resume at: ", "限制：       ") within the first half of the width, else two cells in from
    the line's own indentation. ``width`` None: the line as it is (see :func:`line_width`)."""
    import re

    from rich.cells import cell_len

    from tutor.app.cjk_wrap import divide_line

    if width is None or cell_len(line) <= width or "\n" in line:
        if "\n" in line and width is not None:
            return "\n".join(fit(part, width, indent) for part in line.split("\n"))
        return line
    lead = len(line) - len(line.lstrip(" "))
    if indent is None:
        label = re.match(r" *[^:：\s][^:：]{0,30}?[:：] *(?=\S)", line)
        indent = cell_len(label.group(0)) if label and cell_len(label.group(0)) <= width // 2 else lead + 2
    indent = max(0, min(indent, width // 2))
    head = _cut_at_cells(line, indent)
    rest = line[len(head):]
    if cell_len(head) != indent or head.strip() and not re.fullmatch(r".*[:：] *| *", head):
        head, rest = line[:lead], line[lead:]  # no label: the whole line wraps, later lines indented
        first = width - lead
    else:
        first = width - indent
    room = width - indent
    out: list[str] = []
    text = rest
    cuts = divide_line(text, first) if first > 0 else []
    first_line = text[:cuts[0]] if cuts else text
    out.append(head + first_line.rstrip())
    text = text[len(first_line):].lstrip(" ")
    while text:
        cuts = divide_line(text, room)
        piece = text[:cuts[0]] if cuts else text
        out.append(" " * indent + piece.rstrip())
        text = text[len(piece):].lstrip(" ")
    return "\n".join(out)


def _cut_at_cells(text: str, cells: int) -> str:
    """The longest start of ``text`` no wider than ``cells``."""
    from rich.cells import cell_len

    total = 0
    for index, char in enumerate(text):
        total += cell_len(char)
        if total > cells:
            return text[:index]
    return text


def say(line: str = "", *, indent: int | None = None, file: Any = None) -> None:
    """Print ``line`` fitted to the terminal's width (:func:`fit`)."""
    print(fit(line, line_width(), indent), file=file)
