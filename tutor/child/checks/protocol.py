"""The judge/runner protocol: one definition of every message, and the framing they travel in.

The **judge** (the run's keeper: it never runs learner code) evaluates the checks and sends
requests; the **runner** (the process that ran the learner's code) answers them. What the runner
sends back is plain data only: JSON with tagged values (``{"$": "tensor", ...}``, see
``server.Server.encode`` and ``remote.Session.decode``) and raw byte blobs for tensor storages. Never a pickle, never an object that could run code or lie
about itself in the judge.

A frame is ``!II`` (JSON length, blob count), the JSON, then each blob as ``!Q`` length + bytes.
Standard library only: both sides import it.

Every message is a TypedDict here, as ``vocab.py`` types the check kinds: ``send`` takes only a
``Message``, so mypy checks every field either side writes, and ``Request`` is what
``remote.Session.request`` sends and ``server.Server.answer`` dispatches on (``server.HANDLERS``).
``tests/static/test_protocol.py`` keeps the two sides in step: every request has a handler and a
sender, every message type is sent somewhere, and every field a side reads is one the other
side's message has. What comes *from the runner* is still read as untrusted data (``recv``
returns a plain dict): its type says what an honest runner sends, never what the judge may
assume.
"""

from __future__ import annotations

import json
import random
import socket
import struct
from typing import TYPE_CHECKING, Any, Iterator, Literal, TypedDict, Union, get_args

if TYPE_CHECKING:  # only in annotations, never evaluated: the child side may run Python 3.10
    from typing_extensions import NotRequired, Required

#: Every case carries a seed, and fresh ones are below this: exact in JSON, and more than any table
#: of precomputed inputs can cover. Here, not in ``context``, so the tutor's side (``check --seed``)
#: can check a seed without importing torch.
SEED_LIMIT = 1 << 48
#: The exit status of a runner that found its seal broken (after it sent the tampered frame):
#: here, not in ``seal``, so the server (which the seal seals) need not import the seal.
EXIT_TAMPERED = 86

_SYSTEM_RANDOM = random.SystemRandom()


def fresh_seed() -> int:
    """A seed nobody can predict (the operating system's randomness, not a generator's state)."""
    return _SYSTEM_RANDOM.randrange(SEED_LIMIT)

_HEAD = struct.Struct("!II")
_BLOB = struct.Struct("!Q")
#: What one answer may carry (tensor storages included); a bigger one is refused, not read.
MAX_JSON = 64 * 1024 * 1024
MAX_BLOBS = 4096
MAX_BLOB_BYTES = 1024 * 1024 * 1024


class ProtocolError(Exception):
    """The peer closed the channel or sent something that is not a frame."""


class ChannelClosed(ProtocolError):
    """The peer is gone (end of file): nothing to stop, it is ending by itself."""


# --------------------------------------------------------------------------- messages

Modes = TypedDict("Modes", {"grad_enabled": bool, "inference_mode": bool, "autocast": "str | bool"})
#: How a call's kept memory is measured (the memory check's ``measure``, ``auto`` resolved).
Measure = Literal["graph", "rss", "cuda"]


class Start(TypedDict):
    """keeper -> runner, once: what to run (stdout and stderr ride along as descriptors)."""

    op: Literal["start"]
    code: str
    filename: str
    scratch: str
    limits: dict[str, Any]
    threads: int | None
    stats: bool
    serve: bool
    prelude: NotRequired[str]  # the pack's prelude, run before the learner's code
    uses: NotRequired[list[list[str]]]  # [filename, code] of the learner's earlier answers, run after it
    uid: NotRequired[int]  # the run's own uid, where each run gets one
    top_level: NotRequired[float]  # checks follow: CPU seconds for the learner's top level (keeper.top_level_cpu)


class Ready(TypedDict):
    """runner -> judge, once, after the learner's code ran: what it defined and how it ended."""

    op: Literal["ready"]
    names: dict[str, Any]  # global name -> encoded value (callables and objects as handles)
    learner_error: dict[str, Any] | None
    setup_error: str | None
    repaired: list[str]
    private_mb: NotRequired[float | None]


class Observe(TypedDict, total=False):
    """What to watch during a call: a module's forward (modes seen, output dtypes)."""

    module: Any  # an encoded reference to the module (handle or known argument)
    outputs: list[str]


class Call(TypedDict, total=False):
    """judge -> runner: call ``target`` with pickled arguments and report what happened."""

    op: Required[Literal["call"]]
    target: Any  # {"callee": true}: the first pickled argument; {"getattr": [handle, name]}: a method
    args: int  # blob index of the pickled (args, kwargs, known tensors, known objects)
    tensors: list[Any]  # the pickled tensors' specs (dtype, shape, strides, storage)
    push: list[Any]  # where the judge changed tensors of a module that lives in the runner
    modes: Modes  # the judge's grad/inference/autocast modes: the call runs under them
    budget: float  # seconds before the runner stops the call itself
    wall: float  # wall seconds before it does (``Session.request`` sets it)
    capture: bool  # return what the call printed instead of printing it
    warnings: bool  # record the warnings the call emits (the `warns` check) and answer them
    observe: Observe
    measure: Measure
    want: Literal["value", "none"]
    case: int  # which of the judge's check cases this request belongs to (a random number)
    seed: int  # that case's seed: the runner seeds its generators at the case's first request
    threads: int  # intra-op threads for the call, when the check pins them (a profile: one)
    refresh: list[int]  # handles of modules to describe again after the call (the judge mirrors them)


