"""Framing shared by the tutor and its sandbox workers: length-prefixed JSON, file descriptors
riding along as SCM_RIGHTS.

This module is imported inside the worker, which may run under another interpreter that has
torch but none of the tutor's dependencies: standard library only.
"""

from __future__ import annotations

import json
import socket
import struct
from typing import Sequence

_HEADER = struct.Struct("!I")
#: A request carries the learner's code and a probe payload; a reply carries only metadata.
MAX_FRAME = 64 * 1024 * 1024
#: The probe's report (profiler tables can be large) is capped separately, on both sides.
MAX_REPORT = 8 * 1024 * 1024
_MAX_FDS = 8


class WireError(Exception):
    """The peer closed the channel or sent something that is not a frame."""


def send_frame(sock: socket.socket, message: dict, fds: Sequence[int] = ()) -> None:
    body = json.dumps(message, separators=(",", ":")).encode("utf-8")
    data = _HEADER.pack(len(body)) + body
    if fds:
        # Descriptors travel with the first bytes: send the header with them, the rest after.
        sent = socket.send_fds(sock, [data[: _HEADER.size]], list(fds))
        data = data[sent:]
    sock.sendall(data)


def recv_frame(sock: socket.socket) -> tuple[dict, list[int]]:
    """One message and the descriptors sent with it; WireError on EOF or garbage."""
    fds: list[int] = []
    header = b""
    while len(header) < _HEADER.size:
        chunk, got, _flags, _addr = socket.recv_fds(sock, _HEADER.size - len(header), _MAX_FDS)
        fds.extend(got)
        if not chunk:
            _close_all(fds)
            raise WireError("channel closed")
        header += chunk
    (size,) = _HEADER.unpack(header)
    if size > MAX_FRAME:
        _close_all(fds)
        raise WireError(f"frame of {size} bytes is over the limit")
    body = bytearray()
    while len(body) < size:
        chunk = sock.recv(min(size - len(body), 1 << 20))
        if not chunk:
            _close_all(fds)
            raise WireError("channel closed mid-frame")
        body += chunk
    try:
        message = json.loads(body)
    except ValueError as exc:
        _close_all(fds)
        raise WireError(f"not JSON: {exc}") from None
    except RecursionError:
        _close_all(fds)
        raise WireError("a frame nested too deeply") from None
    if not isinstance(message, dict):
        _close_all(fds)
        raise WireError("frame is not an object")
    return message, fds


def encode_report(message: dict) -> bytes:
    """The child's one report: header + JSON, written once to the private report pipe."""
    body = json.dumps(message, separators=(",", ":"), default=repr).encode("utf-8")
    return _HEADER.pack(len(body)) + body


def decode_report(data: bytes) -> dict:
    """Inverse of encode_report; ValueError when the bytes are not exactly one report."""
    if len(data) < _HEADER.size:
        raise ValueError("report is empty or cut short")
    (size,) = _HEADER.unpack(data[: _HEADER.size])
    if size != len(data) - _HEADER.size:
        raise ValueError("report length does not match its header")
    try:
        message = json.loads(data[_HEADER.size:])
    except RecursionError:  # a forged report: json gives up past ~1000 levels with a traceback
        raise ValueError("nested too deeply") from None
    if not isinstance(message, dict):
        raise ValueError("report is not an object")
    return message


def _close_all(fds: list[int]) -> None:
    import os

    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
