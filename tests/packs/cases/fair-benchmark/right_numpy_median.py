import time

import numpy as np


def bench(fn, *args, warmup=3, repeat=20):
    for _ in range(warmup):
        fn(*args)
    timings = np.empty(repeat)
    for i in range(repeat):
        start = time.perf_counter_ns()
        fn(*args)
        timings[i] = (time.perf_counter_ns() - start) / 1e9
    return float(np.median(timings))
