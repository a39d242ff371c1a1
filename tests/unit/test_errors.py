"""Issue 31.5: every error the parent side raises for a user derives from tutor.errors.TutorError,
and the command line reports any of them as one line with exit code 2, never a traceback."""

from __future__ import annotations

import ast
import pathlib

import pytest

import tutor
from tutor.cli.main import main
from tutor.errors import TutorError

ROOT = pathlib.Path(tutor.__file__).parent
#: the child side's exceptions are its own control flow (a failed check, the learner's exception)
CHILD_SIDE = ("child/", "sandbox/wire.py")
BUILTIN_BASES = {"Exception", "ValueError", "RuntimeError", "OSError", "LookupError", "TypeError"}


def _parent_side_files():
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if not relative.startswith(CHILD_SIDE) and relative != "errors.py":
            yield relative, path


def test_no_parent_side_error_derives_straight_from_a_builtin():
    straight = []
    for relative, path in _parent_side_files():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                bases = [getattr(base, "id", None) for base in node.bases]
                if bases and bases[0] in BUILTIN_BASES:
                    straight.append(f"{relative}: {node.name}({', '.join(map(str, bases))})")
    assert not straight, "derive from tutor.errors.TutorError (first) instead:\n" + "\n".join(straight)


def test_a_tutor_error_in_a_command_is_one_line_and_exit_2(tmp_path, capsys):
    (tmp_path / "taken.txt").write_text("x")  # `new` refuses a folder that is not empty (ScaffoldError)
    assert main(["new", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("torch-tutor: error: ") and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("name", ["RosterError", "MergeError", "NotText"])
def test_value_errors_stay_value_errors(name):
    """Callers that catch ValueError still catch these."""
    from tutor.pack.sourcefile import NotText
    from tutor.grading.gradebook import RosterError
    from tutor.grading.output import MergeError

    kind = {"RosterError": RosterError, "MergeError": MergeError, "NotText": NotText}[name]
    assert issubclass(kind, TutorError) and issubclass(kind, ValueError)
