"""What the measurement kinds (``timing``, ``profile``) share: the workload, where it is measured,
the intra-op thread count, medians, and numbers rounded so they never cross a threshold.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tutor.child.checks import refs, render
from tutor.words import engine as words
from tutor.child.checks.context import Case, Failed
from tutor.child.checks.remote import Remote

median = statistics.median


def callable_of(case: Case, source: str) -> Any:
    """The zero-argument callable ``source`` evaluates to (else the check fails, naming it)."""
    value = case.eval(source)
    if not callable(value) or (refs.type_(value) is Remote and not refs.object_getattribute(value, "_callable")):
        raise Failed(words.say("checks.measure.not_callable", source=source, got=render.described(value)))
    return value


def in_runner(case: Case, function: Any) -> bool:
    """Whether ``function`` is, or calls into, the learner's code: then it is measured in the
    runner (the judge would measure its requests, not the work). A check's own function that
    stays here is measured here, by the judge; to find out, it is called here once, which the
    kinds count as its first warm-up call."""
    session = case.session
    if refs.type_(function) is Remote:
        return True
    before = session.calls
    case.call(function)
    return bool(session.calls != before)


@contextmanager
def threads(count: int) -> Iterator[None]:
    """Run the block with ``count`` intra-op threads (measured in this process), then put back
    what was there. With another core busy, a multi-threaded op waits at its barrier for a core:
    a small bmm measured 8.8 ms with two threads against 0.027 ms with one, in one process."""
    previous = refs.get_num_threads()
    refs.set_num_threads(count)
    try:
        yield
    finally:
        refs.set_num_threads(previous)


def thread_words(count: int) -> str:
    return words.english(thread_said(count))


def thread_said(count: int) -> dict[str, Any]:
    return words.say("checks.thread") if count == 1 else words.say("checks.threads", count=count)


def honest(value: float, threshold: float | None = None, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits, with more digits while the rounded number would
    land on the other side of ``threshold`` (or on it): 19.96 against 20 shows as "19.96", never
    as "20". Whole numbers stay whole ("31.2", "120", "4.84")."""
    if value != value or value in (float("inf"), float("-inf")):
        return "nan" if value != value else ("inf" if value > 0 else "-inf")
    for places in range(digits, 12):
        # '#' keeps trailing zeros ("1.00", never "1"); a whole number loses only its dot
        text = f"{value:.0f}" if abs(value) >= 10 ** places else f"{value:#.{places}g}".rstrip(".")
        if "e" in text:  # a tiny value: plain decimals
            text = f"{value:.{places + 2}f}"
        shown = float(text)
        if threshold is None or value == threshold or ((shown < threshold) == (value < threshold)
                                                       and shown != threshold):
            return text
    return repr(value)


def margin(measured: float, low: float | None, high: float | None) -> float | None:
    """How far a measured value clears its bound, as a factor (>= 1: passes; under 1: fails):
    measured/min for a lower bound, max/measured for an upper one, the smaller of the two."""
    factors = []
    if low is not None and low > 0:
        factors.append(measured / low)
    if high is not None and measured > 0:
        factors.append(high / measured)
    return min(factors) if factors else None
