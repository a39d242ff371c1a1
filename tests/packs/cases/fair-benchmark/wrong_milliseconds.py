# fails: median-of-timed
import statistics
import time


def bench(fn, *args, warmup=3, repeat=20):
    for _ in range(warmup):
        fn(*args)
    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        timings.append((time.perf_counter() - start) * 1000)
    return statistics.median(timings)
