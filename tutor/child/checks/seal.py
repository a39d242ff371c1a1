"""The runner's own code, sealed before the learner's code runs.

The runner answers the judge from inside the learner's process, so a submission can rewrite the
code that answers: replace ``tutor.child.checks.server.profile_calls``, a ``Server`` method or an entry
of ``server.HANDLERS``, and lie only while one of its own functions runs (the canaries call the
judge's functions, and get honest answers). Nothing in that process can be made unreachable, so
the seal makes such a change *seen*:

- :func:`take` snapshots, before any learner code exists in the process, the identity of every
  value in the tables the answers are computed from: the namespace of each ``tutor`` module, the
  attribute table of each class defined there, each function's code and defaults, the dispatch
  tables (a module-level dict of functions), and the standard-library modules an answer travels
  through (``json``, ``socket``, ``struct``). Identities, not equality: a replaced value's
  ``__eq__`` is the learner's.
- The ``check`` it returns compares them again. The runner calls it after the
  learner's module ran and before every answer it sends; a difference sends one fixed frame,
  ``{"op": "tampered"}``, built at seal time, with the channel's ``sendall`` taken then, and ends the
  process at once: nothing the learner replaced runs after it is seen. The judge reads that frame
  as tampering (``remote.Tampered``): every check asked after it is ``tampered``.
- The seal's own references live in its check function's defaults (a tuple; replacing a
  function's ``__defaults__`` or ``__code__`` raises an audit event, PEP 578), and an audit hook
  installed at seal time refuses those two on every sealed function, the seal's own included: a
  submission cannot switch the check off by rewriting it.

- The same hook keeps the checker's records out of the learner's reach (issue 50): it refuses
  trace and profile functions and audit hooks (they run inside the checker's code), the garbage
  collector's object lists, ``sys._current_frames``, a server generator's ``gi_frame``, a frame
  whose callers include the server's (learner code that the server's own code runs: a dunder
  method), and memory by address (``/proc/self/mem``, ``ctypes`` ``from_address``,
  ``string_at``). Each raises :class:`Refused` in the learner's code, said in the learner's
  language (``checks.refused.*``). The learner's calls themselves run under
  ``tutor.child.checks.driver``'s frames, never the server's.

What this does not stop (docs/architecture.md, "Threat model", "Still open"): native code (a
library of the learner's, ``ctypes`` calls at an address) reads and writes the whole process, and
torch's own process-wide state (the profiler's, the thread count) has public switches. The
canaries and the judge's own recomputation still stand behind it.
"""

from __future__ import annotations

import _thread
import json
import operator
import os
import socket
import struct
import sys
import types
from typing import TYPE_CHECKING

from tutor.child.checks import protocol
from tutor.words import engine as words

if TYPE_CHECKING:
    from typing import Any, Callable, Iterable

#: What a sealed table may gain without tampering: the warnings machinery's registry.
_VOLATILE = frozenset({"__warningregistry__"})
#: The standard-library modules an answer passes through on its way out (protocol.send).
_STDLIB = (json, sys.modules.get("json.encoder"), socket, struct)
#: The exit status of a runner that found its seal broken (after it sent the tampered frame).
EXIT_TAMPERED = protocol.EXIT_TAMPERED

def _functions_of(value: object) -> list[types.FunctionType]:
    """The plain functions behind a table entry (a method, a static or class method, a property)."""
    if isinstance(value, types.FunctionType):
        return [value]
    if isinstance(value, (staticmethod, classmethod)):
        return _functions_of(value.__func__)
    if isinstance(value, property):
        return [f for part in (value.fget, value.fset, value.fdel) for f in _functions_of(part)]
    return []


def _ours(module_name: str) -> bool:
    return module_name == "tutor" or module_name.startswith("tutor.")


