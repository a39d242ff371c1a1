# fails: several-runs
# passes: returns-names, aten-only
from torch.profiler import ProfilerActivity, profile


def top_ops(fn, k):
    # the right column, but one cold run decides the ranking
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    rows = [row for row in prof.key_averages() if row.key.startswith("aten::")]
    rows.sort(key=lambda row: row.self_cpu_time_total, reverse=True)
    return [row.key for row in rows[:k]]
