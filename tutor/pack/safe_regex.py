"""Author patterns matched with a time bound, without holding the caller's interpreter.

A pack's ``expect.output: '^(a|aa)+$'`` against 40 ``a``s and a ``!`` backtracks for minutes,
and CPython's ``re`` cannot be stopped: it holds the GIL until it is done (run in a thread, it
still froze the app's UI). So patterns are matched by the ``regex`` package (``re``'s syntax and
answers, a superset of it): its ``timeout=`` stops a search past the bound (CPU time), and
``concurrent=True`` lets the other threads (the UI) run meanwhile. In process, on every
platform: no fork, no fresh interpreter. ``regex`` is imported on the first search, never at
start-up. Measured against a fork per search and google-re2: docs/architecture.md ("Author
patterns").
"""

from __future__ import annotations

import re

from tutor.errors import TutorError

#: Seconds (of CPU time) an author pattern may take on one program's output.
BOUND_S = 1.0


class PatternTimeout(TutorError):
    """The pattern did not finish within the bound (catastrophic backtracking, most likely)."""


def search(pattern: str, text: str, bound: float = BOUND_S) -> bool:
    """Whether ``pattern`` matches somewhere in ``text``; PatternTimeout past ``bound`` seconds.
    ``pattern`` is ``re``'s syntax: one that ``re`` refuses raises ``re.error``, as it always did
    (``regex`` accepts more, and its error is another class)."""
    import regex

    re.compile(pattern)
    try:
        return regex.search(pattern, text, timeout=bound, concurrent=True) is not None
    except TimeoutError:
        raise PatternTimeout(f"the pattern /{pattern}/ took longer than {bound:g} s on this output "
                             "(it backtracks catastrophically: nested quantifiers such as (a+)+)") from None
