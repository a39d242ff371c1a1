"""Two runs at isolation none that overlap, from two sandboxes (two `grade` workers, or two
tutors): each keeps its own process limit. RLIMIT_NPROC counts every task of the uid on the
machine, and root's runs all drop to nobody, so a run that spawned many processes used to make
the other's interpreter fail to start threads (status `error`, no message)."""

from __future__ import annotations

import threading
import time

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
