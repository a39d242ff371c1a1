# fails: median-of-timed
import statistics
import time


def bench(fn, *args, warmup=3, repeat=20):
    timings = []
    for _ in range(warmup + repeat):  # the warm-up calls are timed too
        start = time.perf_counter()
        fn(*args)
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)
