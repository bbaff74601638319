"""Basic indexing: values against numpy, which results are views (contiguous
blocks, as MXNet) and which are copies, and assignment; advanced indexing
(integer lists, arrays, NDArrays) as numpy's, with its gradient."""
import numpy as np
import pytest

import nbdl
import nbdl.ndarray as nd

A = np.arange(24, dtype=np.float32).reshape(4, 6)

KEYS = [
    1, -1, slice(1, 3), slice(None, None, 2), slice(None, None, -1), slice(3, 0, -2),
    (1, 2), (-1, -2), (slice(None), 2), (slice(1, 3), slice(2, 5)), (1, slice(None, None, 2)),
    (Ellipsis, 3), (None, 1), (slice(0, 0),), (slice(5, 9),), (1, Ellipsis), (2, slice(1, 4)),
]


def _numpy_result(a, key):
    want = a[key]
    return want.reshape(1) if want.ndim == 0 else want   # MXNet 1.x: integer-only gives (1,)


@pytest.mark.parametrize("key", KEYS, ids=repr)
@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.cuda)])
def test_getitem_values(key, device):
    ctx = nbdl.cpu() if device == "cpu" else nbdl.gpu(0)
    x = nd.array(A, ctx=ctx)
    got = x[key]
    want = _numpy_result(A, key)
    assert got.context == ctx
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.asnumpy(), want)


@pytest.mark.parametrize("key", [1, slice(1, 3), (2, slice(1, 4)), (1, 2), slice(None)], ids=repr)
def test_contiguous_results_are_views(key):
    x = nd.array(A)
    v = x[key]
    assert np.shares_memory(v._data, x._data)
    v[:] = -1
    want = A.copy()
    want[key] = -1
    np.testing.assert_array_equal(x.asnumpy(), want)


@pytest.mark.parametrize("key", [(slice(None), 2), slice(None, None, 2), (1, slice(None, None, 2))],
                         ids=repr)
def test_strided_results_are_copies(key):
    x = nd.array(A)
    c = x[key]
    assert not np.shares_memory(c._data, x._data)
    assert c._data.flags.c_contiguous
    c[:] = -1
    np.testing.assert_array_equal(x.asnumpy(), A)


@pytest.mark.cuda
def test_view_on_gpu_shares_storage():
    x = nd.array(A, ctx=nbdl.gpu(0))
    v = x[1:3]
    v[:] = 0
    want = A.copy()
    want[1:3] = 0
    np.testing.assert_array_equal(x.asnumpy(), want)


def test_index_errors():
    x = nd.array(A)
    with pytest.raises(IndexError, match="out of bounds"):
        x[4]
    with pytest.raises(IndexError, match="out of bounds"):
        x[0, -7]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="got float"):
        x[1.5]
    with pytest.raises(IndexError, match="out of bounds"):
        x[[0, 4]]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]


SET_CASES = [
    (slice(None), 3.0),
    (1, 5),
    ((1, 2), 7.5),
    ((slice(None), 2), np.array([1, 2, 3, 4])),
    (slice(1, 3), np.arange(12).reshape(2, 6)),
    (slice(None, None, 2), np.arange(6)),              # broadcast over rows
    ((slice(1, 3), slice(2, 5)), [[1, 2, 3], [4, 5, 6]]),
    (-1, np.arange(6)[::-1].copy()),
    ((Ellipsis, 0), 9),
]


@pytest.mark.parametrize("key, value", SET_CASES, ids=lambda v: repr(v)[:30])
@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.cuda)])
@pytest.mark.parametrize("kind", ["raw", "ndarray"])
def test_setitem(key, value, device, kind):
    ctx = nbdl.cpu() if device == "cpu" else nbdl.gpu(0)
    x = nd.array(A, ctx=ctx)
    storage = x._data
    if kind == "ndarray":
        value = nd.array(value if not np.isscalar(value) else [value], ctx=ctx)
        np_value = value.asnumpy()
        if np_value.shape == (1,):
            np_value = np_value[0]
    else:
        np_value = value
    want = A.copy()
    want[key] = np_value
    x[key] = value
    assert x._data is storage
    np.testing.assert_array_equal(x.asnumpy(), want)


@pytest.mark.cuda
def test_setitem_from_other_device():
    x = nd.zeros((2, 3))
    x[1] = nd.array([1, 2, 3], ctx=nbdl.gpu(0))
    np.testing.assert_array_equal(x.asnumpy(), [[0, 0, 0], [1, 2, 3]])
    g = nd.zeros((2, 3), ctx=nbdl.gpu(0))
    g[:, 1] = nd.array([4, 5])
    np.testing.assert_array_equal(g.asnumpy(), [[0, 4, 0], [0, 5, 0]])


