"""``median_time``: the timing loop the reference scripts in this folder
share (they run in MXNet's or PyTorch's own virtual environment, without
nbdl, and import this file from beside them)."""
import statistics
import time


def median_time(fn, repeat=200, warmup=20):
    """Median seconds of ``repeat`` calls of ``fn`` after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)
