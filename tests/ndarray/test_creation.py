"""Creation functions: values, dtype defaults (float32 as MXNet 1.x),
devices (``ctx=``, ``device=``, ``with device:``)."""
import numpy as np
import pytest

import nbdl
import nbdl.ndarray as nd


@pytest.mark.parametrize("source", [[1, 2, 3], (1.5, 2.5), np.arange(3), np.arange(3.0),
                                    np.array([True, False]), [[1, 2], [3, 4]]])
def test_array_defaults_to_float32(source):
    x = nd.array(source)
    assert x.dtype is np.float32
    np.testing.assert_array_equal(x.asnumpy(), np.asarray(source, dtype=np.float32))


def test_array_dtype_and_ndarray_source():
    x = nd.array([1, 2], dtype=np.int32)
    assert x.dtype is np.int32
    assert nd.array(x).dtype is np.int32                  # an NDArray keeps its dtype
    assert nd.array(x, dtype="float64").dtype is np.float64
    y = nd.array(x)
    y[0] = 5
    assert x.asnumpy()[0] == 1                            # and is copied
    assert nd.array(np.float64(2.5)).shape == ()
    with pytest.raises(nbdl.DTypeError):
        nd.array([1, 2], dtype=np.complex64)
    with pytest.raises(TypeError):
        nd.array([[1, 2], [3]])


@pytest.mark.cuda
def test_array_on_gpu_and_back():
    x = nd.array([1, 2], ctx=nbdl.gpu(0))
    assert x.context == nbdl.gpu(0)
    y = nd.array(x, ctx=nbdl.cpu())
    assert y.context == nbdl.cpu()
    np.testing.assert_array_equal(y.asnumpy(), [1, 2])
    z = nd.array(y, device="gpu(0)", dtype=np.float64)
    assert z.context == nbdl.gpu(0) and z.dtype is np.float64


@pytest.mark.cuda
def test_default_device_from_with_block():
    with nbdl.gpu(0):
        x = nd.zeros((2,))
        y = nd.array([1, 2])
        z = nd.random.uniform(shape=(2,))
    assert x.context == y.context == z.context == nbdl.gpu(0)
    assert nd.zeros((2,)).context == nbdl.cpu()


def test_ctx_and_device_must_agree():
    with pytest.raises(nbdl.DeviceError):
        nd.zeros((2,), ctx=nbdl.cpu(), device=nbdl.gpu(0))


@pytest.mark.parametrize("ctx", [nbdl.cpu(), pytest.param(nbdl.gpu(0), marks=pytest.mark.cuda)], ids=str)
def test_fill_functions(ctx):
    z = nd.zeros((2, 3), ctx=ctx)
    assert z.shape == (2, 3) and z.dtype is np.float32 and z.context == ctx
    np.testing.assert_array_equal(z.asnumpy(), np.zeros((2, 3)))
    o = nd.ones(4, ctx=ctx, dtype=np.int64)
    assert o.shape == (4,) and o.dtype is np.int64
    np.testing.assert_array_equal(o.asnumpy(), np.ones(4))
    f = nd.full((2, 2), 7.5, ctx=ctx, dtype=np.float64)
    assert f.dtype is np.float64
    np.testing.assert_array_equal(f.asnumpy(), np.full((2, 2), 7.5))
    e = nd.empty((3,), ctx=ctx)
    assert e.shape == (3,) and e.context == ctx


def test_full_into_out():
    out = nd.zeros((2,))
    assert nd.full((2,), 3, out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), [3, 3])


@pytest.mark.cuda
def test_like_functions():
    x = nd.array([[1, 2]], ctx=nbdl.gpu(0), dtype=np.float64)
    for fn, val in [(nd.zeros_like, 0), (nd.ones_like, 1)]:
        y = fn(x)
        assert y.shape == x.shape and y.dtype is np.float64 and y.context == x.context
        np.testing.assert_array_equal(y.asnumpy(), np.full((1, 2), val))
    np.testing.assert_array_equal(nd.full_like(x, 4).asnumpy(), [[4, 4]])


@pytest.mark.parametrize("args, kwargs", [
    ((5,), {}), ((1, 7), {}), ((0, 2, 0.5), {}), ((3, 0, -1), {}), ((0, 3), {"repeat": 2}),
    ((2,), {"dtype": np.int32}), ((0, 1, 0.3), {}),
])
def test_arange(args, kwargs):
    x = nd.arange(*args, **kwargs)
    repeat = kwargs.get("repeat", 1)
    want = np.repeat(np.arange(*args, dtype=np.float64), repeat).astype(kwargs.get("dtype", np.float32))
    assert x.dtype is np.dtype(kwargs.get("dtype", np.float32)).type
    np.testing.assert_allclose(x.asnumpy(), want, rtol=1e-6)


