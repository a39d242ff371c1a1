# fails: matches-robust-ranking
from torch.profiler import ProfilerActivity, profile


def top_ops(fn, k):
    fn()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    rows = [row for row in prof.key_averages() if row.key.startswith("aten::")]
    rows.sort(key=lambda row: row.self_cpu_time_total)  # smallest first
    return [row.key for row in rows[:k]]