def _tables() -> tuple[list[Any], list[types.FunctionType], list[dict[str, Any]]]:
    """(the tables to seal, the functions, the dispatch dicts)."""
    tables: list[Any] = []
    functions: list[types.FunctionType] = []
    dispatch: list[dict[str, Any]] = []
    seen: set[int] = set()
    modules = [m for name, m in sorted(sys.modules.items()) if _ours(name) and isinstance(m, types.ModuleType)]
    for module in modules + [m for m in _STDLIB if m is not None]:
        table = vars(module)
        tables.append(table)
        for key, value in list(table.items()):
            if isinstance(value, type) and _ours(getattr(value, "__module__", "") or "") and id(value) not in seen:
                seen.add(id(value))
                tables.append(value.__dict__)
                for entry in list(value.__dict__.values()):
                    functions.extend(_functions_of(entry))
            elif isinstance(value, dict) and value and all(callable(v) for v in value.values()):
                dispatch.append(value)
            functions.extend(f for f in _functions_of(value)
                             if _ours(getattr(f, "__module__", "") or "") or module in _STDLIB)
    tables.append(socket.socket.__dict__)
    return tables, functions, dispatch


def _snapshot(table: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    return tuple(table), tuple(table.values())


def _same(table: Any, saved: tuple[Any, ...], _len: Callable[[Any], int] = len,
          _all: Callable[[Iterable[object]], bool] = all, _map: Any = map, _is: Any = operator.is_) -> bool:
    """Whether ``table`` holds the very keys and values of ``saved``, in order: identities, in C
    (``id()`` would raise an audit event per value once the seal's hook is installed). Builtins
    bound at import: a submission may replace ``builtins.all``; guard puts it back only later."""
    keys, values = saved
    return _len(table) == _len(keys) and _all(_map(_is, table, keys)) and _all(_map(_is, table.values(), values))


def take(channel: socket.socket) -> Callable[..., None]:
    """Seal the runner's code as it is now (call it before the learner's code runs), with the
    tampered frame ready to go to ``channel``."""
    from tutor.child.checks import context, driver, guard, modules, protocol, refs, server  # noqa: F401 - sealed with the rest

    tables, functions, dispatch = _tables()
    functions = list({id(f): f for f in functions}.values())
    saved_tables = tuple((table, _snapshot(table)) for table in tables)
    saved_dispatch = tuple((table, _snapshot(table)) for table in dispatch)
    server_class = server.Server
    # every name the server's classes define (Server and the ServerCodec it extends): an instance
    # attribute of one of these names would shadow the sealed method
    server_names = frozenset(name for klass in server_class.__mro__[:-1] for name in vars(klass))
    tampered: protocol.Tampered = {"op": "tampered"}
    frame = protocol.head(tampered)  # built now: protocol's names are the learner's later
    send = channel.sendall  # the C method, bound now (os.write would not reach a socket on Windows)

    refused: list[Any] = []  # the rewrites the audit hook refused (below)

    def check(instance: object = None, *, _broken: object = False, _tables: Any = saved_tables,
              _dispatch: Any = saved_dispatch, _refused: list[Any] = refused, _same: Any = _same, _type: Any = type,
              _vars: Any = vars, _server: Any = server_class, _send: Any = send, _names: Any = server_names,
              _exit: Any = os._exit, _frame: Any = frame, _allowed: Any = _allowed_new,
              _code: Any = EXIT_TAMPERED) -> None:
        broken = bool(_refused) or _broken is True
        if not broken:
            for table, saved in _tables:
                if not _same(table, saved) and not _allowed(table, saved):
                    broken = True
                    break
        if not broken:
            for table, saved in _dispatch:
                if not _same(table, saved):
                    broken = True
                    break
        if not broken and instance is not None:
            broken = _type(instance) is not _server or bool(_vars(instance).keys() & _names)
        if not broken:
            return
        try:
            _send(_frame)
        finally:
            _exit(_code)

    sealed = frozenset(map(id, functions)) | {id(check)}

    refuse = _audit_hook(sealed, refused, vars(server), driver.here.__code__, vars(context))

    # The server's loop and a callback's nested requests reach the check through serve_one's
    # defaults, which the hook keeps as they are from now on.
    server_class.serve_one.__defaults__ = (False, check)
    sys.addaudithook(refuse)
    return check


def _audit_hook(sealed: frozenset[int], refused: list[Any], server_globals: dict[str, Any], here: types.CodeType,
                context_globals: dict[str, Any]) -> Callable[[str, tuple[Any, ...]], None]:
    """The seal's audit hook: refuses a rewrite of a sealed function's code or defaults (noted in
    ``refused``, which the check reads), the events no learner code may raise, and a frame or
    a generator's frame whose callers include the server's (``server_globals``), save the
    driver's own (``here``). Everything it reads is bound now, as its defaults."""

    def refuse(event: str, args: tuple[Any, ...], _sealed: Any = sealed, _id: Any = id, _refused: Any = refused,
               _always: Any = _ALWAYS, _learner: Any = _LEARNER_ONLY, _mem: Any = _proc_mem, _refusal: Any = Refused,
               _server: Any = server_globals, _here: Any = here, _context: Any = context_globals,
               _profiler: Any = _torch_profiler_codes(), _inside: Any = _thread._local(),
               _getattr: Any = getattr) -> None:
        if _getattr(_inside, "on", False):  # an event of this hook's own reading
            return
        if event == "object.__setattr__":
            if args and _id(args[0]) in _sealed and args[1] in ("__code__", "__defaults__", "__kwdefaults__"):
                _refused.append(args[1])
                raise PermissionError(f"the checker's own function {args[0].__qualname__} cannot be rewritten")
            return
        if event in _always:
            if event == "sys.setprofile":
                _inside.on = True
                try:
                    torch_own = sys._getframe(1).f_code in _profiler  # torch's C profiler (with_stack=True)
                finally:
                    _inside.on = False
                if torch_own:
                    return
            raise _refusal(_always[event])
        if event == "sys._getframe":
            _inside.on = True
            try:
                refused = args[0].f_code is not _here and _reaches(args[0], _server)
            finally:
                _inside.on = False
            if refused:
                raise _refusal("frames")
            return
        if event == "object.__getattr__":
            if args[1] not in ("tb_frame", "gi_frame"):
                return
            _inside.on = True
            try:
                if args[1] == "tb_frame":
                    reader = sys._getframe(1).f_globals
                    if reader is _server or reader is _context:  # the checker's own (Learner.last_line)
                        return
                    frame = args[0].tb_frame
                else:
                    frame = args[0].gi_frame
            finally:
                _inside.on = False
            if frame is not None and _reaches(frame, _server):
                raise _refusal("frames")
            return
        if event in _learner:
            _inside.on = True
            try:
                ours = _reaches(sys._getframe(1), _server)  # the checker's own copy of a storage's bytes
            finally:
                _inside.on = False
            if not ours:
                raise _refusal(_learner[event])
            return
        if event == "open" and args and _mem(args[0]):
            raise _refusal("memory")

    return refuse


def _torch_profiler_codes() -> frozenset[types.CodeType]:
    """The code of ``torch.autograd.profiler``'s functions and methods: the frames from which torch
    installs its own C profile function (``profile(with_stack=True)``), which runs no Python of the
    learner's. A function of the learner's compiled with that module's globals or file name has
    another code object."""
    import torch.autograd.profiler as profiler

    codes: set[types.CodeType] = set()
    for value in list(vars(profiler).values()):
        entries = list(vars(value).values()) if isinstance(value, type) and value.__module__ == profiler.__name__ \
            else [value]
        for entry in entries:
            for function in _functions_of(entry):
                if function.__module__ == profiler.__name__:
                    codes.add(function.__code__)
                    codes.update(c for c in function.__code__.co_consts if isinstance(c, types.CodeType))
    return frozenset(codes)


def _reaches(frame: Any, server_globals: dict[str, Any]) -> bool:
    """Whether ``frame`` is the checker's server's own or one of its callers is: the learner's code
    that holds it can walk to the server's records (``f_back``, ``f_locals``). Learner code runs
    under none of them (``tutor.child.checks.driver``), except code the server's own runs (a dunder
    method of a learner's object): such code may take no frame."""
    while frame is not None:
        if frame.f_globals is server_globals:
            return True
        frame = frame.f_back
    return False


class Refused(PermissionError):
    """What the seal's audit hook raises in the learner's code when it asks for something that
    would reach the checker's records from inside the run (issue 50). ``args``: the English
    sentence and the reason's key (``checks.refused.<key>``, said in the learner's language)."""

    def __init__(self, key: str):
        super().__init__(REFUSED_TEXT.get(key, key), key)

    def __str__(self) -> str:
        return str(self.args[0])


#: Why each refusal, in English (the learner's language: the said ``checks.refused.<key>``).
REFUSED_TEXT = {key: words.WORDS[f"checks.refused.{key}"] for key in ("profile", "audit", "frames", "gc", "memory")}

#: Events refused whoever asks, once the seal is taken (none is used by the checker or by torch).
_ALWAYS = {"sys.settrace": "profile", "sys.setprofile": "profile", "sys.addaudithook": "audit",
           "sys._current_frames": "frames",
           "gc.get_objects": "gc", "gc.get_referrers": "gc", "gc.get_referents": "gc",
           "ctypes.cdata": "memory", "ctypes.PyObj_FromPtr": "memory"}
#: Events refused only while the learner's code runs (the checker copies a storage's bytes with string_at).
_LEARNER_ONLY = {"ctypes.string_at": "memory", "ctypes.wstring_at": "memory"}


def _proc_mem(path: object, _fspath: Any = os.fspath, _str: Any = str, _bytes: Any = bytes, _type: Any = type,
              _real: Callable[[str], str] = os.path.realpath, _islink: Any = os.path.islink) -> bool:
    """Whether ``path`` (an ``open`` audit event's) names a process's memory file (``/proc/self/mem``,
    ``/proc/<pid>/task/<tid>/mem``), directly, by a relative name or through a symbolic link."""
    try:
        if _type(path) is int:
            return False
        text = _fspath(path)
        if _type(text) is _bytes:
            text = text.decode("utf-8", "surrogateescape")
        name = text.rstrip("/").rsplit("/", 1)[-1]
        if name != "mem" and not text.startswith("/proc") and not _islink(text):
            return False
        real = _real(text)
        return real.startswith("/proc/") and real.rstrip("/").endswith("/mem")
    except (TypeError, ValueError, OSError):
        return False


def _allowed_new(table: Any, saved: tuple[Any, ...], _dict: Any = dict, _zip: Any = zip, _map: Any = map, _id: Any = id,
                 _isinstance: Any = isinstance, _module: Any = types.ModuleType, _str: Any = str,
                 _volatile: Any = _VOLATILE, _ours: Any = _ours) -> bool:
    """Whether ``table`` differs from ``saved`` only by what the tutor's own code adds: a
    submodule imported later (a package's attribute naming its own submodule) or a warnings
    registry. Any replaced or removed value, or another new name (it would shadow a builtin in
    the module's functions), is tampering. Builtins bound at import, as in :func:`_same`."""
    keys, values = saved
    old = _dict(_zip(_map(_id, keys), _map(_id, values)))
    current = {_id(key): (key, value) for key, value in table.items()}
    for key_id, value_id in old.items():
        if key_id not in current or _id(current[key_id][1]) != value_id:
            return False
    name = table.get("__name__")
    for key_id, (key, value) in current.items():
        if key_id in old or key in _volatile:
            continue
        if not (_isinstance(value, _module) and _isinstance(name, _str)
                and _ours(name) and value.__name__ == f"{name}.{key}"):
            return False
    return True
