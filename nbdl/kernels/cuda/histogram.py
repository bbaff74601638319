"""CUDA kernels of _histogram: one thread per value, counts added
atomically (the per-value bin search of nbdl.kernels.shared.histogram)."""
import numpy as np
from numba import cuda

from ...ops.registry import Launch
from ..shared.histogram import equal_bins, py_edge_bin, py_equal_bin
from ._launch import launcher

_equal_bin = cuda.jit(device=True)(py_equal_bin)
_edge_bin = cuda.jit(device=True)(py_edge_bin)


@cuda.jit
def _fill_equal(counts, edges, n, lo, hi):
    for i in range(cuda.grid(1), n + 1, cuda.gridsize(1)):
        edges[i] = (hi * i + (n - i) * lo) / n
        if i < n:
            counts[i] = 0


@cuda.jit
def _fill_edges(bins, counts, edges):
    for i in range(cuda.grid(1), bins.size, cuda.gridsize(1)):
        edges[i] = bins[i]
        if i < counts.size:
            counts[i] = 0


@cuda.jit
def _count_equal(x, counts, edges, n, lo, hi):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        k = _equal_bin(x[i], edges, n, lo, hi)
        if k >= 0:
            cuda.atomic.add(counts, k, 1)


@cuda.jit
def _count_edges(x, bins, counts):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        k = _edge_bin(x[i], bins)
        if k >= 0:
            cuda.atomic.add(counts, k, 1)


def prepare_histogram(call):
    size = int(np.prod(call.in_shapes[0]))
    views = [(size,)] + [None] * (len(call.in_shapes) - 1) + [None, None]
    if call.attrs["bin_cnt"] is not None:
        n, lo, hi = equal_bins(call)
        fill, count = launcher(_fill_equal, n + 1), launcher(_count_equal, max(size, 1))

        def run_equal(x, counts, edges, n, lo, hi):
            fill(counts, edges, n, lo, hi)
            if size:
                count(x, counts, edges, n, lo, hi)
        return Launch(run_equal, (n, lo, hi), views=views)
    m = int(call.in_shapes[1][0])
    fill, count = launcher(_fill_edges, m), launcher(_count_edges, max(size, 1))

    def run_edges(x, bins, counts, edges):
        fill(bins, counts, edges)
        if size:
            count(x, bins, counts)
    return Launch(run_edges, (), views=views)
