from timeit import default_timer


def bench(fn, *args, warmup=3, repeat=20):
    for _ in range(warmup):
        fn(*args)
    timings = []
    for _ in range(repeat):
        t0 = default_timer()
        fn(*args)
        timings.append(default_timer() - t0)
    timings.sort()
    middle = len(timings) // 2
    if len(timings) % 2:
        return timings[middle]
    return (timings[middle - 1] + timings[middle]) / 2
