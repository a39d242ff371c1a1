"""A runner cannot take the judge down (issue 26, part 3): whatever it sends on its channel, the
judge's memory stays within a fixed budget and a frame nested deeper than any honest answer is
refused. Both end the run with the submission's status (``memory``, ``error``), never
``sandbox-failure``. The attacks write their own frames on the runner's channel, before the
runner's ``ready`` (the learner's code runs first), through the real sandbox in both modes.
"""

from __future__ import annotations

import textwrap

import pytest

from tutor.child.checks.remote import Session

#: The trust boundary: in fork and in spawn mode (tests/checks/conftest.py, sandbox_modes).
pytestmark = pytest.mark.both_modes

#: Finds the runner's channel to the judge (the one socket among its descriptors) and writes a
#: frame on it as the runner's first: ``!II`` (JSON length, blob count), JSON, blobs.
SEND_FIRST = textwrap.dedent("""\
    import json, os, stat, struct

    def send_first(message, blobs=()):
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            try:
                if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                    continue
            except OSError:
                continue
            body = message if isinstance(message, bytes) else json.dumps(message).encode()
            frame = struct.pack("!II", len(body), len(blobs)) + body
            for blob in blobs:
                frame += struct.pack("!Q", len(blob)) + blob
            os.write(fd, frame) if len(frame) < 65536 else _write_all(fd, frame)

    def _write_all(fd, data):
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]

    def f(x):
        return x * 2
""")
CHECK = {"id": "double", "kind": "tensor", "setup": "x = torch.ones(3)", "value": "f(x)", "close_to": "x * 2"}


def test_a_first_frame_nested_200000_deep_is_the_submissions_error(grade):
    """It killed the judge (RecursionError in protocol.recv) and the row said sandbox-failure."""
    code = SEND_FIRST + 'send_first(b"[" * 200000 + b"]" * 200000)\n'
    report = grade(code, CHECK)
    assert report.run.status == "error", (report.run.status, report.run.message)
    assert "nested more than 200 levels deep" in report.run.message, report.run.message
    assert not report.passed


def test_a_blob_described_as_many_tensors_is_not_decoded_many_times(grade):
    """One 64 MiB blob named by twelve storage keys: the judge decoded a copy per key (3.1 GB for
    shape-mismatch, 19.2 GB for a profile check). Its budget ends the run as `memory` instead."""
    megabytes = 64
    n = 12  # 768 MiB of copies: over the budget
    assert n * megabytes * (1 << 20) > Session.MEMORY_BUDGET
    code = SEND_FIRST + textwrap.dedent(f"""\
        spec = {{"$": "tensor", "param": False, "dtype": "uint8", "device": "cpu", "layout": "strided",
                 "requires_grad": False, "is_leaf": True, "grad_fn": None, "is_inference": False,
                 "shape": [{megabytes} << 20], "stride": [1], "offset": 0, "blob": 0}}
        items = [dict(spec, storage=f"r{{i}}") for i in range({n})]
        send_first({{"op": "ready", "names": {{"f": {{"$": "list", "items": items}}}}, "learner_error": None,
                    "setup_error": None, "repaired": [], "private_mb": None}}, [bytes({megabytes} << 20)])
    """)
    report = grade(code, CHECK)
    assert report.run.status == "memory", (report.run.status, report.run.message)
    assert f"more than {Session.MEMORY_BUDGET >> 20} MB of data" in report.run.message, report.run.message
    assert not report.passed


def test_an_honest_frame_with_tensors_is_not_refused(grade):
    """The budget is far above what the checks' own answers take: a 16 MiB global, read."""
    code = "import torch\nbig = torch.ones(4 << 20)\ndef f(x):\n    return x * 2 + big[:3] - 1\n"
    report = grade(code, CHECK)
    assert report.run.status == "ok" and report.passed, [c.message for c in report.checks]


def test_a_frame_of_millions_of_empty_objects_is_refused_for_what_parsing_it_builds(grade):
    """Issue 50: ~25 MB of `[{},{},...]`, just under the size check (bytes times JSON_FACTOR): the
    judge parsed 8 million dicts, ~600 MB, and its depth walk a tuple per dict on top (920 MB of
    RSS against a 512 MB budget). What a frame's text can build is counted before it is parsed."""
    from tutor.child.checks import protocol

    size = Session.MEMORY_BUDGET // protocol.JSON_FACTOR - 64
    assert size * protocol.JSON_FACTOR <= Session.MEMORY_BUDGET  # the size check lets it through
    n = (size - 40) // 3
    # built by repeating bytes, not by joining a list of 8 million: the frame is the attack, and
    # the join cost ~1.5 s of CPU on a busy machine, the top level's own limit before the checks
    code = SEND_FIRST + textwrap.dedent(f"""\
        body = b'{{"op":"answer","value":[' + b"{{}}," * ({n} - 1) + b'{{}}]}}'
        send_first(body)
    """)
    report = grade(code, CHECK)
    assert report.run.status == "memory", (report.run.status, report.run.message)
    assert f"more than {Session.MEMORY_BUDGET >> 20} MB of data" in report.run.message, report.run.message
    assert not report.passed