@pytest.mark.parametrize("args, dtype, want", [
    # integer dtypes truncate start and step first, then count up (MXNet 1.9.1's values)
    ((1.3, 456.6, 1.3), np.int32, 1 + np.arange(351)),
    ((-1.7, 5, 1.3), np.int32, np.arange(-1, 5)),
    ((50, -50, -2), np.uint8, np.arange(50, -50, -2) % 256),
    ((-100, 100, 1), np.uint8, np.arange(-100, 100) % 256),
])
def test_arange_integer_dtypes_as_mxnet(args, dtype, want):
    x = nd.arange(*args, dtype=dtype)
    assert x.dtype is np.dtype(dtype).type
    np.testing.assert_array_equal(x.asnumpy(), want.astype(dtype))


def test_arange_float32_values_are_computed_in_float32():
    x = nd.arange(1.3, 456.6, 1.3).asnumpy()
    i = np.arange(351, dtype=np.float32)
    np.testing.assert_array_equal(x, np.float32(1.3) + i * np.float32(1.3))


def test_linspace_and_eye():
    np.testing.assert_allclose(nd.linspace(0, 1, 5).asnumpy(), np.linspace(0, 1, 5), rtol=1e-6)
    np.testing.assert_array_equal(nd.eye(3, k=1).asnumpy(), np.eye(3, k=1))
    assert nd.eye(2, 3).shape == (2, 3)


@pytest.mark.cuda
def test_from_numpy_zero_copy():
    a = np.arange(4, dtype=np.float64)
    x = nd.from_numpy(a)
    assert x.dtype is np.float64 and np.shares_memory(x._data, a)
    y = nd.from_numpy(a, zero_copy=False)
    assert not np.shares_memory(y._data, a)
    g = nd.from_numpy(a, ctx=nbdl.gpu(0))
    np.testing.assert_array_equal(g.asnumpy(), a)
    # as MXNet 1.x: the shared source turns read-only, writes go through the NDArray
    with pytest.raises(ValueError):
        a[0] = 5
    x[1] = 7
    assert a[1] == 7
    x2 = nd.from_numpy(a)            # a source already read-only is shared again
    x2[2] = 8
    assert a[2] == 8 and not a.flags.writeable
    with pytest.raises(ValueError, match="C-contiguous"):
        nd.from_numpy(np.arange(6.0).reshape(2, 3).T)
    assert nd.from_numpy(np.arange(6.0).reshape(2, 3).T, zero_copy=False).shape == (3, 2)


def test_creation_out_and_legacy_functions():
    out = nd.zeros((2, 2))
    assert nd.ones((2, 2), out=out) is out and (out.asnumpy() == 1).all()
    assert nd.zeros((2, 2), out=out) is out and (out.asnumpy() == 0).all()
    assert nd.full((2, 2), 3, out=out) is out and (out.asnumpy() == 3).all()
    with pytest.raises(nbdl.ShapeError, match="out has shape"):
        nd.ones((3,), out=out)
    x = np.arange(24.0).reshape(2, 3, 4)
    assert nd.moveaxis(nd.array(x), 0, -1).shape == (3, 4, 2)
    np.testing.assert_array_equal(nd.moveaxis(nd.array(x), -1, 1).asnumpy(),
                                  np.moveaxis(x, -1, 1))
    with pytest.raises(nbdl.ArgumentError, match="source 3"):
        nd.moveaxis(nd.array(x), 3, 0)
    np.testing.assert_array_equal(nd.moveaxis(nd.array(x), [0, 2], [2, 0]).asnumpy(),
                                  np.moveaxis(x, [0, 2], [2, 0]))
    with pytest.raises(ValueError, match="repeated axis"):
        nd.moveaxis(nd.array(x), [0, 0], [0, 1])
    with pytest.raises(ValueError, match="same number"):
        nd.moveaxis(nd.array(x), [0, 1], [0])
    parts = [nd.array(x), nd.array(x[:, :1])]
    np.testing.assert_array_equal(nd.concatenate(parts, axis=1).asnumpy(),
                                  np.concatenate([x, x[:, :1]], axis=1))
    assert nd.concatenate(parts[:1], always_copy=False) is parts[0]
    with pytest.raises(nbdl.ShapeError, match="differ outside axis 0"):
        nd.concatenate(parts, axis=0)


@pytest.mark.cuda
def test_waitall():
    nd.array([1], ctx=nbdl.gpu(0))
    nd.waitall()


def test_onehot_encode_fills_out():
    out = nd.array(np.full((4, 3), 7.0, np.float32))
    got = nd.onehot_encode(nd.array([0, 2, 1, 5]), out)
    want = np.zeros((4, 3), np.float32)
    want[[0, 1, 2], [0, 2, 1]] = 1     # index 5 is outside the 3 classes: an all-zero row
    assert got is out
    np.testing.assert_array_equal(out.asnumpy(), want)
    with pytest.raises(nbdl.errors.ShapeError, match="onehot_encode"):
        nd.onehot_encode(nd.array([0, 1]), out)
