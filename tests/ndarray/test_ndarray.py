"""NDArray basics: metadata, host round trips, copies between devices,
reshape views, repr, truth value, pickling and the fluent methods."""
import copy
import pickle

import numpy as np
import pytest

import nbdl
import nbdl.ndarray as nd


def test_metadata():
    x = nd.array([[1, 2, 3], [4, 5, 6]])
    assert x.shape == (2, 3)
    assert x.dtype is np.float32          # a numpy type, as MXNet returns
    assert x.size == 6 and x.ndim == 2 and len(x) == 2
    assert x.context == nbdl.cpu() and x.ctx == x.context and x.device == x.context
    assert x.stype == "default"
    assert isinstance(x.shape, tuple)


def test_asnumpy_is_a_copy():
    src = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = nd.array(src)
    a = x.asnumpy()
    np.testing.assert_array_equal(a, src)
    a[0, 0] = 100
    assert x.asnumpy()[0, 0] == 0
    src[0, 1] = 100                      # nd.array copied its source too
    assert x.asnumpy()[0, 1] == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.float16])
def test_round_trip_dtypes(dtype):
    src = (np.arange(12) % 7).astype(dtype).reshape(3, 4)
    x = nd.array(src, dtype=dtype)
    assert x.dtype is np.dtype(dtype).type
    out = x.asnumpy()
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, src)
    np.testing.assert_array_equal(np.asarray(x), src)
    assert np.asarray(x, dtype=np.float64).dtype == np.float64


def test_scalar_access():
    x = nd.array([3.5])
    assert x.asscalar() == np.float32(3.5) and isinstance(x.asscalar(), np.float32)
    assert x.item() == 3.5 and isinstance(x.item(), float)
    with pytest.raises(ValueError, match="not a single element"):
        nd.array([1, 2]).asscalar()
    assert nd.array([[1, 2], [3, 4]]).tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_bool():
    assert bool(nd.array([1]))
    assert not bool(nd.array([0]))
    assert not bool(nd.zeros((0,)))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(nd.array([1, 2]))


def test_hash_is_identity_and_eq_is_elementwise():
    x = nd.array([1, 2, 3])
    y = nd.array([1, 2, 3])
    assert hash(x) != hash(y)
    assert len({x, y}) == 2
    np.testing.assert_array_equal((x == y).asnumpy(), [1, 1, 1])
    assert (x == None) is False  # noqa: E711  (unsupported operand: identity fallback)


def test_len_and_iter():
    x = nd.array(np.arange(6).reshape(3, 2))
    rows = list(x)
    assert len(rows) == 3
    np.testing.assert_array_equal(rows[2].asnumpy(), [4, 5])
    with pytest.raises(TypeError):
        len(nd.array(np.float32(1)).reshape(()))


def test_repr_matches_mxnet():
    x = nd.array([[1, 2, 3], [4, 5, 6]])
    assert repr(x) == "\n[[1. 2. 3.]\n [4. 5. 6.]]\n<NDArray 2x3 @cpu(0)>"
    assert str(x) == repr(x)
    assert repr(nd.zeros((2,))) == "\n[0. 0.]\n<NDArray 2 @cpu(0)>"


@pytest.mark.cuda
def test_repr_gpu():
    x = nd.array([1, 2], ctx=nbdl.gpu(0))
    assert repr(x) == "\n[1. 2.]\n<NDArray 2 @gpu(0)>"


def test_copy_is_independent():
    x = nd.array([1, 2, 3])
    y = x.copy()
    assert y.context == x.context and y.dtype == x.dtype
    y[:] = 7
    np.testing.assert_array_equal(x.asnumpy(), [1, 2, 3])
    z = copy.deepcopy(x)
    z[0] = 9
    assert x.asnumpy()[0] == 1


def test_pickle_round_trip():
    x = nd.array(np.arange(6).reshape(2, 3), dtype=np.float64)
    y = pickle.loads(pickle.dumps(x))
    assert y.shape == x.shape and y.dtype is np.float64 and y.context == x.context
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())


@pytest.mark.cuda
def test_copyto_cpu_gpu_round_trip():
    src = np.random.RandomState(0).rand(3, 4).astype(np.float32)
    x = nd.array(src)
    g = x.copyto(nbdl.gpu(0))
    assert g.context == nbdl.gpu(0) and g.shape == (3, 4) and g.dtype is np.float32
    np.testing.assert_array_equal(g.asnumpy(), src)
    back = g.copyto(nbdl.cpu())
    assert back.context == nbdl.cpu()
    np.testing.assert_array_equal(back.asnumpy(), src)
    # into existing arrays, both ways
    dst_gpu = nd.zeros((3, 4), ctx=nbdl.gpu(0))
    assert x.copyto(dst_gpu) is dst_gpu
    np.testing.assert_array_equal(dst_gpu.asnumpy(), src)
    dst_cpu = nd.zeros((3, 4))
    g.copyto(dst_cpu)
    np.testing.assert_array_equal(dst_cpu.asnumpy(), src)


