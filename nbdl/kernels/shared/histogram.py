"""_histogram's per-value bin search (plain Python: compiled by ``njit`` in
``kernels.cpu.histogram``, by ``cuda.jit(device=True)`` in
``kernels.cuda.histogram``) and its prepare-time scalars."""
import numpy as np


def equal_bins(call):
    """(bin count, min, max) of ``bin_cnt``/``range``, a one-value range
    widened by 0.5 on each side (MXNet's rule)."""
    lo, hi = (float(v) for v in call.attrs["range"])
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return int(call.attrs["bin_cnt"]), np.float64(lo), np.float64(hi)


def py_equal_bin(v, edges, n, lo, hi):
    """The bin of ``v`` among ``n`` equal bins over [lo, hi] (edges given),
    -1 when outside: the index from the width, corrected by the edges
    (MXNet's and numpy's rule, so rounding never puts a value in the wrong bin)."""
    if not (v >= lo and v <= hi):
        return -1
    k = int((v - lo) * n / (hi - lo))
    if k > n - 1:
        k = n - 1
    if v < edges[k]:
        k -= 1
    if v >= edges[k + 1] and k != n - 1:
        k += 1
    return k


def py_edge_bin(v, edges):
    """The bin of ``v`` among the edges ``edges`` (sorted): ``[e_i, e_i+1)``,
    the last bin closed; -1 outside."""
    m = edges.shape[0] - 1
    if not (v >= edges[0] and v <= edges[m]):
        return -1
    a, b = 0, m
    while b - a > 1:        # the last edge <= v
        c = (a + b) // 2
        if edges[c] <= v:
            a = c
        else:
            b = c
    return a
