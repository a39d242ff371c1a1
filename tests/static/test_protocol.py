"""The judge/runner protocol (tutor/child/checks/protocol.py) is the one definition of its messages, and
both sides keep to it: the judge (remote.py, judging.py) and the runner (server.py, runner.py).

mypy checks the messages each side builds (``protocol.send`` takes only a ``protocol.Message``);
these tests check what mypy cannot see across the process boundary: that every request has a
handler and a sender, that every message type is sent somewhere, and that every field one side
reads is a field of a message the other side sends. They read the sources (``ast``) and import
only the protocol (standard library), never torch.
"""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import pytest

from tutor.child.checks import protocol

ROOT = Path(__file__).resolve().parents[2]
CHECKS = ROOT / "tutor" / "child" / "checks"
WORKER = ROOT / "tutor" / "child" / "worker"
#: Where protocol messages are built and read: the judge's side and the runner's.
SOURCES = [CHECKS / "remote.py", CHECKS / "server.py", WORKER / "judging.py", WORKER / "runner.py",
           WORKER / "keeper.py", CHECKS / "seal.py"]


def _members(union: object) -> list[type]:
    found: list[type] = []
    for member in typing.get_args(union) or (union,):
        found.extend(_members(member) if typing.get_args(member) else [member])  # type: ignore[arg-type]
    return found


def _fields(message_type: type) -> set[str]:
    return set(message_type.__annotations__)


def _op_values(message_type: type) -> tuple[str, ...]:
    """The values of a message type's ``op`` (``Literal[...]``, maybe inside ``Required[...]``),
    read from its annotation: the protocol imports ``Required`` only for type checkers."""
    annotation = message_type.__annotations__["op"]
    text = getattr(annotation, "__forward_arg__", annotation)
    for node in ast.walk(ast.parse(str(text), mode="eval")):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal":
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return tuple(item.value for item in items if isinstance(item, ast.Constant))
    raise AssertionError(f"{message_type.__name__}.op is not a Literal: {text}")


def _ops(union: object) -> dict[str, type]:
    """op value -> its message type, for every member of ``union``."""
    return {op: member for member in _members(union) for op in _op_values(member)}


def _keys(union: object) -> set[str]:
    return {key for member in _members(union) for key in _fields(member)}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _reads(paths: list[Path], variable: str) -> dict[str, str]:
    """Every constant key read from a variable named ``variable`` (``v["k"]``, ``v.get("k")``,
    ``"k" in v``): key -> where."""
    found: dict[str, str] = {}
    for path in paths:
        for node in ast.walk(_tree(path)):
            key = None
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == variable:
                key = node.slice
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == variable and node.args:
                key = node.args[0]
            elif isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn)) \
                    and isinstance(node.comparators[0], ast.Name) and node.comparators[0].id == variable:
                key = node.left
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                found.setdefault(key.value, f"{path.name}:{node.lineno}")
    return found


def _built() -> list[tuple[str, set[str], str]]:
    """Every message literal the sources build: (op, its keys, where); a ``repeat`` request's op
    is its caller's first argument (``session.repeat("time", ...)``)."""
    found = []
    for path in [*SOURCES, *sorted((CHECKS / "kinds").glob("*.py")), CHECKS / "canary.py"]:
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Dict):
                keys = {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
                if "op" not in keys:
                    continue
                op = next(v for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant) and k.value == "op")
                if isinstance(op, ast.Constant) and op.value in _ops(protocol.Message):
                    found.append((op.value, keys, f"{path.name}:{node.lineno}"))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "repeat" \
                    and node.args and isinstance(node.args[0], ast.Constant):
                found.append((node.args[0].value, set(), f"{path.name}:{node.lineno}"))
    return found


def test_the_request_ops_are_the_request_types_ops():
    assert sorted(protocol.REQUEST_OPS) == sorted(_ops(protocol.Request))


def test_every_request_has_a_handler_in_the_runner_and_no_handler_is_for_something_else():
    tree = _tree(CHECKS / "server.py")
    table = next(node for node in ast.walk(tree) if isinstance(node, ast.AnnAssign)
                 and isinstance(node.target, ast.Name) and node.target.id == "HANDLERS")
    assert isinstance(table.value, ast.Dict)
    handled = sorted(k.value for k in table.value.keys if isinstance(k, ast.Constant))
    assert handled == sorted(protocol.REQUEST_OPS)


def test_every_message_type_is_sent_and_every_message_built_has_only_its_types_fields():
    built = _built()
    every = _ops(protocol.Message)
    assert sorted({op for op, _, _ in built}) == sorted(every), "a message type nobody sends, or the reverse"
    for op, keys, where in built:
        extra = keys - _fields(every[op])
        assert not extra, f"{where}: {op!r} built with {sorted(extra)}, which protocol.{every[op].__name__} lacks"


@pytest.mark.parametrize("paths, variable, union", [
    # the runner reads the judge's requests (and, in a callback, its result)
    ([CHECKS / "server.py"], "request", typing.Union[protocol.Request, protocol.Result]),
    # the runner reads the keeper's start message
    ([WORKER / "runner.py"], "message", protocol.Start),
    # the judge reads the runner's answers (and the callbacks that come before them)
    ([CHECKS / "remote.py"], "answer", typing.Union[protocol.Answer, protocol.CallBack]),
    ([CHECKS / "remote.py"], "request", protocol.CallBack),
    # the judge reads the runner's ready message
    ([WORKER / "judging.py"], "ready", protocol.Ready),
])
def test_every_field_a_side_reads_is_one_the_other_side_sends(paths, variable, union):
    reads = _reads(paths, variable)
    assert reads, f"no reads of {variable!r} found: the test no longer sees that side"
    unknown = {key: where for key, where in reads.items() if key not in _keys(union)}
    assert not unknown, f"read but in no message type: {unknown}"
