"""`torch-tutor config`: the effective settings and where each came from."""

from __future__ import annotations

import argparse

from tutor.cli.common import guarded, print_json, settings_from_args


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "config", help="show the effective settings",
        description="Show every setting, its value and where it came from: the default, the config "
        "file (TOML), a TORCH_TUTOR_<NAME> environment variable, or the command line.")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--path", action="store_true", help="print only the config file's path")
    p.set_defaults(func=cmd_config)


@guarded
def cmd_config(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    if args.path:
        print(settings.config_file)
        return 0
    rows = settings.as_rows()
    if args.json:
        print_json({"config_file": str(settings.config_file), "settings": rows})
        return 0
    print(f"config file: {settings.config_file}"
          + ("" if settings.config_file.is_file() else " (not present; defaults apply)"))
    width = max(len(r["name"]) for r in rows)
    for row in rows:
        value = "(this interpreter)" if row["name"] == "python" and row["value"] is None else row["value"]
        value = "(last picked in the app, else en)" if row["name"] == "language" and value is None else value
        print(f"  {row['name']:<{width}}  {value!s:<24} {row['source']}")
    return 0