@pytest.mark.cuda
def test_copy_on_gpu():
    g = nd.array([1, 2, 3], ctx=nbdl.gpu(0))
    h = g.copy()
    assert h.context == nbdl.gpu(0)
    h[0] = 5
    np.testing.assert_array_equal(g.asnumpy(), [1, 2, 3])
    np.testing.assert_array_equal(h.asnumpy(), [5, 2, 3])


def test_copyto_same_device_array():
    x = nd.array([1, 2, 3])
    y = nd.zeros((3,))
    storage = y._data
    assert x.copyto(y) is y
    assert y._data is storage
    np.testing.assert_array_equal(y.asnumpy(), [1, 2, 3])


def test_copyto_shape_mismatch():
    with pytest.raises(nbdl.ShapeError, match=r"\(3,\).*\(4,\)"):
        nd.array([1, 2, 3]).copyto(nd.zeros((4,)))
    with pytest.raises(TypeError):
        nd.array([1, 2, 3]).copyto(3)


@pytest.mark.cuda
def test_as_in_context():
    x = nd.array([1, 2])
    assert x.as_in_context(nbdl.cpu()) is x
    assert x.as_in_ctx(nbdl.cpu(0)) is x
    g = x.as_in_context(nbdl.gpu(0))
    assert g.context == nbdl.gpu(0)
    assert g.to_device(nbdl.gpu(0)) is g
    np.testing.assert_array_equal(g.to_device("cpu(0)").asnumpy(), [1, 2])


def test_astype():
    x = nd.array([1.5, 2.5, -3.0])
    assert x.astype(np.float32, copy=False) is x
    y = x.astype(np.float32)
    assert y is not x and y.dtype is np.float32
    d = x.astype("float64")
    assert d.dtype is np.float64
    np.testing.assert_array_equal(d.asnumpy(), [1.5, 2.5, -3.0])
    i = x.astype(np.int32)
    assert i.dtype is np.int32
    np.testing.assert_array_equal(i.asnumpy(), np.array([1.5, 2.5, -3.0]).astype(np.int32))


def test_copyto_casts():
    x = nd.array([1.25, 2.5])
    y = nd.zeros((2,), dtype=np.float64)
    x.copyto(y)
    assert y.dtype is np.float64
    np.testing.assert_array_equal(y.asnumpy(), [1.25, 2.5])


# -- reshape ------------------------------------------------------------------

def test_reshape_shares_memory():
    x = nd.array(np.arange(12).reshape(3, 4))
    y = x.reshape(4, 3)
    assert y.shape == (4, 3)
    assert np.shares_memory(y._data, x._data)
    y[0, 0] = 100
    assert x.asnumpy()[0, 0] == 100
    assert x.reshape((2, 6)).shape == (2, 6)
    assert x.reshape(shape=(6, 2)).shape == (6, 2)
    assert x.reshape(-1).shape == (12,)
    assert x.reshape(2, -1, 3).shape == (2, 2, 3)


@pytest.mark.parametrize("code, expected", [
    ((0, -1), (2, 12)),            # 0 keeps a dimension
    ((-2,), (2, 3, 4)),            # -2 copies the rest
    ((-3, 4), (6, 4)),             # -3 merges two dimensions
    ((-4, 1, 2, -2), (1, 2, 3, 4)),  # -4 splits one
    ((0, 0, -1), (2, 3, 4)),
])
def test_reshape_mxnet_codes(code, expected):
    x = nd.array(np.arange(24).reshape(2, 3, 4))
    y = x.reshape(code)
    assert y.shape == expected
    np.testing.assert_array_equal(y.asnumpy().ravel(), np.arange(24))
    assert np.shares_memory(y._data, x._data)


def test_reshape_reverse():
    x = nd.array(np.arange(24).reshape(2, 3, 4))
    assert x.reshape((-1, 0), reverse=True).shape == (6, 4)


def test_reshape_errors():
    x = nd.zeros((2, 3))
    with pytest.raises(nbdl.ShapeError, match=r"\(2, 3\)"):
        x.reshape(4, 2)
    with pytest.raises(nbdl.ShapeError):
        x.reshape(-1, 4)


@pytest.mark.cuda
def test_reshape_gpu():
    g = nd.array(np.arange(6), ctx=nbdl.gpu(0))
    r = g.reshape(2, 3)
    assert r.context == nbdl.gpu(0) and r.shape == (2, 3)
    np.testing.assert_array_equal(r.asnumpy(), np.arange(6).reshape(2, 3))


# -- fluent methods (ops) -----------------------------------------------------

