# fails: median-of-timed
import time


def bench(fn, *args, warmup=3, repeat=20):
    for _ in range(warmup):
        fn(*args)
    start = time.perf_counter()
    for _ in range(repeat):
        fn(*args)
    return (time.perf_counter() - start) / repeat
