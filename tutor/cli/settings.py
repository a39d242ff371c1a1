"""`torch-tutor config`: the effective settings and where each came from."""

from __future__ import annotations

import argparse

from tutor.cli.common import guarded, print_json, say, settings_from_args
from tutor.words.i18n import t


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
    from rich.cells import cell_len

    say(t("cli.config.file" if settings.config_file.is_file() else "cli.config.absent", path=settings.config_file))
    width = max(len(r["name"]) for r in rows)
    for row in rows:
        value = t("cli.config.python_default") if row["name"] == "python" and row["value"] is None else row["value"]
        value = t("cli.config.language_default") if row["name"] == "language" and value is None else value
        shown = str(value) + " " * max(0, 24 - cell_len(str(value)))
        say(f"  {row['name']:<{width}}  {shown} {source_said(row['source'])}", indent=width + 4)
    return 0


def source_said(source: str) -> str:
    """Where a setting came from, in the learner's language (the JSON keeps the English that
    tutor/settings/config.py records: "default", "command line", "config file PATH",
    "environment VARIABLE", "system locale")."""
    from tutor.settings.config import LOCALE_SOURCE

    for english, key in (("default", "cli.config.source.default"), ("command line", "cli.config.source.command_line"),
                         (LOCALE_SOURCE, "cli.config.source.locale")):
        if source == english:
            return t(key)
    if source.startswith("config file "):
        return t("cli.config.source.file", path=source.removeprefix("config file "))
    if source.startswith("environment "):
        return t("cli.config.source.environment", variable=source.removeprefix("environment "))
    return source
