import statistics

from torch.profiler import ProfilerActivity, profile


def top_ops(fn, k):
    for _ in range(2):
        fn()
    samples = {}
    runs = 5
    for _ in range(runs):
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            fn()
        for row in prof.key_averages():
            if row.key.startswith("aten::"):
                samples.setdefault(row.key, []).append(row.self_cpu_time_total)
    median = {name: statistics.median(v + [0.0] * (runs - len(v))) for name, v in samples.items()}
    return sorted(median, key=median.get, reverse=True)[:k]
