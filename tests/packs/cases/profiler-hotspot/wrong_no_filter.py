# fails: aten-only
from torch.profiler import ProfilerActivity, profile


def top_ops(fn, k):
    fn()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(3):
            fn()
    rows = sorted(prof.key_averages(), key=lambda row: row.self_cpu_time_total, reverse=True)
    return [row.key for row in rows[:k]]
