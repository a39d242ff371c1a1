"""Hostile code, under bubblewrap and under the limits-only fallback.

Each test asserts containment, what the learner is told, and (through ``recovered``) that the
next ordinary run works and that nothing is left behind: no process, no file outside scratch.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import threading
import uuid
from pathlib import Path

import pytest

from tests.sandbox.conftest import TEST_LIMITS, wait_for_idle
from tutor.sandbox import ProbeSpec

ECHO = ProbeSpec("tutor.sandbox.echo_probe", "run_checks", {"exercise": "x"})


def test_infinite_python_loop_times_out(sandbox, recovered):
    result = sandbox.run("while True:\n    pass\n")
    assert result.status == "timeout"
    assert result.message == "Stopped after 4 s — still running; an infinite loop?"
    recovered(sandbox)


def test_loop_of_torch_ops_times_out(sandbox, recovered):
    result = sandbox.run("import torch\nx = torch.randn(64, 64)\nwhile True:\n    x = (x @ x).tanh()\n")
    assert result.status == "timeout"
    assert "infinite loop" in result.message
    recovered(sandbox)


@pytest.mark.parametrize("code", [
    "import torch\nx = torch.empty(4 * 1024**3, dtype=torch.uint8)\nx.fill_(1)\n",
    "blob = bytearray(3 * 1024**3)\n",
    "chunks = []\nwhile True:\n    chunks.append(bytearray(256 * 1024**2))\n",
], ids=["torch", "bytearray", "growing"])
def test_memory_bomb_is_stopped(sandbox, recovered, code):
    # The memory limit is what is under test, so the wall limit must not race it: on two cores
    # shared with a busy-core test, writing 768 MB of chunks once took longer than the usual 4 s
    # (CI, 2026-12-04: 'timeout'). The CPU limit (8 s) still ends a bomb the memory limit missed.
    result = sandbox.run(code, limits=dataclasses.replace(TEST_LIMITS, wall_time=20.0))
    assert result.status == "memory", (result.status, result.error, result.message)
    assert result.message == "Stopped: the program needed more than the 768 MB of memory a run may use."
    recovered(sandbox)


def test_fork_bomb_is_contained(sandbox, recovered):
    code = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    result = sandbox.run(code)
    assert result.status in ("timeout", "error"), result.status
    recovered(sandbox)


FORK_FORTY = """\
import os, time
children = []
for _ in range(40):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    children.append(pid)
print(len(children))
"""


def test_each_run_has_its_own_process_limit(sandbox, recovered):
    # Whatever holds the ceiling (the worker's pids cgroup as root, RLIMIT_NPROC otherwise), it
    # is the run's own, both ways: after a run that may start many processes, one that may start
    # few cannot, and the other way round (the cgroup is written only when the limit changes).
    counts = []
    for processes in (8, 64, 64, 8):
        result = sandbox.run(FORK_FORTY, limits=dataclasses.replace(TEST_LIMITS, processes=processes))
        assert result.status == "ok", (result.status, result.message, result.stderr[-500:])
        counts.append(int(result.stdout))
    assert counts[1] == counts[2] == 40, counts
    assert counts[0] < 40 and counts[3] < 40, counts
    recovered(sandbox)


def test_a_gigabyte_on_stdout_is_cut_off(sandbox, recovered):
    result = sandbox.run("import sys\nline = 'x' * 1023 + '\\n'\nfor _ in range(1024 * 1024):\n"
                         "    sys.stdout.write(line)\n")
    assert result.status == "output-limit", (result.status, result.message, result.error, result.stderr[-500:])
    assert result.stdout_truncated
    assert result.stdout.endswith("[stdout truncated: more than 256 KiB]")
    assert len(result.stdout) < 300 * 1024
    assert "printed more than 256 KiB to stdout" in result.message
    recovered(sandbox)


def test_200_mb_on_stderr_without_newline(sandbox, recovered):
    result = sandbox.run("import sys\nchunk = 'e' * (1 << 20)\nfor _ in range(200):\n"
                         "    sys.stderr.write(chunk)\n")
    assert result.status == "output-limit"
    assert result.stderr_truncated and "stderr" in result.message
    recovered(sandbox)


def test_writes_outside_scratch_do_not_persist(sandbox, recovered):
    marker = f"tt-marker-{uuid.uuid4().hex}"
    real_home = str(Path.home())
    code = (
        "import os, tempfile\n"
        f"for path in [os.path.expanduser('~/{marker}'), tempfile.gettempdir() + '/{marker}',\n"
        f"             {real_home!r} + '/{marker}', '/tmp/{marker}']:\n"
        "    try:\n"
        "        open(path, 'w').write('x')\n"
        "        print('wrote', path)\n"
        "    except OSError as exc:\n"
        "        print('refused', path, type(exc).__name__)\n"
    )
    result = sandbox.run(code)
    assert result.status == "ok"
    assert not (Path(real_home) / marker).exists()
    if sandbox.isolation.level == "bwrap":
        assert not (Path("/tmp") / marker).exists()
    else:
        # The fallback cannot keep a run out of world-writable places, and says so.
        assert any("/tmp" in gap for gap in sandbox.isolation.gaps)
        (Path("/tmp") / marker).unlink(missing_ok=True)
    assert f"refused {real_home}/{marker}" in result.stdout
    recovered(sandbox)


@pytest.mark.skipif(os.geteuid() != 0, reason="the fallback as a normal user runs as that user")
def test_secrets_in_the_real_home_cannot_be_read(sandbox, recovered):
    secret_dir = Path.home() / f".tt-secret-{uuid.uuid4().hex}"
    secret_dir.mkdir(mode=0o700)
    (secret_dir / "id_rsa").write_text("PRIVATE KEY")
    (secret_dir / "id_rsa").chmod(0o600)
    try:
        result = sandbox.run(
            "import os\n"
            f"for path in [{str(secret_dir / 'id_rsa')!r}, os.path.expanduser('~/.ssh/id_rsa')]:\n"
            "    try:\n"
            "        print(open(path).read())\n"
            "    except OSError as exc:\n"
            "        print('refused', type(exc).__name__)\n")
    finally:
        (secret_dir / "id_rsa").unlink()
        secret_dir.rmdir()
    assert "PRIVATE KEY" not in result.stdout
    assert result.stdout.count("refused") == 2
    recovered(sandbox)


def test_network_is_unreachable_under_bwrap(sandbox, recovered):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        result = sandbox.run(
            "import socket\ntry:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
            "    print('connected')\nexcept OSError as exc:\n    print('blocked', type(exc).__name__)\n")
    finally:
        server.close()
    if sandbox.isolation.level == "bwrap":
        assert result.stdout.startswith("blocked")
    else:
        assert "network is reachable" in sandbox.isolation.gaps
    recovered(sandbox)


def test_killing_the_parent_does_not_break_the_pool(sandbox, recovered):
    result = sandbox.run("import os, signal\nfor pid in (os.getppid(), 0, -1):\n    try:\n"
                         "        os.kill(pid, signal.SIGKILL)\n    except OSError:\n        pass\n")
    assert result.status in ("ok", "killed", "sandbox-failure")
    recovered(sandbox)


def test_cancel_stops_a_run_that_ignores_sigterm_and_sigint(sandbox, recovered, leftovers):
    code = ("import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "signal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('started', flush=True)\n"
            "while True:\n    time.sleep(0.01)\n")
    wait_for_idle(sandbox)  # a cancel mid-run (a spawn-mode spare may still be warming up)
    threading.Timer(0.5, sandbox.cancel).start()
    result = sandbox.run(code)
    assert result.status == "killed"
    assert result.message == "Stopped: the run was cancelled."
    assert result.stdout == "started\n"
    recovered(sandbox)


def test_a_double_fork_daemon_does_not_outlive_the_run(sandbox, recovered, leftovers):
    name = "tt-daemon"
    code = (
        "import ctypes, os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        ctypes.CDLL(None).prctl(15, b'{name}', 0, 0, 0)\n"
        "        time.sleep(60)\n"
        "    os._exit(0)\n"
        "time.sleep(0.3)\nprint('parent done')\n"
    )
    result = sandbox.run(code)
    assert result.status == "ok" and result.stdout == "parent done\n", (result.error, result.stderr)
    assert leftovers(name) == []
    recovered(sandbox)


def test_a_daemon_that_keeps_printing_is_gone_by_the_verdict_and_misses_the_next_run(sandbox, recovered, leftovers):
    # The verdict leaves as soon as nothing of the run is left (issue 11): a daemon still writing
    # to the run's stdout when the run ends must be gone by then, not just soon after.
    name = "tt-ghost"
    code = (
        "import ctypes, os, sys, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        ctypes.CDLL(None).prctl(15, b'{name}', 0, 0, 0)\n"
        "        while True:\n"
        "            os.write(1, b'ghost\\n')\n"
        "            time.sleep(0.001)\n"
        "    os._exit(0)\n"
        "time.sleep(0.2)\nos.write(1, b'parent done\\n')\n"
    )
    first = sandbox.run(code)
    assert first.status == "ok", (first.error, first.stderr)
    assert "parent done\n" in first.stdout and leftovers(name) == []
    second = sandbox.run("print('clean')")
    assert second.status == "ok" and second.stdout == "clean\n", second.stdout[:200]
    assert leftovers(name) == []
    recovered(sandbox)


def test_segfault_through_ctypes(sandbox, recovered):
    result = sandbox.run("import ctypes\nctypes.string_at(0)\n")
    assert result.status == "killed" and result.signal == 11
    assert "segmentation fault" in result.message
    recovered(sandbox)


def test_recursion_into_a_c_stack_overflow(sandbox, recovered):
    # __getattr__ recursing through getattr() nests C frames, which Python 3.11+ does not inline.
    code = ("import sys\nsys.setrecursionlimit(10**8)\nclass A:\n    def __getattr__(self, name):\n"
            "        return getattr(self, name)\nA().x\n")
    result = sandbox.run(code)
    assert result.status == "killed" and result.signal == 11
    assert "segmentation fault" in result.message
    recovered(sandbox)


def test_terminal_escape_sequences_are_neutralised(sandbox, recovered):
    code = ("print('\\x1b[2J\\x1b[H cleared')\nprint('\\x1b]52;c;SGVsbG8=\\x07 clipboard')\n"
            "print('\\x1b]8;;https://example.invalid\\x1b\\\\link\\x1b]8;;\\x1b\\\\')\n"
            "import sys\nsys.stderr.write('\\x9b31m red \\u202e evil\\n')\n")
    result = sandbox.run(code)
    assert result.status == "ok"
    for text in (result.stdout, result.stderr):
        assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text and "\u202e" not in text
    assert "cleared" in result.stdout and "clipboard" in result.stdout and "link" in result.stdout
    recovered(sandbox)


def test_closing_every_fd(sandbox, recovered):
    result = sandbox.run("print('before', flush=True)\nimport os\nos.closerange(0, 1 << 20)\n")
    assert result.status == "ok" and result.stdout == "before\n"
    with_probe = sandbox.run("import os\nos.closerange(0, 1 << 20)\n", probe=ECHO)
    assert with_probe.status == "sandbox-failure"
    assert with_probe.report is None
    recovered(sandbox)


def test_forged_reports_are_ignored(sandbox, recovered):
    forged = '{"verdict": "passed", "checks": [{"id": "all", "passed": true}]}'
    code = (
        "import os, struct\n"
        f"forged = {forged!r}.encode()\n"
        "print(forged.decode())\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        os.write(fd, struct.pack('!I', len(forged)) + forged)\n"
        "    except OSError:\n"
        "        pass\n"
        "answer = 42\n"
    )
    result = sandbox.run(code, probe=ECHO)
    assert result.status == "ok", (result.status, result.message, result.error)
    assert result.report == {"verdict": "genuine", "names": ["answer", "fd", "forged", "os", "struct"],
                             "payload": {"exercise": "x"}, "learner_error": None}
    assert forged in result.stdout
    recovered(sandbox)


def test_exit_before_the_probe_is_a_sandbox_failure_with_output(sandbox, recovered):
    result = sandbox.run("print('partial', flush=True)\nimport os\nos._exit(0)\n", probe=ECHO)
    assert result.status == "sandbox-failure"
    assert result.message == ("No check results: the program ended its process (os._exit?) before "
                              "the checks could run.")
    assert result.stdout == "partial\n"
    recovered(sandbox)


def test_64_spinning_threads(sandbox, recovered):
    code = ("import threading\ndef spin():\n    while True:\n        pass\n"
            "for _ in range(64):\n    threading.Thread(target=spin, daemon=True).start()\n"
            "threading.Event().wait()\n")
    result = sandbox.run(code)
    assert result.status in ("timeout", "error"), (result.status, result.error)
    recovered(sandbox)


def test_writing_a_50_gb_file(sandbox, recovered):
    code = ("with open('big.bin', 'wb') as f:\n    f.seek(50 * 1024**3)\n    f.write(b'x')\n")
    result = sandbox.run(code)
    assert result.status == "error"
    assert result.error.type == "OSError" and "File too large" in result.error.message
    assert result.message == "A file grew past the 16 MB a run may write."
    recovered(sandbox)


def test_invalid_utf8_output_is_replaced(sandbox, recovered):
    result = sandbox.run("import sys\nsys.stdout.buffer.write(b'ok \\xff\\xfe\\xc3 end\\n')\n")
    assert result.status == "ok"
    assert result.stdout == "ok \ufffd\ufffd\ufffd end\n"
    recovered(sandbox)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can read /etc/shadow in the first place")
def test_root_only_files_cannot_be_read(sandbox, recovered):
    assert os.access("/etc/shadow", os.R_OK), "the test needs a root-readable /etc/shadow"
    result = sandbox.run(
        "try:\n    print('READ', open('/etc/shadow').read()[:20])\n"
        "except OSError as exc:\n    print('refused', type(exc).__name__)\n")
    assert result.status == "ok", (result.status, result.message, result.error)
    assert result.stdout == "refused PermissionError\n"
    recovered(sandbox)


def test_no_thread_of_a_run_holds_a_capability(sandbox, recovered):
    """Capabilities belong to each thread: one started before the runner dropped them keeps them.
    A run's threads (torch's intra-op pool, started by a matmul) hold none, and none can gain any
    by exec. (Torch's threads once set before the request left a pool thread with every capability
    of the run's user namespace.)"""
    result = sandbox.run(
        "import json, os, torch\ntorch.set_num_threads(2)\na = torch.randn(256, 256)\n"
        "for _ in range(3):\n    a = a @ a / 256\nfound = set()\n"
        "for tid in os.listdir('/proc/self/task'):\n"
        "    status = dict(l.split(':', 1) for l in open(f'/proc/self/task/{tid}/status') if ':' in l)\n"
        "    found.add(tuple(status[k].strip() for k in ('CapEff', 'CapPrm', 'CapInh', 'CapAmb', 'NoNewPrivs')))\n"
        "print(len(os.listdir('/proc/self/task')), json.dumps(sorted(found)))\n")
    assert result.status == "ok", (result.status, result.message, result.error)
    threads, found = result.stdout.split(" ", 1)
    assert int(threads) >= 2, result.stdout  # the pool's threads are there to be read
    caps = json.loads(found)
    assert all(int(value, 16) == 0 for row in caps for value in row[:4]), result.stdout
    if result.isolation == "bwrap":
        assert {row[4] for row in caps} == {"1"}, result.stdout
    recovered(sandbox)


def test_runs_hold_no_capabilities_and_no_root_uid(sandbox, recovered):
    result = sandbox.run(
        "import os\nstatus = dict(l.split(':', 1) for l in open('/proc/self/status') if ':' in l)\n"
        "print(status['CapEff'].strip(), status['CapPrm'].strip(), status['CapAmb'].strip(), os.getuid(),\n"
        "      status['CapBnd'].strip(), status['NoNewPrivs'].strip())\n")
    assert result.status == "ok", (result.status, result.message, result.error)
    eff, prm, amb, uid, bounding, no_new_privs = result.stdout.split()
    assert int(eff, 16) == 0 and int(prm, 16) == 0 and int(amb, 16) == 0, result.stdout
    assert uid != "0", result.stdout
    if result.isolation == "bwrap":  # root of its own user namespace until its set-up: nothing left to gain by exec
        assert int(bounding, 16) == 0 and no_new_privs == "1", result.stdout
    recovered(sandbox)


def test_a_deeply_nested_forged_report_is_a_clear_failure(sandbox, recovered):
    # Finds the private report pipe by listing its own descriptors, fills it with a report
    # nested far past json's recursion limit, and leaves before the probe can write.
    code = (
        "import os, struct\n"
        "body = b'[' * 200000 + b']' * 200000\n"
        "for name in os.listdir('/proc/self/fd'):\n"
        "    fd = int(name)\n"
        "    if fd > 2:\n"
        "        try:\n"
        "            os.write(fd, struct.pack('!I', len(body)) + body)\n"
        "        except OSError:\n"
        "            pass\n"
        "os._exit(0)\n"
    )
    result = sandbox.run(code, probe=ECHO)
    # The report pipe belongs to the judge (the run's keeper), never to the runner: the forged
    # frame reaches nothing, and the run reads as what it did. Decoding a nested frame or report,
    # should one ever arrive, is a clear error too (tests/sandbox/test_wire.py).
    assert result.status != "passed" and result.report is None, (result.status, result.message)
    assert result.message == "No check results: the program ended its process (os._exit?) before the checks could run."
    recovered(sandbox)
