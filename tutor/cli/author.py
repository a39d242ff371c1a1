"""Commands for authors: new (grading lives in tutor.cli.grading)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tutor.cli.common import UsageError, guarded


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "new", help="create a new pack to edit",
        description="Create PACK_DIR with a pack.yaml and one lesson that uses every step kind and a "
        "working exercise with checks, each field explained by a comment. It validates clean as created.")
    p.add_argument("folder", metavar="PACK_DIR", help="a new (or empty) folder")
    p.add_argument("--title", help="the pack's title (default: from the folder name)")
    p.add_argument("--author", help="the author's name (default: your user name)")
    p.set_defaults(func=cmd_new)


@guarded
def cmd_new(args: argparse.Namespace) -> int:
    from tutor.pack.scaffold import scaffold  # a ScaffoldError is a TutorError: guarded reports it

    folder = Path(args.folder)
    try:
        written = scaffold(folder, title=args.title, author=args.author)
    except OSError as exc:
        raise UsageError(f"cannot write {folder}: {exc.strerror or exc}") from None
    for path in written:
        print(f"created {path}")
    print(f"\nnext: torch-tutor validate {folder}\n      torch-tutor --pack {folder}")
    return 0
