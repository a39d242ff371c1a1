# fails: call-count, default-counts
import statistics
import time


def bench(fn, *args, warmup=3, repeat=20):
    fn(*args)  # "one more warm-up to be safe"
    for _ in range(warmup):
        fn(*args)
    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)
