"""Author patterns matched with a time bound, without holding the caller's interpreter.

A pack's ``expect.output: '^(a+)+$'`` against 40 ``a``s and a ``!`` backtracks for hours, and
CPython's matcher holds the GIL while it does: run in a thread, it still froze the app's UI.
So a search runs in a forked child of this process (a copy: nothing to send but the result) that
is killed when the bound passes. Patterns that finish in time cost one fork (~ms) per search.
Where there is no fork (Windows), the child is a fresh interpreter, given the pattern and the
text on its stdin, with the bound plus ``START_S`` for it to start.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time

from tutor.errors import TutorError

#: Seconds an author pattern may take on one program's output.
BOUND_S = 1.0
#: Without fork: what a fresh interpreter may take to start, on top of the bound.
START_S = 3.0
_CHILD = ("import json, re, sys\n"
          "job = json.loads(sys.stdin.read())\n"
          "sys.stdout.write('1' if re.compile(job['pattern']).search(job['text']) else '0')\n")


class PatternTimeout(TutorError):
    """The pattern did not finish within the bound (catastrophic backtracking, most likely)."""


def search(pattern: str, text: str, bound: float = BOUND_S) -> bool:
    """Whether ``pattern`` matches somewhere in ``text``; PatternTimeout past ``bound`` seconds."""
    compiled = re.compile(pattern)
    if len(text) <= 12:
        return compiled.search(text) is not None  # too short to backtrack for long: no fork needed
    if not hasattr(os, "fork"):
        return _search_in_interpreter(pattern, text, bound)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: match, say yes or no, leave without running anything else
        try:
            os.close(read_end)
            os.write(write_end, b"1" if compiled.search(text) is not None else b"0")
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        deadline = time.monotonic() + bound
        while True:
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([read_end], [], [], max(remaining, 0))
            if ready:
                answer = os.read(read_end, 1)
                if answer in (b"0", b"1"):
                    return answer == b"1"
                raise PatternTimeout(f"the pattern /{pattern}/ could not be matched")
            if remaining <= 0:
                raise PatternTimeout(f"the pattern /{pattern}/ took longer than {bound:g} s on this output "
                                     "(it backtracks catastrophically: nested quantifiers such as (a+)+)")
    finally:
        os.close(read_end)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)


def _search_in_interpreter(pattern: str, text: str, bound: float) -> bool:
    try:
        done = subprocess.run([sys.executable, "-I", "-c", _CHILD], input=json.dumps({"pattern": pattern, "text": text}),
                              capture_output=True, text=True, timeout=bound + START_S)
    except subprocess.TimeoutExpired:
        raise PatternTimeout(f"the pattern /{pattern}/ took longer than {bound:g} s on this output "
                             "(it backtracks catastrophically: nested quantifiers such as (a+)+)") from None
    if done.stdout in ("0", "1"):
        return done.stdout == "1"
    raise PatternTimeout(f"the pattern /{pattern}/ could not be matched")
