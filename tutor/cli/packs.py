"""Commands about packs: list, validate, schema (and opening the app)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tutor.cli.common import guarded, print_json, settings_from_args


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("list", help="list the packs the tutor can see",
                              description="List every pack: built-in, --pack folders, installed "
                              "packages (entry point torch_tutor.packs) and the user packs folder.")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_list)

    p = subparsers.add_parser("validate", help="check packs for problems",
                              description="Check the structure and schema of each pack and report every "
                              "problem as file:line:col: message.")
    p.add_argument("packs", nargs="+", metavar="PACK", help="a pack folder or its pack.yaml")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_validate)

    p = subparsers.add_parser("schema", help="print the JSON Schema of the pack format",
                              description="Print the JSON Schema of pack.yaml (or of a lesson file) so a "
                              "YAML language server can validate packs as you type.")
    p.add_argument("--lesson", action="store_true", help="the schema of a lesson file instead")
    p.set_defaults(func=cmd_schema)


@guarded
def cmd_list(args: argparse.Namespace) -> int:
    from tutor.core.discovery import discover
    from tutor.core.text import resolve

    settings = settings_from_args(args)
    found = discover(args.pack, settings.data_path)
    rows = []
    for entry in found:
        pack = entry.pack
        rows.append({
            "id": pack.id if pack else None,
            "title": resolve(pack.title, settings.language, pack.languages[0]) if pack else None,
            "version": pack.version if pack else None,
            "lessons": len(pack.lessons) if pack else None,
            "origin": entry.origin,
            "path": str(entry.path),
            "problems": [str(p) for p in entry.problems or []],
        })
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print("no packs found")
        return 0
    for row in rows:
        if row["id"] is None:
            print(f"(broken pack)  {row['path']}  [{row['origin']}]: {len(row['problems'])} problem(s); "
                  f"run `torch-tutor validate {row['path']}`")
            continue
        print(f"{row['id']}  {row['title']}  v{row['version']}  {row['lessons']} lessons  "
              f"[{row['origin']}] {row['path']}")
    return 0


@guarded
def cmd_validate(args: argparse.Namespace) -> int:
    from tutor.core.loader import PackError, load_pack

    results = []
    failed = False
    for value in args.packs:
        path = Path(value)
        try:
            pack = load_pack(path)
        except PackError as exc:
            failed = True
            results.append({"pack": value, "ok": False, "problems": [p.to_json() for p in exc.problems]})
            if not args.json:
                for problem in exc.problems:
                    print(problem)
                print(f"{value}: {len(exc.problems)} problem(s)", file=sys.stderr)
            continue
        results.append({"pack": value, "ok": True, "id": pack.id, "lessons": len(pack.lessons), "problems": []})
        if not args.json:
            print(f"{value}: ok ({pack.id} v{pack.version}, {len(pack.lessons)} lessons)")
    if args.json:
        print_json(results)
    return 1 if failed else 0


def cmd_schema(args: argparse.Namespace) -> int:
    from tutor.core.models import lesson_json_schema, pack_json_schema

    schema = lesson_json_schema() if args.lesson else pack_json_schema()
    sys.stdout.write(json.dumps(schema, indent=2, ensure_ascii=False) + "\n")
    return 0


@guarded
def open_app(args: argparse.Namespace) -> int:
    try:
        from tutor.app import run_app
    except ImportError:
        print("The tutor app is not part of this build yet; `torch-tutor list` shows the packs.",
              file=sys.stderr)
        return 2
    return run_app(args)
