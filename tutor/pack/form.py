"""Judging a ``form`` check: rules about how the learner's code is written, read from its syntax tree.

A ``form`` check needs none of the learner's code to run, so it is judged here, in the tutor's
own process, from the source text the learner submitted (``tutor.grading.exercise`` calls
:func:`judge` before the run), never in a process the learner's code ran in: nothing the code
does when it runs can change this verdict. What it reads is the syntax tree (``ast``), not the
text: a ``for`` inside a string or a comment is not a loop, ``torch.view`` in a comment is not an
attribute. A check on one ``function`` judges it with every function of the file it reaches by
name (``follow_calls``, see ``_reached``): a helper is part of the answer. It is a rule about
form, not a sandbox: code can still reach a denied function
through ``getattr`` or ``__dict__``; deny those names too where it matters (``names_deny``), and
let behaviour checks (a profile's ``only``) say what the code may run.

Standard library only; ``tutor.pack`` may not import torch.
"""

from __future__ import annotations

import ast
import fnmatch
from dataclasses import dataclass
from typing import Any

#: The most violations one message lists (the first is the one to fix first).
_SHOWN = 3
#: The longest source judged here (characters). Parsing runs in the tutor's own process, outside the
#: sandbox's limits; a form exercise's answer is a few lines, so a longer file fails the check.
MAX_SOURCE = 256 * 1024


@dataclass(frozen=True)
class Verdict:
    """One ``form`` check's result: ``status`` is passed, failed or skipped (the code does not parse)."""

    status: str
    message: str
    expected: str | None = None
    got: str | None = None
    lineno: int | None = None


@dataclass(frozen=True)
class _Breach:
    rule: str
    lineno: int
    what: str
    column: int = 0
    #: the helper the line is in, when the rule reached it from the check's function
    within: str = ""


def _clip(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _scope(tree: ast.Module, function: str | None) -> tuple[list[ast.stmt], ast.AST | None]:
    """The statements the rules apply to: the whole file, or the body of one top-level function
    (without its docstring); (None) when the function is not defined at the top level."""
    if function is None:
        return list(tree.body), tree
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
            body = list(node.body)
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str) and len(body) > 1:
                body = body[1:]
            return body, node
    return [], None


def _docstring_aside(body: list[ast.stmt]) -> list[ast.stmt]:
    if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:]
    return body


#: A top-level statement the check's function can reach by a name: its statements, and the name.
_Reached = tuple[str, list[ast.stmt]]


def _definitions(tree: ast.Module) -> dict[str, list[ast.stmt]]:
    """The top-level statements that define code under a name: ``def``, ``class``, and an
    assignment of a lambda or of another name (``helper = lambda x: ...``, ``g = torch.autograd.grad``).
    An assignment of data (``a = torch.randn(4)``, a learner's own test) is not code to judge."""
    found: dict[str, list[ast.stmt]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.setdefault(node.name, []).append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, (ast.Lambda, ast.Name,
                                                                                        ast.Attribute)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        found.setdefault(name.id, []).append(node)
    return found


def _local_names(function: ast.AST) -> set[str]:
    """The names a function binds itself (its parameters and what it assigns), unless it declares
    them ``global``: a use of one of them is not a use of the module's definition."""
    local: set[str] = set()
    declared: set[str] = set()
    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = function.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None:
                local.add(arg.arg)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        return local  # an alias (``g = torch.autograd.grad``) binds nothing of its own
    body = function.body if isinstance(function.body, list) else [function.body]
    for statement in body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                local.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                local.add(node.name)
            elif isinstance(node, ast.Global):
                declared.update(node.names)
    return local - declared


def _reached(tree: ast.Module, start: ast.AST, exempt: frozenset[str] = frozenset()) -> list[_Reached]:
    """Every top-level definition the function ``start`` reaches by name, transitively, in the
    file's order (``start`` itself aside): what its rules judge with it (``follow_calls``). The
    ``exempt`` names (another exercise's answer, defined here too) are not followed."""
    definitions = {name: found for name, found in _definitions(tree).items() if name not in exempt}
    seen: set[int] = {id(start)}
    out: list[tuple[int, str, ast.stmt]] = []
    todo: list[ast.AST] = [start]
    while todo:
        scope = todo.pop()
        local = _local_names(scope.value if isinstance(scope, (ast.Assign, ast.AnnAssign)) and
                             isinstance(scope.value, ast.Lambda) else scope)
        for node in ast.walk(scope):
            if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load) or node.id in local:
                continue
            for definition in definitions.get(node.id, []):
                if id(definition) not in seen:
                    seen.add(id(definition))
                    out.append((definition.lineno, node.id, definition))
                    todo.append(definition)
    out.sort(key=lambda item: item[0])
    reached: list[_Reached] = []
    for _line, name, definition in out:
        if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
            reached.append((name, _docstring_aside(list(definition.body))))
        else:
            reached.append((name, [definition]))
    return reached