class Repeat(TypedDict, total=False):
    """judge -> runner: time or profile callables (warm-up first), answering the raw numbers."""

    op: Required[Literal["time", "profile"]]
    args: int  # blob index of the pickled callables (the learner's handles, the check's functions)
    tensors: list[Any]  # as in Call
    warmup: int
    repeat: int
    budget: float
    wall: float  # as in Call
    threads: int  # intra-op threads for the measured calls (the check's `threads`, default 1)
    case: int  # as in Call
    seed: int


class GetAttr(TypedDict):
    """judge -> runner: an attribute of one of the learner's objects (a property may run code)."""

    op: Literal["getattr"]
    handle: int
    name: str
    budget: float
    wall: NotRequired[float]  # as in Call


class Answer(TypedDict, total=False):
    """runner -> judge: the result of one request, as data."""

    op: Required[Literal["answer"]]
    value: Any
    raised: dict[str, Any]  # type, mro (names), message, lineno, text
    timeout: dict[str, Any]  # lineno, code, by_wall
    cpu: float  # the CPU seconds the request cost the runner's main thread
    printed: str
    warned: list[dict[str, Any]]  # category (name), mro (names), message: one per warning the call emitted
    writeback: dict[str, Any]  # what the call did to the arguments it received
    refreshed: dict[str, Any]  # handle -> the module's state again (``refresh``)
    modes_after: dict[str, Any]  # the modes the call left switched on or off
    observed: dict[str, Any]
    kept: int
    held: int  # what a measured call left allocated in the runner's process (``Session.heap_left``)
    numbers: Any
    repaired: list[str]
    error: str  # the request itself could not be served (a checker bug)


class CallBack(TypedDict):
    """runner -> judge, while a call is in progress: the learner's code called a bound method of
    the check's (``calls.append``); the judge runs it and answers with a ``Result``."""

    op: Literal["callback"]
    fid: int
    args: Any  # [positional list, keyword dict], encoded as values are


class Result(TypedDict, total=False):
    """judge -> runner: what the check's function returned (pickled, like arguments), or raised."""

    op: Required[Literal["result"]]
    args: int
    tensors: list[Any]  # as in Call
    budget: float
    raised: str


class Tampered(TypedDict):
    """runner -> judge, in place of any other message: the runner's seal found the checker's code
    replaced (``tutor.child.checks.seal``); the runner has ended. Built once, before the learner's code."""

    op: Literal["tampered"]


class Bye(TypedDict):
    """judge -> runner: no more requests; the runner exits."""

    op: Literal["bye"]


#: What the judge asks of the runner (``remote.Session.request``); each has a handler in
#: ``server.HANDLERS``.
Request = Union[Call, Repeat, GetAttr]
#: What the judge sends the runner while it serves.
JudgeMessage = Union[Request, Result, Bye]
#: What the runner sends the judge once its learner's code ran: one ``Ready``, then for each
#: request an ``Answer``, with a ``CallBack`` for each call of a check's function meanwhile; or,
#: once its seal broke, a ``Tampered`` instead of any of them.
RunnerMessage = Union[Ready, Answer, CallBack, Tampered]
#: Every message of the protocol (the keeper's ``Start`` included).
Message = Union[Start, JudgeMessage, RunnerMessage]


#: Every request's ``op`` (``tests/static/test_protocol.py`` checks it against the types above).
RequestOp = Literal["call", "getattr", "time", "profile"]
REQUEST_OPS: tuple[str, ...] = get_args(RequestOp)


# --------------------------------------------------------------------------- framing


def head(message: Message, blobs: int = 0) -> bytes:
    """A frame's head and JSON body (its ``blobs`` blobs follow it, each with its length)."""
    body = json.dumps(message, separators=(",", ":"), allow_nan=True).encode("utf-8")
    return _HEAD.pack(len(body), blobs) + body


def send(sock: socket.socket, message: Message, blobs: list[bytes] | tuple[Any, ...] = ()) -> None:
    parts = [head(message, len(blobs))]
    for blob in blobs:
        parts.append(_BLOB.pack(len(blob)))
        parts.append(blob)
    if sum(len(part) for part in parts) < (1 << 20):
        sock.sendall(b"".join(parts))
        return
    for part in parts:
        sock.sendall(part)


def _exactly(sock: socket.socket, size: int) -> bytes:
    data = bytearray(size)
    view = memoryview(data)
    got = 0
    while got < size:
        count = sock.recv_into(view[got:], min(size - got, 1 << 22))
        if not count:
            raise ChannelClosed("channel closed")
        got += count
    return bytes(data)


