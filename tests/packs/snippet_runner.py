"""Run many snippets, each in a forked child of one process that imported torch once.

Why: a fresh interpreter per example pays torch's import (seconds) every time; forking from a
parent that imported torch but never ran an operator (running one first can hang children in
OpenMP's barrier) costs milliseconds. Reads a JSON list of {"code", "timeout"} on stdin, writes a
JSON list of {"stdout", "stderr", "returncode"} on stdout.
"""

import json
import os
import signal
import sys
import tempfile
import traceback

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy  # noqa: E402,F401
import torch  # noqa: E402,F401
import torch.nn  # noqa: E402,F401
import torch.profiler  # noqa: E402,F401


def run_one(code: str, timeout: float) -> dict:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:  # child: never returns
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            sys.stdout = os.fdopen(1, "w", closefd=False)
            sys.stderr = os.fdopen(2, "w", closefd=False)
            signal.alarm(int(timeout) + 1)
            status = 0
            try:
                exec(compile(code, "<example>", "exec"), {"__name__": "__main__"})
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else 1
            except BaseException:
                traceback.print_exc()
                status = 1
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
        _, status = os.waitpid(pid, 0)
        out.seek(0)
        err.seek(0)
        code = os.waitstatus_to_exitcode(status)
        return {"stdout": out.read().decode(errors="replace"), "stderr": err.read().decode(errors="replace"),
                "returncode": code}


def main() -> None:
    jobs = json.load(sys.stdin)
    results = [run_one(job["code"], job.get("timeout", 120)) for job in jobs]
    json.dump(results, sys.__stdout__)


if __name__ == "__main__":
    main()
