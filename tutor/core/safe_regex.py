"""Author patterns matched with a time bound, without holding the caller's interpreter.

A pack's ``expect.output: '^(a+)+$'`` against 40 ``a``s and a ``!`` backtracks for hours, and
CPython's matcher holds the GIL while it does: run in a thread, it still froze the app's UI.
So a search runs in a forked child of this process (a copy: nothing to send but the result) that
is killed when the bound passes. Patterns that finish in time cost one fork (~ms) per search.
"""

from __future__ import annotations

import os
import re
import select
import signal
import time

#: Seconds an author pattern may take on one program's output.
BOUND_S = 1.0


class PatternTimeout(Exception):
    """The pattern did not finish within the bound (catastrophic backtracking, most likely)."""


def search(pattern: str, text: str, bound: float = BOUND_S) -> bool:
    """Whether ``pattern`` matches somewhere in ``text``; PatternTimeout past ``bound`` seconds."""
    compiled = re.compile(pattern)
    if len(text) <= 12:
        return compiled.search(text) is not None  # too short to backtrack for long: no fork needed
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
