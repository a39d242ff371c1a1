"""Framing shared by the tutor and its sandbox workers: length-prefixed JSON, file descriptors
riding along as SCM_RIGHTS where the OS can pass them (``fd_passing``).

A ``Link`` is one end of the channel between the tutor and a worker or a spare's judge, whatever
carries it: ``SocketLink`` (a Unix socket; descriptors ride along) or ``PipeLink`` (the same
frames over a child's stdin and stdout, read by a thread, for where descriptors cannot be passed
and only sockets can be waited on: Windows). Both ends of that channel use them, so neither the
tutor's ``WorkerProcess`` nor the spare's judge loop asks which transport it has.

This module is imported inside the worker, which may run under another interpreter that has
torch but none of the tutor's dependencies: standard library only.
"""

from __future__ import annotations

import json
import os
import queue
import selectors
import socket
import time
import struct
import threading
from typing import Any, Protocol, Sequence

_HEADER = struct.Struct("!I")
#: A request carries the learner's code and a probe payload; a reply carries only metadata.
MAX_FRAME = 64 * 1024 * 1024
#: The probe's report (profiler tables can be large) is capped separately, on both sides.
MAX_REPORT = 8 * 1024 * 1024
_MAX_FDS = 8


class WireError(Exception):
    """The peer closed the channel or sent something that is not a frame."""


def fd_passing() -> bool:
    """Whether descriptors can ride along with a frame (SCM_RIGHTS: Linux and macOS, not
    Windows). ``TORCH_TUTOR_EMULATE_WINDOWS=1`` removes ``socket.send_fds``, so this says no."""
    return hasattr(socket, "send_fds") and hasattr(socket, "recv_fds")


def encode_frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, separators=(",", ":")).encode("utf-8")
    return _HEADER.pack(len(body)) + body


def decode_body(body: bytes | bytearray) -> dict[str, Any]:
    try:
        message = json.loads(body)
    except ValueError as exc:
        raise WireError(f"not JSON: {exc}") from None
    except RecursionError:
        raise WireError("a frame nested too deeply") from None
    if not isinstance(message, dict):
        raise WireError("frame is not an object")
    return message


class Link(Protocol):
    """One end of the tutor's channel to a worker (or a spare's judge), whatever carries it."""

    #: Whether descriptors ride along with frames (the run's stdout, stderr and report pipes).
    carries_fds: bool

    def send(self, message: dict[str, Any], fds: Sequence[int] = ()) -> None:
        """One whole frame, from any thread; OSError when the other side is gone."""

    def recv(self, timeout: float | None = None) -> tuple[dict[str, Any], list[int]]:
        """The next frame and the descriptors that came with it; TimeoutError when none came in
        time (nothing is lost then), WireError once the channel ended or carried garbage."""

    def poll(self, reads: list[int], timeout: float) -> tuple[list[int], dict[str, Any] | None]:
        """Wait up to ``timeout`` for a frame or for one of ``reads`` (pipes; only where
        ``carries_fds``) to be readable: (the readable ones, the frame or None). Descriptors that
        come with a frame here are closed."""

    def close(self) -> None:
        ...


def _readable(sock: socket.socket, reads: Sequence[int], timeout: float | None) -> list[int | socket.socket]:
    with selectors.DefaultSelector() as selector:
        selector.register(sock, selectors.EVENT_READ)
        for fd in reads:
            selector.register(fd, selectors.EVENT_READ)
        return [key.fileobj for key, _ in selector.select(timeout)]  # type: ignore[misc]


class SocketLink:
    """Frames over a socket, descriptors riding along where the OS passes them. Sends are whole
    frames under a lock, from any thread; one thread receives."""

    carries_fds = True

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self._send_lock = threading.Lock()
        self._closed = False

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, message: dict[str, Any], fds: Sequence[int] = ()) -> None:
        with self._send_lock:
            send_frame(self.sock, message, fds)

    def recv(self, timeout: float | None = None) -> tuple[dict[str, Any], list[int]]:
        # Waits for the frame's first byte, never inside a frame: a timeout loses nothing. In
        # slices, so that close() from another thread ends the wait: a socket closed under a
        # select() never wakes it (seen: quitting while a worker warmed up waited 330 s).
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        while True:
            if self._closed:
                raise OSError("the link is closed")
            left = 0.25 if deadline is None else min(0.25, deadline - time.monotonic())
            if left <= 0:
                raise TimeoutError("no frame in time")
            if _readable(self.sock, (), left):
                break
        return recv_frame(self.sock)

    def poll(self, reads: list[int], timeout: float) -> tuple[list[int], dict[str, Any] | None]:
        ready = _readable(self.sock, reads, timeout)
        message = None
        if self.sock in ready:
            message, fds = recv_frame(self.sock)
            _close_all(fds)
        return [fd for fd in ready if isinstance(fd, int)], message

    def close(self) -> None:
        self._closed = True  # a thread waiting in recv() sees it within a slice
        self.sock.close()


