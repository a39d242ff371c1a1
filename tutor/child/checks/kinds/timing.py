"""``timing``: how many times faster one callable is than another, as a range.

Absolute times mean nothing across machines; a ratio of medians measured side by side, after
warm-up, each pair in a shuffled order so drifts in CPU frequency or load, and the scheduler's
time slices on a busy machine, hit both equally, does. Both run
with the check's ``threads`` (default 1): with two intra-op threads and the other core busy, a
small bmm took a median of 8.8 ms against 0.027 ms with one thread, and a correct fix failed
``ratio: {min: 20}`` in 2 runs of 4.
"""

from __future__ import annotations

import random
from typing import Any

from tutor.child.checks import refs, render
from tutor.words import engine as words
from tutor.child.checks.context import Case, Failed
from tutor.child.checks.kinds.measure import callable_of, honest, in_runner, margin, median, thread_said, threads
from tutor.child.checks.vocab import TimingData
from tutor.child.checks.kinds.kind import Kind


def _timed(case: Case, function: Any, sync: bool) -> float:
    started = refs.perf_counter()
    case.call(function)
    if sync:
        refs.cuda_synchronize()
    return float(refs.perf_counter() - started)


def run(check: TimingData, case: Case) -> Any:
    # the judge's own share of the work (a check function called back from the runner) gets the
    # same thread count as the runner's measured calls
    with threads(check["threads"]):
        return _run(check, case)


def _run(check: TimingData, case: Case) -> Any:
    count = check["threads"]
    fast = callable_of(case, check["fast"])
    slow = callable_of(case, check["slow"])
    warmup, repeat = check["warmup"], check["repeat"]
    if in_runner(case, fast) or in_runner(case, slow):
        session = case.session
        times = session.repeat("time", [fast, slow], warmup, repeat, count)
        fast_times = [refs.float_(t) for t in (times or {}).get("fast") or []]
        slow_times = [refs.float_(t) for t in (times or {}).get("slow") or []]
        if not fast_times or not slow_times:
            raise Failed(words.say("checks.timing.not_reported"))
        return _verdict(check, fast_times, slow_times)
    # in_runner ran each once here: those calls are the first warm-up
    for _ in range(warmup - 1):
        case.call(fast)
        case.call(slow)
    # asked once: torch.cuda.is_available() costs about a millisecond, as much as a small workload
    sync = refs.cuda_is_available() and refs.torch_module.cuda.is_initialized()  # type: ignore[no-untyped-call, unused-ignore]
    fast_times, slow_times = [], []
    order = random.Random(2 * repeat)  # each pair in a shuffled order, as the runner measures (server.time_calls)
    for _ in range(repeat):
        if order.random() < 0.5:
            fast_times.append(_timed(case, fast, sync))
            slow_times.append(_timed(case, slow, sync))
        else:
            slow_times.append(_timed(case, slow, sync))
            fast_times.append(_timed(case, fast, sync))
    return _verdict(check, fast_times, slow_times)


def needs_said(low: float | None, high: float | None) -> dict[str, Any] | str:
    """"at least 2x and at most 10x", as a said."""
    parts = ([words.say("checks.at_least", bound=f"{low:g}x")] if low is not None else []) \
        + ([words.say("checks.at_most", bound=f"{high:g}x")] if high is not None else [])
    return words.say("checks.and", first=parts[0], second=parts[1]) if refs.len_(parts) == 2 else \
        (parts[0] if parts else "")


def _verdict(check: TimingData, fast_times: list[float], slow_times: list[float]) -> Any:
    fast_s, slow_s = median(fast_times), median(slow_times)
    ratio = slow_s / fast_s if fast_s > 0 else float("inf")
    bounds = check.get("ratio") or {}
    low, high = bounds.get("min"), bounds.get("max")
    count = check["threads"]
    needs = " and ".join(part for part in (f"at least {low:g}x" if low is not None else "",
                                           f"at most {high:g}x" if high is not None else "") if part)
    data = {"fast_s": fast_s, "slow_s": slow_s, "ratio": ratio, "threads": count,
            "bound": {"min": low, "max": high}, "margin": margin(ratio, low, high),
            "measured": f"{honest(ratio, low if low is not None else high)}x", "needs": needs}
    times = words.say("checks.timing.times", fast=f"{fast_s * 1e3:.3g}", slow=f"{slow_s * 1e3:.3g}",
                      threads=thread_said(count))
    if low is not None and ratio < low:
        shown = honest(ratio, low)
        raise Failed(words.say("checks.timing.too_slow", fast=check["fast"], slow=check["slow"], ratio=shown,
                               times=times, low=f"{low:g}"), expected=f">= {low:g}x", got=f"{shown}x", data=data)
    if high is not None and ratio > high:
        shown = honest(ratio, high)
        raise Failed(words.say("checks.timing.too_fast", fast=check["fast"], slow=check["slow"], ratio=shown,
                               times=times, high=f"{high:g}"), expected=f"<= {high:g}x", got=f"{shown}x", data=data)
    data["summary"] = words.say("checks.timing.summary", ratio=honest(ratio, low if low is not None else high),
                                times=times, needs=needs_said(low, high))
    return render.to_jsonable(data)


#: This module's kinds, registered in tutor/child/checks/kinds/__init__.py.
KINDS = (Kind("timing", run, canary="timing", weight=4.0, threads=1),)
