"""``timing``: how many times faster one callable is than another, as a range with slack.

Absolute times mean nothing across machines; a ratio of medians measured side by side, after
warm-up, alternating the two so drifts in CPU frequency or load hit both equally, does.
"""

from __future__ import annotations

from tutor.checks import guard, refs, render
from tutor.checks.context import Case, Failed
from tutor.checks.kinds.profile import _callable, _median, in_runner


def _timed(case: Case, function, sync: bool) -> float:
    started = refs.perf_counter()
    case.call(function, restore=False)
    if sync:
        refs.cuda_synchronize()
    return refs.perf_counter() - started


def run(check: dict, case: Case):
    fast = _callable(case, check["fast"])
    slow = _callable(case, check["slow"])
    if in_runner(case, fast) or in_runner(case, slow):
        times = case.session.repeat("time", [fast, slow], check.get("warmup", 3), check.get("repeat", 15))
        fast_times = [refs.float_(t) for t in (times or {}).get("fast") or []]
        slow_times = [refs.float_(t) for t in (times or {}).get("slow") or []]
        if not fast_times or not slow_times:
            raise Failed("your code's process did not report the timings")
        return _verdict(check, fast_times, slow_times)
    for _ in range(check.get("warmup", 3)):
        case.call(fast)
        case.call(slow)
    # asked once: torch.cuda.is_available() costs about a millisecond, as much as a small workload
    sync = refs.cuda_is_available() and refs.torch_module.cuda.is_initialized()
    fast_times, slow_times = [], []
    for _ in range(check.get("repeat", 15)):
        fast_times.append(_timed(case, fast, sync))
        slow_times.append(_timed(case, slow, sync))
    if case.session is None:
        guard.restore()
    return _verdict(check, fast_times, slow_times)


def _verdict(check: dict, fast_times: list[float], slow_times: list[float]):
    fast_s, slow_s = _median(fast_times), _median(slow_times)
    ratio = slow_s / fast_s if fast_s > 0 else float("inf")
    data = {"fast_s": fast_s, "slow_s": slow_s, "ratio": ratio}
    bounds = check.get("ratio") or {}
    low, high = bounds.get("min"), bounds.get("max")
    measured = f"{ratio:.2g}x (median {fast_s * 1e3:.3g} ms vs {slow_s * 1e3:.3g} ms)"
    if low is not None and ratio < low:
        raise Failed(f"`{check['fast']}` is only {measured} faster than `{check['slow']}`; expected at least {low:g}x",
                     expected=f">= {low:g}x", got=f"{ratio:.2g}x", data=data)
    if high is not None and ratio > high:
        raise Failed(f"`{check['slow']}` / `{check['fast']}` time ratio is {measured}; expected at most {high:g}x",
                     expected=f"<= {high:g}x", got=f"{ratio:.2g}x", data=data)
    return render.to_jsonable(data)