def _torch_aliases(everything: list[ast.AST]) -> tuple[set[str], dict[str, str]]:
    """(names bound to the torch module, plain names bound to something from torch -> its dotted name)."""
    modules = {"torch"}
    imported: dict[str, str] = {}
    for node in everything:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "torch" or alias.name.startswith("torch."):
                    if alias.asname:
                        if alias.name == "torch":
                            modules.add(alias.asname)
                        else:
                            imported[alias.asname] = alias.name[len("torch."):]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and (node.module == "torch" or node.module.startswith("torch.")):
            prefix = node.module[len("torch."):] + "." if node.module != "torch" else ""
            for alias in node.names:
                imported[alias.asname or alias.name] = prefix + alias.name
    return modules, imported


def _dotted(node: ast.AST) -> list[str] | None:
    """['torch', 'nn', 'functional', 'relu'] for torch.nn.functional.relu; None if not a dotted name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


def _line(node: ast.AST) -> int:
    return int(getattr(node, "lineno", 0) or 0)


def _matches(name: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def _code_lines(statements: list[ast.stmt], lines: list[str]) -> list[int]:
    """The line numbers the statements span that hold code (not blank, not only a comment): a
    statement's span covers every node inside it."""
    numbers: set[int] = set()
    for statement in statements:
        numbers.update(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
    return sorted(n for n in numbers
                  if 0 < n <= len(lines) and lines[n - 1].strip() and not lines[n - 1].strip().startswith("#"))


def _breaches(check: dict[str, Any], tree: ast.Module, lines: list[str],
              exempt: frozenset[str] = frozenset()) -> list[_Breach]:
    function = check.get("function")
    statements, defined = _scope(tree, function)
    reached = _reached(tree, defined, exempt) if function is not None and defined is not None \
        and check.get("follow_calls", True) else []
    statements = statements + [statement for _name, body in reached for statement in body]
    #: the first line of each helper's code -> its name: a breach there says which helper it is in
    spans = [(min(s.lineno for s in body), max(s.end_lineno or s.lineno for s in body), name)
             for name, body in reached if body]
    found: list[_Breach] = []
    everything = list(ast.walk(tree))
    nodes = everything[1:] if function is None else [node for statement in statements for node in ast.walk(statement)]
    code_lines = _code_lines(statements, lines)

    max_lines = check.get("max_lines")
    if max_lines is not None and len(code_lines) > max_lines:
        found.append(_Breach(f"at most {max_lines} line(s) of code", code_lines[max_lines],
                             f"{len(code_lines)} lines"))
    max_statements = check.get("max_statements")
    statement_nodes = [node for node in nodes if isinstance(node, ast.stmt)]
    if max_statements is not None and len(statement_nodes) > max_statements:
        extra = sorted(statement_nodes, key=lambda n: n.lineno)[max_statements]
        found.append(_Breach(f"at most {max_statements} statement(s)", extra.lineno,
                             f"{len(statement_nodes)} statements"))
    max_length = check.get("max_line_length")
    if max_length is not None:
        for number in code_lines:
            width = len(lines[number - 1].rstrip("\r\n"))
            if width > max_length:
                found.append(_Breach(f"lines of at most {max_length} characters", number, f"{width} characters"))
    if check.get("loops") is False:
        for node in nodes:
            if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                word = "while" if isinstance(node, ast.While) else "for"
                found.append(_Breach("no for/while loops", node.lineno, f"a `{word}` loop"))
    if check.get("comprehensions") is False:
        kinds = {ast.ListComp: "list", ast.SetComp: "set", ast.DictComp: "dict", ast.GeneratorExp: "generator"}
        for node in nodes:
            kind = kinds.get(type(node))
            if kind is not None:
                found.append(_Breach("no comprehensions", _line(node), f"a {kind} comprehension"))
    if check.get("imports") is False:
        for node in nodes:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.append(_Breach("no imports", node.lineno, "an import"))

    names_deny = check.get("names_deny") or []
    attributes_deny = check.get("attributes_deny") or []
    torch_allow = check.get("torch_allow")
    torch_deny = check.get("torch_deny") or []
    modules, imported = _torch_aliases(everything) if torch_allow is not None or torch_deny else (set(), {})
    seen_torch: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.Name) and _matches(node.id, names_deny):
            found.append(_Breach(f"no `{node.id}`", node.lineno, f"`{node.id}`", node.end_col_offset or 0))
        if isinstance(node, ast.Attribute) and _matches(node.attr, attributes_deny):
            found.append(_Breach(f"no `.{node.attr}`", node.lineno, f"`.{node.attr}`", node.end_col_offset or 0))
        if torch_allow is None and not torch_deny:
            continue
        used: str | None = None
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and (node.module == "torch" or node.module.startswith("torch.")):
            prefix = node.module[len("torch."):] + "." if node.module != "torch" else ""
            imports = [prefix + alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            imports = [alias.name[len("torch."):] for alias in node.names if alias.name.startswith("torch.")]
        else:
            imports = []
        for name in imports:
            _judge_torch(name, torch_allow, torch_deny, _line(node), found)
        if isinstance(node, ast.Attribute) and id(node) not in seen_torch:
            parts = _dotted(node)
            if parts and parts[0] in modules and len(parts) > 1:
                used = ".".join(parts[1:])
                inner = node.value
                while isinstance(inner, ast.Attribute):  # torch.nn.functional.relu is one use
                    seen_torch.add(id(inner))
                    inner = inner.value
            elif parts and parts[0] in imported:
                used = ".".join([imported[parts[0]]] + parts[1:])
                inner = node.value
                while isinstance(inner, ast.Attribute):
                    seen_torch.add(id(inner))
                    inner = inner.value
        elif isinstance(node, ast.Name) and node.id in imported and isinstance(node.ctx, ast.Load):
            used = imported[node.id]
        if used is None:
            continue
        _judge_torch(used, torch_allow, torch_deny, _line(node), found)
    found.sort(key=lambda breach: (breach.lineno, breach.column))
    if spans:
        found = [_Breach(b.rule, b.lineno, b.what, b.column,
                         next((name for first, last, name in spans if first <= b.lineno <= last), ""))
                 for b in found]
    return found


def _judge_torch(used: str, allow: list[str] | None, deny: list[str], lineno: int, found: list[_Breach]) -> None:
    if allow is not None and not _matches_dotted(used, allow):
        rule = f"only {', '.join('torch.' + n for n in allow)} from torch" if allow else "nothing from torch"
        found.append(_Breach(rule, lineno, f"`torch.{used}`"))
    elif _matches_dotted(used, deny):
        found.append(_Breach(f"no torch.{used}", lineno, f"`torch.{used}`"))


def _matches_dotted(used: str, patterns: list[str]) -> bool:
    """torch.nn.functional.relu is allowed by 'nn.functional.relu', 'nn.functional.*' or 'nn.*'."""
    return any(fnmatch.fnmatchcase(used, pattern) or used.startswith(pattern.rstrip("*") + ".")
               and pattern.endswith(".*") for pattern in patterns)


def judge(check: dict[str, Any], source: str, used: tuple[str, ...] | list[str] = ()) -> Verdict:
    """The verdict of one ``form`` check (its plain data, as ``spec.as_data`` makes it) on ``source``.
    ``used``: the names the exercises this one ``uses`` define: a definition of one of them in
    ``source`` is the learner's answer to that exercise, judged there, never a helper here."""
    if len(source) > MAX_SOURCE:
        return Verdict("failed", f"your code is {len(source) // 1024} KiB; rules about its form are judged on at "
                       f"most {MAX_SOURCE // 1024} KiB", expected=f"at most {MAX_SOURCE // 1024} KiB",
                       got=f"{len(source) // 1024} KiB")
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return Verdict("skipped", "not run: your code has to run first")
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes; absurd nesting
        return Verdict("failed", f"your code could not be read as Python: {type(exc).__name__}")
    function = check.get("function")
    if function is not None and _scope(tree, function)[1] is None:
        return Verdict("failed", f"your code does not define a function `{function}` (at the top level), so "
                       "its form cannot be checked", expected=f"def {function}(...)", got="not defined")
    lines = source.splitlines()
    breaches = _breaches(check, tree, lines, frozenset(used))
    if not breaches:
        where = f"`{function}`" if function else "your code"
        helpers = [name for name, _body in _reached(tree, _scope(tree, function)[1] or tree, frozenset(used))] \
            if function is not None and check.get("follow_calls", True) else []
        also = (", and so does what it uses (" + ", ".join(f"`{name}`" for name in dict.fromkeys(helpers)) + ")"
                if helpers else "")
        return Verdict("passed", f"{where} keeps to the rules{also}")
    first = breaches[0]
    shown = []
    for breach in breaches[:_SHOWN]:
        code = lines[breach.lineno - 1] if 0 < breach.lineno <= len(lines) else ""
        where = f" (in `{breach.within}`, which `{function}` uses)" if breach.within else ""
        shown.append(f"line {breach.lineno}{where}: {breach.what} breaks the rule \"{breach.rule}\""
                     + (f" (`{_clip(code)}`)" if code.strip() else ""))
    more = len(breaches) - _SHOWN
    message = "; ".join(shown) + (f"; and {more} more" if more > 0 else "")
    return Verdict("failed", message, expected=first.rule, got=first.what, lineno=first.lineno)
