"""With per-run namespaces a run's folder is a tmpfs of its own on /tmp, mounted by its runner
before the request (issue 32: binding a folder the tutor made for each run cost the request path
~0.6 ms): as large as four of the largest files a run may write, gone with the run, never on the
machine's disk, and what a learner meets when it is full is said plainly."""

from __future__ import annotations

import dataclasses
import os

import pytest

from tests.sandbox.conftest import TEST_LIMITS

#: What a run says about its folder: size (MB), where it is, HOME, the files in it (folders are
#: the interpreter's, bound back read-only where it lives under /tmp as CI's checkout does, or a
#: spawn-mode runner's warm-up's), and the owner of a file it writes there beside its own uid.
LOOK = """\
import os
st = os.statvfs('/tmp')
found = sorted(n for n in os.listdir('/tmp') if os.path.isfile('/tmp/' + n))
open('mine.txt', 'w').write('hi')
print(st.f_blocks * st.f_frsize >> 20, os.getcwd(), os.environ['HOME'], found,
      os.stat('mine.txt').st_uid == os.getuid())
"""


@pytest.fixture
def private(sandbox):
    if not sandbox.isolation.per_run_namespaces:
        pytest.skip("only with per-run namespaces: elsewhere the run's folder is on the machine's disk")
    return sandbox


def test_a_runs_folder_is_a_fresh_tmpfs_of_its_own(private, recovered):
    before = set(os.listdir(private._scratch_root))
    for _ in range(2):  # the second run sees nothing of the first one's file
        result = private.run(LOOK)
        assert result.status == "ok", (result.status, result.message, result.error)
        assert result.stdout.split() == [str(TEST_LIMITS.tmp_mb), "/tmp", "/tmp", "[]", "True"], result.stdout
    # nothing was made for the run on the machine's disk
    assert set(os.listdir(private._scratch_root)) == before
    recovered(private)


def test_a_run_with_limits_of_its_own_keeps_its_sandboxs_folder_and_its_own_file_limit(private, recovered):
    # The runner gave up the capabilities a resize needs before its request: the folder is the
    # sandbox's size, while the largest file follows the run's own limits.
    limits = dataclasses.replace(TEST_LIMITS, file_size_mb=2 * TEST_LIMITS.file_size_mb)
    size = TEST_LIMITS.file_size_mb + 4  # past the sandbox's file limit, under the run's
    result = private.run("import os\nst = os.statvfs('/tmp')\nprint(st.f_blocks * st.f_frsize >> 20)\n"
                         f"open('big', 'wb').write(b'x' * ({size} << 20))\nprint(os.path.getsize('big') >> 20)\n",
                         limits=limits)
    assert (result.status, result.stdout.split()) == ("ok", [str(TEST_LIMITS.tmp_mb), str(size)]), \
        (result.status, result.stdout, result.message)
    recovered(private)


#: What a run tries to get back what it gave up: a user namespace of a process of its own (one
#: thread, forked), where it would hold every capability and could mount a tmpfs of any size.
NESTED = """\
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
pid = os.fork()
if pid == 0:
    r = libc.unshare(0x10000000 | 0x00020000)  # CLONE_NEWUSER | CLONE_NEWNS
    err = ctypes.get_errno()
    caps = [l.split()[1] for l in open('/proc/self/status') if l.startswith('CapEff')][0]
    os.write(1, f"{r} {os.strerror(err) if r else ''}|{caps}\\n".encode())
    os._exit(0)
os.waitpid(pid, 0)
"""


def test_a_run_cannot_make_a_user_namespace_and_hold_capabilities_again(private, recovered):
    result = private.run(NESTED)
    assert result.status == "ok", (result.status, result.message, result.error)
    outcome, caps = result.stdout.strip().split("|")
    assert outcome.startswith("-1 "), result.stdout  # refused (EPERM: its ids are mapped nowhere)
    assert int(caps, 16) == 0, result.stdout
    recovered(private)


def test_a_full_folder_is_said_plainly_and_the_next_run_is_fine(private, recovered):
    size = TEST_LIMITS.file_size_mb - 1  # each file under the file limit, five over the folder's
    result = private.run(f"for i in range(5):\n    open(f'f{{i}}', 'wb').write(b'x' * ({size} << 20))\n")
    assert result.status == "error", (result.status, result.message)
    assert result.error.message == "[Errno 28] No space left on device"
    assert result.message == (f"The run's files filled the {TEST_LIMITS.tmp_mb} MB its folder may hold "
                              "(four times the largest file a run may write).")
    assert private.run(LOOK).status == "ok"
    recovered(private)


VICTIM = "import time\nopen('secret', 'w').write('s3cret')\ntime.sleep(2.5)\nprint('done')\n"
#: Every way to another run's /tmp a run of the same sandbox (the same worker uid) could try: the
#: scratch root's folders, other processes' root, working folder and descriptors through /proc.
SNOOP = """
import glob, os, time
time.sleep(0.5)
found = []
paths = glob.glob('/tmp/torch-tutor-*/**/secret', recursive=True)
for pid in os.listdir('/proc'):
    if pid.isdigit():
        paths += [f'/proc/{pid}/root/tmp/secret', f'/proc/{pid}/cwd/secret']
        try:
            paths += [os.path.join(f'/proc/{pid}/fd', fd) for fd in os.listdir(f'/proc/{pid}/fd')]
        except OSError:
            pass
for path in paths:
    try:
        if open(path).read() == 's3cret':
            found.append(path)
    except (OSError, UnicodeDecodeError):
        pass
print(found)
"""


def test_a_run_cannot_reach_an_overlapping_runs_folder():
    """Two runs at once in one bubblewrap sandbox (a `grade` batch's two workers: one uid): the
    snoop finds nothing of the other's /tmp by any path."""
    import sys
    import threading

    from tutor.sandbox import Sandbox
    from tutor.sandbox.backends import choose
    from tutor.sandbox.isolation import IsolationError

    try:
        if not choose("bwrap", sys.executable).per_run_namespaces:
            pytest.skip("only with per-run namespaces")
    except IsolationError as exc:
        pytest.skip(f"bubblewrap does not work here: {exc}")
    with Sandbox(TEST_LIMITS, isolation="bwrap", mode="fork", workers=2, purpose="batch") as box:
        assert box.wait_ready(300)
        victim: dict = {}
        thread = threading.Thread(target=lambda: victim.setdefault("result", box.run(VICTIM)))
        thread.start()
        try:
            snoop = box.run(SNOOP)
        finally:
            thread.join()
    assert (snoop.status, snoop.stdout) == ("ok", "[]\n"), (snoop.status, snoop.stdout, snoop.message)
    assert (victim["result"].status, victim["result"].stdout) == ("ok", "done\n")
