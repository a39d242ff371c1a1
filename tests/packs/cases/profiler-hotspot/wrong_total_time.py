# fails: matches-robust-ranking
from torch.profiler import ProfilerActivity, profile


def top_ops(fn, k):
    fn()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(5):
            fn()
    rows = [row for row in prof.key_averages() if row.key.startswith("aten::")]
    rows.sort(key=lambda row: row.cpu_time_total, reverse=True)  # total, not self
    return [row.key for row in rows[:k]]
