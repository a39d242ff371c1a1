# fails: median-of-timed
import time


def bench(fn, *args, warmup=3, repeat=20):
    for _ in range(warmup):
        fn(*args)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - start)
    return best
