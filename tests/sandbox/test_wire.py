"""The framing the tutor and its workers share: garbage is a WireError/ValueError, never a traceback."""

from __future__ import annotations

import socket
import struct

import pytest

from tutor.sandbox import wire


def test_a_deeply_nested_frame_is_a_wire_error():
    left, right = socket.socketpair()
    body = b"[" * 100_000 + b"]" * 100_000
    left.sendall(struct.pack("!I", len(body)) + body)
    with pytest.raises(wire.WireError, match="nested too deeply"):
        wire.recv_frame(right)
    left.close()
    right.close()


def test_a_deeply_nested_report_is_a_value_error():
    body = b"{\"a\":" * 100_000 + b"1" + b"}" * 100_000
    with pytest.raises(ValueError, match="nested too deeply"):
        wire.decode_report(struct.pack("!I", len(body)) + body)


def test_reports_round_trip():
    assert wire.decode_report(wire.encode_report({"learner_error": None, "n": [1, 2]})) == {
        "learner_error": None, "n": [1, 2]}