#: How deep a frame's JSON may nest: an honest answer is a few dozen levels (a module 30 deep
#: with its parameters); deeper is refused before the judge's own (recursive) code reads it.
MAX_DEPTH = 200
#: The first bound on a frame's JSON, before it is read: its bytes times this must fit in the
#: judge's room (a frame bigger than ~25 MB at the 512 MB budget is refused unread).
JSON_FACTOR = 20
#: What parsing a frame's JSON may build, counted in its text before it is parsed
#: (:func:`parse_cost`): bytes per byte of text, per container (``{`` or ``[``) and per separator
#: (``,`` or ``:``). Measured with tracemalloc on ``json.loads`` of the costliest patterns (CPython
#: 3.11, 2 million elements each): ``[{},{},...]`` builds 76 bytes per 3-byte element (25 per
#: byte: the bytes alone let 25 MB of it build ~600 MB), ``[[],...]`` 68, ``[[]]`` 158,
#: ``{"a":0}`` 201, ``{"<unique key>":0}`` 290, a unique string 71, ``0.0`` 37, and a string with
#: one astral character 8 per byte (the text decoded at 4 bytes a character, and the value). Each
#: pattern's count is above what it builds; the input, its copy and the decoded text are the 10 per
#: byte.
PARSE_PER_BYTE = 10
PARSE_PER_CONTAINER = 100
PARSE_PER_SEPARATOR = 48


class FrameRefused(ProtocolError):
    """The peer sent a frame the judge will not hold: nested deeper than :data:`MAX_DEPTH`, or
    bigger than the room the judge has left (``memory``). The sender's doing, not a broken pipe."""

    def __init__(self, message: str, memory: bool = False):
        super().__init__(message)
        self.memory = memory


def parse_cost(body: bytes) -> int:
    """The most memory parsing ``body`` (a frame's JSON) can build, in bytes: counted in its text,
    where a bracket, comma or colon inside a string counts too (never less than parsing builds).
    Four passes of ``bytes.count``: ~10 ms for 25 MB."""
    containers = body.count(b"{") + body.count(b"[")
    separators = body.count(b",") + body.count(b":")
    return len(body) * PARSE_PER_BYTE + containers * PARSE_PER_CONTAINER + separators * PARSE_PER_SEPARATOR


def _too_deep(message: object) -> bool:
    """Whether any container in ``message`` sits more than MAX_DEPTH levels down. No recursion,
    and memory for one iterator per level open: a stack of every container still to visit (a
    tuple each) took ~500 MB more for a frame of 8 million empty dicts."""
    stack: list[Iterator[Any]] = [iter((message,))]
    while stack:
        if len(stack) > MAX_DEPTH + 1:  # the message itself is the first level opened
            return True
        for item in stack[-1]:
            kind = type(item)
            if kind is dict:
                stack.append(iter(item.values()))
                break
            if kind is list:
                stack.append(iter(item))
                break
        else:
            stack.pop()
    return False


def recv(sock: socket.socket, room: int | None = None) -> tuple[dict[str, Any], list[bytes]]:
    """One frame. ``room``: the bytes the reader may still hold (the judge's budget, see
    ``remote.Session``); a frame that would take more is refused before it is read in."""
    size, count = _HEAD.unpack(_exactly(sock, _HEAD.size))
    if size > MAX_JSON or count > MAX_BLOBS:
        raise ProtocolError(f"a frame of {size} bytes and {count} blobs is over the limit")
    if room is not None and size * JSON_FACTOR > room:
        raise FrameRefused(f"a message of {size} bytes of JSON, more than the checker has room for", memory=True)
    body = _exactly(sock, size)
    if room is not None:
        cost = parse_cost(body)
        if cost > room:
            raise FrameRefused(f"a message of {size} bytes of JSON that would take {cost >> 20} MB once read, "
                               "more than the checker has room for", memory=True)
    try:
        message = json.loads(body)
    except RecursionError:
        raise FrameRefused(f"a message nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:
        raise ProtocolError(f"not JSON: {exc}") from None
    if type(message) is not dict:
        raise ProtocolError("a frame that is not an object")
    if _too_deep(message):
        raise FrameRefused(f"a message nested more than {MAX_DEPTH} levels deep")
    blobs = []
    total = 0
    limit = MAX_BLOB_BYTES if room is None else min(MAX_BLOB_BYTES, room)
    for _ in range(count):
        (length,) = _BLOB.unpack(_exactly(sock, _BLOB.size))
        total += length
        if total > limit:
            if limit < MAX_BLOB_BYTES:
                raise FrameRefused(f"a message carrying more than {limit // (1 << 20)} MiB of data, more than "
                                   "the checker has room for", memory=True)
            raise ProtocolError("the frame's data is over the limit")
        blobs.append(_exactly(sock, length))
    return message, blobs