def test_transpose_and_flatten():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = nd.array(a)
    np.testing.assert_array_equal(x.T.asnumpy(), a.T)
    np.testing.assert_array_equal(x.transpose().asnumpy(), a.transpose())
    np.testing.assert_array_equal(x.transpose((1, 0, 2)).asnumpy(), a.transpose(1, 0, 2))
    np.testing.assert_array_equal(x.transpose(2, 0, 1).asnumpy(), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(x.flatten().asnumpy(), a.reshape(2, 12))
    v = nd.array([1, 2, 3])
    assert v.T is v                       # as MXNet: ndim < 2 returns self


def test_reductions():
    a = np.random.RandomState(1).rand(3, 4).astype(np.float32)
    x = nd.array(a)
    np.testing.assert_allclose(x.sum().asnumpy(), [a.sum()], rtol=1e-6)
    np.testing.assert_allclose(x.sum(axis=1).asnumpy(), a.sum(axis=1), rtol=1e-6)
    np.testing.assert_allclose(x.sum(0).asnumpy(), a.sum(axis=0), rtol=1e-6)  # positional attr
    np.testing.assert_allclose(x.mean(axis=0, keepdims=True).asnumpy(), a.mean(0, keepdims=True),
                               rtol=1e-6)
    np.testing.assert_array_equal(x.max(axis=1).asnumpy(), a.max(1))
    np.testing.assert_array_equal(x.min(axis=0).asnumpy(), a.min(0))
    np.testing.assert_array_equal(x.argmax(axis=1).asnumpy(), a.argmax(1).astype(np.float32))


def test_reshape_like_method_is_the_op():
    a = np.arange(12, dtype=np.float32)
    x, other = nd.array(a), nd.ones((3, 4))
    np.testing.assert_array_equal(x.reshape_like(other).asnumpy(), a.reshape(3, 4))
    np.testing.assert_array_equal(x.reshape_like(rhs=other).asnumpy(), a.reshape(3, 4))
    y = nd.array(a.reshape(2, 6))
    got = y.reshape_like(nd.ones((5, 3, 2)), lhs_begin=1, lhs_end=2, rhs_begin=1)
    assert got.shape == (2, 3, 2)


def test_zeros_like_ones_like_methods():
    x = nd.array([[1, 2]], dtype=np.float64)
    z = x.zeros_like()
    o = x.ones_like()
    assert z.dtype is np.float64 and z.shape == (1, 2)
    np.testing.assert_array_equal(z.asnumpy(), [[0, 0]])
    np.testing.assert_array_equal(o.asnumpy(), [[1, 1]])


def _mxnet_raw_bytes(values, dev_type):
    """An array in MXNet's raw NDArray format (V2 magic, dense, int64 dims,
    context, type flag, data), as MXNet 1.x pickles an NDArray's handle."""
    import struct
    a = np.ascontiguousarray(values, np.float32)
    head = struct.pack("<Iii", 0xF993FAC9, 0, a.ndim) + struct.pack(f"<{a.ndim}q", *a.shape)
    return head + struct.pack("<iii", dev_type, 0, 0) + a.tobytes()


def test_setstate_reads_an_mxnet_pickled_handle():
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    for dev_type in (1, 2):          # saved on a CPU, and on a GPU: loaded on the CPU
        a = nbdl.nd.zeros((1,))
        a.__setstate__({"handle": bytearray(_mxnet_raw_bytes(x, dev_type))})
        assert a.context == nbdl.cpu() and a.dtype == np.float32
        np.testing.assert_array_equal(a.asnumpy(), x)
    # nbdl's own pickles still round-trip
    b = pickle.loads(pickle.dumps(nbdl.nd.array(x)))
    np.testing.assert_array_equal(b.asnumpy(), x)
    with pytest.raises(nbdl.NbdlError, match="unexpected bytes"):
        nbdl.nd.zeros((1,)).__setstate__({"handle": _mxnet_raw_bytes(x, 1) + b"\0"})


def test_numpy_functions_see_ndarrays_as_numpy():
    a = nbdl.nd.array([50000001], dtype="int32")
    # MXNet 1.x code calls numpy's functions on NDArrays: np.all(x == v)
    assert np.all(a == 50000001) and np.all(a.floor() == 50000001)
    assert np.all(a.round() == 50000001) and np.all(a.trunc() == 50000001)
    got = np.concatenate([nbdl.nd.ones((2,)), nbdl.nd.zeros((1,))])
    assert isinstance(got, np.ndarray) and got.tolist() == [1, 1, 0]
    assert np.allclose(nbdl.nd.ones((2, 2)), 1)
    assert np.sum(nbdl.nd.ones((2, 3)), axis=0).tolist() == [2, 2, 2]
    # functions numpy answers with the object's method still do (an NDArray)
    assert isinstance(np.argmax(nbdl.nd.array([[1.0, 3.0]]), axis=1), nbdl.nd.NDArray)
    # numpy scalars still defer to the NDArray operators
    assert isinstance(np.float32(2) * nbdl.nd.ones((2,)), nbdl.nd.NDArray)
