"""COMMAND_MODULES (tutor/cli/main.py) lists every module that registers commands, and only the
parser registers them: a command module left out of it is a command the tool does not have."""

from __future__ import annotations

import ast
import pathlib

import tutor.cli
from tutor.cli.main import COMMAND_MODULES, build_parser

CLI = pathlib.Path(tutor.cli.__file__).parent


def _registering() -> set[str]:
    found = set()
    for path in CLI.glob("*.py"):
        tree = ast.parse(path.read_text())
        if any(isinstance(node, ast.FunctionDef) and node.name == "register" for node in tree.body):
            found.add(f"tutor.cli.{path.stem}")
    return found


def test_every_module_that_registers_commands_is_listed_once():
    assert len(set(COMMAND_MODULES)) == len(COMMAND_MODULES)
    assert set(COMMAND_MODULES) == _registering()


def test_no_command_module_registers_another():
    """Each is registered by the parser alone (a chain hid two modules from the list)."""
    for path in CLI.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module in COMMAND_MODULES:
                assert all(alias.name != "register" for alias in node.names), path.name


def test_each_listed_module_adds_its_commands():
    parser = build_parser()
    commands = next(action for action in parser._actions if action.dest == "command").choices
    assert {"new", "grade", "handin", "autograder", "list", "check", "doctor"} <= set(commands)
