"""CPU kernels of _histogram (rules in nbdl.ops.histogram, per-value bin
search in nbdl.kernels.shared.histogram)."""
import numpy as np
from ..shared.jit import njit

from ...ops.registry import Launch
from ..shared.histogram import equal_bins, py_edge_bin, py_equal_bin

_equal_bin = njit(cache=True)(py_equal_bin)
_edge_bin = njit(cache=True)(py_edge_bin)


@njit(cache=True)
def histogram_equal(x, counts, edges, n, lo, hi):
    """``n`` equal bins over [lo, hi]: the edges (MXNet's formula), then the counts."""
    for i in range(n + 1):
        edges[i] = (hi * i + (n - i) * lo) / n
    counts[:] = 0
    for i in range(x.size):
        k = _equal_bin(x[i], edges, n, lo, hi)
        if k >= 0:
            counts[k] += 1


@njit(cache=True)
def histogram_edges(x, bins, counts, edges):
    """The edges given: copied out, then the counts."""
    for i in range(bins.size):
        edges[i] = bins[i]
    counts[:] = 0
    for i in range(x.size):
        k = _edge_bin(x[i], bins)
        if k >= 0:
            counts[k] += 1


def prepare_histogram(call):
    size = int(np.prod(call.in_shapes[0]))
    views = [(size,)] + [None] * (len(call.in_shapes) - 1) + [None, None]
    if call.attrs["bin_cnt"] is not None:
        return Launch(histogram_equal, equal_bins(call), views=views)
    return Launch(histogram_edges, (), views=views)
