"""`torch-tutor serve`: the app in a browser tab (see tutor/web/browser_server.py)."""

from __future__ import annotations

import argparse
import sys

from typing import TYPE_CHECKING

from tutor.cli.common import UsageError, guarded
from tutor.words.i18n import language, t

if TYPE_CHECKING:
    from tutor.settings.config import Settings



def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "serve", help="open the tutor in a browser: serve it on this machine",
        description="Serve the tutor to a browser. Each tab is its own tutor, on your data folder, "
        "packs and settings; closing a tab loses nothing. Listens on this machine only "
        "(127.0.0.1) unless --host says otherwise; the address printed holds an access token, "
        "which every page and connection needs.")
    p.add_argument("target", nargs="?", metavar="PACK[/LESSON]",
                   help="open each tab on this pack (id or folder) or lesson, as `torch-tutor open` does")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1, this machine only; another address "
                   "lets other machines connect: they still need the token)")
    p.add_argument("--port", type=int, default=None, metavar="N",
                   help="port to listen on (default 8765; 0: any free port)")
    p.add_argument("--unix-socket", metavar="PATH", help=argparse.SUPPRESS)  # the Jupyter launcher's
    p.set_defaults(func=cmd_serve)


def _app_argv(args: argparse.Namespace) -> list[str]:
    """The options each tab's app is started with: the serving command's own."""
    argv: list[str] = []
    for folder in getattr(args, "pack", None) or ():
        argv += ["--pack", folder]
    if getattr(args, "data_dir", None):
        argv += ["--data-dir", args.data_dir]
    if getattr(args, "sandbox_mode", None):
        argv += ["--sandbox-mode", args.sandbox_mode]
    if args.target:
        argv += ["open", args.target]
    return argv


def _check_target(args: argparse.Namespace, settings: Settings) -> None:
    """A pack or lesson that is not there is said now, once, not by every tab's app (a browser
    tab would only show that its session ended)."""
    from tutor.app.launch import resolve_target
    from tutor.pack.discovery import discover

    extra, wanted, lesson = resolve_target(args.target, tuple(getattr(args, "pack", None) or ()))
    found = [f for f in discover(extra, settings.data_path, cache=True) if f.pack is not None]
    pack = next((f.pack for f in found if f.pack is not None
                 and (f.pack.id == wanted or str(f.path.resolve()) == wanted)), None)
    if pack is None:
        raise UsageError(t("cli.serve.no_pack", pack=repr(wanted)))
    if lesson is not None and pack.lesson(lesson) is None:
        ids = ", ".join(item.id for item in pack.lessons)
        raise UsageError(t("cli.serve.no_lesson", pack=repr(pack.id), lesson=repr(lesson), ids=ids))


@guarded
def cmd_serve(args: argparse.Namespace) -> int:
    try:
        import textual_serve  # noqa: F401
    except ImportError:
        raise UsageError(t("cli.serve.not_installed")) from None
    from tutor.cli.common import settings_from_args
    from tutor.web.browser_server import WORDS, DEFAULT_PORT, Listening, ServeError, app_command, is_loopback, serve

    settings = settings_from_args(args)  # a bad configuration is said here, not once per tab
    if args.target:
        _check_target(args, settings)
    if args.port is not None and not 0 <= args.port <= 65535:
        raise UsageError(t("cli.serve.bad_port", port=args.port))
    if args.unix_socket and (args.port is not None or args.host != "127.0.0.1"):
        raise UsageError(t("cli.serve.socket_and_host"))
    where = Listening(host=args.host, port=DEFAULT_PORT if args.port is None else args.port,
                      path=args.unix_socket)
    port = where.port or DEFAULT_PORT
    if where.path is None and not is_loopback(where.host):
        print(t("cli.serve.warning", host=where.host, port=port), file=sys.stderr)
    words = {key: t("serve." + key) for key in WORDS}  # the server's own lines, in the learner's language
    try:
        return serve(app_command(_app_argv(args)), where, token=where.path is None, words=words,
                     language=language())
    except ServeError as exc:
        raise UsageError(str(exc)) from None
