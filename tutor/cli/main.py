"""Entry point of the ``torch-tutor`` command."""

from __future__ import annotations

import argparse
import importlib
import sys

from tutor import __version__

#: Modules with a ``register(subparsers)`` function, in the order their commands are listed.
COMMAND_MODULES = (
    "tutor.cli.packs",
    "tutor.cli.settings",
    "tutor.cli.checking",
    "tutor.cli.author",
    "tutor.cli.app",
    "tutor.cli.review",
    "tutor.cli.sandbox",
)

EXIT_CODES = """exit codes:
  0  success
  1  problems found (invalid pack, failed checks, failed run)
  2  usage error (bad arguments, unknown pack, bad config)"""


class Parser(argparse.ArgumentParser):
    """argparse with our epilog on every command and usage errors on exit code 2."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        kwargs.setdefault("epilog", EXIT_CODES)
        super().__init__(*args, **kwargs)


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
    parser.add_argument("--data-dir", metavar="DIR", help="where progress and drafts are kept")
    if commands:
        subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
        for name in COMMAND_MODULES:
            importlib.import_module(name).register(subparsers)
    return parser


def _opens_the_app(argv: list[str]) -> bool:
    """True when ``argv`` holds only the top-level options, so the app opens: building the
    parsers of every subcommand (importing their modules) would only delay the first screen."""
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg in ("--pack", "--data-dir") and index + 1 < len(argv):
            index += 2
        elif arg.startswith(("--pack=", "--data-dir=")):
            index += 1
        else:
            return False
    return True


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(commands=not _opens_the_app(argv))
    args = parser.parse_args(argv)
    handler = getattr(args, "func", None)
    if handler is None:
        from tutor.cli.packs import open_app

        handler = open_app
    try:
        return int(handler(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `torch-tutor list | head`
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