def test_setitem_overlapping_source():
    x = nd.array(np.arange(6, dtype=np.float32))
    x[1:] = x[:-1]
    np.testing.assert_array_equal(x.asnumpy(), [0, 0, 1, 2, 3, 4])


def test_setitem_casts_to_own_dtype():
    x = nd.zeros((3,), dtype=np.int32)
    x[:] = nd.array([1.0, 2.0, 3.0])
    assert x.dtype is np.int32
    np.testing.assert_array_equal(x.asnumpy(), [1, 2, 3])


def test_setitem_shape_mismatch():
    x = nd.zeros((2, 3))
    with pytest.raises(ValueError):
        x[0] = np.ones(4)


def test_basic_indexing_slice_is_contiguous_matches_numpy_flags():
    from nbdl.ndarray.ndarray import NDArray
    pred = NDArray._basic_indexing_slice_is_contiguous
    x = np.arange(4 * 5 * 3 * 2).reshape(4, 5, 3, 2)
    parts = [slice(None), slice(2), slice(1, 3), slice(None, None, 2), slice(0, 1),
             slice(None, None, -1), slice(3, 1), 1, None, Ellipsis]
    rng = np.random.RandomState(0)
    seen = set()
    for _ in range(3000):
        key = tuple(parts[i] for i in rng.randint(0, len(parts), rng.randint(1, 5)))
        if (sum(k is Ellipsis for k in key) > 1
                or sum(k is not None and k is not Ellipsis for k in key) > x.ndim):
            continue
        want = x[key].flags.c_contiguous
        assert pred(key, x.shape) == want, key
        seen.add(want)
    assert seen == {True, False}
    assert pred(3, (5, 4)) and pred(slice(1, 2), (5, 4)) and not pred((slice(None), 1), (5, 4))


ADVANCED_KEYS = [
    [2, 0, 2], np.array([[1, 3], [0, 2]]), (1, [0, 5, 2]), ([0, 3], [1, 4]),
    (slice(1, 3), [5, 0]), ([[1], [2]], [0, 1, 2]), ([1, 2], None, [3, 4]),
    (Ellipsis, [1, 1]), (np.array([0, 3], dtype=np.int64), slice(None, None, -2)),
]


@pytest.mark.parametrize("key", ADVANCED_KEYS)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_advanced_getitem_and_setitem_as_numpy(key, dtype):
    a = A.astype(dtype)
    x = nd.array(a, dtype=dtype)
    got = x[key]
    np.testing.assert_array_equal(got.asnumpy(), a[key])
    assert got.dtype == dtype
    want = a.copy()
    value = np.arange(want[key].size, dtype=dtype).reshape(want[key].shape) - 50
    want[key] = value
    x[key] = value
    np.testing.assert_array_equal(x.asnumpy(), want)
    x[key] = 7                           # a scalar, broadcast
    want[key] = 7
    np.testing.assert_array_equal(x.asnumpy(), want)


def test_advanced_index_by_ndarray_and_its_gradient_accumulates():
    x = nd.array(A)
    x.attach_grad()
    rows, cols = nd.array([1, 1, 0]), nd.array([0, 0, 5])      # float NDArrays, as MXNet takes
    with nbdl.autograd.record():
        y = x[rows, cols]
    y.backward(nd.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(y.asnumpy(), A[[1, 1, 0], [0, 0, 5]])
    want = np.zeros_like(A)
    want[1, 0], want[0, 5] = 3.0, 3.0                           # the repeated (1, 0) adds
    np.testing.assert_array_equal(x.grad.asnumpy(), want)


@pytest.mark.cuda
def test_advanced_setitem_on_the_gpu_simulator():
    x = nd.array(A, ctx=nbdl.gpu())
    x[[0, 2], [1, 3]] = nd.array([9.0, 8.0], ctx=nbdl.gpu())
    want = A.copy()
    want[[0, 2], [1, 3]] = [9.0, 8.0]
    np.testing.assert_array_equal(x.asnumpy(), want)
    np.testing.assert_array_equal(x[[3, 0]].asnumpy(), want[[3, 0]])


def test_assignment_while_recording_is_refused_as_mxnet():
    x = nd.array(A)
    y = nd.ones((6,))
    y.attach_grad()
    with nbdl.autograd.record():
        with pytest.raises(nbdl.MXNetError, match="Inplace operations"):
            x[1] = y
        x[1] = nd.ones((6,))          # nothing recorded on either side: allowed
        x[...] = nd.zeros((4, 6))
