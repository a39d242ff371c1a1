"""Two runs at isolation none that overlap, from two sandboxes (two `grade` workers, or two
tutors). Each keeps its own process limit: RLIMIT_NPROC counts every task of the uid on the
machine, so a run that spawned many processes used to make the other's interpreter fail to start
threads (status `error`, no message). And as root, where every run used to drop to nobody, a run
could kill the other, or read and write its folder: each run now has a uid of its own."""

from __future__ import annotations

import os
import threading
import time

import pytest

from tests.sandbox.conftest import TEST_LIMITS
from tutor.sandbox import Sandbox

HOG = ("import subprocess, time\n"
       "kids = [subprocess.Popen(['sleep', '6']) for _ in range(50)]\n"
       "print(len(kids))\n"
       "time.sleep(5)\n")
WORK = "import torch\nprint(torch.ones(3).sum().item())\n"


def test_a_run_full_of_processes_does_not_starve_an_overlapping_run():
    with Sandbox(TEST_LIMITS, isolation="none", mode="fork", workers=1) as hog_box, \
            Sandbox(TEST_LIMITS, isolation="none", mode="fork", workers=1) as work_box:
        hog_box.wait_ready(300)
        work_box.wait_ready(300)
        hogging = {}
        thread = threading.Thread(target=lambda: hogging.setdefault("result", hog_box.run(HOG)))
        thread.start()
        try:
            # Once the hog holds its 50 processes, run real work beside it, twice.
            time.sleep(2.5)
            results = [work_box.run(WORK) for _ in range(2)]
        finally:
            thread.join()
        assert hogging["result"].stdout.startswith("50"), (hogging["result"].status, hogging["result"].message)
        for result in results:
            assert (result.status, result.stdout) == ("ok", "3.0\n"), (result.status, result.message, result.stderr)


# Runs at isolation none as root: each drops to a uid of its own, so a run cannot signal, trace
# or read another run that overlaps it (two `grade --unisolated --workers 2` submissions in a
# container). As another user, the runs are that user's: nothing separates them at none.
KILLER = """
import os, signal, time
me, uid, hit = os.getpid(), os.getuid(), set()
end = time.time() + 3.0
while time.time() < end:
    for name in os.listdir('/proc'):
        if name.isdigit() and int(name) != me:
            try:
                if os.stat('/proc/' + name).st_uid == uid:
                    os.kill(int(name), signal.SIGKILL)
                    hit.add(int(name))
            except OSError:
                pass
    time.sleep(0.05)
print('killed', len(hit))
"""
#: The victim's folder exists from the moment its request leaves the tutor; in spawn mode a run
#: that names the profiler waits there while its spare warms up (seconds): the attack has time.
VICTIM = "# the profiler\nimport time\nopen('secret', 'w').write('s3cret')\ntime.sleep(2.5)\nprint('done')\n"
SNOOP = """
import glob, os, time
time.sleep(0.5)
found = []
for root in glob.glob('/tmp/torch-tutor-*'):
    for worker in range(1, 13):  # the folders' names are guessable (the root above is not listable)
        for run in range(6):
            folder = os.path.join(root, f'run-w{worker}-{run}')
            if os.path.realpath(folder) == os.path.realpath(os.getcwd()):
                continue  # this run's own
            for action in ('read', 'write'):
                try:
                    if action == 'read':
                        found.append(open(os.path.join(folder, 'secret')).read())
                    else:
                        open(os.path.join(folder, 'planted.py'), 'w').write('x = 1')
                        found.append('planted in ' + folder)
                except OSError:
                    pass
print(found)
"""


@pytest.fixture(scope="module", params=["fork", "spawn"])
def pair(request):
    """Two sandboxes at isolation none (two `grade` workers): one attacks, one is attacked."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("only root can give each run at isolation none a uid of its own")
    spares = 2 if request.param == "spawn" else 1  # runs come back to back: each takes a spare
    with Sandbox(TEST_LIMITS, isolation="none", mode=request.param, workers=spares) as attacker_box, \
            Sandbox(TEST_LIMITS, isolation="none", mode=request.param, workers=spares) as victim_box:
        attacker_box.wait_ready(300)
        victim_box.wait_ready(300)
        yield attacker_box, victim_box


def _beside(pair, attack: str) -> tuple:
    """The victim's run, with the attack run from the other sandbox while it runs."""
    attacker_box, victim_box = pair
    victim = {}
    thread = threading.Thread(target=lambda: victim.setdefault("result", victim_box.run(VICTIM)))
    thread.start()
    try:
        time.sleep(0.3)
        attack_result = attacker_box.run(attack)
    finally:
        thread.join()
    return attack_result, victim["result"]


def test_a_run_cannot_kill_an_overlapping_run(pair):
    killer, victim = _beside(pair, KILLER)
    assert killer.status == "ok", (killer.status, killer.message, killer.stderr)
    assert (victim.status, victim.stdout) == ("ok", "done\n"), (victim.status, victim.message)


def test_a_run_cannot_read_or_write_an_overlapping_runs_folder(pair):
    snoop, victim = _beside(pair, SNOOP)
    assert (snoop.status, snoop.stdout) == ("ok", "[]\n"), (snoop.status, snoop.stdout, snoop.message)
    assert (victim.status, victim.stdout) == ("ok", "done\n"), (victim.status, victim.message)


def test_a_run_with_a_uid_of_its_own_has_a_user_name(pair):
    """No user database knows a run's uid, so getpass.getuser() (which torch.compile's cache and
    many libraries call) raised KeyError; it reads USER first."""
    code = "import os\nprint(os.environ.get('USER'), os.environ.get('LOGNAME'), os.getuid() >= 0x70000000)\n"
    result = pair[0].run(code)
    assert (result.status, result.stdout) == ("ok", "tutor-run tutor-run True\n"), (result.status, result.message)
