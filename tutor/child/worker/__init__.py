"""The child side of the sandbox: a warm worker that imports torch once and runs each snippet in a
fresh process.

Runs inside the sandbox (under bubblewrap when it works), possibly under another interpreter
that has torch but none of the tutor's dependencies: standard library, torch and numpy only.

Three kinds of process live here:

* the **worker** (``serve.main``) imports torch and the profiler's modules and never runs a torch
  op: one multi-threaded op before a fork leaves every child hung in libgomp's barrier;
* a **keeper** (``keeper.py``), forked ahead of the next request, becomes a child subreaper (and,
  where namespaces work, unshares a user, PID and mount namespace), forks the runner, enforces
  wall time, and after the run kills whatever the run left behind before it reports;
* the **runner** (``runner.py``) is the keeper's child (PID 1 of its own namespace where
  namespaces work): it waits for the request, applies the limits, runs the learner's code, then
  the probe, and writes one report to a private pipe. Nothing it does reaches the next run: it
  never serves two.

Keeping the keeper/runner pair forked ahead takes two forks out of the request's path. Every
call into the operating system that is not portable Python (prctl, mounts, namespaces, ``/proc``)
lives in ``linux.py``.
"""

import os

#: Set before torch loads: OpenBLAS threads started in the worker would not survive the fork.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
