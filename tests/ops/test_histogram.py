"""_histogram (nd.histogram / sym.histogram) against numpy.histogram."""
import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.testing import check_consistency, check_symbolic_forward


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bins,rng_", [(4, (-2.5, 2.5)), (7, (0.0, 1.0)), (3, (1.0, 1.0))])
def test_equal_bins_match_numpy(dtype, bins, rng_, rng):
    x = rng.uniform(-3, 3, (5, 6))
    x[0, :3] = [-2.5, 2.5, 0.0]                  # on the edges
    x = x.astype(dtype)
    counts, edges = nbdl.nd.histogram(nbdl.nd.array(x, dtype=dtype), bins=bins, range=rng_)
    lo, hi = rng_ if rng_[0] != rng_[1] else (rng_[0] - 0.5, rng_[1] + 0.5)   # MXNet's widening
    want, want_edges = np.histogram(x, bins=bins, range=(lo, hi))
    np.testing.assert_array_equal(counts.asnumpy(), want)
    assert counts.dtype == np.int64 and edges.dtype == dtype
    np.testing.assert_allclose(edges.asnumpy(), want_edges.astype(dtype), rtol=1e-6)


def test_integer_data_as_mxnet():
    # integer data get integer (truncated) edges, and counts from them, as in
    # MXNet 1.9.1 (these are its outputs), not numpy's float edges
    x = nbdl.nd.array([[0, 1, 1, 2, 3, -3, 2]], dtype="int32")
    for bins, rng_, counts, edges in [(3, (1.0, 1.0), [0, 0, 2], [0, 0, 1, 1]),
                                      (4, (-2.5, 2.5), [0, 0, 1, 4], [-2, -1, 0, 1, 2])]:
        c, e = nbdl.nd.histogram(x, bins=bins, range=rng_)
        np.testing.assert_array_equal(c.asnumpy(), counts)
        np.testing.assert_array_equal(e.asnumpy(), edges)
        assert e.dtype == np.int32


def test_given_edges_match_numpy(rng):
    x = rng.uniform(-2, 60, (4, 5, 3))
    x.flat[:4] = [-1.0, 0.5, 50.0, np.nan]      # the first, an inner and the last edge; NaN
    edges = np.array([-1.0, 0.5, 2.0, 4.5, 50.0])
    counts, out_edges = nbdl.nd.histogram(nbdl.nd.array(x, dtype=np.float64),
                                          bins=nbdl.nd.array(edges, dtype=np.float64))
    np.testing.assert_array_equal(counts.asnumpy(), np.histogram(x[~np.isnan(x)], bins=edges)[0])
    np.testing.assert_array_equal(out_edges.asnumpy(), edges)


@pytest.mark.cuda
def test_symbol_cuda_and_front_ends(rng):
    x = rng.uniform(-3, 3, (7, 3)).astype(np.float32)
    y = nbdl.sym.histogram(a=nbdl.sym.var("data"), bins=5, range=(-2.0, 2.0))
    want = np.histogram(x, bins=5, range=(-2.0, 2.0))
    check_symbolic_forward(y, {"data": x}, [want[0], want[1].astype(np.float32)])
    check_consistency(y, {"data": x}, grad=False, devices=[cpu(), gpu()])
    edges = nbdl.sym.var("bins")
    y2 = nbdl.sym.histogram(nbdl.sym.var("data"), bins=edges)
    e = np.array([-3.0, -1.0, 0.0, 3.0], np.float32)
    check_consistency(y2, {"data": x, "bins": e}, grad=False, devices=[cpu(), gpu()])
    # no range: numpy's bins over the data, as MXNet's nd front end
    counts, _ = nbdl.nd.histogram(nbdl.nd.array(x), bins=4)
    np.testing.assert_array_equal(counts.asnumpy(), np.histogram(x, bins=4)[0])


def test_errors():
    x = nbdl.nd.ones((3,))
    with pytest.raises(nbdl.AttrError, match="both or neither"):
        nbdl.nd._histogram(x, bin_cnt=3)
    with pytest.raises(nbdl.AttrError, match="range=.*min <= max"):
        nbdl.nd.histogram(x, bins=3, range=(2.0, 1.0))
    with pytest.raises(nbdl.ShapeError, match="at least 2 edges"):
        nbdl.nd.histogram(x, bins=nbdl.nd.ones((1,)))
    with pytest.raises(nbdl.ArgumentError, match="needs range"):
        nbdl.sym.histogram(nbdl.sym.var("a"), bins=3)