class PipeLink:
    """Frames over two pipes (a child's stdin and stdout), for where neither descriptor passing
    nor ``select`` on pipes exists (Windows): a thread reads frames into a queue, so a wait with
    a timeout is a ``queue.get``. Sends are whole frames under a lock, from any thread."""

    carries_fds = False

    def __init__(self, read_fd: int, write_fd: int, name: str = "tutor-link"):
        self.read_fd, self.write_fd = read_fd, write_fd
        self._send_lock = threading.Lock()
        self._frames: "queue.Queue[dict[str, Any] | WireError]" = queue.Queue()
        self._closed = False
        threading.Thread(target=self._read_loop, name=name, daemon=True).start()

    def send(self, message: dict[str, Any], fds: Sequence[int] = ()) -> None:
        """OSError when the other side is gone."""
        if fds:
            raise ValueError("descriptors cannot travel over pipes")
        view = memoryview(encode_frame(message))
        with self._send_lock:
            if self._closed:
                raise OSError("the link is closed")
            while view:
                view = view[os.write(self.write_fd, view):]

    def recv(self, timeout: float | None = None) -> tuple[dict[str, Any], list[int]]:
        """The next frame (never with descriptors); TimeoutError when none came in time,
        WireError once the pipe ended."""
        try:
            item = self._frames.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError("no frame in time") from None
        if isinstance(item, WireError):
            self._frames.put(item)  # every later recv says the same
            raise item
        return item, []

    def poll(self, reads: list[int], timeout: float) -> tuple[list[int], dict[str, Any] | None]:
        if reads:
            raise ValueError("a pipe link waits for frames only")
        try:
            return [], self.recv(timeout)[0]
        except TimeoutError:
            return [], None

    def close(self) -> None:
        with self._send_lock:
            if self._closed:
                return
            self._closed = True
            try:
                os.close(self.write_fd)
            except OSError:
                pass

    def _read_exactly(self, size: int) -> bytes:
        data = bytearray()
        while len(data) < size:
            chunk = os.read(self.read_fd, min(size - len(data), 1 << 20))
            if not chunk:
                raise WireError("channel closed" if not data else "channel closed mid-frame")
            data += chunk
        return bytes(data)

    def _read_loop(self) -> None:
        try:
            while True:
                (size,) = _HEADER.unpack(self._read_exactly(_HEADER.size))
                if size > MAX_FRAME:
                    raise WireError(f"frame of {size} bytes is over the limit")
                self._frames.put(decode_body(self._read_exactly(size)))
        except WireError as exc:
            self._frames.put(exc)
        except OSError as exc:
            self._frames.put(WireError(f"channel closed: {exc}"))


def send_frame(sock: socket.socket, message: dict[str, Any], fds: Sequence[int] = ()) -> None:
    data = encode_frame(message)
    if fds:
        # Descriptors travel with the first bytes: send the header with them, the rest after.
        sent = socket.send_fds(sock, [data[: _HEADER.size]], list(fds))
        data = data[sent:]
    sock.sendall(data)


def recv_frame(sock: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """One message and the descriptors sent with it; WireError on EOF or garbage."""
    fds: list[int] = []
    header = b""
    while len(header) < _HEADER.size:
        if fd_passing():
            chunk, got, _flags, _addr = socket.recv_fds(sock, _HEADER.size - len(header), _MAX_FDS)
            fds.extend(got)
        else:
            chunk = sock.recv(_HEADER.size - len(header))
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
        return decode_body(body), fds
    except WireError:
        _close_all(fds)
        raise


def encode_report(message: dict[str, Any]) -> bytes:
    """The child's one report: header + JSON, written once to the private report pipe."""
    body = json.dumps(message, separators=(",", ":"), default=repr).encode("utf-8")
    return _HEADER.pack(len(body)) + body


def decode_report(data: bytes) -> dict[str, Any]:
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
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
