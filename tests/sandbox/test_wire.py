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


# ---------------------------------------------------------------- PipeLink (the Windows transport)


def _pipe_link():
    """A link reading what the test writes on ``feed``, writing what the test reads on ``drain``."""
    import os

    r1, feed = os.pipe()
    drain, w2 = os.pipe()
    return wire.PipeLink(r1, w2), feed, drain


def test_a_pipe_link_carries_frames_both_ways():
    import os

    link, feed, drain = _pipe_link()
    os.write(feed, wire.encode_frame({"op": "run", "id": 1}) + wire.encode_frame({"op": "cancel", "id": 1}))
    assert link.recv(5) == ({"op": "run", "id": 1}, [])
    assert link.recv(5) == ({"op": "cancel", "id": 1}, [])
    link.send({"op": "done", "id": 1, "text": "é" * 10})
    data = os.read(drain, 1 << 16)
    assert struct.unpack("!I", data[:4])[0] == len(data) - 4 and b'"op":"done"' in data
    with pytest.raises(TimeoutError):
        link.recv(0.05)
    os.close(feed)
    with pytest.raises(wire.WireError, match="closed"):
        link.recv(5)
    with pytest.raises(wire.WireError):  # and every recv after says the same
        link.recv(5)
    link.close()
    with pytest.raises(OSError):
        link.send({"op": "exit"})
    os.close(drain)


@pytest.mark.parametrize("garbage, why", [
    (struct.pack("!I", wire.MAX_FRAME + 1), "over the limit"),
    (struct.pack("!I", 5) + b"nope!", "not JSON"),
    (struct.pack("!I", 2) + b"[]", "not an object"),
    (struct.pack("!I", 10) + b"{}", "mid-frame"),
])
def test_garbage_on_a_pipe_link_is_a_wire_error(garbage, why):
    import os

    link, feed, drain = _pipe_link()
    os.write(feed, garbage)
    os.close(feed)
    with pytest.raises(wire.WireError, match=why):
        link.recv(5)
    link.close()
    os.close(drain)
